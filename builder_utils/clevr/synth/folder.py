"""Write a synthetic CLEVR release shaped like ``CLEVR_v1.0`` (scenes JSON + PNG images).

Layout::

    <out>/scenes/CLEVR_<split>_scenes.json
    <out>/images/<split>/CLEVR_<split>_NNNNNN.png

Every file goes through :mod:`builder_utils.ownership`: the whole world is written into a
hidden staging folder inside ``out_dir`` and moved into place at the end, so an interrupted run
(Ctrl-C, SIGTERM, a full disk) leaves nothing of the new world, and one killed by ``kill -9``
is finished or removed by the next run. Scenes and
images depend only on (seed, split, index), so the output is byte-identical for a seed whatever
``num_proc`` is, and on a Dask cluster (``dask="local"`` or a scheduler address: the workers
write the images, so ``out_dir`` must be on storage they share).

Data safety: a non-empty ``out_dir`` is refused unless ``overwrite=True``; then only what synth
wrote there before (the folder's record: every file, with its size and sha256) is replaced. A
file at one of our paths that is not ours is never replaced, even with ``overwrite``; nothing
is written through a symlinked sub-folder; files of our earlier run that the new one does not
write are removed while unchanged, nothing else.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, closing
from pathlib import Path

from tqdm import tqdm

from builder_utils.atomic import atomic_output
from builder_utils.cli_support import add_version, report_error, running
from builder_utils.interrupt import exit_status, stop_on_signals
from builder_utils.options import MAX_SEED, MAX_WORKERS, Integer
from builder_utils.ownership import OutputFolder, check_output
from builder_utils.wait_points import wait_point

from ..distributed import DaskUnavailable, dask_client, ordered_map, require_dask
from .render import render_scene
from .scenes import SPLITS, check_split, generate_scene, image_filename

logger = logging.getLogger(__name__)

LICENSE = "Creative Commons Attribution (CC BY 4.0)"
VERSION = "1.0"
# a fixed stamp rather than today's date, so that one seed always gives the same bytes
DATE = "synthetic"
CHUNK_SIZE = 64
COMMAND = "clevr-math synth"


def scene_file_info(split: str) -> dict[str, str]:
    """The ``info`` block of a synthetic scene file.

    Example:
        >>> scene_file_info("val")["split"]
        'val'
    """
    return {"split": split, "license": LICENSE, "version": VERSION, "date": DATE}


# Ten times CLEVR's largest split (70,000 scenes): each scene is an image on disk, and its scene
# record (about 2 KB) is held in memory until the scene file is written.
MAX_SCENES_PER_SPLIT = 10**6


def _counts(num_scenes: int | Mapping[str, int], splits: Sequence[str]) -> dict[str, int]:
    if isinstance(num_scenes, Mapping):
        counts = dict(num_scenes)
    else:
        if isinstance(splits, str):
            splits = [s for s in splits.split(",") if s]
        counts = {split: num_scenes for split in splits}
    if not counts:
        raise ValueError("no split to write: give at least one of " + ", ".join(SPLITS))
    for split, count in counts.items():
        check_split(split)
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_SCENES_PER_SPLIT:
            raise ValueError(f"number of scenes for split {split!r} must be an integer in 0..{MAX_SCENES_PER_SPLIT}, "
                             f"got {count!r}")
    return counts


def _make_chunk(seed: int, split: str, start: int, stop: int, image_dir: str | None) -> list[dict]:
    scenes = []
    for index in range(start, stop):
        scene = generate_scene(seed, split, index)
        if image_dir is not None:
            render_scene(scene, Path(image_dir) / scene["image_filename"])
        scenes.append(scene)
    return scenes


def _chunks(seed: int, split: str, count: int, image_dir: Path | None) -> list[tuple]:
    where = None if image_dir is None else str(image_dir)
    return [(seed, split, start, min(start + CHUNK_SIZE, count), where) for start in range(0, count, CHUNK_SIZE)]


def _counted(chunks: Iterator[list[dict]], bar: tqdm) -> Iterator[dict]:
    for chunk in chunks:
        bar.update(len(chunk))
        wait_point("scene-chunk")
        yield from chunk


def _write_scene_file(path: Path, split: str, scenes: Iterator[dict]) -> None:
    # streamed scene by scene so that 70,000 scenes never sit in memory at once; the bytes equal
    # json.dumps({"info": ..., "scenes": [...]}) with the default separators
    head = json.dumps({"info": scene_file_info(split), "scenes": []})[: -len("[]}")]
    with atomic_output(path) as fh:
        fh.write(head + "[")
        for i, scene in enumerate(scenes):
            fh.write((", " if i else "") + json.dumps(scene, allow_nan=False))
        fh.write("]}")


def _planned_files(counts: Mapping[str, int], render: bool) -> list[str]:
    """Every file (relative path) a run writes: the scene files and, when rendered, the images."""
    paths = []
    for split, count in counts.items():
        paths.append(f"scenes/CLEVR_{split}_scenes.json")
        if render:
            paths.extend(f"images/{split}/{image_filename(split, k)}" for k in range(count))
    return paths


def _check_out_dir(out: OutputFolder, planned: list[str], overwrite: bool) -> None:
    """Refuse a folder with files that are not ours unless ``overwrite``, and (always) a file
    at one of our paths that is not ours or a symlinked folder on the way to one."""
    theirs = out.user_files()
    if (theirs or out.record) and not overwrite:
        raise FileExistsError(f"{out.root}: the folder is not empty; pass --overwrite (overwrite=True) to replace "
                              "what synth wrote there before, or give a new folder")
    for rel in planned:
        out.check_target(rel)


def write_clevr_folder(
    out_dir: str | os.PathLike,
    num_scenes: int | Mapping[str, int],
    seed: int,
    splits: Sequence[str] = ("train", "val"),
    render: bool = True,
    progress: bool = True,
    num_proc: int = 1,
    *,
    overwrite: bool = False,
    dask: str | None = None,
) -> Path:
    """Generate a synthetic CLEVR_v1.0-shaped folder and return its path.

    ``num_scenes`` is either one count for every split in ``splits`` or a dict split -> count
    (then its keys are the splits written). ``render=False`` writes only the scene files.
    ``num_proc`` worker processes, or ``dask`` (``"local"``: a LocalCluster of ``num_proc``
    processes; or a scheduler address) render in parallel with the same bytes. A non-empty
    ``out_dir`` needs ``overwrite=True``, which replaces only what synth wrote there.

    Example:
        >>> import tempfile
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 2}, seed=0, progress=False)
        >>> sorted(p.name for p in (root / "images" / "val").iterdir())
        ['CLEVR_val_000000.png', 'CLEVR_val_000001.png']
        >>> root = write_clevr_folder(root, {"val": 1}, seed=0, progress=False, overwrite=True)
        >>> sorted(p.name for p in (root / "images" / "val").iterdir())     # the stale image is gone
        ['CLEVR_val_000000.png']
    """
    counts = _counts(num_scenes, splits)
    Integer(0, maximum=MAX_SEED)("seed", seed)
    Integer(1, maximum=MAX_WORKERS)("num_proc", num_proc)
    root = check_output(out_dir, "--out")
    if dask is not None:
        require_dask()  # before anything is written
        # workers write the images: they need a path that means the same on every machine
        root = root.absolute()
    planned = _planned_files(counts, render)
    with OutputFolder(root, COMMAND) as out:
        _check_out_dir(out, planned, overwrite)
        staging = out.staging()
        (staging / "scenes").mkdir()
        bar = tqdm(total=sum(counts.values()), unit="scene", file=sys.stderr, disable=not progress,
                   desc="synthetic CLEVR")
        try:
            with out.writing(), ExitStack() as stack:
                # one cluster for every split
                client = stack.enter_context(dask_client(dask, num_proc)) if dask is not None else None
                for split, count in counts.items():
                    image_dir = staging / "images" / split if render else None
                    if image_dir is not None:
                        image_dir.mkdir(parents=True, exist_ok=True)
                    # results come back in task order, so the file does not depend on scheduling
                    # closed by the stack on an interruption: the pool's workers are gone before
                    # the staging folder they write into is removed
                    results = stack.enter_context(closing(ordered_map(
                        _make_chunk, _chunks(seed, split, count, image_dir), num_workers=num_proc, client=client)))
                    _write_scene_file(staging / "scenes" / f"CLEVR_{split}_scenes.json", split, _counted(results, bar))
        finally:
            bar.close()
        stale = [path for path, entry in out.record.items() if entry.command == COMMAND]
        out.commit(staging, dict.fromkeys(planned), remove=stale)
    return root


def _parse_counts(text: str) -> int | dict[str, int]:
    """``"100"`` or ``"train=100,val=20"``."""
    text = text.strip()
    if "=" not in text:
        return int(text)
    counts = {}
    for part in text.split(","):
        split, _, value = part.partition("=")
        counts[split.strip()] = int(value)
    return counts


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command-line interface of the synthetic CLEVR writer.

    Example:
        >>> build_parser().parse_args(["--out", "x", "--num_scenes", "5"]).splits
        'train,val'
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write a synthetic CLEVR_v1.0-shaped folder: scenes/CLEVR_<split>_scenes.json "
        "and images/<split>/CLEVR_<split>_NNNNNN.png, identical for a given seed.",
    )
    parser.add_argument("--out", required=True, help="output folder (created if missing)")
    parser.add_argument(
        "--num_scenes",
        required=True,
        help="scenes per split: one number for every split in --splits, or per split as train=100,val=20 (then --splits is not needed)",
    )
    parser.add_argument("--seed", type=Integer(0, maximum=MAX_SEED).parse, default=0,
                        help="random seed (non-negative integer, default 0)")
    parser.add_argument("--splits", default="train,val", help=f"comma-separated splits among {', '.join(SPLITS)}")
    parser.add_argument("--no_render", action="store_true", help="write only the scene files, no images")
    parser.add_argument("--num_proc", type=Integer(1, maximum=MAX_WORKERS).parse, default=1,
                        help="worker processes (output does not depend on it)")
    parser.add_argument("--dask", default=None, metavar="ADDRESS",
                        help="render on Dask: 'local' (a LocalCluster of --num_proc processes) or a scheduler address "
                             "such as tcp://host:8786; --out must be on storage the workers share (needs the [dask] extra)")
    parser.add_argument("--overwrite", action="store_true",
                        help="write into a non-empty --out, replacing only what synth wrote there before")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings")
    return add_version(parser)


def main(argv: Sequence[str] | None = None, prog: str | None = None, required_splits: Sequence[str] = (),
         reader: str = "") -> int:
    """Entry point: ``python -m builder_utils.clevr.synth --out DIR --num_scenes N --seed S``.

    ``required_splits``: the splits ``reader`` (a builder reading the folder) cannot do without;
    a world without one of them is still written, with a warning naming the split and the fix.

    Example:
        >>> import tempfile
        >>> main(["--out", tempfile.mkdtemp(), "--num_scenes", "1", "--splits", "val", "--quiet"])
        0
    """
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        counts = _parse_counts(args.num_scenes)
    except ValueError:
        parser.error(f"--num_scenes: expected a number or split=number pairs, got {args.num_scenes!r}")
    splits = [s.strip() for s in args.splits.split(",") if s.strip()]
    named = list(counts) if isinstance(counts, dict) else splits
    for split in named:
        if split not in SPLITS:
            parser.error(f"unknown split {split!r}: choose from {', '.join(SPLITS)}")
    try:
        with stop_on_signals(), running(parser.prog, quiet=args.quiet) as progress:
            missing = [split for split in required_splits if split not in named]
            if missing:
                logger.warning(
                    "no %s scenes: %s needs the splits %s, so it will refuse this folder; add %s to --num_scenes",
                    " or ".join(missing), reader or "the reader", ", ".join(required_splits),
                    ",".join(f"{split}=N" for split in missing),
                )
            root = write_clevr_folder(
                args.out,
                counts,
                seed=args.seed,
                splits=splits,
                render=not args.no_render,
                progress=progress,
                num_proc=args.num_proc,
                overwrite=args.overwrite,
                dask=args.dask,
            )
            logger.info("wrote synthetic CLEVR to %s", root)
    except (ValueError, OSError, DaskUnavailable) as exc:
        return report_error(parser.prog, exc)  # one line: the arguments parsed fine
    except KeyboardInterrupt as stop:
        print(f"{parser.prog}: interrupted; the scene files of unfinished splits were not written", file=sys.stderr)
        return exit_status(stop)
    return 0
