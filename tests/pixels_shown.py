"""How many pixels each object shows in a rendered image, measured on the image itself.

Independent of the renderer's own object-index pass: a pixel shows object k when repainting
object k alone in another colour changes it (its shape, place, shadow and the other objects
stay as they are, so only what is seen of k changes).
"""

from __future__ import annotations

import numpy as np

from builder_utils.clevr.synth import DEFAULT_CAMERA, draw_scene

# for each colour, one far from it in every channel's light
_OTHER = {"gray": "yellow", "yellow": "blue", "blue": "yellow", "red": "cyan", "cyan": "red",
          "green": "purple", "purple": "green", "brown": "cyan"}


def shown_pixels(scene: dict, camera=DEFAULT_CAMERA, image: np.ndarray | None = None) -> list[int]:
    """Pixels of the image of ``scene`` (``image``, or drawn) that each object shows, in order."""
    base = np.asarray(draw_scene(scene, camera) if image is None else image)
    counts = []
    for k, obj in enumerate(scene["objects"]):
        objects = list(scene["objects"])
        objects[k] = dict(obj, color=_OTHER[obj["color"]])
        changed = (np.asarray(draw_scene({**scene, "objects": objects}, camera)) != base).any(axis=-1)
        counts.append(int(np.count_nonzero(changed)))
    return counts
