"""CLEVR's render_images.py controls with Blender for real (``make test-render``): CLEVR-style
jitter, a ``--properties_json`` vocabulary with a colour of its own, CLEVR's bounces and tile
size, and ``--save_blendfiles``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from builder_utils.clevr.synth import WorldOptions, write_clevr_folder
from builder_utils.clevr.synth.folder import ImageOptions
from builder_utils.ownership import read_record

# CLEVR's red and blue, and a pink CLEVR does not have: the studio draws what the file says
PROPERTIES = {"shapes": {"cube": "SmoothCube_v2", "sphere": "Sphere", "cylinder": "SmoothCylinder"},
              "colors": {"red": [173, 35, 35], "blue": [42, 75, 215], "pink": [255, 60, 200]},
              "materials": {"rubber": "Rubber"}, "sizes": {"large": 0.7, "small": 0.35}}
JITTER = {"key_light_jitter": 1.0, "fill_light_jitter": 1.0, "back_light_jitter": 1.0, "camera_jitter": 0.5}


def _linear(srgb: np.ndarray) -> np.ndarray:
    c = srgb / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _nearest(pixel: np.ndarray) -> str:
    seen = _linear(pixel)
    seen = seen / max(seen.sum(), 1e-9)
    rgb = {name: np.asarray(value, dtype=np.float64) for name, value in PROPERTIES["colors"].items()}
    return min(rgb, key=lambda name: float(np.abs(seen - rgb[name] / rgb[name].sum()).sum()))


@pytest.fixture(scope="module")
def jittered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("controls")
    properties = folder / "properties.json"
    properties.write_text(json.dumps(PROPERTIES))
    world = WorldOptions(properties_json=str(properties), **JITTER)
    images = ImageOptions(renderer="blender", samples=4, render_min_bounces=8, render_max_bounces=8,
                          render_tile_size=256, save_blendfiles=True)
    return write_clevr_folder(folder / "W", {"val": 3}, seed=8, images=images, world=world, progress=False)


def test_the_vocabulary_of_the_properties_file_is_drawn(jittered):
    # read as JSON: load_scenes checks the names against the question engine's metadata, which
    # knows no pink (generate-questions takes a --metadata_file that lists it)
    scenes = json.loads((jittered / "scenes" / "CLEVR_val_scenes.json").read_text())["scenes"]
    objects = [(scene, o) for scene in scenes for o in scene["objects"]]
    assert {o["color"] for _, o in objects} <= set(PROPERTIES["colors"]) and {o["material"] for _, o in objects} == {
        "rubber"}
    hits = total = 0
    for scene, obj in objects:
        with Image.open(jittered / "images" / "val" / scene["image_filename"]) as image:
            pixels = np.asarray(image.convert("RGB")).astype(np.float64)
        x, y = obj["pixel_coords"][:2]
        patch = pixels[max(0, y - 2): y + 3, max(0, x - 2): x + 3].reshape(-1, 3).mean(axis=0)
        total += 1
        hits += _nearest(patch) == obj["color"]  # rubber: the colour shows at the centre (unless occluded)
    assert total >= 6 and hits >= 0.75 * total, f"{hits} of {total} objects show their colour"


def test_the_jitter_is_recorded_and_moves_each_scene_s_camera(jittered):
    doc = json.loads((jittered / "scenes" / "CLEVR_val_scenes.json").read_text())
    assert {k: doc["info"]["controls"][k] for k in JITTER} == JITTER
    assert doc["info"]["images"]["render_max_bounces"] == 8 and doc["info"]["images"]["render_tile_size"] == 256
    directions = [json.dumps(scene["directions"]) for scene in doc["scenes"]]
    assert len(set(directions)) == 3  # each scene has a camera of its own


def test_save_blendfiles_writes_each_scene_s_blender_file(jittered):
    record, _ = read_record(jittered)
    blends = sorted(path for path in record if path.startswith("blendfiles/"))
    assert blends == [f"blendfiles/val/CLEVR_val_{k:06d}.blend" for k in range(3)]
    assert all((jittered / path).stat().st_size > 10_000 for path in blends)
