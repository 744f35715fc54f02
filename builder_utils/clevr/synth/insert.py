"""Objects added to an existing world, and a step world drawn: the two calls step worlds make.

The worlds of :mod:`builder_utils.clevr.steps` are made here (:func:`step_scenes`), and
everything they need from placement and rendering goes through two functions, so that a change of the placement rules or of the renderers is adapted in one
place: :func:`insert_objects` places new objects by the rules of a new world (floor limits, gap
and axis margins, crowded rules above ``MAX_OBJECTS``, CLEVR's visibility floor), and
:func:`draw_world` draws a scene graph with a given studio (the first image's camera).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence

import numpy as np

from ..executor import SceneIndex, execute
from ..steps import UnplaceableStep, operations
from .camera import DEFAULT_CAMERA, Camera, fit_camera
from .scenes import (COORD_LIMIT, CROWDED_GAP, CROWDED_MARGIN, CROWDED_PLACEMENT_TRIES, MARGIN, MAX_OBJECTS,
                     MAX_PLACEMENT_TRIES, MIN_GAP, compute_relationships)
from .visibility import DEFAULT_MIN_PIXELS_PER_OBJECT, MAX_VISIBILITY_RETRIES, min_pixels_for
from .vocabulary import SIZE_RADIUS, load_vocabulary

_ATTRIBUTES = ("size", "color", "material", "shape")
#: Rounds in which some new object found no free spot among its candidate draws before an insertion
#: gives up: the floor is full (redrawing rarely helps then, and each round costs every candidate).
MAX_FULL_FLOOR_ROUNDS = 8

__all__ = ["add_steps", "draw_world", "insert_objects", "step_rng", "step_scenes", "studio_camera",
           "visibility_floors", "world_png"]


def studio_camera(scene: dict) -> Camera:
    """The camera of a scene's first image: the synthetic world's, or one fitted to real CLEVR's
    ``pixel_coords`` (CLEVR jitters its camera per image; the fit moves the camera's location).

    Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> studio_camera(generate_scene(0, "val", 0)) is DEFAULT_CAMERA
        True
    """
    objects = scene.get("objects") or []
    if not objects or any(len(obj.get("pixel_coords") or ()) < 2 for obj in objects):
        return DEFAULT_CAMERA
    points = np.array([obj["3d_coords"] for obj in objects], dtype=np.float64)
    pixels = np.array([obj["pixel_coords"][:2] for obj in objects], dtype=np.float64)
    if np.abs(DEFAULT_CAMERA.project(points)[:, :2] - pixels).max() <= 1.0:
        return DEFAULT_CAMERA
    return fit_camera(points, pixels)[0]


def visibility_floors(scene: dict, camera: Camera, min_pixels_per_object: int | None = None) -> list[int]:
    """Per object of ``scene``, the pixels it must keep showing in every step, then the floor of a new
    object: CLEVR's floor, or an object's own count in the first world when that is lower (a real
    CLEVR object the Pillow renderer already shows less; a step never hides it further).

    Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> scene = generate_scene(0, "val", 0)
        >>> set(visibility_floors(scene, DEFAULT_CAMERA)), len(visibility_floors(scene, DEFAULT_CAMERA)) == len(scene["objects"]) + 1
        ({200}, True)
    """
    floor = min_pixels_for(camera.width, camera.height, DEFAULT_MIN_PIXELS_PER_OBJECT
                           if min_pixels_per_object is None else min_pixels_per_object)
    if floor == 0:
        return [0] * (len(scene["objects"]) + 1)
    # A scene's questions ask for the same counts: kept for the last few scenes (by their objects).
    key = (camera, json.dumps(scene["objects"], sort_keys=True))
    shown = _SHOWN.get(key)
    if shown is None:
        from .render import visible_pixels

        shown = _SHOWN[key] = visible_pixels(scene, camera)
        while len(_SHOWN) > 8:
            del _SHOWN[next(iter(_SHOWN))]
    return [min(floor, count) for count in shown] + [floor]


_SHOWN: dict[tuple, list[int]] = {}
_CHUNK = 32


def _spots(kept: Sequence[dict], radii: Sequence[float], rng: np.random.Generator, axes) -> list[tuple] | None:
    """Spots for new objects among ``kept`` by a new world's rules (the first free candidate of each
    object's draws), or None when one finds none. The candidates are tested at once with numpy: a
    nearly full floor tests many of them."""
    crowded = len(kept) + len(radii) > MAX_OBJECTS
    gap, margin = (CROWDED_GAP, CROWDED_MARGIN) if crowded else (MIN_GAP, MARGIN)
    tries = CROWDED_PLACEMENT_TRIES if crowded else MAX_PLACEMENT_TRIES
    placed = np.array([(obj["3d_coords"][0], obj["3d_coords"][1], SIZE_RADIUS.get(obj["size"], 0.7)) for obj in kept]
                      + [], dtype=np.float64).reshape(-1, 3)
    axes = np.asarray(axes, dtype=np.float64)  # (2 axes, 2 coordinates)
    new = []
    for r in radii:
        candidates = rng.uniform(-COORD_LIMIT, COORD_LIMIT, size=(tries, 2))
        for first in range(0, tries, _CHUNK):  # the first free spot is usually among the first few
            delta = candidates[first:first + _CHUNK, None, :] - placed[None, :, :2]  # (chunk, placed, 2)
            clear = np.hypot(delta[..., 0], delta[..., 1]) - (r + placed[None, :, 2]) >= gap
            clear &= (np.abs(delta @ axes.T) >= margin).all(axis=-1)
            free = np.flatnonzero(clear.all(axis=1))
            if free.size:
                break
        else:
            return None
        x, y = candidates[first + free[0]].tolist()
        placed = np.vstack([placed, (x, y, r)])
        new.append((x, y, r))
    return new


def insert_objects(scene: dict, kept: Sequence[dict], attributes: Sequence[dict], rng: np.random.Generator,
                   camera: Camera, floors: Sequence[int]) -> list[dict]:
    """New objects with the given ``attributes`` placed among ``kept`` by a new world's rules, every
    object of the result showing at least its ``floors`` entry (``kept`` first, then the new ones);
    at most ``MAX_VISIBILITY_RETRIES`` + 1 placements (``MAX_FULL_FLOOR_ROUNDS`` where no free spot is
    found), then :class:`~builder_utils.clevr.steps.UnplaceableStep`.

    Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> scene = generate_scene(0, "val", 0)
        >>> new = insert_objects(scene, scene["objects"], [{"size": "small", "color": "red", "material": "metal",
        ...                      "shape": "cube"}], np.random.default_rng(0), DEFAULT_CAMERA, [200] * 20)
        >>> new[0]["color"], new[0]["3d_coords"][2]
        ('red', 0.35)
    """
    from .render import visible_pixels

    directions = scene.get("directions") or camera.directions()
    axes = [directions["right"][:2], directions["behind"][:2]]
    radii = [SIZE_RADIUS[a["size"]] for a in attributes]
    full = 0
    for _ in range(MAX_VISIBILITY_RETRIES + 1):
        spots = _spots(kept, radii, rng, axes)
        if spots is None:
            full += 1
            if full >= MAX_FULL_FLOOR_ROUNDS:
                break
            continue
        new = []
        for attrs, (x, y, r) in zip(attributes, spots):
            px, py, depth = camera.project_point((x, y, r))
            new.append({**attrs, "3d_coords": [x, y, r], "rotation": float(rng.uniform(0.0, 360.0)),
                        "pixel_coords": [int(round(px)), int(round(py)), float(depth)]})
        shown = visible_pixels({"objects": [*kept, *new]}, camera) if max(floors, default=0) > 0 else None
        if shown is None or all(count >= floor for count, floor in zip(shown, floors)):
            return new
    raise UnplaceableStep(f"{scene.get('image_filename', 'scene')}: no free, visible spot for {len(attributes)} "
                          f"new object(s) among {len(kept)}")


def draw_world(scene: dict, camera: Camera, renderer: str = "pillow", *, studio: dict | None = None,
               blender=None):
    """A step world drawn with the first image's studio, as a PIL image: ``renderer`` "pillow" (the
    camera), or "blender" (``studio``: the first image's camera and lights, as
    :func:`~builder_utils.clevr.synth.blender.studio_for` gives them; ``blender``: a running
    :class:`~builder_utils.clevr.synth.blender.BlenderRenderer`).

    Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> draw_world(generate_scene(0, "val", 0), DEFAULT_CAMERA).size
        (480, 320)
    """
    if renderer == "pillow":
        from .render import draw_scene

        return draw_scene(scene, camera)
    if renderer != "blender":
        raise ValueError(f"draw_world draws with pillow or blender, not {renderer!r}")
    if studio is None or blender is None:
        raise ValueError("draw_world with blender needs the first image's studio and a BlenderRenderer")
    import tempfile
    from pathlib import Path

    from PIL import Image

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "world.png"
        blender.render({**scene, "image_filename": scene.get("image_filename", "world.png"), "_studio": studio}, path)
        with Image.open(path) as image:
            return image.convert("RGB")


def world_png(scene: dict, camera: Camera, renderer: str = "pillow") -> bytes:
    """:func:`draw_world` as PNG bytes.

    Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> world_png(generate_scene(0, "val", 0), DEFAULT_CAMERA)[:4]
        b'\\x89PNG'
    """
    from .render import encode_png

    return encode_png(draw_world(scene, camera, renderer))


def step_rng(seed: int, image_index, question: str) -> np.random.Generator:
    """The generator of one question's step worlds: the same for the same seed, image and question.

    Example:
        >>> float(step_rng(0, 3, "Q").random()) == float(step_rng(0, 3, "Q").random())
        True
    """
    digest = hashlib.blake2b(f"steps:{seed}:{image_index}:{question}".encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(digest, "big"))


def step_scenes(scene: dict, program: Sequence[dict], category: str | None, *, seed: int = 0,
                question: str = "", camera=None, min_pixels_per_object: int | None = None) -> list[dict]:
    """The scene graph after each operation of ``program`` on ``scene`` (CLEVR's scene format).

    Objects a step keeps are the first world's, unchanged (attributes, ``3d_coords``,
    ``pixel_coords``); inserted ones follow them. Raises :class:`UnplaceableStep` when an
    insertion finds no free, visible spot. Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> scene = generate_scene(0, "val", 1)
        >>> program = [{"function": "scene", "inputs": [], "value_inputs": []},
        ...            {"function": "count", "inputs": [0], "value_inputs": []},
        ...            {"function": "choose", "inputs": [0], "value_inputs": ["2"]},
        ...            {"function": "addition", "inputs": [1, 2], "value_inputs": []}]
        >>> steps = step_scenes(scene, program, "insertion", seed=0)
        >>> len(steps), len(steps[0]["objects"]) == len(scene["objects"]) + 2
        (1, True)
    """
    outputs = execute(program, SceneIndex(scene, validate=False))  # the generator's scene, validated already
    ops = operations(program, category, outputs)
    rng = step_rng(seed, scene.get("image_index"), question)
    if all(op.kind == "remove" for op in ops):
        camera = floors = None  # removals only uncover: no placement, no visibility count
    else:
        camera = camera or studio_camera(scene)
        floors = visibility_floors(scene, camera, min_pixels_per_object)
    present = list(range(len(scene["objects"])))  # first-world indices still there, in order
    added: list[dict] = []
    steps = []
    for op in ops:
        if op.kind == "remove":
            gone = set(op.removed)
            if op.count < len(op.removed):  # X of the group: which ones, from the seed
                candidates = [i for i in op.removed if i in present]
                gone = {candidates[int(j)] for j in rng.choice(len(candidates), size=op.count, replace=False)}
            present = [i for i in present if i not in gone]
        else:
            kept = [scene["objects"][i] for i in present] + added
            kept_floors = [floors[i] for i in present] + [floors[-1]] * len(added)
            new = insert_objects(scene, kept, [_open_attributes(op.attributes, rng) for _ in range(op.count)],
                                 rng, camera, kept_floors + [floors[-1]] * op.count)
            added = added + new
        steps.append(_step_scene(scene, [scene["objects"][i] for i in present] + added, len(steps) + 1))
    return steps


def _open_attributes(named: dict, rng: np.random.Generator) -> dict:
    vocab = load_vocabulary()
    choices = {"size": vocab.sizes, "color": vocab.colors, "material": vocab.materials, "shape": vocab.shapes}
    return {attr: named.get(attr) or choices[attr][int(rng.integers(len(choices[attr])))] for attr in _ATTRIBUTES}


def _step_scene(scene: dict, objects: list[dict], step: int) -> dict:
    directions = scene.get("directions") or DEFAULT_CAMERA.directions()
    out = {key: value for key, value in scene.items() if key not in ("objects", "relationships")}
    out["step"] = step
    out["objects"] = [dict(obj) for obj in objects]
    out["relationships"] = compute_relationships([obj["3d_coords"] for obj in objects], directions)
    return out


def add_steps(question: dict, scene: dict, seed: int) -> bool:
    """Put a generated question's step scene graphs in ``question["steps"]``; False when one cannot be
    placed: the ``on_question`` hook of :class:`~builder_utils.clevr.generate.QuestionGenerator`
    (``functools.partial(add_steps, seed=...)``), which then chooses another question.

    Example:
        >>> from builder_utils.clevr.synth import generate_scene
        >>> scene = generate_scene(0, "val", 1)
        >>> question = {"question": "Q", "category": "multihop", "program": [
        ...     {"function": "scene", "inputs": [], "value_inputs": []},
        ...     {"function": "count", "inputs": [0], "value_inputs": []},
        ...     {"function": "choose", "inputs": [0], "value_inputs": ["1"]},
        ...     {"function": "addition", "inputs": [1, 2], "value_inputs": []}]}
        >>> add_steps(question, scene, 0), len(question["steps"])
        (True, 1)
    """
    try:
        question["steps"] = step_scenes(scene, question["program"], question["category"], seed=seed,
                                        question=question["question"])
    except UnplaceableStep:
        return False
    return True
