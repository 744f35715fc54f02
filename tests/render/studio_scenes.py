"""Hand-placed scenes for the render tests: each shows every shape, material and colour, spread
over the floor so that no object hides another's centre."""

from __future__ import annotations

from builder_utils.clevr.synth.camera import DEFAULT_CAMERA
from builder_utils.clevr.synth.scenes import compute_relationships
from builder_utils.clevr.synth.vocabulary import COLOR_RGB, SIZE_RADIUS

SHAPES = ("cube", "sphere", "cylinder")
MATERIALS = ("rubber", "metal")
# (right, behind) offsets in world units: a front row of four, a back row of four between them
SPOTS = [(-2.7, -1.6), (-0.9, -1.6), (0.9, -1.6), (2.7, -1.6), (-1.8, 1.4), (0.0, 1.4), (1.8, 1.4), (3.4, 1.4)]


def studio_scene(variant: int) -> dict:
    """Eight objects, one of each colour; ``variant`` shifts which shape, material and size each
    colour gets (variant 0 and 1 give every colour once in each material).

    >>> sorted(o["color"] for o in studio_scene(0)["objects"]) == sorted(COLOR_RGB)
    True
    """
    directions = DEFAULT_CAMERA.directions()
    right, behind = directions["right"], directions["behind"]
    objects = []
    for k, (colour, (u, v)) in enumerate(zip(sorted(COLOR_RGB), SPOTS)):
        size = "small" if (k + variant) % 4 == 3 else "large"
        r = SIZE_RADIUS[size]
        x, y = u * right[0] + v * behind[0], u * right[1] + v * behind[1]
        objects.append({"color": colour, "size": size, "material": MATERIALS[(k + variant) % 2],
                        "shape": SHAPES[(k + variant) % 3], "3d_coords": [x, y, r],
                        "rotation": 25.0 * k + 40.0 * variant, "pixel_coords": [0, 0, 0.0]})
    return {"image_index": variant, "image_filename": f"CLEVR_test_{variant:06d}.png", "split": "test",
            "objects": objects,
            "relationships": compute_relationships([o["3d_coords"] for o in objects], directions),
            "directions": directions}
