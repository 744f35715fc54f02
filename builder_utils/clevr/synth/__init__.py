"""A synthetic CLEVR world: random scene graphs, quick PNG renders and CLEVR_v1.0-shaped folders.

Use it to get CLEVR-format data without the 18 GB download: for tests, demos and benchmarks.
"""

from .camera import DEFAULT_CAMERA, IMAGE_HEIGHT, IMAGE_WIDTH, Camera
from .controls import WorldOptions, cogent_combos
from .folder import ImageOptions, main, write_clevr_folder
from .render import RenderError, draw_scene, object_index_map, render_scene, visible_pixels
from .scenes import SPLITS, WorldRules, compute_relationships, generate_scene, generate_scenes, scene_candidates
from .visibility import DEFAULT_MIN_PIXELS_PER_OBJECT, VisibilityError, min_pixels_for, place_visible

__all__ = [
    "Camera",
    "DEFAULT_CAMERA",
    "DEFAULT_MIN_PIXELS_PER_OBJECT",
    "IMAGE_HEIGHT",
    "IMAGE_WIDTH",
    "ImageOptions",
    "RenderError",
    "SPLITS",
    "compute_relationships",
    "draw_scene",
    "generate_scene",
    "generate_scenes",
    "VisibilityError",
    "WorldOptions",
    "WorldRules",
    "cogent_combos",
    "main",
    "min_pixels_for",
    "object_index_map",
    "place_visible",
    "render_scene",
    "scene_candidates",
    "visible_pixels",
    "write_clevr_folder",
]
