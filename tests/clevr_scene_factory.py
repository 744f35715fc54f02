"""Tiny hand-built CLEVR scenes for tests (importable by every test module).

Objects are given as ``(size, color, material, shape, x, y)`` tuples on the ground plane;
relationships follow CLEVR's rule (the synthetic world's ``compute_relationships``) with axis
directions: object ``j`` is <dir> of object ``i`` when the dot product of ``coords_j - coords_i``
with the direction exceeds 0.2 (right = +x, left = -x, behind = +y, front = -y).

>>> scene = make_scene([("large", "red", "metal", "cube", 0, 0),
...                     ("small", "blue", "rubber", "sphere", 2, 0)])
>>> scene["relationships"]["right"]
[[1], []]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Sequence

from builder_utils.clevr.synth.scenes import compute_relationships, image_filename

DIRECTIONS = {
    "right": (1.0, 0.0, 0.0),
    "left": (-1.0, 0.0, 0.0),
    "behind": (0.0, 1.0, 0.0),
    "front": (0.0, -1.0, 0.0),
    "above": (0.0, 0.0, 1.0),
    "below": (0.0, 0.0, -1.0),
}
HEIGHT = {"small": 0.35, "large": 0.7}

ObjectSpec = tuple[str, str, str, str, float, float]


def make_object(size: str, color: str, material: str, shape: str, x: float, y: float) -> dict:
    """One scene object in the official format (``3d_coords``, ``pixel_coords``, ``rotation``)."""
    z = HEIGHT.get(size, 0.5)
    return {
        "color": color,
        "size": size,
        "rotation": 0.0,
        "shape": shape,
        "3d_coords": [float(x), float(y), z],
        "material": material,
        # A crude fixed projection: enough for code that reads pixel positions.
        "pixel_coords": [int(240 + 40 * x), int(160 - 25 * y), round(10.0 + y, 3)],
    }


def relationships(coords: Sequence[Sequence[float]]) -> dict[str, list[list[int]]]:
    """CLEVR's relationships for a list of 3D coordinates (sorted index lists per object)."""
    return compute_relationships(coords, DIRECTIONS)


def make_scene(objects: Iterable[ObjectSpec], *, image_index: int = 0, split: str = "test") -> dict:
    """A valid scene dict from ``(size, color, material, shape, x, y)`` tuples.

    >>> make_scene([("small", "gray", "rubber", "cylinder", 0, 0)], image_index=7)["image_filename"]
    'CLEVR_test_000007.png'
    """
    objs = [make_object(*spec) for spec in objects]
    return {
        "image_index": image_index,
        "objects": objs,
        "relationships": relationships([o["3d_coords"] for o in objs]),
        "image_filename": image_filename(split, image_index),
        "split": split,
        "directions": {name: list(vec) for name, vec in DIRECTIONS.items()},
    }


def make_scenes(object_lists: Iterable[Iterable[ObjectSpec]], *, split: str = "test") -> list[dict]:
    """Several scenes, numbered from 0."""
    return [make_scene(objs, image_index=k, split=split) for k, objs in enumerate(object_lists)]


def write_scene_file(path: str | Path, scenes: list[dict], *, split: str = "test", **dump_options) -> Path:
    """Write ``{"info", "scenes"}`` to ``path`` (``dump_options`` go to ``json.dump``)."""
    path = Path(path)
    document = {
        "info": {"split": split, "license": "CC BY 4.0", "version": "1.0", "date": "1/1/2026"},
        "scenes": scenes,
    }
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(document, fh, **dump_options)
    return path


# A small scene used across tests; positions chosen so relations are easy to read off:
#   0 large red metal cube     at (0, 0)
#   1 small red rubber sphere  at (2, 0)     right of 0
#   2 large blue rubber cylinder at (-2, 1)  left of 0 and 1, behind 0 and 1
#   3 small green metal sphere at (0, -2)    in front of 0, 1 and 2
SAMPLE_OBJECTS: list[ObjectSpec] = [
    ("large", "red", "metal", "cube", 0, 0),
    ("small", "red", "rubber", "sphere", 2, 0),
    ("large", "blue", "rubber", "cylinder", -2, 1),
    ("small", "green", "metal", "sphere", 0, -2),
]


def sample_scene() -> dict:
    """The four-object scene described above."""
    return make_scene(SAMPLE_OBJECTS)
