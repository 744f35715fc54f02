"""Write a synthetic CLEVR release shaped like ``CLEVR_v1.0`` (scenes JSON + PNG images).

Layout, determinism and data safety: README, "Synthetic CLEVR worlds" (a world killed by
``kill -9`` is finished or removed by the next run).
"""

from __future__ import annotations

import argparse
import dataclasses
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
from builder_utils.options import (MAX_SEED, MAX_WORKERS, Choice, FilePath, Flag, Instance, Integer, Words,
                                   add_option_flags, check_options, option, options_from_args, path_values)
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder
from builder_utils.wait_points import wait_point

from ..distributed import DaskUnavailable, dask_client, in_this_process, ordered_map, require_dask
from .blender import BLENDER_ENV, DEFAULT_SAMPLES, DEVICES, FAILED, BlenderJob, BlenderRenderer, BlenderSettings, SceneRenderFailed, \
    find_blender, render_chunk, renderer_for, world_camera
from .camera import IMAGE_HEIGHT, IMAGE_WIDTH, Camera
from .render import render_scene
from .scenes import SPLITS, check_split, generate_scene, image_filename
from .visibility import DEFAULT_MIN_PIXELS_PER_OBJECT

logger = logging.getLogger(__name__)

LICENSE = "Creative Commons Attribution (CC BY 4.0)"
VERSION = "1.0"
# a fixed stamp rather than today's date, so that one seed always gives the same bytes
DATE = "synthetic"
CHUNK_SIZE = 64
BLENDER_CHUNK_SIZE = 2
COMMAND = "clevr-math synth"
#: The renderer that draws the images of a synthetic world, named in its scene files' ``info``.
RENDERER = "pillow"
RENDERERS = ("pillow", "blender")
MAX_SAMPLES = 4096
# bounds of the image options: 4096 px a side keeps an image (and its 2x working copy) far below
# Pillow's decompression-bomb limit; a floor above a whole image's pixels could never be met
MAX_IMAGE_SIDE = 4096
MAX_MIN_PIXELS_PER_OBJECT = 480 * 320


@dataclasses.dataclass(frozen=True)
class WorldPaths:
    """The folder ``clevr-math synth`` writes, declared with its role (``--blender`` is in ImageOptions)."""

    out: str = option(None, FilePath(), "output folder (created if missing)", group="inputs and outputs",
                      role="output_dir", flag={"required": True})


@dataclasses.dataclass(frozen=True)
class ImageOptions:
    """The images of a synthetic world: size, CLEVR's visibility floor and renderer (``pillow``/``blender``).

    Example:
        >>> ImageOptions().width, ImageOptions().height, ImageOptions().min_pixels_per_object
        (480, 320, 200)
        >>> ImageOptions(width=5)
        Traceback (most recent call last):
        ...
        ValueError: width must be an integer in 16..4096, got 5
    """

    width: int = option(IMAGE_WIDTH, Integer(16, maximum=MAX_IMAGE_SIDE),
                        "image width in pixels (default %(default)s, CLEVR v1.0's)", group="images")
    height: int = option(IMAGE_HEIGHT, Integer(16, maximum=MAX_IMAGE_SIDE),
                         "image height in pixels (default %(default)s, CLEVR v1.0's)", group="images")
    min_pixels_per_object: int = option(
        DEFAULT_MIN_PIXELS_PER_OBJECT, Integer(0, maximum=MAX_MIN_PIXELS_PER_OBJECT),
        "CLEVR's visibility floor: a scene where an object shows fewer pixels (counted at 480x320, scaled to the "
        "image's area) is placed again; 0: no check (default %(default)s, CLEVR's)", group="images")
    renderer: str = option(
        RENDERER, Choice(RENDERERS),
        "pillow: the fast stylised renderer (milliseconds an image); blender: Blender's Cycles in CLEVR's "
        "own look (seconds an image; needs Blender, see --blender) (default: %(default)s)", group="rendering")
    samples: int = option(
        DEFAULT_SAMPLES, Integer(1, maximum=MAX_SAMPLES),
        "--renderer blender: Cycles samples per pixel; 10 with OpenImageDenoise look like 64, small objects too "
        "(default: %(default)s)",
        group="rendering")
    device: str = option(
        "cpu", Choice(DEVICES),
        "--renderer blender: render on the CPU or the GPU (OptiX, CUDA or HIP, whichever Cycles finds) "
        "(default: %(default)s)", group="rendering")
    blender: str | None = option(
        None, FilePath(),
        f"--renderer blender: a Blender executable, or a Python that imports bpy (default: ${BLENDER_ENV}, "
        "else `blender` on PATH)", group="rendering", role="input", flag={"metavar": "PATH"})

    def __post_init__(self) -> None:
        check_options(self)

    def camera(self) -> Camera:
        """The camera that draws images of this size."""
        return Camera(width=self.width, height=self.height)


def scene_file_info(split: str, renderer: str = RENDERER) -> dict[str, str]:
    """The ``info`` block of a synthetic scene file: it names the renderer of the images.

    Example:
        >>> scene_file_info("val")["split"], scene_file_info("val")["renderer"]
        ('val', 'pillow')
    """
    return {"split": split, "license": LICENSE, "version": VERSION, "date": DATE, "renderer": renderer}


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


def _make_chunk(seed: int, split: str, start: int, stop: int, image_dir: str | None,
                images: ImageOptions) -> list[dict]:
    scenes = []
    for index in range(start, stop):
        # CLEVR's camera jitter, the same as --renderer blender's: one world per seed, whoever draws it
        camera = world_camera(seed, split, index, images.width, images.height)
        # the scene graph is kept only once every object shows enough pixels, with or without images
        scene = generate_scene(seed, split, index, camera, min_pixels_per_object=images.min_pixels_per_object)
        if image_dir is not None:
            render_scene(scene, Path(image_dir) / scene["image_filename"], camera)
        scenes.append(scene)
    return scenes


def _chunks(seed: int, split: str, count: int, image_dir: Path | None, images: ImageOptions) -> list[tuple]:
    where = None if image_dir is None else str(image_dir)
    return [(seed, split, start, min(start + CHUNK_SIZE, count), where, images)
            for start in range(0, count, CHUNK_SIZE)]


def _blender_chunks(seed: int, split: str, count: int, image_dir: Path | None, progress_dir: Path,
                    job: BlenderJob) -> list[tuple]:
    # a few scenes a task: Blender takes seconds a scene, and a task is what a re-run resumes
    size = BLENDER_CHUNK_SIZE
    where = None if image_dir is None else str(image_dir)
    return [(seed, split, start, min(start + size, count), where, str(progress_dir), job)
            for start in range(0, count, size)]


def _counted(chunks: Iterator[list[dict]], bar: tqdm, failed: list[str] | None = None) -> Iterator[dict]:
    for chunk in chunks:
        bar.update(len(chunk))
        wait_point("scene-chunk")
        for scene in chunk:
            if FAILED in scene:
                failed.append(scene[FAILED])
            else:
                yield scene


def _blender_job(images: ImageOptions, num_workers: int, dask: str | None) -> BlenderJob:
    """The Blender run's settings, its interpreter started once before anything is written (one error line)."""
    command = find_blender(images.blender)
    local = dask is None or dask == "local"
    # the cores of this machine shared between its workers; on a remote cluster, Blender's choice
    threads = max(1, (os.cpu_count() or 1) // num_workers) if local and num_workers > 1 else 0
    settings = BlenderSettings(width=images.width, height=images.height, samples=images.samples,
                               device=images.device, threads=threads)
    if in_this_process(2, num_workers=num_workers, dask=dask):
        version = renderer_for(command, settings).start()  # kept: this process renders
    else:
        with BlenderRenderer(command, settings) as probe:
            version = probe.start()
    return BlenderJob(command[0], settings, images.min_pixels_per_object, version)


def _write_scene_file(path: Path, split: str, scenes: Iterator[dict], renderer: str = RENDERER) -> None:
    # streamed scene by scene so that 70,000 scenes never sit in memory at once; the bytes equal
    # json.dumps({"info": ..., "scenes": [...]}) with the default separators
    head = json.dumps({"info": scene_file_info(split, renderer), "scenes": []})[: -len("[]}")]
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
    images: ImageOptions | None = None,
) -> Path:
    """Generate a synthetic CLEVR_v1.0-shaped folder and return its path.

    ``num_scenes``: one count per split, or a dict split -> count (its keys are the splits). The
    scene graphs depend on ``images`` (size, floor; Blender's index pass places its scenes), not
    on ``render``. A failed or killed Blender run is resumed by the same call.

    Example:
        >>> import tempfile
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 2}, seed=0, progress=False)
        >>> sorted(p.name for p in (root / "images" / "val").iterdir())
        ['CLEVR_val_000000.png', 'CLEVR_val_000001.png']
        >>> root = write_clevr_folder(root, {"val": 1}, seed=0, progress=False, overwrite=True)
        >>> sorted(p.name for p in (root / "images" / "val").iterdir())     # the stale image is gone
        ['CLEVR_val_000000.png']
    """
    # every argument checked at the call, one ValueError naming it
    if out_dir is None:
        raise ValueError("out_dir must be a path, got None")
    FilePath()("out_dir", out_dir)
    if not isinstance(splits, str):
        Words()("splits", splits)
    for name, value in (("render", render), ("progress", progress), ("overwrite", overwrite)):
        Flag()(name, value)
    Instance(str, optional=True)("dask", dask)
    counts = _counts(num_scenes, splits)
    images = ImageOptions() if images is None else images
    Instance(ImageOptions)("images", images)
    Integer(0, maximum=MAX_SEED)("seed", seed)
    Integer(1, maximum=MAX_WORKERS)("num_proc", num_proc)
    root = Path(out_dir)
    if dask is not None:
        require_dask()  # before anything is written
        # workers write the images: they need a path that means the same on every machine
        root = root.absolute()
    planned = _planned_files(counts, render)
    job = _blender_job(images, num_proc, dask) if images.renderer == "blender" else None
    failed: list[str] = []
    resume = job.resume_key(seed) if job is not None and render else None
    declared = path_values(WorldPaths(os.fspath(root)), images)  # the rules see --blender too
    with OutputFolder.open(root, command=COMMAND, declared=declared, overwrite=overwrite, resume=resume) as out:
        for rel in planned:
            out.check(rel)  # refused before any work
        staging = out.stage
        (staging / "scenes").mkdir(exist_ok=True)
        bar = tqdm(total=sum(counts.values()), unit="scene", file=sys.stderr, disable=not progress,
                   desc="synthetic CLEVR")
        try:
            with ExitStack() as stack:
                # one cluster for every split
                client = stack.enter_context(dask_client(dask, num_proc)) if dask is not None else None
                for split, count in counts.items():
                    image_dir = staging / "images" / split if render else None
                    if image_dir is not None:
                        image_dir.mkdir(parents=True, exist_ok=True)
                    if job is None:
                        fn, tasks = _make_chunk, _chunks(seed, split, count, image_dir, images)
                    else:
                        # the scenes finished, for a re-run (also the index pass's scratch folder)
                        progress_dir = staging / "progress" / split
                        progress_dir.mkdir(parents=True, exist_ok=True)
                        kept = sum(1 for _ in progress_dir.glob("*.json"))
                        if kept:
                            logger.info("%s: %d image(s) a stopped run finished are kept, not rendered again",
                                        split, kept)
                        fn, tasks = render_chunk, _blender_chunks(seed, split, count, image_dir, progress_dir, job)
                    # results come back in task order, so the file does not depend on scheduling
                    # closed by the stack on an interruption: the pool's workers are gone before
                    # the staging folder they write into is removed
                    results = stack.enter_context(closing(ordered_map(fn, tasks, num_workers=num_proc, client=client)))
                    _write_scene_file(staging / "scenes" / f"CLEVR_{split}_scenes.json", split,
                                      _counted(results, bar, failed), images.renderer)
        finally:
            bar.close()
        if failed:
            shown = "; ".join(failed[:3]) + (f"; and {len(failed) - 3} more" if len(failed) > 3 else "")
            raise SceneRenderFailed(f"{len(failed)} scene(s) not rendered: {shown}. Run the same command again: "
                                    "the images finished are kept and only the rest is rendered")
        stale = [path for path, entry in out.record.items() if entry.command == COMMAND]
        out.add(planned, remove=stale)
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
    add_option_flags(parser, {"inputs and outputs": parser}, cls=WorldPaths)
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
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings")
    add_option_flags(parser, cls=ImageOptions)
    return add_version(parser)


def main(argv: Sequence[str] | None = None, prog: str | None = None, required_splits: Sequence[str] = (),
         reader: str = "") -> int:
    """Entry point: ``python -m builder_utils.clevr.synth --out DIR --num_scenes N --seed S``.

    A world without one of ``required_splits`` (of the builder ``reader``) is written, with a warning.

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
        images = options_from_args(args, ImageOptions)
    except ValueError as exc:
        parser.error(str(exc))
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
                images=images,
            )
            logger.info("wrote synthetic CLEVR to %s", root)
    except (ValueError, OSError, DaskUnavailable, SceneRenderFailed) as exc:
        return report_error(parser.prog, exc)  # one line: the arguments parsed fine
    except KeyboardInterrupt as stop:
        print(f"{parser.prog}: interrupted; the scene files of unfinished splits were not written", file=sys.stderr)
        return exit_status(stop)
    return 0
