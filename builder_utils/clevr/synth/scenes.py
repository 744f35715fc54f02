"""Random CLEVR scene graphs in the exact format of the official ``CLEVR_<split>_scenes.json``.

Placement follows CLEVR's renderer: objects within [-3, 3] x [-3, 3], ``min_dist`` between
surfaces and ``margin`` apart along both axes so that every spatial relation is unambiguous
(:class:`WorldRules`: CLEVR's controls, defaults CLEVR's). Scene k draws from its own generator,
the same whatever the number of scenes or the worker.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from .camera import CARDINAL_DIRECTIONS, DEFAULT_CAMERA, Camera
from .visibility import DEFAULT_MIN_PIXELS_PER_OBJECT, MAX_VISIBILITY_RETRIES, PixelCounter, min_pixels_for, \
    place_visible
from .vocabulary import Vocabulary, load_vocabulary

SPLITS = ("train", "val", "test")
MIN_OBJECTS = 3
MAX_OBJECTS = 10
# The most objects ``generate_scene(max_objects=...)`` places (more objects, larger answers).
# CLEVR's gap and axis margin fill the 6 x 6 floor at about 11 objects, so a scene of more than
# MAX_OBJECTS objects is placed with CROWDED_GAP and CROWDED_MARGIN (still above RELATION_EPS, so
# every pair keeps a definite relation on both axes) and more candidate spots; at 14 objects about
# one draw in four then fits (~30 ms a scene). Scenes of at most MAX_OBJECTS objects are unchanged.
MAX_WORLD_OBJECTS = 14
CROWDED_GAP = 0.15
CROWDED_MARGIN = 0.25
CROWDED_PLACEMENT_TRIES = 500
COORD_LIMIT = 3.0
MIN_GAP = 0.25  # free space between two object surfaces (world units)
MARGIN = 0.4  # minimum offset along each cardinal axis, so relations are never borderline
RELATION_EPS = 0.2  # CLEVR: j is <dir> of i when dot(c_j - c_i, dir) > 0.2
MAX_PLACEMENT_TRIES = 50
MAX_SCENE_TRIES = 1000
#: CLEVR's ``--filename_prefix``
FILENAME_PREFIX = "CLEVR"


@dataclass(frozen=True)
class WorldRules:
    """How a world's scenes are drawn: CLEVR's placement controls, its shape-colour rule, its vocabulary.

    Made from the checked, declared controls (``clevr-math synth`` flags,
    :class:`builder_utils.clevr.synth.controls.WorldOptions`); the defaults are CLEVR's and give
    the worlds of every earlier release. ``max_retries``: spots tried per object before the whole
    placement is drawn again, and placements tried per scene by the visibility rule. ``combos``:
    shape -> the colours it may take (CLEVR's ``--shape_color_combos_json``; shapes it does not
    list are not drawn). A scene of more than :data:`MAX_OBJECTS` objects is placed with at most
    ``CROWDED_GAP`` and ``CROWDED_MARGIN`` and at least ``CROWDED_PLACEMENT_TRIES`` tries.

    Example:
        >>> rules = WorldRules(min_objects=5, max_objects=5)
        >>> len(generate_scene(0, "val", 1, rules=rules)["objects"])
        5
    """

    min_objects: int = MIN_OBJECTS
    max_objects: int = MAX_OBJECTS
    min_dist: float = MIN_GAP
    margin: float = MARGIN
    max_retries: int = MAX_PLACEMENT_TRIES
    combos: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    vocabulary: Vocabulary | None = None
    filename_prefix: str = FILENAME_PREFIX

    def vocab(self) -> Vocabulary:
        """The vocabulary objects are drawn from (the default one when none is given)."""
        return self.vocabulary if self.vocabulary is not None else load_vocabulary()


def combos_of(colour_of_shape: Mapping[str, object] | None) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """A shape -> colour(s) mapping as :attr:`WorldRules.combos` (sorted, hashable); a single colour is a list of one.

    Example:
        >>> combos_of({"sphere": "red", "cube": ["gray", "blue"]})
        (('cube', ('blue', 'gray')), ('sphere', ('red',)))
    """
    if colour_of_shape is None:
        return None
    return tuple(sorted((shape, tuple(sorted({colours} if isinstance(colours, str) else set(colours))))
                        for shape, colours in colour_of_shape.items()))


def check_split(split: str) -> str:
    """Return ``split`` if it is a CLEVR split name, else raise ValueError naming the choices.

    Example:
        >>> check_split("val")
        'val'
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: choose from {', '.join(SPLITS)}")
    return split


def _check_count(name: str, value) -> None:
    # bool is an int subclass, but `seed=True` is a mistake, not 1
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")


def image_filename(split: str, image_index: int, prefix: str = FILENAME_PREFIX) -> str:
    """CLEVR's image file name for a split and index: ``{prefix}_{split}_{index:06d}.png``.

    Example:
        >>> image_filename("val", 7), image_filename("new", 12, "CLEVR_CoGenT")
        ('CLEVR_val_000007.png', 'CLEVR_CoGenT_new_000012.png')
    """
    return f"{prefix}_{split}_{image_index:06d}.png"


def scene_rng(seed: int, split: str, image_index: int) -> np.random.Generator:
    """The random generator of one scene, independent of every other scene's.

    Example:
        >>> float(scene_rng(0, "train", 3).random()) == float(scene_rng(0, "train", 3).random())
        True
    """
    # crc32 is a stable split code; Python's hash() is salted per process.
    split_code = zlib.crc32(split.encode("utf-8"))
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(split_code, image_index)))


def compute_relationships(coords: list[list[float]], directions: dict[str, list[float]]) -> dict[str, list[list[int]]]:
    """CLEVR's ``relationships``: for each relation and object i, the sorted j in that relation to i.

    Example:
        >>> dirs = {"left": [-1, 0, 0], "right": [1, 0, 0], "front": [0, -1, 0], "behind": [0, 1, 0]}
        >>> compute_relationships([[0, 0, 0], [1, 0, 0]], dirs)["right"]
        [[1], []]
    """
    relationships: dict[str, list[list[int]]] = {}
    for name in CARDINAL_DIRECTIONS:
        dx, dy, dz = directions[name]
        relationships[name] = [
            [
                j
                for j, cj in enumerate(coords)
                if j != i and (cj[0] - ci[0]) * dx + (cj[1] - ci[1]) * dy + (cj[2] - ci[2]) * dz > RELATION_EPS
            ]
            for i, ci in enumerate(coords)
        ]
    return relationships


def _place(rng: np.random.Generator, radii: list[float], axes: np.ndarray,
           rules: WorldRules) -> list[tuple[float, float, float]] | None:
    """Positions for objects of the given radii, or None when one finds no free spot."""
    gap, margin, tries = rules.min_dist, rules.margin, rules.max_retries
    if len(radii) > MAX_OBJECTS:
        gap, margin, tries = min(gap, CROWDED_GAP), min(margin, CROWDED_MARGIN), max(tries, CROWDED_PLACEMENT_TRIES)
    (a0, a1), (b0, b1) = axes.tolist()
    hypot = math.hypot
    placed: list[tuple[float, float, float]] = []
    for r in radii:
        # all candidate spots for this object are drawn in one call; the first free one wins.
        # Checked in plain Python, stopping at the first free spot: usually one of the first few,
        # so about 3 times faster than testing all of them with numpy (the same spot is chosen)
        for x, y in rng.uniform(-COORD_LIMIT, COORD_LIMIT, size=(tries, 2)).tolist():
            for px, py, pr in placed:
                dx, dy = x - px, y - py
                if (hypot(dx, dy) - (r + pr) < gap or abs(dx * a0 + dy * a1) < margin
                        or abs(dx * b0 + dy * b1) < margin):
                    break
            else:
                placed.append((x, y, r))
                break
        else:
            return None
    return placed


def _rules_for(rules: WorldRules | None, max_objects: int | None, colour_of_shape: Mapping | None) -> WorldRules:
    """``rules`` with the stream's two knobs (``max_objects``, the confounder's ``colour_of_shape``) applied."""
    rules = WorldRules() if rules is None else rules
    if max_objects is not None or colour_of_shape is not None:
        import dataclasses

        changes = {} if max_objects is None else {"max_objects": max_objects}
        if colour_of_shape is not None:
            changes["combos"] = combos_of(colour_of_shape)
        rules = dataclasses.replace(rules, **changes)
    return rules


def scene_candidates(seed: int, split: str, image_index: int, camera: Camera = DEFAULT_CAMERA, *,
                     max_objects: int | None = None, colour_of_shape: Mapping | None = None,
                     rules: WorldRules | None = None) -> Iterator[dict]:
    """Endless placements of one scene from its own generator, for the visibility rule to pick from.

    ``max_objects`` and ``colour_of_shape`` (shape -> a colour or a list of colours) override ``rules``.

    Example:
        >>> from itertools import islice
        >>> first, second = islice(scene_candidates(0, "val", 5), 2)
        >>> len(first["objects"]) == len(second["objects"]), first["objects"] != second["objects"]
        (True, True)
    """
    check_split(split)
    _check_count("seed", seed)
    _check_count("image_index", image_index)
    rules = _rules_for(rules, max_objects, colour_of_shape)
    if isinstance(rules.max_objects, bool) or not isinstance(rules.max_objects, int) \
            or not rules.min_objects <= rules.max_objects <= MAX_WORLD_OBJECTS:
        raise ValueError(f"max_objects must be an integer in {rules.min_objects}..{MAX_WORLD_OBJECTS}, "
                         f"got {rules.max_objects!r}")
    vocab = rules.vocab()
    for shape, colours in rules.combos or ():
        unknown = [c for c in colours if c not in vocab.colors]
        if shape not in vocab.shapes or unknown or not colours:
            raise ValueError(f"shape-colour rule: {shape} -> {list(colours)} is not in the vocabulary "
                             f"(shapes {', '.join(vocab.shapes)}; colours {', '.join(vocab.colors)})")
    return _candidates(int(seed), split, int(image_index), camera, rules)


def _candidates(seed: int, split: str, image_index: int, camera: Camera, rules: WorldRules) -> Iterator[dict]:
    vocab = rules.vocab()
    radius = vocab.size_radius()
    combos = dict(rules.combos) if rules.combos is not None else None
    shapes = vocab.shapes if combos is None else tuple(sorted(combos))
    rng = scene_rng(seed, split, image_index)
    directions = camera.directions()
    axes = np.array([directions[name][:2] for name in ("right", "behind")])

    # the object count is drawn once, as CLEVR does, so redraws do not bias it towards few objects
    count = int(rng.integers(rules.min_objects, rules.max_objects + 1))
    while True:
        for _ in range(MAX_SCENE_TRIES):
            sizes = [vocab.sizes[int(i)] for i in rng.integers(len(vocab.sizes), size=count)]
            radii = [radius[s] for s in sizes]
            placed = _place(rng, radii, axes, rules)
            if placed is not None:
                break
        else:  # practically unreachable: a 10-object scene fits with high probability
            raise RuntimeError(f"could not place objects for scene {split}/{image_index} (seed {seed})")

        objects = []
        for size, (x, y, r) in zip(sizes, placed):
            px, py, depth = camera.project_point((x, y, r))
            color = vocab.colors[int(rng.integers(len(vocab.colors)))]
            material = vocab.materials[int(rng.integers(len(vocab.materials)))]
            shape = shapes[int(rng.integers(len(shapes)))]
            if combos is not None:
                # uniform over the shape's colours (as CLEVR's combos); one colour draws nothing more,
                # so a one-colour rule (the stream's confounder) keeps every other draw of the scene
                allowed = combos[shape]
                color = allowed[int(rng.integers(len(allowed)))]
            objects.append(
                {
                    "color": color,
                    "size": size,
                    "material": material,
                    "shape": shape,
                    # every shape's centre at its radius above the floor, cubes too, as in
                    # CLEVR v1.0's released scene graphs
                    "3d_coords": [x, y, r],
                    "rotation": float(rng.uniform(0.0, 360.0)),
                    "pixel_coords": [int(round(px)), int(round(py)), float(depth)],
                }
            )
        yield {
            "image_index": image_index,
            "image_filename": image_filename(split, image_index, rules.filename_prefix),
            "split": split,
            "objects": objects,
            "relationships": compute_relationships([o["3d_coords"] for o in objects], directions),
            "directions": directions,
        }


def generate_scene(seed: int, split: str, image_index: int, camera: Camera = DEFAULT_CAMERA, *,
                   max_objects: int | None = None, colour_of_shape: Mapping | None = None,
                   min_pixels_per_object: int = DEFAULT_MIN_PIXELS_PER_OBJECT,
                   count_pixels: PixelCounter | None = None, rules: WorldRules | None = None) -> dict:
    """One random scene in the official CLEVR scene format, every object visible by CLEVR's rule.

    ``count_pixels`` defaults to the Pillow renderer's index pass. ``rules``: CLEVR's controls
    (:class:`WorldRules`); ``max_objects`` and ``colour_of_shape`` (shape -> colour or colours)
    override two of them. A one-colour-per-shape rule (a confounder) leaves the other draws unchanged.

    Example:
        >>> scene = generate_scene(0, "val", 5)
        >>> scene["image_filename"], 3 <= len(scene["objects"]) <= 10
        ('CLEVR_val_000005.png', True)
        >>> generate_scene(0, "val", 5, max_objects=10) == scene
        True
    """
    candidates = scene_candidates(seed, split, image_index, camera, max_objects=max_objects,
                                  colour_of_shape=colour_of_shape, rules=rules)
    retries = MAX_VISIBILITY_RETRIES if rules is None else rules.max_retries
    if count_pixels is None:
        from .render import visible_pixels  # the renderer draws scenes; scenes need it only here

        def count_pixels(scene: dict) -> list[int]:
            return visible_pixels(scene, camera)

    floor = min_pixels_for(camera.width, camera.height, min_pixels_per_object)
    return place_visible(candidates, count_pixels, floor, max_retries=retries,
                         name=f"scene {split}/{image_index} (seed {seed})")


def generate_scenes(num_scenes: int, seed: int, split: str = "train", start_index: int = 0) -> list[dict]:
    """``num_scenes`` random scenes with image indices ``start_index, start_index + 1, ...``.

    Example:
        >>> scenes = generate_scenes(3, seed=1, split="val", start_index=10)
        >>> [s["image_index"] for s in scenes]
        [10, 11, 12]
        >>> generate_scenes(1, seed=1, split="val", start_index=11) == scenes[1:2]
        True
    """
    _check_count("num_scenes", num_scenes)
    _check_count("start_index", start_index)
    return [generate_scene(seed, split, start_index + i) for i in range(int(num_scenes))]
