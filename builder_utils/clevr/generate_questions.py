"""``generate-questions``: CLEVR-style questions, programs, answers and chains of thought for
the scenes of a CLEVR scene file (also ``python -m builder_utils.clevr.generate_questions``).

    generate-questions --input_scene_file CLEVR_val_scenes.json \\
        --output_questions_file CLEVR_val_questions.json --seed 0 --num_workers 2

Metadata, templates and synonyms default to the files shipped with the package, so the
command works from any directory. The output (``{"info": ..., "questions": [...]}``) is
written to a temporary file beside the target and renamed into place only when complete.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence

from builder_utils.atomic import atomic_output

from .executor import InvalidProgram, MalformedProgram
from .generate import DEFAULT_SEARCH_BUDGET, GeneratorOptions, QuestionGenerator, generate_parallel
from .metadata import MetadataError
from .question_types import COARSE_TYPES, QuestionTypeError
from .scenes import SceneError, load_scenes
from .templates import SHIPPED_TEMPLATE_SETS, TemplateError

__all__ = ["build_parser", "main", "write_questions"]

PROG = "generate-questions"
# Errors caused by the user's input: reported as one line, without a traceback.
_INPUT_ERRORS = (
    SceneError, TemplateError, MetadataError, QuestionTypeError, MalformedProgram, InvalidProgram,
    OSError, ValueError, IndexError,
)


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser (every flag of the reference generator and its fork).

    >>> build_parser().parse_args(["--input_scene_file", "s.json"]).templates_per_image
    10
    """
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Generate CLEVR-style questions (with programs, answers and chain-of-thought) for a scene file.",
    )
    io = p.add_argument_group("inputs and outputs")
    io.add_argument("--input_scene_file", required=True, help="CLEVR scene file ({\"info\", \"scenes\"})")
    io.add_argument("--output_questions_file", default="CLEVR_questions.json", help="where to write the questions")
    io.add_argument("--metadata_file", default=None, help="functional-language metadata (default: the shipped one)")
    io.add_argument("--synonyms_json", default=None, help="value and word synonyms (default: the shipped one)")
    io.add_argument("--template_dir", default=None, help="folder of template *.json files (overrides --templates)")
    io.add_argument("--templates", default="clevr", choices=SHIPPED_TEMPLATE_SETS,
                    help="shipped template set (default: clevr, the nine CLEVR families)")
    sel = p.add_argument_group("which scenes")
    sel.add_argument("--scene_start_idx", type=int, default=0, help="first scene (position in the file)")
    sel.add_argument("--num_scenes", type=int, default=0, help="number of scenes; 0 = to the end of the file")
    gen = p.add_argument_group("generation")
    gen.add_argument("--templates_per_image", type=int, default=10, help="templates instantiated per image (10)")
    gen.add_argument("--instances_per_template", type=int, default=1, help="questions per template and image (1)")
    gen.add_argument("--reset_counts_every", type=int, default=250,
                     help="scenes per balancing window; counts reset at multiples of it (250; 0 = never)")
    gen.add_argument("--seed", type=int, default=0, help="random seed (0); same inputs and seed = same file")
    gen.add_argument("--question_types", nargs="+", default=None, metavar="TYPE",
                     help="restrict templates: family stems, stem:index, or coarse types "
                          f"({', '.join(COARSE_TYPES)}); comma or space separated")
    gen.add_argument("--add_post_prompt", action="store_true",
                     help="append an answer-format sentence (by answer type) to every question")
    gen.add_argument("--max_answer", type=int, default=None, help="refuse Integer answers above this")
    gen.add_argument("--bound_intermediate_counts", action="store_true",
                     help="with --max_answer: also refuse questions whose intermediate counts exceed it")
    gen.add_argument("--search_budget", type=int, default=DEFAULT_SEARCH_BUDGET,
                     help=f"search states per template and image ({DEFAULT_SEARCH_BUDGET})")
    run = p.add_argument_group("running")
    run.add_argument("--num_workers", type=int, default=1, help="worker processes (parallel over balancing windows)")
    run.add_argument("--verbose", action="store_true", help="log every template tried to stderr")
    run.add_argument("--time_dfs", action="store_true", help="with --verbose: time each template search")
    run.add_argument("--profile", action="store_true", help="run under cProfile and print the top functions to stderr")
    return p


def options_from_args(args: argparse.Namespace) -> GeneratorOptions:
    """The :class:`GeneratorOptions` a command line asks for."""
    return GeneratorOptions(
        templates=args.templates,
        template_dir=args.template_dir,
        metadata_file=args.metadata_file,
        synonyms_json=args.synonyms_json,
        seed=args.seed,
        templates_per_image=args.templates_per_image,
        instances_per_template=args.instances_per_template,
        reset_counts_every=args.reset_counts_every,
        question_types=args.question_types,
        add_post_prompt=args.add_post_prompt,
        max_answer=args.max_answer,
        bound_intermediate_counts=args.bound_intermediate_counts,
        search_budget=args.search_budget,
        verbose=args.verbose,
        time_dfs=args.time_dfs,
    )


def write_questions(path: str | os.PathLike, info: dict, questions: Iterable[dict | str]) -> int:
    """Stream ``{"info": info, "questions": [...]}`` to ``path`` atomically (temporary file
    in the same folder, renamed when complete), adding each question's ``question_index``
    (last key). Questions are dicts or their ``json.dumps`` text. The bytes equal
    ``json.dumps`` of the whole document. Returns the number written.

    >>> write_questions("out.json", {"split": "val"}, [{"question": "Q?"}])   # doctest: +SKIP
    1
    """
    count = 0
    with atomic_output(path) as fh:
        fh.write('{"info": ' + json.dumps(info) + ', "questions": [')
        for question in questions:
            if isinstance(question, str):
                # '{..."cot": ...}' -> '{..., "question_index": n}', as json.dumps would write it
                text = f'{question[:-1]}, "question_index": {count}}}'
            else:
                question["question_index"] = count
                text = json.dumps(question)
            fh.write((", " if count else "") + text)
            count += 1
        fh.write("]}")
    return count


def run(args: argparse.Namespace) -> int:
    """Run the command for parsed arguments; returns the number of questions written."""
    from tqdm import tqdm

    options = options_from_args(args)
    if args.num_workers < 1:
        raise ValueError(f"--num_workers must be at least 1, got {args.num_workers}")
    if args.scene_start_idx < 0 or args.num_scenes < 0:
        raise ValueError("--scene_start_idx and --num_scenes must not be negative")
    tic = time.perf_counter()
    generator = QuestionGenerator(options)  # validates metadata, synonyms, templates, types
    scenes = load_scenes(args.input_scene_file, metadata=generator.metadata)
    start = args.scene_start_idx
    if start > len(scenes):
        raise IndexError(f"{args.input_scene_file}: --scene_start_idx {start} is past the last scene ({len(scenes)})")
    stop = len(scenes) if args.num_scenes == 0 else min(len(scenes), start + args.num_scenes)
    with tqdm(total=stop - start, unit="scene", file=sys.stderr, desc=PROG) as bar:
        if args.num_workers == 1:
            questions = generator.generate(scenes, start, stop, progress=bar.update)
        else:
            questions = generate_parallel(
                options, scenes, start, stop, num_workers=args.num_workers,
                on_window=lambda a, b: bar.update(b - a), as_json=True,
            )
        count = write_questions(args.output_questions_file, scenes.info, questions)
    if args.verbose:
        took = time.perf_counter() - tic
        print(f"{PROG}: wrote {count} questions for {stop - start} scenes to {args.output_questions_file} "
              f"in {took:.2f} s ({count / took if took else 0:.0f} questions/s)", file=sys.stderr)
    return count


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``generate-questions``; returns the exit status (0 on success, 1 on bad
    input, with one line on stderr naming the file and the place)."""
    args = build_parser().parse_args(argv)
    try:
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.runcall(run, args)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
        else:
            run(args)
    except _INPUT_ERRORS as exc:
        message = str(exc) or type(exc).__name__
        if isinstance(exc, OSError) and exc.filename and exc.strerror:
            message = f"{exc.filename}: {exc.strerror}"
        print(f"{PROG}: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no output written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
