"""``clevr-math render``: draw any CLEVR-format scene file (official CLEVR's, a synthetic world's).

Where each scene's objects carry ``pixel_coords`` (official CLEVR, every synthetic world), the
camera of that image is recovered from them (:func:`~.camera.fit_camera`), so the image lines up
with the scene graph; otherwise CLEVR's camera without jitter. Lights are CLEVR's, unjittered.

Output layout (``--out DIR``), one file per scene named by its ``image_filename`` stem:

- ``images/<image_filename>``: the RGB image;
- ``masks/<stem>.png`` (``--masks``): 8-bit grey, 0 for the studio, ``k + 1`` for the scene's object ``k``;
- ``depth/<stem>.png`` (``--depth``): 16-bit grey, the depth along the camera's axis in
  thousandths of a world unit (value / 1000 = depth; 65535: 65.5 units or more).

A killed run is resumed by the same command: the files it finished are kept, the rest drawn.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image
from tqdm import tqdm

from builder_utils.cli_support import add_version, report_error, running
from builder_utils.interrupt import exit_status, stop_on_signals
from builder_utils.options import (MAX_WORKERS, FilePath, Flag, Integer, add_option_flags, option, options_from_args,
                                   path_values)
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder
from builder_utils.wait_points import wait_point

from ..distributed import DaskUnavailable, dask_client, ordered_map, require_dask
from .blender import (SCRIPT, BlenderSettings, SceneRenderFailed, blender_command, find_blender, renderer_for,
                      still_studio)
from .camera import Camera, fit_camera
from .controls import WorldOptions
from .folder import ImageOptions, blender_assets
from .render import RenderError, depth_map, draw_scene, object_index_map, write_png_atomic

logger = logging.getLogger(__name__)

COMMAND = "clevr-math render"
DEPTH_UNITS = 1000  # depth PNG values per world unit
CHUNK_SIZE = 8
BLENDER_CHUNK_SIZE = 2  # seconds a scene: a task is what a killed run loses at most


@dataclasses.dataclass(frozen=True)
class RenderPaths:
    """The scene file ``clevr-math render`` reads and the folder it writes."""

    scenes: str = option(None, FilePath(), "a CLEVR-format scene file ({\"info\": ..., \"scenes\": [...]})",
                         group="inputs and outputs", role="input", flag={"required": True})
    out: str = option(None, FilePath(), "output folder (created if missing): images/, masks/, depth/",
                      group="inputs and outputs", role="output_dir", flag={"required": True})


@dataclasses.dataclass(frozen=True)
class DrawOptions(ImageOptions):
    """``synth``'s image options (renderer, samples, device, size) less the visibility floor: the
    scenes are given, not placed. ``masks`` and ``depth`` add those outputs.

    Example:
        >>> DrawOptions().renderer, DrawOptions(masks=True).masks
        ('pillow', True)
    """

    min_pixels_per_object: int = option(0, Integer(0), "unused: a given scene is drawn as it is", group=None)
    masks: bool = option(False, Flag(), "also write masks/<stem>.png: each object's pixels (0: studio, k + 1: "
                         "object k)", group="outputs")
    depth: bool = option(False, Flag(), "also write depth/<stem>.png: depth along the camera's axis, 16-bit, "
                         "in thousandths of a world unit", group="outputs")


def scene_camera(scene: dict, width: int, height: int) -> Camera:
    """The camera of ``scene``'s image: fitted to its objects' ``pixel_coords`` (taken in the
    ``width`` x ``height`` frame) when every object has them, else CLEVR's camera.

    Example:
        >>> truth = Camera(location=(7.9, -6.2, 5.1))
        >>> objs = [{"3d_coords": p, "pixel_coords": [round(c) for c in truth.project_point(p)[:2]] + [0.0]}
        ...         for p in ([1.0, 2.0, 0.35], [-2.0, 0.5, 0.7], [0.0, -2.5, 0.35])]
        >>> [round(c, 1) for c in scene_camera({"objects": objs}, 480, 320).location]
        [7.9, -6.2, 5.1]
    """
    objects = scene.get("objects") or []
    have = [o for o in objects if isinstance(o.get("pixel_coords"), (list, tuple)) and len(o["pixel_coords"]) >= 2]
    if len(have) >= 2 and len(have) == len(objects):
        camera, _ = fit_camera([o["3d_coords"] for o in have], [o["pixel_coords"][:2] for o in have], width, height)
        return camera
    return Camera(width=width, height=height)


def _stem(scene: dict) -> str:
    return Path(scene["image_filename"]).stem


def planned_files(scenes: Sequence[dict], options: DrawOptions) -> list[str]:
    """Every file (relative path) a run writes for ``scenes``."""
    paths = []
    for scene in scenes:
        paths.append(f"images/{scene['image_filename']}")
        if options.masks:
            paths.append(f"masks/{_stem(scene)}.png")
        if options.depth:
            paths.append(f"depth/{_stem(scene)}.png")
    return paths


def _save_grey(array: np.ndarray, path: Path) -> None:
    # uint8: an "L" image; uint16: "I;16", which Pillow writes as a 16-bit grey PNG
    write_png_atomic(Image.fromarray(np.ascontiguousarray(array)), path)


def _depth_png(depth: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(depth * DEPTH_UNITS), 0, 65535).astype(np.uint16)


def _draw_pillow(scene: dict, stage: Path, options: DrawOptions) -> None:
    camera = scene_camera(scene, options.width, options.height)
    write_png_atomic(draw_scene(scene, camera), stage / "images" / scene["image_filename"])
    if options.masks or options.depth:
        labels = np.asarray(object_index_map(scene, camera))
        if options.masks:
            _save_grey(labels, stage / "masks" / f"{_stem(scene)}.png")
        if options.depth:
            _save_grey(_depth_png(depth_map(scene, camera, labels)), stage / "depth" / f"{_stem(scene)}.png")


def _check_controls(options: DrawOptions) -> None:
    """A control that means nothing here is refused in one line, never silently ignored."""
    if options.renderer == "pillow" and options.given_for_blender():
        raise ValueError(f"{options.given_for_blender()[0]}: a Blender control, meaningless for --renderer pillow; "
                         "use --renderer blender or drop it")
    if options.save_blendfiles:
        raise ValueError("--save_blendfiles: render writes images, masks and depth only; save .blend files with "
                         "clevr-math synth --renderer blender --save_blendfiles")


def _draw_blender(scene: dict, stage: Path, options: DrawOptions, executable: str) -> None:
    camera = scene_camera(scene, options.width, options.height)
    # the same drawing controls as synth's (bounces, tile size, CLEVR's own asset files)
    settings = BlenderSettings(width=options.width, height=options.height, samples=options.samples,
                               device=options.device, min_bounces=options.render_min_bounces,
                               max_bounces=options.render_max_bounces, tile_size=options.render_tile_size,
                               assets=blender_assets(options, WorldOptions()))
    renderer = renderer_for(blender_command(executable), settings)
    studio = still_studio(camera.location)
    scratch = stage / "images"
    if options.masks:
        labels, _ = renderer.index_map(scene, studio, scratch)
        _save_grey(labels.astype(np.uint8), stage / "masks" / f"{_stem(scene)}.png")
    if options.depth:
        _save_grey(_depth_png(renderer.depth_map(scene, studio, scratch)), stage / "depth" / f"{_stem(scene)}.png")
    renderer.render({**scene, "_studio": studio}, stage / "images" / scene["image_filename"])


def draw_chunk(scenes: list[dict], stage: str, options: DrawOptions, executable: str | None) -> list[str]:
    """Draw ``scenes`` into ``stage`` (skipping those whose files are all there); returns the names
    drawn. Runs on any worker."""
    stage_path, drawn = Path(stage), []
    for scene in scenes:
        if all((stage_path / rel).is_file() for rel in planned_files([scene], options)):
            continue  # finished by a killed run
        if options.renderer == "blender":
            _draw_blender(scene, stage_path, options, executable)
        else:
            _draw_pillow(scene, stage_path, options)
        drawn.append(scene["image_filename"])
    return drawn


def _resume_key(scene_bytes: bytes, options: DrawOptions) -> str:
    """Names the staging folder a killed run leaves: same scene file, options and studio, same key."""
    settings = dataclasses.asdict(options)
    del settings["device"], settings["blender"]  # where it draws, not what
    what = json.dumps({"scenes": hashlib.sha256(scene_bytes).hexdigest(), "options": settings,
                       "script": hashlib.sha256(SCRIPT.read_bytes()).hexdigest()}, sort_keys=True)
    return "render-" + hashlib.sha256(what.encode("utf-8")).hexdigest()[:16]


def _load(path: str) -> list[dict]:
    from builder_utils.clevr.scenes import load_scenes

    scenes = list(load_scenes(path))
    names = [s.get("image_filename") for s in scenes]
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.endswith(".png") or "/" in name or name.startswith("."):
            raise ValueError(f"{path}: scene {i}: 'image_filename' must be a plain .png file name, got {name!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: two scenes share the image_filename {next(n for n in names if names.count(n) > 1)!r}")
    return scenes


def render_scene_file(scenes_path: str | os.PathLike, out_dir: str | os.PathLike, options: DrawOptions | None = None,
                      *, num_proc: int = 1, dask: str | None = None, overwrite: bool = False,
                      progress: bool = False) -> Path:
    """Draw every scene of a CLEVR-format scene file into ``out_dir`` (layout: module docstring).

    Example:
        >>> import tempfile
        >>> from builder_utils.clevr.synth import write_clevr_folder
        >>> world = write_clevr_folder(tempfile.mkdtemp(), {"val": 2}, seed=0, render=False, progress=False)
        >>> out = render_scene_file(world / "scenes" / "CLEVR_val_scenes.json", tempfile.mkdtemp(),
        ...                         DrawOptions(masks=True, depth=True))
        >>> sorted(p.name for p in (out / "masks").iterdir())
        ['CLEVR_val_000000.png', 'CLEVR_val_000001.png']
    """
    options = DrawOptions() if options is None else options
    Integer(1, maximum=MAX_WORKERS)("num_proc", num_proc)
    scenes_path = os.fspath(scenes_path)
    executable = None
    if options.renderer == "blender":
        executable = find_blender(options.blender)[0]  # one error line before anything is written
    if dask is not None:
        require_dask()
        out_dir = Path(out_dir).absolute()  # workers write into it: a path that means the same everywhere
    declared = path_values(RenderPaths(scenes_path, os.fspath(out_dir)), options)
    resume = _resume_key(Path(scenes_path).read_bytes(), options)
    # opened first: an output over the scene file (or any input) is refused before it is read
    with OutputFolder.open(out_dir, command=COMMAND, declared=declared, overwrite=overwrite, resume=resume) as out:
        try:
            _check_controls(options)  # after the folder's checks: an output over an input is named first
            scenes = _load(scenes_path)
        except ValueError:
            out.resume = None  # nothing finished to keep: a bad scene file leaves no staging folder
            raise
        planned = planned_files(scenes, options)
        for rel in planned:
            out.check(rel)  # refused before any work
        for folder in ("images", "masks", "depth"):
            (out.stage / folder).mkdir(exist_ok=True)
        size = BLENDER_CHUNK_SIZE if options.renderer == "blender" else CHUNK_SIZE
        tasks = [(scenes[i:i + size], str(out.stage), options, executable) for i in range(0, len(scenes), size)]
        drawn = 0
        with tqdm(total=len(scenes), unit="scene", file=sys.stderr, disable=not progress, desc="render") as bar, \
                (dask_client(dask, num_proc) if dask is not None else contextlib.nullcontext()) as client, \
                contextlib.closing(ordered_map(draw_chunk, tasks, num_workers=num_proc, client=client)) as results:
            for task, names in zip(tasks, results):
                drawn += len(names)
                bar.update(len(task[0]))
                wait_point("render-chunk")
        logger.info("drew %d of %d scene(s); %d finished before were kept", drawn, len(scenes), len(scenes) - drawn)
        stale = [path for path, entry in out.record.items() if entry.command == COMMAND]
        out.add(planned, remove=stale)
    return Path(out_dir)


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """The command line of ``clevr-math render``.

    Example:
        >>> args = build_parser().parse_args(["--scenes", "s.json", "--out", "o", "--masks"])
        >>> args.masks, args.depth, args.renderer
        (True, False, 'pillow')
    """
    parser = argparse.ArgumentParser(
        prog=prog, description="Draw any CLEVR-format scene file (official CLEVR's, a synthetic world's) into "
        "images/ (and masks/, depth/), each image's camera fitted to its objects' pixel_coords.")
    add_option_flags(parser, {"inputs and outputs": parser}, cls=RenderPaths)
    parser.add_argument("--num_proc", type=Integer(1, maximum=MAX_WORKERS).parse, default=1,
                        help="worker processes (output does not depend on it)")
    parser.add_argument("--dask", default=None, metavar="ADDRESS",
                        help="draw on Dask: 'local' (a LocalCluster of --num_proc processes) or a scheduler address; "
                             "--out must be on storage the workers share (needs the [dask] extra)")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings")
    add_option_flags(parser, cls=DrawOptions)
    return add_version(parser)


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of ``clevr-math render``; bad input: one line on stderr, exit status 2.

    Example:
        >>> main(["--scenes", "/nonexistent/scenes.json", "--out", "/tmp/x", "--quiet"])
        2
    """
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        options = options_from_args(args, DrawOptions)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        with stop_on_signals(), running(parser.prog, quiet=args.quiet) as progress:
            root = render_scene_file(args.scenes, args.out, options, num_proc=args.num_proc, dask=args.dask,
                                     overwrite=args.overwrite, progress=progress)
            logger.info("drew %s into %s", args.scenes, root)
    except (ValueError, OSError, DaskUnavailable, SceneRenderFailed, RenderError) as exc:
        return report_error(parser.prog, exc)
    except KeyboardInterrupt as stop:
        print(f"{parser.prog}: interrupted; run the same command again to finish (drawn files are kept)",
              file=sys.stderr)
        return exit_status(stop)
    return 0
