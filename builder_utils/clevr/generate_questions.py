"""``generate-questions``: CLEVR-style questions, programs, answers and chains of thought for
the scenes of a CLEVR scene file (usage, safety and exit status: README, "generate-questions").
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import sys
import time
from collections.abc import Sequence

from builder_utils.cli_support import add_version, progress_wanted, report_error, running
from builder_utils.command import CommandParser
from builder_utils.interrupt import exit_status, stop_on_signals
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder

from .distributed import DaskUnavailable
from .executor import InvalidProgram, MalformedProgram
from .generate import GeneratorOptions, QuestionGenerator, generate_windows, task_scenes, window_tasks
from .metadata import MetadataError
from .question_files import GENERATED_BY, check_parquet_folder, write_questions, write_questions_parquet
from builder_utils.options import MAX_WORKERS, FilePath, Integer, add_option_flags, declared_from_args, option, path_values
from builder_utils.options import options_from_args as generator_options_from_args
from .question_types import QuestionTypeError, parse_question_types
from .scenes import SceneError, load_scenes
from .templates import TemplateError

__all__ = ["build_parser", "main", "write_questions"]

logger = logging.getLogger("builder_utils.clevr.generate_questions")  # also under python -m (where __name__ is __main__)

PROG = "generate-questions"
# Errors caused by the user's input: reported as one line, without a traceback.
_INPUT_ERRORS = (
    SceneError, TemplateError, MetadataError, QuestionTypeError, MalformedProgram, InvalidProgram,
    OSError, ValueError, IndexError, DaskUnavailable,
)
OUTPUT_FORMATS = ("json", "parquet")
DEFAULT_OUTPUT = {"json": "CLEVR_questions.json", "parquet": "CLEVR_questions"}
DEFAULT_SCENES_PER_SHARD = 1000
# Positions in a scene file cost nothing (CLEVR has 100,000 scenes); a shard's questions are held
# in memory until written, and 100,000 scenes (a whole CLEVR split) is about a gigabyte of them.
MAX_SCENE_POSITION = 10**9
MAX_SCENES_PER_SHARD = 100_000


def build_parser() -> argparse.ArgumentParser:
    """The command's argument parser (every flag of the reference generator and its fork).

    >>> build_parser().parse_args(["--input_scene_file", "s.json"]).templates_per_image
    10
    """
    p = CommandParser(
        prog=PROG,
        description="Generate CLEVR-style questions (with programs, answers and chain-of-thought) for a scene file.",
    )
    io = p.add_argument_group("inputs and outputs")
    add_option_flags(p, {"inputs and outputs": io}, cls=QuestionFiles)
    sel = p.add_argument_group("which scenes")
    sel.add_argument("--scene_start_idx", type=Integer(0, maximum=MAX_SCENE_POSITION).parse, default=0,
                     help="first scene (position in the file)")
    sel.add_argument("--num_scenes", type=Integer(0, maximum=MAX_SCENE_POSITION).parse, default=0,
                     help="number of scenes; 0 = to the end of the file")
    gen = p.add_argument_group("generation")
    run = p.add_argument_group("running and output format (none of these changes the questions)")
    run.add_argument("--num_workers", type=Integer(1, maximum=MAX_WORKERS).parse, default=1,
                     help="worker processes (parallel over balancing windows); with --dask local, the cluster's")
    run.add_argument("--dask", default=None, metavar="ADDRESS",
                     help="run the windows as Dask tasks: 'local' (a LocalCluster of --num_workers processes) or "
                          "a scheduler address such as tcp://host:8786 (needs the [dask] extra)")
    run.add_argument("--output_format", default="json", choices=OUTPUT_FORMATS,
                     help="json: one CLEVR question file (default); parquet: a folder of Parquet shards and index.json")
    run.add_argument("--scenes_per_shard", type=Integer(1, maximum=MAX_SCENES_PER_SHARD).parse, default=DEFAULT_SCENES_PER_SHARD,
                     help=f"parquet: scenes per shard, rounded up to whole balancing windows ({DEFAULT_SCENES_PER_SHARD})")
    io.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    run.add_argument("--profile", action="store_true", help="run under cProfile and print the top functions to stderr")
    run.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings and errors")
    # The generator's own options (templates, seed, ...): flags declared once in .options.
    add_option_flags(p, {"inputs and outputs": io, "generation": gen, "running": run}, cls=GeneratorOptions)
    return add_version(p)


@dataclasses.dataclass
class QuestionFiles:
    """The command's paths besides the generator's own, each declared once with its role."""

    input_scene_file: str = option(None, FilePath(), 'CLEVR scene file ({"info", "scenes"})',
                                   group="inputs and outputs", role="input", flag={"required": True})
    output_questions_file: str | None = option(
        None, FilePath(), "where to write the questions: a JSON file (default CLEVR_questions.json), or a "
        "folder with --output_format parquet (default CLEVR_questions)", group="inputs and outputs", role="output",
        fallback=lambda o: DEFAULT_OUTPUT["json"])


def options_from_args(args: argparse.Namespace) -> GeneratorOptions:
    """The :class:`GeneratorOptions` a command line asks for."""
    paths = {}
    if args.dask is not None:
        # Dask workers may run elsewhere (another working directory): give them absolute paths.
        paths = {name: os.path.abspath(getattr(args, name)) for name in ("template_dir", "metadata_file", "synonyms_json")
                 if getattr(args, name) is not None}
    return generator_options_from_args(args, GeneratorOptions, **paths)


def check_arguments(args: argparse.Namespace) -> None:
    """Refuse, before any work, what would fail or destroy something later: bad numbers, an
    empty --question_types, an output that is the input, a directory or an unwritable place."""
    if args.num_workers < 1:
        raise ValueError(f"--num_workers must be at least 1, got {args.num_workers}")
    if args.scene_start_idx < 0 or args.num_scenes < 0:
        raise ValueError("--scene_start_idx and --num_scenes must not be negative")
    if args.scenes_per_shard < 1:
        raise ValueError(f"--scenes_per_shard must be at least 1, got {args.scenes_per_shard}")
    if args.question_types is not None and not parse_question_types(args.question_types):
        raise ValueError("--question_types names no type (leave the flag out for all types)")
    if args.dask is not None and not args.dask.strip():
        raise ValueError("--dask needs 'local' or a scheduler address such as tcp://host:8786")
    out = args.output_questions_file
    if args.output_format == "json" and os.path.isdir(out):
        raise IsADirectoryError(f"{out}: is a directory; --output_questions_file names a file "
                                "(or use --output_format parquet)")


def run(args: argparse.Namespace) -> int:
    """Run the command for parsed arguments; returns the number of questions written."""
    if args.output_questions_file is None:
        args.output_questions_file = DEFAULT_OUTPUT[args.output_format]
    check_arguments(args)
    if args.dask is not None:
        from .distributed import require_dask

        require_dask()
    options = options_from_args(args)
    parquet = args.output_format == "parquet"
    with OutputFolder.open(args.output_questions_file, command=PROG, flag="--output_questions_file",
                           declared=path_values(declared_from_args(args, QuestionFiles), options),
                           overwrite=args.overwrite, file=not parquet) as out:
        if parquet:
            check_parquet_folder(out)  # refused before any work
        tic = time.perf_counter()
        count, start, stop = _generate(args, options, out)
    # One success line, as every command prints (--quiet drops it); --verbose adds the speed.
    took = time.perf_counter() - tic
    speed = f" in {took:.2f} s ({count / took if took else 0:.0f} questions/s)" if args.verbose else ""
    if count:
        logger.info("wrote %d questions for %d scenes to %s%s", count, stop - start, args.output_questions_file, speed)
    if count == 0:
        logger.warning("no question generated for the %d scene(s) of %s (scenes %d to %d); wrote %s with "
                       "no question, exit status 1", stop - start, args.input_scene_file, start, stop,
                       args.output_questions_file)
    return count


def _generate(args: argparse.Namespace, options: GeneratorOptions, out) -> tuple[int, int, int]:
    """Generate and stage the questions in the open output folder ``out``: (count, first, stop)."""
    generator = QuestionGenerator(options)  # validates metadata, synonyms, templates, types
    scenes = load_scenes(args.input_scene_file, metadata=generator.metadata)
    start = args.scene_start_idx
    if start > len(scenes):
        raise IndexError(f"{args.input_scene_file}: --scene_start_idx {start} is past the last scene ({len(scenes)})")
    stop = len(scenes) if args.num_scenes == 0 else min(len(scenes), start + args.num_scenes)
    every = options.reset_counts_every
    shards = window_tasks(start, stop, every, min_scenes=args.scenes_per_shard) if args.output_format == "parquet" else []
    workers = args.num_workers if args.dask is None else max(args.num_workers, 2)
    tasks = window_tasks(start, stop, every, min_scenes=task_scenes(stop - start, workers),
                         cuts=[a for a, _ in shards])
    output = "arrow" if args.output_format == "parquet" else "json"
    info = {**scenes.info, "generated_by": GENERATED_BY}  # provenance only: the record is the claim
    with _progress_bar(stop - start, progress_wanted(args.quiet)) as bar:
        results = generate_windows(options, scenes, tasks, num_workers=args.num_workers, dask=args.dask,
                                   output=output, generator=generator)

        def counted(results):
            for (a, b), result in results:
                yield (a, b), result
                bar.update(b - a)

        if args.output_format == "parquet":
            count = write_questions_parquet(args.output_questions_file, info,
                                            _shard_tables(counted(results), shards), len(shards), out=out)
        else:
            count = write_questions(args.output_questions_file, info,
                                    (q for _, questions in counted(results) for q in questions), out=out)
    return count, start, stop


class _NoBar:
    """What the loop needs of a progress bar, when none is shown."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False

    def update(self, count: int) -> None:
        pass


def _progress_bar(total: int, shown: bool):
    """A tqdm bar, or a stand-in: tqdm is imported only to show one (a piped run starts faster)."""
    if not shown:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit="scene", file=sys.stderr, desc=PROG)


def _shard_tables(results, shards):
    """Concatenate the task tables of each shard's scene range, yielding one table per shard."""
    import pyarrow as pa

    results = iter(results)
    for a, b in shards:
        tables, at = [], a
        while at < b:
            (_, at), table = next(results)
            tables.append(table)
        yield (a, b), pa.concat_tables(tables).combine_chunks()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``generate-questions``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        with stop_on_signals(), running(PROG, quiet=args.quiet):
            if args.profile:
                import cProfile
                import pstats

                profiler = cProfile.Profile()
                count = profiler.runcall(run, args)
                pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
            else:
                count = run(args)
    except _INPUT_ERRORS as exc:
        return report_error(PROG, exc)
    except KeyboardInterrupt as stop:
        print(f"{PROG}: interrupted; no output written", file=sys.stderr)
        return exit_status(stop)
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())
