"""``clevr-math render`` with the Pillow renderer: any scene file drawn, with masks and depth in
their documented layout, the camera recovered from pixel_coords, bad input refused in one line,
and a killed run resumed without drawing anything twice."""

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
from builder_utils.clevr.synth.camera import Camera
from builder_utils.clevr.synth.render import object_index_map
from builder_utils.clevr.synth.render_file import DEPTH_UNITS, main, scene_camera
from builder_utils.wait_points import WAIT_AT, WAIT_DIR

CLI = Path(sys.executable).with_name("clevr-math")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    root = write_clevr_folder(tmp_path_factory.mktemp("world"), {"val": 10}, seed=3, render=False, progress=False)
    return root / "scenes" / "CLEVR_val_scenes.json"


@pytest.fixture(scope="module")
def drawn(world, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("drawn") / "out"
    assert main(["--scenes", str(world), "--out", str(out), "--masks", "--depth", "--quiet"]) == 0
    return out


def _scenes(path: Path) -> list[dict]:
    return json.loads(path.read_text())["scenes"]


def test_every_scene_gets_its_image_mask_and_depth_in_the_documented_layout(world, drawn):
    stems = [Path(s["image_filename"]).stem for s in _scenes(world)]
    for folder, ext in (("images", ".png"), ("masks", ".png"), ("depth", ".png")):
        assert sorted(p.name for p in (drawn / folder).iterdir()) == sorted(f"{stem}{ext}" for stem in stems)
    with Image.open(drawn / "images" / f"{stems[0]}.png") as image:
        assert (image.mode, image.size) == ("RGB", (480, 320))
    with Image.open(drawn / "depth" / f"{stems[0]}.png") as depth:
        assert depth.mode in ("I;16", "I")  # 16-bit grey


def test_the_camera_is_recovered_from_pixel_coords(world):
    for scene in _scenes(world):
        camera = scene_camera(scene, 480, 320)
        # a Pillow world's scene is seen from CLEVR's camera (no jitter by default); pixel_coords are
        # rounded, hence the tolerance
        truth = Camera().location
        assert np.allclose(camera.location, truth, atol=0.15), (camera.location, truth)
        projected = camera.project(np.array([o["3d_coords"] for o in scene["objects"]]))[:, :2]
        given = np.array([o["pixel_coords"][:2] for o in scene["objects"]])
        assert np.abs(projected - given).max() <= 1.0


def test_masks_are_the_object_index_map_and_show_every_object(world, drawn):
    for scene in _scenes(world):
        stem = Path(scene["image_filename"]).stem
        mask = np.asarray(Image.open(drawn / "masks" / f"{stem}.png"))
        assert np.array_equal(mask, np.asarray(object_index_map(scene, scene_camera(scene, 480, 320))))
        assert set(np.unique(mask)) == set(range(len(scene["objects"]) + 1))  # the floor and every object


def test_depth_agrees_with_the_camera(world, drawn):
    for scene in _scenes(world):
        stem = Path(scene["image_filename"]).stem
        camera = scene_camera(scene, 480, 320)
        depth = np.asarray(Image.open(drawn / "depth" / f"{stem}.png")).astype(np.float64) / DEPTH_UNITS
        mask = np.asarray(Image.open(drawn / "masks" / f"{stem}.png"))
        # the floor in front: the ray through the bottom row's centre meets z = 0 at the camera's depth
        row, col = camera.height - 1, camera.width // 2
        ray = camera.forward + ((col + 0.5 - camera.width / 2) * camera.right
                                - (row + 0.5 - camera.height / 2) * camera.up) / camera.focal_px
        if mask[row, col] == 0:
            assert depth[row, col] == pytest.approx(-camera.location[2] / ray[2], abs=2e-3)
        for k, obj in enumerate(scene["objects"]):
            x, y, centre = obj["pixel_coords"]
            r = obj["3d_coords"][2]
            if mask[y, x] == k + 1:  # the object's own surface, in front of its centre, behind its front
                assert centre - 2 * r <= depth[y, x] <= centre + 1e-3, (stem, k)


def test_a_bad_scene_file_is_one_line_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "scenes.json"
    bad.write_text('{"scenes": [{"objects": [{"color": "pink"}]}]}')
    assert main(["--scenes", str(bad), "--out", str(tmp_path / "out")], prog="clevr-math render") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("clevr-math render: error:"), err
    assert str(bad) in err[0] and not (tmp_path / "out").exists()


@pytest.mark.parametrize("flags, message", [
    (["--render_max_bounces", "8"], "--render_max_bounces: a Blender control, meaningless for --renderer pillow"),
    (["--base_scene_blendfile", "base_scene.blend"], "--base_scene_blendfile: a Blender control, meaningless"),
    (["--save_blendfiles", "--renderer", "blender", "--blender", sys.executable],
     "--save_blendfiles: render writes images, masks and depth only"),
], ids=["bounces with pillow", "blend file with pillow", "save_blendfiles"])
def test_a_control_render_cannot_apply_is_one_line_never_ignored(world, tmp_path, capsys, flags, message):
    assert main(["--scenes", str(world), "--out", str(tmp_path / "out"), *flags], prog="clevr-math render") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_killed_run_is_resumed_without_drawing_anything_twice(world, tmp_path):
    out = tmp_path / "out"
    command = [str(CLI), "render", "--scenes", str(world), "--out", str(out), "--masks", "--depth"]
    waits = tmp_path / "waits"
    waits.mkdir()
    # the first chunk (8 scenes) is drawn and the command waits: then it is killed outright
    run = subprocess.Popen(command, env={**os.environ, WAIT_AT: "render-chunk", WAIT_DIR: str(waits)},
                           stderr=subprocess.PIPE, text=True)
    marker = waits / "render-chunk.waiting"
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert run.poll() is None and time.monotonic() < deadline, run.stderr.read() if run.poll() else "slow"
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=60)
    assert not (out / "images").exists()  # nothing in place
    staged = {p.relative_to(p.parents[1]).as_posix(): p.stat().st_ino for p in out.glob(".*/*/*.png")}
    assert len(staged) == 8 * 3, sorted(staged)

    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "drew 2 of 10 scene(s); 8 finished before were kept" in done.stderr
    for rel, inode in staged.items():
        assert (out / rel).stat().st_ino == inode  # moved into place, not drawn again
