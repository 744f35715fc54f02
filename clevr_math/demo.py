"""``clevr-math demo``: the whole pipeline on a tiny synthetic CLEVR world, offline (README, "Data")."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import time

import datasets

from builder_utils.options import MAX_SEED, MAX_WORKERS, FilePath, Integer, option
from builder_utils.cli_support import progress_bars
from builder_utils.hub import load_exported
from builder_utils.ownership import OutputFolder
from clevr_math.cli import ENTRY
from clevr_math.config import ClevrMathConfig

logger = logging.getLogger(__name__)

DEMO_CONFIGS = ("general", "multihop")
DEFAULT_OUT = os.path.join("demo_output", "clevr_math")
#: The folders the demo writes inside its output folder; it creates them, and it refuses to
#: touch any that exist without having been created by an earlier demo run.
DEMO_FOLDERS = ("CLEVR_v1.0", "hub", "evaluation")  # evaluation: the scores the demo ends with
# A demo, not a build: 10,000 scenes per split is already minutes of rendering; 1,000 rows shown
# is more than a terminal holds.
MAX_DEMO_SCENES = 10_000
MAX_ROWS_SHOWN = 1000


def make_world(out_dir: str, num_scenes: int, seed: int) -> str:
    """Write a synthetic CLEVR_v1.0 folder (train, val, test) to ``OUT/CLEVR_v1.0``.

    Example:
        >>> import os, tempfile
        >>> out = tempfile.mkdtemp()
        >>> world = make_world(out, num_scenes=1, seed=0)
        >>> os.path.relpath(world, out), sorted(os.listdir(os.path.join(world, "images")))
        ('CLEVR_v1.0', ['test', 'train', 'val'])
    """
    from builder_utils.clevr.synth import write_clevr_folder

    final = os.path.join(out_dir, "CLEVR_v1.0")
    # synth's own record decides what is replaced: only its own files, a user's file there stays;
    # the demo's world is its own, so a demo of other arguments replaces it (replace_worlds)
    write_clevr_folder(final, num_scenes, seed, splits=("train", "val", "test"), render=True, progress=False,
                       replace_worlds=True)
    return final


def describe(config_name: str, dataset: datasets.DatasetDict, rows: int = 3) -> str:
    """Split sizes, category counts and the first ``rows`` rows of each split, as text.

    Example (after ``clevr-math demo``)::

        print(describe("general", load_exported("demo_output/clevr_math/hub", "general")))
    """
    lines = [f"== {config_name} =="]
    for split, ds in dataset.items():
        names = ds.features["category"].names
        counts = {}
        for category in ds["category"]:
            counts[names[category]] = counts.get(names[category], 0) + 1
        summary = ", ".join(f"{name} {counts[name]}" for name in names if name in counts)
        lines.append(f"{split}: {ds.num_rows} questions on {len(set(ds['image_filename']))} images ({summary})")
        for row in ds.select(range(min(rows, ds.num_rows))):
            image = row["image"]
            lines.append(
                f"  {row['question_id']:<16} [{names[row['category']]}/{row['template']}] {row['question']}"
                f"  -> {row['label']}   (image {row['image_filename']} {image.size[0]}x{image.size[1]})"
            )
    return "\n".join(lines)


@progress_bars(False)  # the demo prints its own summary; a caller's setting is restored after it
def run_demo(
    out_dir: str = DEFAULT_OUT,
    num_scenes: int = 30,
    seed: int = 0,
    num_proc: int | None = None,
    rows: int = 3,
    builder_kwargs: dict | None = None,
    stream=None,
) -> dict[str, datasets.DatasetDict]:
    """Make the world, build and export both configurations, load them back, print them.

    Only :data:`DEMO_FOLDERS` are written, and only those an earlier run created (else ``OwnershipError``).

    Example (about a minute: it builds and exports both configurations)::

        loaded = run_demo("/tmp/demo", num_scenes=10)
        sorted(loaded["multihop"])           # ['test', 'train', 'validation']
    """
    Integer(1, maximum=MAX_DEMO_SCENES)("num_scenes", num_scenes)
    Integer(0, maximum=MAX_ROWS_SHOWN)("rows", rows)
    Integer(1, maximum=MAX_WORKERS, optional=True)("num_proc", num_proc)
    for config_name in DEMO_CONFIGS:  # the builder options' checks, before the world is written
        ClevrMathConfig(name=config_name, **(builder_kwargs or {}))
    out_dir = os.path.abspath(out_dir)
    with ENTRY.demo_folder(out_dir, DEMO_FOLDERS, builder_kwargs) as (folder, _):  # refuses before anything is written
        return _run_demo(folder, out_dir, num_scenes, seed, num_proc, rows, builder_kwargs or {}, stream)


def _run_demo(folder: OutputFolder, out_dir: str, num_scenes: int, seed: int, num_proc: int | None,
              rows: int, builder_kwargs: dict, stream) -> dict[str, datasets.DatasetDict]:
    started = time.perf_counter()
    world = make_world(out_dir, num_scenes, seed)
    logger.info("synthetic CLEVR world: %s (%d scenes per split, seed %d)", world, num_scenes, seed)
    # The builds' cache lives in the demo folder's staging and goes with it (as the Clotho-AQA
    # demo's); a cache/ an earlier version recorded goes too, while unchanged.
    folder.add([], remove=[path for path in folder.record if path.startswith("cache/")])
    loaded = _build_and_show(world, out_dir, os.fspath(folder.scratch("cache")), num_proc, rows, builder_kwargs, stream)
    logger.info("demo finished in %.1f s; outputs in %s", time.perf_counter() - started, out_dir)
    return loaded


def _build_and_show(world: str, out_dir: str, cache_dir: str, num_proc: int | None, rows: int, builder_kwargs: dict,
                    stream):
    hub = os.path.join(out_dir, "hub")
    ENTRY.export_demo(hub, world, cache_dir, builder_kwargs, DEMO_CONFIGS, num_proc)
    logger.info("exported %s in the Hub layout: %s", ", ".join(DEMO_CONFIGS), hub)
    loaded = {}
    for config_name in DEMO_CONFIGS:
        loaded[config_name] = load_exported(hub, config_name, cache_dir=cache_dir)
        print(f"{config_name}: load_dataset({hub!r}, {config_name!r})", file=stream)
        print(describe(config_name, loaded[config_name], rows), file=stream)
    from clevr_math.evaluation import evaluate_demo

    evaluate_demo(hub, world, os.path.join(out_dir, "evaluation"), DEMO_CONFIGS, cache_dir=cache_dir, stream=stream)
    return loaded


@dataclasses.dataclass
class DemoPaths:
    """The path of the demo, declared with its role (its sub-folders are each written by their own command)."""

    out: str = option(DEFAULT_OUT, FilePath(), f"output folder (default: {DEFAULT_OUT}); the demo writes "
                      f"{', '.join(DEMO_FOLDERS)} in it and refuses to touch such folders that an earlier demo run "
                      "did not create", group="inputs and outputs", role="output_dir")


def add_demo_options(parser: argparse.ArgumentParser) -> None:
    """The flags of ``clevr-math demo`` that are its own (:class:`builder_utils.entry.DatasetEntry` adds the rest)."""
    parser.add_argument("--num_scenes", type=Integer(1, maximum=MAX_DEMO_SCENES).parse, default=30,
                        help="synthetic scenes per split (default: 30)")
    parser.add_argument("--seed", type=Integer(0, maximum=MAX_SEED).parse, default=0,
                        help="seed of the synthetic world (default: 0)")
    parser.add_argument("--num_proc", type=Integer(1, maximum=MAX_WORKERS).parse, default=None,
                        help="worker processes for the build")
    parser.add_argument("--rows", type=Integer(0, maximum=MAX_ROWS_SHOWN).parse, default=3,
                        help="rows to print per split (default: 3)")


def run_from_args(args: argparse.Namespace, builder_kwargs: dict, stream) -> None:
    if args.num_scenes < 1:
        args.parser.error("--num_scenes must be at least 1")
    run_demo(args.out, args.num_scenes, args.seed, args.num_proc, args.rows, builder_kwargs=builder_kwargs, stream=stream)
