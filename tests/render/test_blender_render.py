"""The Blender renderer for real (``make test-render``): colours, the visibility floor on the
object-index pass, metal highlights, deterministic scene graphs, and a resumed interrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.clevr.synth.folder import ImageOptions
from builder_utils.clevr.synth.blender import BlenderRenderer, BlenderSettings, find_blender, studio_for
from builder_utils.clevr.synth.visibility import count_visible_pixels, min_pixels_for
from builder_utils.clevr.synth.vocabulary import COLOR_RGB
from builder_utils.ownership import STAGING_PREFIX

sys.path.insert(0, str(Path(__file__).resolve().parent))
from studio_scenes import studio_scene  # noqa: E402

SEED = 5
WORLD = {"val": 3}
HIGHLIGHT = 235  # a pixel this bright in every channel is a white highlight


@pytest.fixture(scope="module")
def renderer():
    with BlenderRenderer(find_blender(), BlenderSettings()) as kept:
        yield kept


@pytest.fixture(scope="module")
def hand_rendered(renderer, tmp_path_factory):
    """The two hand-placed scenes: (scene, object-index map, image as an array)."""
    folder = tmp_path_factory.mktemp("hand")
    done = []
    for variant in (0, 1):
        scene, studio = studio_scene(variant), studio_for(0, "test", variant)
        labels, coords = renderer.index_map(scene, studio, folder)
        for obj, pixel in zip(scene["objects"], coords):
            obj["pixel_coords"] = pixel
        renderer.render({**scene, "_studio": studio}, folder / scene["image_filename"])
        with Image.open(folder / scene["image_filename"]) as image:
            assert image.size == (480, 320)
            done.append((scene, labels, np.asarray(image.convert("RGB")).astype(np.float64)))
    return done


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_clevr_folder(tmp_path_factory.mktemp("world") / "out", WORLD, seed=SEED,
                              images=ImageOptions(renderer="blender"), progress=False)


def _linear(srgb: np.ndarray) -> np.ndarray:
    c = srgb / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _nearest_colour(srgb_pixel: np.ndarray) -> str:
    """The CLEVR colour whose chromaticity (linear RGB, normalised) is nearest: shading scales a
    linear colour, so the proportions of its channels stay."""
    seen = _linear(srgb_pixel)
    seen = seen / max(seen.sum(), 1e-9)

    def distance(name):
        rgb = np.asarray(COLOR_RGB[name], dtype=np.float64)
        return float(np.abs(seen - rgb / rgb.sum()).sum())

    return min(COLOR_RGB, key=distance)


def test_every_scene_shows_every_shape_material_and_colour(hand_rendered):
    for scene, _, _ in hand_rendered:
        objects = scene["objects"]
        assert {o["color"] for o in objects} == set(COLOR_RGB)
        assert {o["shape"] for o in objects} == {"cube", "sphere", "cylinder"}
        assert {o["material"] for o in objects} == {"rubber", "metal"}


def test_each_object_shows_its_own_colour_at_its_pixel_coords(hand_rendered):
    for scene, labels, image in hand_rendered:
        for k, obj in enumerate(scene["objects"]):
            x, y, _ = obj["pixel_coords"]
            assert labels[y, x] == k + 1, f"{obj['color']} {obj['shape']}: hidden at its pixel_coords"
            patch = np.median(image[y - 2:y + 3, x - 2:x + 3].reshape(-1, 3), axis=0)
            assert _nearest_colour(patch) == obj["color"], (obj, patch)


def test_metal_shows_white_highlights_that_rubber_lacks(hand_rendered):
    highlights = {"metal": 0, "rubber": 0}
    for scene, labels, image in hand_rendered:
        white = image.min(axis=2) >= HIGHLIGHT
        for k, obj in enumerate(scene["objects"]):
            found = int((white & (labels == k + 1)).sum())
            highlights[obj["material"]] += found
            if obj["material"] == "rubber":
                assert found == 0, obj
            elif obj["shape"] == "sphere":
                # the key light's reflection (CLEVR's key light is small: a few pixels on a small ball)
                assert found >= (5 if obj["size"] == "large" else 1), obj
    assert highlights["metal"] >= 20  # CLEVR's small lights: small highlights (its own images show the same)


def test_every_object_of_a_world_meets_the_floor_on_the_index_pass(world, renderer, tmp_path):
    floor = min_pixels_for(480, 320)
    doc = json.loads((world / "scenes" / "CLEVR_val_scenes.json").read_text())
    scenes, jitter = doc["scenes"], doc["info"]["controls"]  # the world's recorded camera jitter
    assert len(scenes) == WORLD["val"]
    for scene in scenes:
        labels, coords = renderer.index_map(scene, studio_for(SEED, "val", scene["image_index"], jitter), tmp_path)
        counts = count_visible_pixels(labels, len(scene["objects"]))
        assert min(counts) >= floor, (scene["image_filename"], counts)
        for obj, (x, y, depth) in zip(scene["objects"], coords):  # Blender's own projection agrees
            assert abs(obj["pixel_coords"][0] - x) <= 1 and abs(obj["pixel_coords"][1] - y) <= 1
            assert abs(obj["pixel_coords"][2] - depth) < 1e-4
        with Image.open(world / "images" / "val" / scene["image_filename"]) as image:
            assert image.size == (480, 320)
        # cubes stand at their radius, as in CLEVR v1.0's released scene graphs
        assert all(o["3d_coords"][2] in (0.35, 0.7) for o in scene["objects"])


def test_the_same_seed_gives_the_same_scene_graphs_whatever_the_workers(world, tmp_path):
    # the scene graph depends on the object-index pass only, not on the samples of the image
    again = write_clevr_folder(tmp_path / "again", WORLD, seed=SEED, images=ImageOptions(renderer="blender", samples=1),
                               num_proc=2, progress=False)
    name = "scenes/CLEVR_val_scenes.json"

    def scenes(root):  # the info block records the samples and whether images were drawn; the scenes do not
        return json.loads((root / name).read_text())["scenes"]

    assert scenes(again) == scenes(world)
    assert json.loads((world / name).read_text())["info"]["renderer"] == "blender"
    # without images, the same scene graphs (placed by the same object-index passes)
    alone = write_clevr_folder(tmp_path / "alone", WORLD, seed=SEED, images=ImageOptions(renderer="blender"),
                               render=False, progress=False)
    assert scenes(alone) == scenes(world)


def _staged(out: Path) -> list[Path]:
    return sorted(out.glob(f"{STAGING_PREFIX}*/images/val/*.png"))


def test_an_interrupted_render_keeps_no_partial_image_and_resumes(tmp_path):
    out = tmp_path / "out"
    command = [sys.executable, "-m", "builder_utils.clevr.synth", "--out", str(out), "--num_scenes", "val=5",
               "--seed", "2", "--renderer", "blender", "--samples", "1"]
    run = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not list(out.glob(f"{STAGING_PREFIX}*/progress/val/*.json")):
        assert run.poll() is None and time.monotonic() < deadline, run.stderr.read() if run.poll() else "slow"
        time.sleep(0.2)
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 130, stderr
    assert not (out / "images").exists() and not (out / "scenes").exists()  # nothing in place
    kept = {p.name: p.stat().st_ino for p in _staged(out)}
    assert kept, "the finished image was not kept for the re-run"
    for path in _staged(out):
        with Image.open(path) as image:
            image.load()  # every kept PNG is whole: a half-written one never has an image's name

    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{len(kept)} image(s) a stopped run finished are kept" in done.stderr
    images = sorted((out / "images" / "val").iterdir())
    assert [p.name for p in images] == [f"CLEVR_val_{k:06d}.png" for k in range(5)]
    for name, inode in kept.items():
        assert (out / "images" / "val" / name).stat().st_ino == inode  # moved into place, not rendered again
    assert not list(out.glob(f"{STAGING_PREFIX}*"))
    scenes = json.loads((out / "scenes" / "CLEVR_val_scenes.json").read_text())["scenes"]
    assert [s["image_index"] for s in scenes] == [0, 1, 2, 3, 4]
    assert os.environ.get("CLEVR_BLENDER")  # make test-render names the interpreter
