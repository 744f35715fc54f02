"""CLEVR's visibility rule, whatever the renderer: every object shows enough pixels, or placed again.

The rule without the drawing: a renderer supplies ``scene -> visible pixels of each object``.
Candidates come from the scene's own generator, so the scene kept depends on (seed, split, index,
settings) only, never on the workers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from itertools import islice

import numpy as np

#: CLEVR's ``--min_pixels_per_object``, in CLEVR v1.0's 480x320 frame.
DEFAULT_MIN_PIXELS_PER_OBJECT = 200
REFERENCE_WIDTH = 480
REFERENCE_HEIGHT = 320
#: Placements tried per scene before giving up (CLEVR's ``--max_retries``, here per scene: CLEVR
#: itself re-places an occluded scene without bound).
MAX_VISIBILITY_RETRIES = 50

PixelCounter = Callable[[dict], Sequence[int]]


class VisibilityError(RuntimeError):
    """No placement of a scene met the visibility floor within the retries; the message names it."""


def min_pixels_for(width: int, height: int, min_pixels_per_object: int = DEFAULT_MIN_PIXELS_PER_OBJECT) -> int:
    """The floor for an image of ``width`` x ``height``, scaled from the 480x320 frame by area.

    Example:
        >>> min_pixels_for(480, 320), min_pixels_for(320, 240), min_pixels_for(960, 640)
        (200, 100, 800)
    """
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if isinstance(min_pixels_per_object, bool) or not isinstance(min_pixels_per_object, (int, np.integer)) \
            or min_pixels_per_object < 0:
        raise ValueError(f"min_pixels_per_object must be a non-negative integer, got {min_pixels_per_object!r}")
    return math.ceil(min_pixels_per_object * width * height / (REFERENCE_WIDTH * REFERENCE_HEIGHT))


def count_visible_pixels(index_map, num_objects: int) -> list[int]:
    """Each object's pixels in an object-index map (0: background, ``k + 1``: object ``k``, larger: ignored).

    Example:
        >>> count_visible_pixels(np.array([[0, 1, 1], [2, 1, 0]], dtype=np.uint8), 3)
        [3, 1, 0]
    """
    flat = np.asarray(index_map).ravel()
    return np.bincount(flat, minlength=num_objects + 1)[1:num_objects + 1].tolist()


def under_floor(counts: Sequence[int], min_pixels: int) -> list[int]:
    """The objects (indices) that show fewer than ``min_pixels`` pixels.

    Example:
        >>> under_floor([250, 12, 200], 200)
        [1]
    """
    return [k for k, count in enumerate(counts) if count < min_pixels]


def place_visible(candidates: Iterable[dict], count_pixels: PixelCounter, min_pixels: int, *,
                  max_retries: int = MAX_VISIBILITY_RETRIES, name: str = "scene") -> dict:
    """The first of ``candidates`` (at most ``1 + max_retries``) whose every object shows
    ``min_pixels``; ``min_pixels`` 0 keeps the first uncounted, as CLEVR's 0 does.

    Example:
        >>> scenes = ({"objects": [{}, {}], "try": k} for k in range(10))
        >>> tried = []
        >>> def counts(scene):  # stands for a renderer's object-index pass
        ...     tried.append(scene["try"])
        ...     return [300, 150] if scene["try"] < 2 else [300, 250]
        >>> place_visible(scenes, counts, 200)["try"], tried
        (2, [0, 1, 2])
        >>> place_visible(({"objects": [{}]} for _ in range(5)), lambda s: [0], 200, max_retries=3)
        Traceback (most recent call last):
        ...
        builder_utils.clevr.synth.visibility.VisibilityError: scene: no placement in 4 left every object 200 visible pixels (last try: object 0 showed 0)
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"max_retries must be a non-negative integer, got {max_retries!r}")
    tried = 0
    worst = None
    for scene in islice(candidates, max_retries + 1):
        tried += 1
        if min_pixels <= 0:
            return scene
        counts = list(count_pixels(scene))
        if len(counts) != len(scene["objects"]):
            raise ValueError(f"{name}: the pixel counter gave {len(counts)} counts for {len(scene['objects'])} objects")
        hidden = under_floor(counts, min_pixels)
        if not hidden:
            return scene
        worst = (hidden[0], counts[hidden[0]])
    detail = f" (last try: object {worst[0]} showed {worst[1]})" if worst else ""
    raise VisibilityError(f"{name}: no placement in {tried} left every object {min_pixels} visible pixels{detail}")
