"""R1-V's CLEVR-CoGenT counting sets, regenerated: a CoGenT-A training set and its ValA / ValB test sets.

Each set is one CoGenT world (``clevr-math synth`` worlds, :func:`write_clevr_folder` with
``WorldOptions(cogent=...)``), one question per scene: CLEVR's counting families
(``generate-questions --templates clevr --question_types count``) or, every
:data:`ITEMS_EVERY`-th scene and wherever no counting template fits, "How many items are there?".
The scene graphs and the CLEVR question file are kept beside the rows, and every answer is
recomputed by the independent evaluator (:func:`builder_utils.clevr.evaluate.oracle_answers`)
before a row is written. Rows: R1-V's layout (``image``, ``problem``, ``solution`` =
``<answer> N </answer>``) and EasyR1's (``images``, ``problem`` with ``<image>``, ``answer``: a
``clevr_count_70k``-like set).

>>> import tempfile
>>> out = write_counting_sets(CountingOptions(out=tempfile.mkdtemp(), sizes=(4, 2, 2)))
>>> train = datasets.Dataset.from_parquet(str(out["train"]))
>>> sorted(out), len(train), train[0]["solution"].startswith("<answer> ")
(['train', 'val_a', 'val_b'], 4, True)

The command: ``clevr-math counting-sets --out DIR [--sizes 70000,5000,5000] [--ood crowded camera]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import datasets
import pyarrow.parquet as pq

from builder_utils.cli_support import add_version
from builder_utils.clevr import generate_questions
from builder_utils.clevr.evaluate import oracle_answers, read_clevr_questions
from builder_utils.clevr.synth import ImageOptions, WorldOptions, write_clevr_folder
from builder_utils.hub.trainer_formats import FORMATS, TrainerQuestion
from builder_utils.options import (Choice, FilePath, Flag, Integer, Words, add_option_flags, check_options, option,
                                   options_from_args)
from builder_utils.ownership import OutputFolder, OwnershipError
from builder_utils.prompts import DEFAULT_PROMPT_STYLE, PROMPT_STYLES, prompt_style

__all__ = ["CountingOptions", "CountingSet", "DEFAULT_SIZES", "ITEMS_QUESTION", "OOD_SETS", "SETS", "build_parser",
           "main", "write_counting_sets"]

#: R1-V's sizes: clevr_cogen_a_train 70,000; its CoGenT-A and CoGenT-B test sets 5,000 each.
DEFAULT_SIZES = (70_000, 5_000, 5_000)
#: Problems per out-of-distribution set (``--ood``) by default: as many as each R1-V test set.
DEFAULT_OOD_SIZE = 5_000
MAX_SET_SIZE = 1_000_000
ITEMS_QUESTION = "How many items are there?"
#: One scene in this many asks ITEMS_QUESTION (R1-V mixes it in with CLEVR's counting questions).
ITEMS_EVERY = 10
#: Camera jitter of the ``camera`` set: beyond CLEVR's 0.5 (training's Pillow worlds have none).
OOD_CAMERA_JITTER = 1.5
#: Rows turned into Parquet at a time (their PNG bytes in memory).
_CHUNK = 1000
_ITEMS_PROGRAM = [{"type": "scene", "inputs": [], "value_inputs": []},
                  {"type": "count", "inputs": [0], "value_inputs": []}]


@dataclasses.dataclass(frozen=True)
class CountingSet:
    """One set: its CLEVR split, its world's controls, how often it asks ITEMS_QUESTION, its card line.

    >>> OOD_SETS["crowded"].world.min_objects, SETS["val_b"].world.cogent
    (11, 'B')
    """

    split: str
    world: WorldOptions
    card: str
    items_every: int = ITEMS_EVERY


#: R1-V's three sets, in the order of ``sizes``.
SETS = {
    "train": CountingSet("train", WorldOptions(cogent="A"), "training: CoGenT-A colours (cubes gray/blue/brown/"
                         "yellow, cylinders red/green/purple/cyan), 3-10 objects, the fixed camera"),
    "val_a": CountingSet("val", WorldOptions(cogent="A"), "in distribution: as training, on CLEVR's val scenes"),
    "val_b": CountingSet("val", WorldOptions(cogent="B"), "CoGenT-B colours: cubes and cylinders only in the "
                         "colours training never gave them (spheres any colour, as in training)"),
}
#: The out-of-distribution test sets (``--ood``), each differing from training in one way.
OOD_SETS = {
    "crowded": CountingSet("val", WorldOptions(cogent="A", min_objects=11, max_objects=14),
                           "11-14 objects (training: 3-10) and counts above 10: half the questions ask "
                           "\"How many items are there?\" (11-14); CoGenT-A colours", items_every=2),
    "camera": CountingSet("val", WorldOptions(cogent="A", camera_jitter=OOD_CAMERA_JITTER),
                          f"another view: the camera moved by up to {OOD_CAMERA_JITTER} per axis per scene "
                          "(training: none; CLEVR: 0.5); CoGenT-A colours, 3-10 objects"),
}


class _Sizes:
    """Three set sizes ``train,val_a,val_b``, each 1..MAX_SET_SIZE."""

    def __call__(self, name: str, value):
        parts = value.split(",") if isinstance(value, str) else value
        try:
            sizes = tuple(Integer(1, maximum=MAX_SET_SIZE)(name, int(p) if isinstance(p, str) else p) for p in parts)
        except (TypeError, ValueError):
            sizes = ()
        if len(sizes) != len(SETS):
            raise ValueError(f"{name} must be {len(SETS)} integers in 1..{MAX_SET_SIZE} (train,val_a,val_b), "
                             f"got {value!r}")
        return sizes

    def flag(self) -> dict:
        return {"metavar": "TRAIN,VAL_A,VAL_B"}


@dataclasses.dataclass
class CountingOptions:
    """The counting sets' options, each declared once (flags of ``clevr-math counting-sets``).

    >>> CountingOptions(out="d", sizes="700,50,50", ood="crowded").sizes
    (700, 50, 50)
    """

    out: str | None = option(None, FilePath(), "output folder: worlds/<set> (images, scene graphs) and sets/ "
                             "(r1v/, easyr1/ Parquet, questions/, README.md)", group="inputs and outputs",
                             role="output_dir", flag={"required": True})
    sizes: tuple = option(DEFAULT_SIZES, _Sizes(), "problems in train,val_a,val_b (default 70000,5000,5000: "
                          "R1-V's)")
    ood: tuple | None = option(None, Words(), f"out-of-distribution test sets to add: {', '.join(OOD_SETS)}")
    ood_size: int = option(DEFAULT_OOD_SIZE, Integer(1, maximum=MAX_SET_SIZE),
                           "problems per --ood set (default %(default)s)")
    seed: int = option(0, Integer(0, maximum=2**31 - 1), "the worlds' and questions' seed (default %(default)s)")
    prompt_style: str = option(DEFAULT_PROMPT_STYLE, Choice(tuple(s.name for s in PROMPT_STYLES)),
                               "the instruction EasyR1's problems carry (R1-V's trainer adds its own)")
    renderer: str = option("pillow", Choice(("pillow", "blender")), "pillow (fast) or blender (CLEVR's look)")
    overwrite: bool = option(False, Flag(), "replace worlds and sets made with other arguments (never files this "
                             "command did not write)", group="inputs and outputs")

    def __post_init__(self) -> None:
        check_options(self)
        unknown = [name for name in self.ood or () if name not in OOD_SETS]
        if unknown:
            raise ValueError(f"ood: unknown set {unknown[0]!r}; valid: {', '.join(OOD_SETS)}")


def _questions(world: Path, spec: CountingSet, seed: int, scratch: Path, out: Path) -> None:
    """CLEVR's counting questions (at most one a scene), ITEMS_QUESTION where due or where none fits: ``out``."""
    scenes_file = world / "scenes" / f"CLEVR_{spec.split}_scenes.json"
    counting = scratch / "counting.json"
    code = generate_questions.main(["--input_scene_file", str(scenes_file), "--output_questions_file", str(counting),
                                    "--templates", "clevr", "--question_types", "count", "--templates_per_image", "1",
                                    "--seed", str(seed), "--quiet", "--overwrite"])
    if code != 0:
        raise RuntimeError(f"generate-questions failed on {scenes_file} (exit {code})")
    by_scene = {}
    for q in json.loads(counting.read_text())["questions"]:
        by_scene.setdefault(q["image_index"], q)
    kept = []
    for scene in json.loads(scenes_file.read_text())["scenes"]:
        index = scene["image_index"]
        q = by_scene.get(index)
        if q is None or index % spec.items_every == 0:
            q = {"split": spec.split, "image_index": index, "image_filename": scene["image_filename"],
                 "question": ITEMS_QUESTION, "answer": len(scene["objects"]), "program": _ITEMS_PROGRAM,
                 "template_filename": "items.json", "question_family_index": 0}
        kept.append({**q, "question_index": len(kept)})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"info": {"split": spec.split, "seed": seed}, "questions": kept}))


def _checked_rows(world: Path, split: str, questions_file: Path) -> list[dict]:
    """The set's rows, each answer recomputed by the independent evaluator from the kept scene graph."""
    questions = json.loads(questions_file.read_text())["questions"]
    oracle = oracle_answers(read_clevr_questions(questions_file), world / "scenes")
    rows = []
    for q in questions:
        truth = oracle.get(str(q["question_index"]))
        if truth != str(q["answer"]):
            raise AssertionError(f"{q['image_filename']}: {q['question']!r} answers {q['answer']}, "
                                 f"the evaluator {truth}")
        rows.append({"image": world / "images" / split / q["image_filename"], "question": q["question"],
                     "answer": str(q["answer"]), "image_filename": q["image_filename"]})
    return rows


#: The layouts written per set, built by the trainers' own row builders (``export --format``).
LAYOUTS = ("r1v", "easyr1")


def _layout_rows(rows: list[dict], layout: str, style: str, split: str) -> datasets.Dataset:
    """``rows`` in one trainer layout: its builder's text columns, then the image as that layout holds it."""
    fmt = FORMATS[layout]
    instruction = prompt_style(style).instruction
    built = [fmt.build(TrainerQuestion(r["question"], r["answer"], {"image_filename": r["image_filename"]}, "image",
                                       instruction, split, i)) for i, r in enumerate(rows)]
    images = [{"bytes": r["image"].read_bytes(), "path": r["image_filename"]} for r in rows]
    # The image travels in the column (and form) the layout names: R1-V one Image, EasyR1 a list.
    column = {"single": images, "list": [[image] for image in images]}[fmt.media_form]
    feature = datasets.Image() if fmt.media_form == "single" else datasets.Sequence(datasets.Image())
    features = {name: datasets.Value("string") for name in built[0]}
    table = {name: [b[name] for b in built] for name in built[0]}
    return datasets.Dataset.from_dict({fmt.media_name: column, **table},
                                      features=datasets.Features({fmt.media_name: feature, **features}), split=split)


def _write_layout(rows: list[dict], layout: str, style: str, name: str, path: Path) -> None:
    """One set in one layout as Parquet, :data:`_CHUNK` rows at a time: the images are never all in memory."""
    writer = None
    try:
        for start in range(0, len(rows), _CHUNK):
            # pyarrow directly: no progress bar; the schema keeps the features (images decode on load).
            table = _layout_rows(rows[start:start + _CHUNK], layout, style, name).data.table
            writer = writer or pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def _card(chosen: dict[str, CountingSet], sizes: dict[str, int], options: CountingOptions) -> str:
    lines = ["# CLEVR-CoGenT counting sets", "",
             f"Written by `clevr-math counting-sets` (seed {options.seed}, renderer {options.renderer}): "
             "R1-V's layout in `r1v/` (`image`, `problem`, `solution` = `<answer> N </answer>`), EasyR1's in "
             "`easyr1/`, CLEVR question files in `questions/`, each world's images and scene graphs in "
             "`../worlds/<set>`. Every answer was recomputed by `builder_utils.clevr.evaluate` from its scene graph.",
             "", "| set | problems | how it differs from training |", "|---|---|---|"]
    lines += [f"| {name} | {sizes[name]} | {spec.card} |" for name, spec in chosen.items()]
    return "\n".join(lines) + "\n"


def write_counting_sets(options: CountingOptions, progress: bool = False) -> dict[str, Path]:
    """Write R1-V's CoGenT-A counting train set, its ValA / ValB test sets and the ``--ood`` sets;
    returns each set's R1-V Parquet file (``datasets.Dataset.from_parquet`` reads it).

    >>> import tempfile
    >>> sets = write_counting_sets(CountingOptions(out=tempfile.mkdtemp(), sizes="3,1,1", ood=["crowded"], ood_size=2))
    >>> {name: pq.read_metadata(path).num_rows for name, path in sets.items()}
    {'train': 3, 'val_a': 1, 'val_b': 1, 'crowded': 2}
    """
    chosen = {**SETS, **{name: OOD_SETS[name] for name in options.ood or ()}}
    sizes = {**dict(zip(SETS, options.sizes)), **{name: options.ood_size for name in options.ood or ()}}
    root = Path(options.out)
    made = {}
    with OutputFolder.open(root / "sets", command="clevr-math counting-sets", overwrite=options.overwrite) as out:
        written = []
        for name, spec in chosen.items():
            # Each world is the synth's own output (its record, resumed or left alone when asked again).
            world = write_clevr_folder(root / "worlds" / name, {spec.split: sizes[name]}, seed=options.seed,
                                       progress=progress, world=spec.world,
                                       images=ImageOptions(renderer=options.renderer), overwrite=options.overwrite)
            questions = f"questions/{name}.json"
            _questions(world, spec, options.seed, out.scratch(name), out.stage / questions)
            rows = _checked_rows(world, spec.split, out.stage / questions)
            for layout in LAYOUTS:
                (out.stage / layout).mkdir(exist_ok=True)
                _write_layout(rows, layout, options.prompt_style, name, out.stage / layout / f"{name}.parquet")
                written.append(f"{layout}/{name}.parquet")
                made.setdefault(layout, {})[name] = root / "sets" / layout / f"{name}.parquet"
            written.append(questions)
        (out.stage / "README.md").write_text(_card(chosen, sizes, options))
        written.append("README.md")
        # Sets of an earlier run that this one does not make (an --ood set dropped) go: no stale set stays.
        out.add(written, remove=[name for name in out.record if name not in written])
    return made["r1v"]


def build_parser(prog: str = "clevr-math counting-sets") -> argparse.ArgumentParser:
    """The command's parser: :class:`CountingOptions` as flags, ``--quiet``, ``--version``.

    >>> build_parser().parse_args(["--out", "d", "--sizes", "7,1,1"]).sizes
    '7,1,1'
    """
    parser = argparse.ArgumentParser(prog=prog, description=(
        "Write R1-V's CLEVR-CoGenT counting sets over synthetic CoGenT worlds: the CoGenT-A training set and "
        "its ValA / ValB test sets (and --ood sets), in the r1v and easyr1 layouts, scene graphs kept, every "
        "answer recomputed by the independent evaluator."))
    add_option_flags(parser, cls=CountingOptions)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return add_version(parser)


def main(argv: list[str] | None = None, prog: str = "clevr-math counting-sets") -> int:
    """The command: bad input is one line and exit 2.

    >>> import tempfile
    >>> main(["--out", tempfile.mkdtemp(), "--sizes", "2,1,1", "--quiet"])
    0
    """
    args = build_parser(prog).parse_args(argv)
    try:
        options = options_from_args(args, CountingOptions)
        write_counting_sets(options, progress=not args.quiet)
    except (ValueError, OwnershipError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"wrote {Path(options.out) / 'sets'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
