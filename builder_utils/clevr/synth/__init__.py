"""A synthetic CLEVR world: random scene graphs, quick PNG renders and CLEVR_v1.0-shaped folders.

Use it to get CLEVR-format data without the 18 GB download: for tests, demos and benchmarks.

Example:
    >>> from builder_utils.clevr.synth import generate_scenes, draw_scene
    >>> scene = generate_scenes(1, seed=0, split="val")[0]
    >>> draw_scene(scene).size
    (320, 240)
"""

from .camera import DEFAULT_CAMERA, IMAGE_HEIGHT, IMAGE_WIDTH, Camera
from .folder import main, write_clevr_folder
from .render import RenderError, draw_scene, render_scene
from .scenes import SPLITS, compute_relationships, generate_scene, generate_scenes

__all__ = [
    "Camera",
    "DEFAULT_CAMERA",
    "IMAGE_HEIGHT",
    "IMAGE_WIDTH",
    "RenderError",
    "SPLITS",
    "compute_relationships",
    "draw_scene",
    "generate_scene",
    "generate_scenes",
    "main",
    "render_scene",
    "write_clevr_folder",
]
