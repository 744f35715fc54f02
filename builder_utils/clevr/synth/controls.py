"""CLEVR's ``render_images.py`` controls that decide a world, each declared once (:class:`WorldOptions`).

What decides a world (counts, spacing, margins, retries, the shape-colour rule, the vocabulary,
the jitter, the file names, the ``info`` texts) is here and is recorded in every scene file's
``info``, so that a re-run tells "the same world: resume" from "another world: refuse". What only
draws it (samples, bounces, tile size, device, CLEVR's asset files) is in
:class:`builder_utils.clevr.synth.folder.ImageOptions`. The table of all 34 controls: README,
"Synthetic CLEVR worlds".

>>> WorldOptions(cogent="A").rules().combos[0]
('cube', ('blue', 'brown', 'gray', 'yellow'))
>>> WorldOptions(min_objects=6, max_objects=4)
Traceback (most recent call last):
...
ValueError: --min_objects 6 is above --max_objects 4
"""

from __future__ import annotations

import dataclasses
import os
from functools import lru_cache
from pathlib import Path

from builder_utils.json_input import load_json, shown_path
from builder_utils.options import Choice, FilePath, Integer, Number, Text, check_options, option

from .scenes import FILENAME_PREFIX, MARGIN, MAX_PLACEMENT_TRIES, MAX_WORLD_OBJECTS, MIN_GAP, WorldRules
from .vocabulary import load_properties

__all__ = ["CLEVR_JITTER", "COGENT_FILE", "GROUP", "REFUSED_OUTPUTS", "WorldOptions", "cogent_combos"]

GROUP = "world (CLEVR's render_images.py controls)"
COGENT_FILE = Path(__file__).resolve().with_name("cogent.json")
LICENSE = "Creative Commons Attribution (CC BY 4.0)"
VERSION = "1.0"
# a fixed stamp rather than today's date (CLEVR's default), so that one seed always gives the same bytes
DATE = "synthetic"
#: CLEVR's jitter defaults (uniform +-jitter per coordinate): what ``--renderer blender`` draws
#: its lights with when no jitter is given. The Pillow renderer has one fixed light.
CLEVR_JITTER = {"camera_jitter": 0.5, "key_light_jitter": 1.0, "fill_light_jitter": 1.0, "back_light_jitter": 1.0}
#: The camera decides the world (where objects show, which retries a scene takes), so its default is
#: one for both renderers: still, the worlds of earlier releases; ``--camera_jitter 0.5`` is CLEVR's.
#: One seed and these controls then give one world whichever renderer draws it (issue 35).
WORLD_CAMERA_JITTER = 0.0
LIGHT_JITTERS = ("key_light_jitter", "fill_light_jitter", "back_light_jitter")
# Bounds: spacing beyond 2 world units leaves no room for 3 large objects on the 6 x 6 floor; a
# camera moved more than 2 units leaves the floor's centre near the frame's edge; a light moved
# 3 units still lights the floor; 10,000 tries a spot are a few seconds a scene, 200 times CLEVR's.
MAX_SPACING = 2.0
MAX_CAMERA_JITTER = 2.0
MAX_LIGHT_JITTER = 3.0
MAX_RETRIES = 10_000
MAX_START_IDX = 10**9
#: CLEVR's output-path controls that our layout replaces, each with the one-line reason.
REFUSED_OUTPUTS = {
    "output_image_dir": "images go to OUT/images/<split>/ (CLEVR_v1.0's layout, what every reader takes): give --out",
    "output_scene_dir": "scene files go to OUT/scenes/ (CLEVR_v1.0's layout, what every reader takes): give --out",
    "output_scene_file": "each split's scenes go to OUT/scenes/CLEVR_<split>_scenes.json, already collected "
                         "(no collect_scenes.py step): give --out",
    "output_blend_dir": "with --save_blendfiles the .blend files go to OUT/blendfiles/<split>/, beside the images: "
                        "give --out",
}


@lru_cache(maxsize=None)
def _cogent() -> dict:
    return load_json(COGENT_FILE, what="CoGenT file")["conditions"]


def cogent_combos(condition: str) -> dict[str, list[str]]:
    """CLEVR-CoGenT's shape -> colours of ``condition`` ``"A"`` or ``"B"`` (our own data file, ``cogent.json``).

    Example:
        >>> cogent_combos("B")["cube"]
        ['cyan', 'green', 'purple', 'red']
    """
    if condition not in ("A", "B"):
        raise ValueError(f"cogent must be 'A' or 'B', got {condition!r}")
    return {shape: list(colours) for shape, colours in _cogent()[condition].items()}


def read_combos(path: str | os.PathLike) -> dict[str, list[str]]:
    """A ``--shape_color_combos_json`` file: ``{"cube": ["gray", "blue"], ...}`` (CLEVR's CoGenT_A.json format).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "combos.json"
        >>> _ = path.write_text('{"sphere": ["red"]}')
        >>> read_combos(path)
        {'sphere': ['red']}
    """
    data = load_json(path, what="shape-colour combinations file")
    where = shown_path(path)
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{where}: expected an object of shape -> list of colours")
    for shape, colours in data.items():
        if not isinstance(colours, list) or not colours or not all(isinstance(c, str) for c in colours):
            raise ValueError(f"{where}: {shape}: expected a non-empty list of colour names, got {colours!r}")
    return data


@dataclasses.dataclass(frozen=True)
class WorldOptions:
    """CLEVR's controls that decide a world's scenes (``render_images.py`` names, CLEVR's defaults).

    Example:
        >>> options = WorldOptions(start_idx=10, filename_prefix="CLEVR_CoGenT")
        >>> options.rules().filename_prefix, options.rules().max_retries
        ('CLEVR_CoGenT', 50)
        >>> WorldOptions(min_dist=-1)
        Traceback (most recent call last):
        ...
        ValueError: min_dist must be a finite number >= 0 and <= 2.0, got -1
    """

    min_objects: int = option(3, Integer(1, maximum=MAX_WORLD_OBJECTS),
                              "fewest objects in a scene (default %(default)s, CLEVR's)", group=GROUP)
    max_objects: int = option(10, Integer(1, maximum=MAX_WORLD_OBJECTS),
                              f"most objects in a scene, at most {MAX_WORLD_OBJECTS} (default %(default)s, CLEVR's); "
                              "a scene of more than 10 is placed with the crowded spacing (min_dist <= 0.15, "
                              "margin <= 0.25)", group=GROUP)
    min_dist: float = option(MIN_GAP, Number(minimum=0, maximum=MAX_SPACING),
                             "least free space between two objects' edges (default %(default)s, CLEVR's)", group=GROUP)
    margin: float = option(MARGIN, Number(minimum=0, maximum=MAX_SPACING),
                           "least distance between two objects along each cardinal direction, so that left, right, "
                           "front and behind are definite (default %(default)s, CLEVR's)", group=GROUP)
    max_retries: int = option(MAX_PLACEMENT_TRIES, Integer(1, maximum=MAX_RETRIES),
                              "spots tried for an object before the scene's placement starts again, and placements "
                              "tried before a scene that hides an object gives up (default %(default)s, CLEVR's)",
                              group=GROUP)
    shape_color_combos_json: str | os.PathLike | None = option(
        None, FilePath(), "a JSON file of shape -> allowed colours (CLEVR's CoGenT_A.json format); shapes it does "
        "not list are not drawn", group=GROUP, role="input", flag={"metavar": "PATH"})
    cogent: str | None = option(
        None, Choice(("A", "B"), optional=True),
        "CLEVR-CoGenT's condition: A (cubes gray/blue/brown/yellow, cylinders red/green/purple/cyan) or B "
        "(swapped); spheres any colour", group=GROUP)
    properties_json: str | os.PathLike | None = option(
        None, FilePath(), "the vocabulary (CLEVR's properties.json format: shapes, colors as 0-255 RGB, materials, "
        "sizes as radii); it names the scene graphs' values (default: CLEVR's)", group=GROUP, role="input",
        flag={"metavar": "PATH"})
    key_light_jitter: float | None = option(
        None, Number(minimum=0, maximum=MAX_LIGHT_JITTER, optional=True),
        "--renderer blender: key light moved by up to this much per axis (default: CLEVR's 1.0)", group=GROUP)
    fill_light_jitter: float | None = option(
        None, Number(minimum=0, maximum=MAX_LIGHT_JITTER, optional=True),
        "--renderer blender: fill light moved by up to this much per axis (default: CLEVR's 1.0)", group=GROUP)
    back_light_jitter: float | None = option(
        None, Number(minimum=0, maximum=MAX_LIGHT_JITTER, optional=True),
        "--renderer blender: back light moved by up to this much per axis (default: CLEVR's 1.0)", group=GROUP)
    camera_jitter: float | None = option(
        None, Number(minimum=0, maximum=MAX_CAMERA_JITTER, optional=True),
        "camera moved by up to this much per axis, a draw per scene; it decides the world, so its default is one "
        "for both renderers: none (CLEVR's is 0.5)", group=GROUP)
    start_idx: int = option(0, Integer(0, maximum=MAX_START_IDX),
                            "index of the first scene: a job's share of a split (default %(default)s)", group=GROUP)
    filename_prefix: str = option(FILENAME_PREFIX, Text(64, pattern=r"[A-Za-z0-9][A-Za-z0-9_-]*"),
                                  "image names {prefix}_{split}_{index:06d}.png (default %(default)s)", group=GROUP)
    version: str = option(VERSION, Text(64), "the scene files' info.version (default %(default)s)", group=GROUP)
    license: str = option(LICENSE, Text(200), "the scene files' info.license (default: %(default)s)", group=GROUP)
    date: str = option(DATE, Text(64), "the scene files' info.date (default %(default)s: a fixed text, so that one "
                       "seed gives the same bytes; CLEVR's default is the day of the run)", group=GROUP)

    def __post_init__(self) -> None:
        check_options(self)
        if self.min_objects > self.max_objects:
            raise ValueError(f"--min_objects {self.min_objects} is above --max_objects {self.max_objects}")
        if self.cogent is not None and self.shape_color_combos_json is not None:
            raise ValueError("--cogent and --shape_color_combos_json both set the shape-colour rule: give one")

    def combos(self) -> dict[str, list[str]] | None:
        """The shape-colour rule asked for (``--cogent`` or ``--shape_color_combos_json``), or None.

        Example:
            >>> WorldOptions().combos() is None, WorldOptions(cogent="A").combos()["sphere"][:2]
            (True, ['blue', 'brown'])
        """
        if self.cogent is not None:
            return cogent_combos(self.cogent)
        if self.shape_color_combos_json is not None:
            return read_combos(self.shape_color_combos_json)
        return None

    def rules(self) -> WorldRules:
        """The checked rules the scene generator draws with (files read once; errors name the file).

        Example:
            >>> WorldOptions(max_objects=4).rules().max_objects
            4
        """
        from .scenes import combos_of

        vocabulary = load_properties(self.properties_json) if self.properties_json is not None else None
        rules = WorldRules(min_objects=self.min_objects, max_objects=self.max_objects, min_dist=self.min_dist,
                           margin=self.margin, max_retries=self.max_retries, combos=combos_of(self.combos()),
                           vocabulary=vocabulary, filename_prefix=self.filename_prefix)
        vocab = rules.vocab()
        for shape, colours in rules.combos or ():
            unknown = [c for c in colours if c not in vocab.colors]
            if shape not in vocab.shapes or unknown:
                source = f"--cogent {self.cogent}" if self.cogent else shown_path(self.shape_color_combos_json)
                raise ValueError(f"{source}: {shape} -> {', '.join(unknown) or 'any colour'}: not in the vocabulary "
                                 f"(shapes {', '.join(vocab.shapes)}; colours {', '.join(vocab.colors)})")
        return rules

    def jitter(self, renderer: str) -> dict[str, float]:
        """The four jitters a ``renderer`` draws with: given ones, else the lights' CLEVR's (Blender) or none
        (Pillow), and the camera's :data:`WORLD_CAMERA_JITTER` whichever renderer (the camera decides the world).

        Example:
            >>> WorldOptions(camera_jitter=0.2).jitter("pillow")["camera_jitter"], WorldOptions().jitter("blender")
            (0.2, {'camera_jitter': 0.0, 'key_light_jitter': 1.0, 'fill_light_jitter': 1.0, 'back_light_jitter': 1.0})
        """
        return {name: (getattr(self, name) if getattr(self, name) is not None
                       else WORLD_CAMERA_JITTER if name == "camera_jitter"
                       else CLEVR_JITTER[name] if renderer == "blender" else 0.0) for name in CLEVR_JITTER}

    def shape_color_rule(self) -> dict | None:
        """The shape-colour rule as the scene files' ``info`` records it: its name and its combinations.

        Example:
            >>> WorldOptions(cogent="B").shape_color_rule()["name"]
            'CoGenT B'
        """
        combos = self.combos()
        if combos is None:
            return None
        name = f"CoGenT {self.cogent}" if self.cogent else f"shape_color_combos_json {Path(self.shape_color_combos_json).name}"
        return {"name": name, "combos": {shape: sorted(colours) for shape, colours in sorted(combos.items())}}

    def recorded(self, renderer: str) -> dict:
        """What the scene files' ``info`` records of these controls (file contents, never paths).

        Example:
            >>> WorldOptions(start_idx=3).recorded("pillow")["controls"]["start_idx"]
            3
        """
        vocab = self.rules().vocab()
        controls = {name: getattr(self, name) for name in ("min_objects", "max_objects", "min_dist", "margin",
                                                           "max_retries", "start_idx", "filename_prefix")}
        controls.update(self.jitter(renderer))
        recorded = {"controls": controls, "shape_color_rule": self.shape_color_rule()}
        if self.properties_json is not None:
            recorded["properties"] = {"shapes": list(vocab.shapes), "colors": {k: list(v) for k, v in vocab.rgb},
                                      "materials": list(vocab.materials), "sizes": dict(vocab.radius)}
        return recorded
