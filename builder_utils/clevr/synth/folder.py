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
from builder_utils.command import CommandParser
from builder_utils.interrupt import exit_status, stop_on_signals
from builder_utils.options import (MAX_SEED, MAX_WORKERS, Choice, FilePath, Flag, Instance, Integer, Words,
                                   add_option_flags, check_options, option, options_from_args, path_values)
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder, OwnershipError
from builder_utils.wait_points import wait_point

from ..distributed import DaskUnavailable, dask_client, in_this_process, ordered_map, require_dask
from .blender import BLENDER_ENV, DEFAULT_SAMPLES, DEVICES, FAILED, BlenderJob, BlenderRenderer, BlenderSettings, SceneRenderFailed, \
    find_blender, render_chunk, renderer_for
from .camera import IMAGE_HEIGHT, IMAGE_WIDTH, Camera
from .controls import LIGHT_JITTERS, REFUSED_OUTPUTS, WorldOptions
from .render import render_scene
from .scenes import SPLITS, WorldRules, check_split, generate_scene, image_filename
from .visibility import DEFAULT_MIN_PIXELS_PER_OBJECT
from .world_record import SplitPlan, plan_splits, refuse_foreign_clevr

logger = logging.getLogger(__name__)

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
# Cycles' bounces beyond 1,024 add nothing visible and multiply a pass's time; CLEVR uses 8.
# A tile beyond 8,192 px a side is the whole largest image.
MAX_BOUNCES = 1024
MAX_TILE_SIZE = 8192
BLENDER_ONLY = ("samples", "device", "blender", "render_min_bounces", "render_max_bounces", "render_tile_size",
                "save_blendfiles", "base_scene_blendfile", "shape_dir", "material_dir")


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
        "(default: %(default)s); --render_num_samples is CLEVR's name",
        group="rendering", aliases={"render_num_samples": None})
    device: str = option(
        "cpu", Choice(DEVICES),
        "--renderer blender: render on the CPU or the GPU (OptiX, CUDA or HIP, whichever Cycles finds) "
        "(default: %(default)s); CLEVR's --use_gpu 0|1 is --device cpu|gpu", group="rendering",
        aliases={"use_gpu": {"0": "cpu", "1": "gpu"}})
    blender: str | None = option(
        None, FilePath(),
        f"--renderer blender: a Blender executable, or a Python that imports bpy (default: ${BLENDER_ENV}, "
        "else `blender` on PATH)", group="rendering", role="input", flag={"metavar": "PATH"})
    render_min_bounces: int | None = option(
        None, Integer(0, maximum=MAX_BOUNCES, optional=True),
        "--renderer blender: Cycles' fewest light bounces (default: the studio's; CLEVR used 8)", group="rendering")
    render_max_bounces: int | None = option(
        None, Integer(0, maximum=MAX_BOUNCES, optional=True),
        "--renderer blender: Cycles' most light bounces (default: the studio's 4; CLEVR used 8)", group="rendering")
    render_tile_size: int | None = option(
        None, Integer(8, maximum=MAX_TILE_SIZE, optional=True),
        "--renderer blender: Cycles' tile size in pixels (default: Blender's; CLEVR used 256)", group="rendering")
    save_blendfiles: bool = option(
        False, Flag(), "--renderer blender: also save each scene's Blender file, as OUT/blendfiles/<split>/"
        "<image name>.blend (CLEVR's --save_blendfiles)", group="rendering")
    base_scene_blendfile: str | None = option(
        None, FilePath(), "--renderer blender: CLEVR's base_scene.blend (floor, lights, camera) from a copy of "
        "CLEVR's repository, in place of our studio", group="rendering", role="input", flag={"metavar": "PATH"})
    shape_dir: str | None = option(
        None, FilePath(), "--renderer blender: CLEVR's shapes folder (SmoothCube_v2.blend, ...), in place of our "
        "meshes", group="rendering", role="input_dir", flag={"metavar": "DIR"})
    material_dir: str | None = option(
        None, FilePath(), "--renderer blender: CLEVR's materials folder (Rubber.blend, MyMetal.blend), in place of "
        "our materials", group="rendering", role="input_dir", flag={"metavar": "DIR"})

    def __post_init__(self) -> None:
        check_options(self)

    def given_for_blender(self) -> list[str]:
        """The Blender-only options given other than their defaults (flag names), for a refusal with Pillow.

        Example:
            >>> ImageOptions(render_max_bounces=8, save_blendfiles=True).given_for_blender()
            ['--render_max_bounces', '--save_blendfiles']
        """
        defaults = ImageOptions.__dataclass_fields__
        return [f"--{name}" for name in BLENDER_ONLY if getattr(self, name) != defaults[name].default]

    def camera(self) -> Camera:
        """The camera that draws images of this size."""
        return Camera(width=self.width, height=self.height)


def scene_file_info(split: str, renderer: str = RENDERER, world: WorldOptions | None = None,
                    recorded: dict | None = None) -> dict:
    """The ``info`` block of a synthetic scene file: CLEVR's four fields, the renderer, and what made the world.

    ``recorded``: the seed, the count and the controls (see :func:`world_info`), so that a re-run
    tells the same world from another.

    Example:
        >>> scene_file_info("val")["split"], scene_file_info("val")["renderer"]
        ('val', 'pillow')
        >>> scene_file_info("val", world=WorldOptions(date="2026-12-03"))["date"]
        '2026-12-03'
    """
    world = world or WorldOptions()
    return {"split": split, "license": world.license, "version": world.version, "date": world.date,
            "renderer": renderer, **(recorded or {})}


def world_info(seed: int, count: int, world: WorldOptions, images: "ImageOptions", render: bool) -> dict:
    """What a split's scene file records of its making, beside CLEVR's fields: seed, ``num_images``,
    the world's controls, the shape-colour rule, the images' settings.

    Example:
        >>> info = world_info(0, 5, WorldOptions(cogent="B"), ImageOptions(), True)
        >>> info["shape_color_rule"]["name"], info["controls"]["num_images"], info["images"]["width"]
        ('CoGenT B', 5, 480)
    """
    recorded = world.recorded(images.renderer)
    recorded["controls"] = {"num_images": count, **recorded["controls"]}
    settings = {name: getattr(images, name) for name in ("width", "height", "min_pixels_per_object")}
    if images.renderer == "blender":
        settings.update({name: getattr(images, name) for name in ("samples", "render_min_bounces",
                                                                  "render_max_bounces", "render_tile_size",
                                                                  "save_blendfiles")})
        # the asset files' names: their contents are the user's copy of CLEVR's repository
        settings.update({name: None if getattr(images, name) is None else os.path.basename(
            os.path.normpath(getattr(images, name))) for name in ("base_scene_blendfile", "shape_dir", "material_dir")})
    settings["rendered"] = render
    return {"seed": seed, **recorded, "images": settings}


def check_combination(world: WorldOptions, images: "ImageOptions", render: bool) -> None:
    """Refuse a control that means nothing for the renderer asked for (one line, never silently ignored).

    Example:
        >>> check_combination(WorldOptions(key_light_jitter=0.5), ImageOptions(), True)
        Traceback (most recent call last):
        ...
        ValueError: --key_light_jitter: the pillow renderer has one fixed light, nothing to jitter; use --renderer blender or drop it
    """
    if images.renderer == "pillow":
        for name in LIGHT_JITTERS:
            if getattr(world, name) is not None:
                raise ValueError(f"--{name}: the pillow renderer has one fixed light, nothing to jitter; use "
                                 "--renderer blender or drop it")
        given = images.given_for_blender()
        if given:
            raise ValueError(f"{given[0]}: a Blender control, meaningless for --renderer pillow; use --renderer "
                             f"blender or drop it")
        if world.properties_json is not None and not world.rules().vocab().is_clevrs():
            raise ValueError(f"--properties_json {world.properties_json}: the pillow renderer draws CLEVR's own "
                             "colours and sizes only (a subset of them is fine); use --renderer blender for others")
    if not render and images.save_blendfiles:
        raise ValueError("--save_blendfiles with --no_render: no scene is rendered, so no Blender file is saved")
    if images.renderer == "blender":
        world.rules()  # the files it names are read (and refused in one line) before Blender starts


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
                images: ImageOptions, rules: WorldRules | None = None, camera_jitter: float = 0.0) -> list[dict]:
    from .blender import studio_for  # the studio's camera draw: the same camera whichever renderer draws

    fixed = images.camera()
    scenes = []
    for index in range(start, stop):
        camera = fixed if not camera_jitter else Camera(
            location=tuple(studio_for(seed, split, index, {"camera_jitter": camera_jitter})["camera"]),
            width=images.width, height=images.height)
        # the scene graph is kept only once every object shows enough pixels, with or without images
        scene = generate_scene(seed, split, index, camera, min_pixels_per_object=images.min_pixels_per_object,
                               rules=rules)
        if image_dir is not None:
            render_scene(scene, Path(image_dir) / scene["image_filename"], camera)
        scenes.append(scene)
    return scenes


def _chunks(seed: int, split: str, indices: range, image_dir: Path | None, images: ImageOptions,
            rules: WorldRules, camera_jitter: float) -> list[tuple]:
    where = None if image_dir is None else str(image_dir)
    return [(seed, split, start, min(start + CHUNK_SIZE, indices.stop), where, images, rules, camera_jitter)
            for start in range(indices.start, indices.stop, CHUNK_SIZE)]


def _blender_chunks(seed: int, split: str, indices: range, image_dir: Path | None, progress_dir: Path,
                    job: BlenderJob) -> list[tuple]:
    # a few scenes a task: Blender takes seconds a scene, and a task is what a re-run resumes
    size = BLENDER_CHUNK_SIZE
    where = None if image_dir is None else str(image_dir)
    return [(seed, split, start, min(start + size, indices.stop), where, str(progress_dir), job)
            for start in range(indices.start, indices.stop, size)]


def _counted(chunks: Iterator[list[dict]], bar: tqdm, failed: list[str] | None = None) -> Iterator[dict]:
    for chunk in chunks:
        bar.update(len(chunk))
        wait_point("scene-chunk")
        for scene in chunk:
            if FAILED in scene:
                failed.append(scene[FAILED])
            else:
                yield scene


def _blender_job(images: ImageOptions, num_workers: int, dask: str | None, world: WorldOptions,
                 blends: bool = False) -> BlenderJob:
    """The Blender run's settings, its interpreter started once before anything is written (one error line)."""
    command = find_blender(images.blender)
    local = dask is None or dask == "local"
    # the cores of this machine shared between its workers; on a remote cluster, Blender's choice
    threads = max(1, (os.cpu_count() or 1) // num_workers) if local and num_workers > 1 else 0
    rules = world.rules()
    vocab = rules.vocab()
    settings = BlenderSettings(width=images.width, height=images.height, samples=images.samples,
                               device=images.device, threads=threads, min_bounces=images.render_min_bounces,
                               max_bounces=images.render_max_bounces, tile_size=images.render_tile_size,
                               colours=vocab.rgb, radii=vocab.radius, assets=blender_assets(images, world))
    if in_this_process(2, num_workers=num_workers, dask=dask):
        version = renderer_for(command, settings).start()  # kept: this process renders
    else:
        with BlenderRenderer(command, settings) as probe:
            version = probe.start()
    return BlenderJob(command[0], settings, images.min_pixels_per_object, version, rules=rules,
                      jitter=tuple(sorted(world.jitter("blender").items())),
                      blend_dir="" if blends else None)  # the folder is the staging's, set once it is open


def blender_assets(images: ImageOptions, world: WorldOptions) -> tuple | None:
    """CLEVR's asset files for the studio (absolute paths), and the names its properties file gives
    them; None when none is given (the studio built in code).

    Example:
        >>> blender_assets(ImageOptions(), WorldOptions()) is None
        True
    """
    if images.base_scene_blendfile is None and images.shape_dir is None and images.material_dir is None:
        return None
    # the file names of CLEVR's repository, unless the properties file names others
    names = {"shapes": (("cube", "SmoothCube_v2"), ("cylinder", "SmoothCylinder"), ("sphere", "Sphere")),
             "materials": (("metal", "MyMetal"), ("rubber", "Rubber"))}
    if world.properties_json is not None:
        from builder_utils.json_input import load_json

        data = load_json(world.properties_json, what="properties file")
        names = {kind: tuple(sorted((k, str(v)) for k, v in data[kind].items())) for kind in names}
    paths = tuple(None if p is None else os.path.abspath(p)
                  for p in (images.base_scene_blendfile, images.shape_dir, images.material_dir))
    return (*paths, names["shapes"], names["materials"])


def _write_scene_file(path: Path, info: dict, scenes: Iterator[dict]) -> None:
    # streamed scene by scene so that 70,000 scenes never sit in memory at once; the bytes equal
    # json.dumps({"info": ..., "scenes": [...]}) with the default separators
    head = json.dumps({"info": info, "scenes": []})[: -len("[]}")]
    with atomic_output(path) as fh:
        fh.write(head + "[")
        for i, scene in enumerate(scenes):
            fh.write((", " if i else "") + json.dumps(scene, allow_nan=False))
        fh.write("]}")


def _planned_files(split: str, indices: range, render: bool, prefix: str, blends: bool) -> list[str]:
    """Every file (relative path) a run writes for one split: its scene file and, when rendered, its images."""
    paths = [f"scenes/CLEVR_{split}_scenes.json"]
    if render:
        names = [image_filename(split, k, prefix) for k in indices]
        paths.extend(f"images/{split}/{name}" for name in names)
        if blends:
            paths.extend(f"blendfiles/{split}/{name[: -len('.png')]}.blend" for name in names)
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
    world: WorldOptions | None = None,
    replace_worlds: bool = False,
) -> Path:
    """Generate a synthetic CLEVR_v1.0-shaped folder and return its path.

    ``num_scenes``: one count per split, or a dict split -> count (its keys are the splits). The
    scene graphs depend on ``world`` (CLEVR's controls) and ``images`` (size, floor; Blender's
    index pass places its scenes), not on ``render``. Into a world already there: a split made
    with the same arguments is resumed or left alone, one made with others is refused without
    ``overwrite`` (or ``replace_worlds``: that alone, never a user's file at one of our names;
    for a folder that is the caller's own, such as the demo's), and splits not named are kept
    byte for byte.

    Example:
        >>> import tempfile
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 2}, seed=0, progress=False)
        >>> sorted(p.name for p in (root / "images" / "val").iterdir())
        ['CLEVR_val_000000.png', 'CLEVR_val_000001.png']
        >>> root = write_clevr_folder(root, {"val": 1}, seed=0, progress=False, overwrite=True)
        >>> sorted(p.name for p in (root / "images" / "val").iterdir())     # the stale image is gone
        ['CLEVR_val_000000.png']
        >>> root = write_clevr_folder(root, {"test": 1}, seed=0, progress=False, world=WorldOptions(cogent="A"))
        >>> sorted(p.name for p in (root / "scenes").iterdir())  # a split added, the others kept
        ['CLEVR_test_scenes.json', 'CLEVR_val_scenes.json']
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
    world = WorldOptions() if world is None else world
    Instance(ImageOptions)("images", images)
    Instance(WorldOptions)("world", world)
    Flag()("replace_worlds", replace_worlds)
    Integer(0, maximum=MAX_SEED)("seed", seed)
    Integer(1, maximum=MAX_WORKERS)("num_proc", num_proc)
    root = Path(out_dir)
    if dask is not None:
        require_dask()  # before anything is written
        # workers write the images: they need a path that means the same on every machine
        root = root.absolute()
    blends = render and images.save_blendfiles
    indices = {split: range(world.start_idx, world.start_idx + count) for split, count in counts.items()}
    declared = path_values(WorldPaths(os.fspath(root)), images, world)  # the rules see every input file too
    if images.renderer == "blender":
        check_combination(world, images, render)  # before Blender starts
    job = _blender_job(images, num_proc, dask, world, blends) if images.renderer == "blender" else None
    resume = job.resume_key(seed) if job is not None and render else None
    with OutputFolder.open(root, command=COMMAND, declared=declared, overwrite=overwrite, resume=resume) as out:
        # after the path rules (an output over an input is named as such), before any work
        check_combination(world, images, render)
        rules = world.rules()
        wanted = {split: (scene_file_info(split, images.renderer, world, world_info(seed, count, world, images, render)),
                          _planned_files(split, indices[split], render, world.filename_prefix, blends))
                  for split, count in counts.items()}
        refuse_foreign_clevr(root, out.record)
        plans = [plan for plan in plan_splits(root, out.record, wanted, overwrite or replace_worlds, COMMAND)
                 if plan.action != "skip"]
        if not plans:
            logger.info("%s: every split asked for is there, made with these arguments; nothing to do", root)
            return root
        for plan in plans:
            for rel in plan.files:
                out.check(rel)  # refused before any work
        if job is not None and blends:
            job = dataclasses.replace(job, blend_dir=str(out.stage / "blendfiles"))
        _write_splits(out, plans, seed, indices, images, rules, world.jitter(images.renderer)["camera_jitter"],
                      job, render, progress, num_proc, dask)
        out.add([rel for plan in plans for rel in plan.files],
                remove=[rel for plan in plans for rel in plan.stale])
    return root


def _write_splits(out: OutputFolder, plans: list[SplitPlan], seed: int, indices: dict[str, range],
                  images: ImageOptions, rules: WorldRules, camera_jitter: float, job: BlenderJob | None,
                  render: bool, progress: bool, num_proc: int, dask: str | None) -> None:
    """Each planned split's images and scene file, into the staging folder of ``out``."""
    staging = out.stage
    (staging / "scenes").mkdir(exist_ok=True)
    failed: list[str] = []
    bar = tqdm(total=sum(len(indices[plan.split]) for plan in plans), unit="scene", file=sys.stderr,
               disable=not progress, desc="synthetic CLEVR")
    try:
        with ExitStack() as stack:
            # one cluster for every split
            client = stack.enter_context(dask_client(dask, num_proc)) if dask is not None else None
            for plan in plans:
                split = plan.split
                image_dir = staging / "images" / split if render else None
                if image_dir is not None:
                    image_dir.mkdir(parents=True, exist_ok=True)
                if job is None:
                    fn, tasks = _make_chunk, _chunks(seed, split, indices[split], image_dir, images, rules,
                                                     camera_jitter)
                else:
                    # the scenes finished, for a re-run (also the index pass's scratch folder)
                    progress_dir = staging / "progress" / split
                    progress_dir.mkdir(parents=True, exist_ok=True)
                    kept = sum(1 for _ in progress_dir.glob("*.json"))
                    if kept:
                        logger.info("%s: %d image(s) a stopped run finished are kept, not rendered again",
                                    split, kept)
                    fn, tasks = render_chunk, _blender_chunks(seed, split, indices[split], image_dir, progress_dir,
                                                              job)
                # results come back in task order, so the file does not depend on scheduling
                # closed by the stack on an interruption: the pool's workers are gone before
                # the staging folder they write into is removed
                results = stack.enter_context(closing(ordered_map(fn, tasks, num_workers=num_proc, client=client)))
                _write_scene_file(staging / "scenes" / f"CLEVR_{split}_scenes.json", plan.info,
                                  _counted(results, bar, failed))
    finally:
        bar.close()
    if failed:
        shown = "; ".join(failed[:3]) + (f"; and {len(failed) - 3} more" if len(failed) > 3 else "")
        raise SceneRenderFailed(f"{len(failed)} scene(s) not rendered: {shown}. Run the same command again: "
                                "the images finished are kept and only the rest is rendered")


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
    parser = CommandParser(
        prog=prog,
        description="Write a synthetic CLEVR_v1.0-shaped folder: scenes/CLEVR_<split>_scenes.json "
        "and images/<split>/CLEVR_<split>_NNNNNN.png, identical for a given seed.",
    )
    add_option_flags(parser, {"inputs and outputs": parser}, cls=WorldPaths)
    parser.add_argument(
        "--num_scenes", "--num_images",
        required=True, dest="num_scenes",
        help="scenes per split: one number for every split in --splits, or per split as train=100,val=20 (then "
             "--splits is not needed); --num_images is CLEVR's name",
    )
    parser.add_argument("--seed", type=Integer(0, maximum=MAX_SEED).parse, default=0,
                        help="random seed (non-negative integer, default 0)")
    parser.add_argument("--splits", "--split", default="train,val", dest="splits",
                        help=f"comma-separated splits among {', '.join(SPLITS)}; a split the folder lacks is added, "
                             "the others kept (--split is CLEVR's name)")
    parser.add_argument("--no_render", action="store_true", help="write only the scene files, no images")
    parser.add_argument("--num_proc", type=Integer(1, maximum=MAX_WORKERS).parse, default=1,
                        help="worker processes (output does not depend on it)")
    parser.add_argument("--dask", default=None, metavar="ADDRESS",
                        help="render on Dask: 'local' (a LocalCluster of --num_proc processes) or a scheduler address "
                             "such as tcp://host:8786; --out must be on storage the workers share (needs the [dask] extra)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a split made with other arguments (seed, counts, renderer, any control); "
                             "without it such a re-run is refused and changes nothing. Also: " + OVERWRITE_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings")
    add_option_flags(parser, cls=ImageOptions)
    add_option_flags(parser, cls=WorldOptions)
    refused = parser.add_argument_group("CLEVR's output paths (refused: the world's layout is CLEVR_v1.0's)")
    for name, reason in REFUSED_OUTPUTS.items():
        refused.add_argument(f"--{name}", default=None, metavar="PATH", help=f"refused: {reason}")
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
    # CLEVR's controls that our layout replaces, or that mean nothing together: one line each
    for name, reason in REFUSED_OUTPUTS.items():
        if getattr(args, name) is not None:
            return report_error(parser.prog, ValueError(f"--{name}: {reason}"))
    try:
        world = options_from_args(args, WorldOptions)  # their combinations: write_clevr_folder, one line too
    except ValueError as exc:
        return report_error(parser.prog, exc)
    try:
        with stop_on_signals(), running(parser.prog, quiet=args.quiet) as progress:
            # a split the folder has already counts: adding a test split to a world is no mistake
            missing = [split for split in required_splits if split not in named
                       and not (Path(args.out) / "scenes" / f"CLEVR_{split}_scenes.json").is_file()]
            if missing and set(named) == {"test"}:
                logger.info("a test world: give it to the builder beside the train and validation scenes, as "
                            "test_data_dir (`clevr-math export --data_dir CLEVR --test_data_dir %s --config multihop`)",
                            args.out)
            elif missing:
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
                world=world,
            )
            written = {split: counts[split] if isinstance(counts, dict) else counts for split in named}
            logger.info("wrote synthetic CLEVR to %s: %s%s", root,
                        ", ".join(f"{split} {n} scene(s)" for split, n in written.items()),
                        " (scene graphs only)" if args.no_render else ", a PNG image each")
    except (ValueError, OSError, DaskUnavailable, SceneRenderFailed, OwnershipError) as exc:
        return report_error(parser.prog, exc)  # one line: the arguments parsed fine
    except KeyboardInterrupt as stop:
        print(f"{parser.prog}: interrupted; the scene files of unfinished splits were not written", file=sys.stderr)
        return exit_status(stop)
    return 0
