"""``clevr-math render --renderer blender`` for real (``make test-render``): each object's centre
within 1 px of official-style pixel_coords, masks equal to the object-index pass, depth that
agrees with the camera, and a killed run resumed without rendering anything twice."""

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
from builder_utils.clevr.synth.blender import BlenderRenderer, BlenderSettings, find_blender, still_studio, studio_for
from builder_utils.clevr.synth.camera import Camera
from builder_utils.clevr.synth.controls import WorldOptions
from builder_utils.clevr.synth.folder import ImageOptions
from builder_utils.clevr.synth.render_file import DEPTH_UNITS, main, scene_camera
from builder_utils.wait_points import WAIT_AT, WAIT_DIR

CLI = Path(sys.executable).with_name("clevr-math")
# a camera CLEVR's jitter could have drawn: the scene file's pixel_coords are this camera's, rounded
JITTERED = Camera(location=(7.83, -6.21, 5.02))


@pytest.fixture(scope="module")
def official_style(tmp_path_factory) -> Path:
    world = write_clevr_folder(tmp_path_factory.mktemp("world"), {"val": 3}, seed=11, render=False, progress=False)
    document = json.loads((world / "scenes" / "CLEVR_val_scenes.json").read_text())
    for scene in document["scenes"]:
        for obj in scene["objects"]:
            x, y, depth = JITTERED.project_point(obj["3d_coords"])
            obj["pixel_coords"] = [int(round(x)), int(round(y)), depth]
    path = world / "official_style.json"
    path.write_text(json.dumps(document))
    return path


@pytest.fixture(scope="module")
def drawn(official_style, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("drawn") / "out"
    assert main(["--scenes", str(official_style), "--out", str(out), "--renderer", "blender", "--samples", "1",
                 "--masks", "--depth", "--quiet"]) == 0
    return out


def _scenes(path: Path) -> list[dict]:
    return json.loads(path.read_text())["scenes"]


def test_each_object_centre_is_within_a_pixel_of_its_pixel_coords(official_style, drawn, tmp_path):
    with BlenderRenderer(find_blender(), BlenderSettings(samples=1)) as renderer:
        for scene in _scenes(official_style):
            studio = still_studio(scene_camera(scene, 480, 320).location)
            labels, coords = renderer.index_map(scene, studio, tmp_path)  # Blender's own projection
            for obj, (x, y, _) in zip(scene["objects"], coords):
                assert abs(x - obj["pixel_coords"][0]) <= 1 and abs(y - obj["pixel_coords"][1]) <= 1
            mask = np.asarray(Image.open(drawn / "masks" / scene["image_filename"]))
            assert np.array_equal(mask, labels)  # the mask is the object-index pass


def test_depth_agrees_with_the_camera(official_style, drawn):
    for scene in _scenes(official_style):
        camera = scene_camera(scene, 480, 320)
        depth = np.asarray(Image.open(drawn / "depth" / scene["image_filename"])).astype(np.float64) / DEPTH_UNITS
        mask = np.asarray(Image.open(drawn / "masks" / scene["image_filename"]))
        for row, col in ((319, 240), (300, 40), (250, 440)):
            if mask[row, col] == 0:  # the floor: the pixel's ray meets z = 0 at this depth
                ray = camera.forward + ((col + 0.5 - 240) * camera.right - (row + 0.5 - 160) * camera.up) / camera.focal_px
                assert depth[row, col] == pytest.approx(-camera.location[2] / ray[2], abs=5e-3)
        for k, obj in enumerate(scene["objects"]):
            x, y, centre = obj["pixel_coords"]
            if mask[y, x] == k + 1:
                assert centre - 2 * obj["3d_coords"][2] <= depth[y, x] <= centre + 1e-2


def test_a_killed_run_is_resumed_without_rendering_anything_twice(tmp_path):
    world = write_clevr_folder(tmp_path / "world", {"val": 5}, seed=4, render=False, progress=False,
                               images=ImageOptions(width=96, height=64))
    out = tmp_path / "out"
    command = [str(CLI), "render", "--scenes", str(world / "scenes" / "CLEVR_val_scenes.json"), "--out", str(out),
               "--renderer", "blender", "--samples", "1", "--width", "96", "--height", "64", "--masks"]
    waits = tmp_path / "waits"
    waits.mkdir()
    run = subprocess.Popen(command, env={**os.environ, WAIT_AT: "render-chunk", WAIT_DIR: str(waits)},
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not (waits / "render-chunk.waiting").exists():
        assert run.poll() is None and time.monotonic() < deadline, run.stderr.read() if run.poll() else "slow"
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)  # after the first chunk: two scenes rendered
    run.communicate(timeout=60)
    staged = {p.relative_to(p.parents[1]).as_posix(): p.stat().st_ino for p in out.glob(".*/*/*.png")}
    assert len(staged) == 2 * 2, sorted(staged)

    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "drew 3 of 5 scene(s); 2 finished before were kept" in done.stderr
    for rel, inode in staged.items():
        assert (out / rel).stat().st_ino == inode  # moved into place, not rendered again
    assert len(list((out / "images").iterdir())) == 5


@pytest.mark.parametrize("camera_jitter", [None, 0.5], ids=["default", "clevrs-0.5"])
def test_the_same_seed_gives_the_same_world_with_either_renderer(tmp_path, camera_jitter):
    # the same options, the defaults included: the camera's jitter is one world control for both renderers
    world = WorldOptions(camera_jitter=camera_jitter)
    jitter = world.jitter("blender")["camera_jitter"]
    pillow = write_clevr_folder(tmp_path / "pillow", {"val": 4}, seed=0, progress=False, world=world)
    blender = write_clevr_folder(tmp_path / "blender", {"val": 4}, seed=0, progress=False, world=world,
                                 images=ImageOptions(renderer="blender", samples=1))
    a, b = (_scenes(root / "scenes" / "CLEVR_val_scenes.json") for root in (pillow, blender))
    assert len(a) == len(b) == 4
    with BlenderRenderer(find_blender(), BlenderSettings(samples=1)) as renderer:
        for one, other in zip(a, b):
            assert one == other  # objects, attributes, 3d_coords, relations, directions, pixel_coords
            # and Blender's own projection puts each object within a pixel of the world's pixel_coords
            studio = studio_for(0, "val", other["image_index"], {"camera_jitter": jitter})
            _, coords = renderer.index_map(other, studio, tmp_path)
            for obj, (x, y, _) in zip(other["objects"], coords):
                assert abs(x - obj["pixel_coords"][0]) <= 1 and abs(y - obj["pixel_coords"][1]) <= 1
