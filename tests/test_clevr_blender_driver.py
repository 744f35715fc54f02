"""The Blender renderer's side that needs no Blender: bpy stays out of the package, a missing or
wrong interpreter is one line (exit 2), and the options and the studio jitter are checked.
``make test-render`` runs the renderer itself (tests/render/)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder_utils.clevr.synth.blender import (
    BLENDER_ENV, BlenderJob, BlenderSettings, BlenderUnavailable, SCRIPT, blender_command, find_blender, studio_for,
)
from builder_utils.clevr.synth.folder import ImageOptions
from builder_utils.options import declared_paths

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("builder_utils", "clevr_math", "clotho_aqa")


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(("." * node.level) + node.module)
            names.update(("." * node.level) + (node.module + "." if node.module else "") + a.name for a in node.names)
    return names


def test_no_package_module_imports_bpy_or_the_studio_script():
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path in (SCRIPT, SCRIPT.with_name("clevr_assets.py")):  # run by Blender, beside the studio
                continue
            found = {n for n in _imports(path) if n.split(".")[0] in ("bpy", "bmesh", "mathutils", "bpy_extras")
                     or n.endswith(("blender_script", "clevr_assets"))}
            if found:
                offenders.append(f"{path.relative_to(ROOT)}: {sorted(found)}")
    assert offenders == []
    assert "import bpy" in SCRIPT.read_text(encoding="utf-8")  # the check looks at the right file


def test_importing_the_package_and_its_blender_driver_loads_no_bpy():
    code = ("import sys, builder_utils.clevr.synth, builder_utils.clevr.synth.blender; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bpy', 'bmesh', 'mathutils')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _synth(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "builder_utils.clevr.synth", "--out", str(tmp_path / "out"),
                           "--num_scenes", "val=2", "--renderer", "blender", *args],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("how", ["flag", "env", "path"])
def test_a_missing_blender_is_one_line_and_exit_2(tmp_path, how):
    env = {k: v for k, v in os.environ.items() if k != BLENDER_ENV}
    args = []
    if how == "flag":
        args = ["--blender", str(tmp_path / "no-blender")]
    elif how == "env":
        env[BLENDER_ENV] = str(tmp_path / "no-blender")
    else:
        env["PATH"] = str(tmp_path)  # no blender there
    done = _synth(tmp_path, *args, env=env)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "install Blender" in lines[0] and "bpy" in lines[0], done.stderr
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_python_without_bpy_is_one_line_naming_the_missing_module(tmp_path):
    fake = tmp_path / "python-without-bpy"
    fake.symlink_to(sys.executable)  # this test's Python has no bpy
    done = _synth(tmp_path, "--blender", str(fake))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "No module named 'bpy'" in lines[0] and "install Blender" in lines[0], done.stderr
    assert not (tmp_path / "out").exists()


def test_the_interpreter_is_found_in_the_documented_order(tmp_path, monkeypatch):
    for name in ("blender", "python-bpy"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(BLENDER_ENV, raising=False)
    assert find_blender()[0] == str(tmp_path / "blender")
    monkeypatch.setenv(BLENDER_ENV, str(tmp_path / "python-bpy"))
    assert find_blender() == [str(tmp_path / "python-bpy"), str(SCRIPT)]  # a Python runs the script itself
    assert find_blender(tmp_path / "blender")[1:3] == ["--background", "--factory-startup"]
    with pytest.raises(BlenderUnavailable, match="no such executable"):
        find_blender(tmp_path / "missing")


def test_the_studio_jitter_is_clevrs_and_a_function_of_the_scene():
    a, b = studio_for(3, "train", 7), studio_for(3, "train", 8)
    assert a == studio_for(3, "train", 7) and a != b
    base = (7.481, -6.508, 5.344)  # CLEVR's camera in its base_scene.blend
    assert all(abs(c - c0) <= 0.5 for c, c0 in zip(a["camera"], base))


def test_options_are_bounded_and_the_blender_path_is_an_input():
    assert ("blender", "input") in declared_paths(ImageOptions)
    for bad in ({"samples": 0}, {"samples": 5000}, {"device": "tpu"}, {"renderer": "povray"}):
        with pytest.raises(ValueError):
            ImageOptions(**bad)
    with pytest.raises(ValueError, match="device"):
        BlenderSettings(device="tpu")


def test_the_resume_key_follows_what_the_images_are():
    job = BlenderJob("/b/blender", BlenderSettings(), 200, "5.0.1")
    same_picture = BlenderJob("/b/blender", BlenderSettings(device="gpu", threads=4), 200, "5.0.1")
    assert job.resume_key(0) == same_picture.resume_key(0)
    assert job.resume_key(0) != BlenderJob("/b/blender", BlenderSettings(samples=16), 200, "5.0.1").resume_key(0)
    assert job.resume_key(0) != BlenderJob("/b/blender", BlenderSettings(), 100, "5.0.1").resume_key(0)
    # another Blender (issue 37, cause 7): its images never join this run's
    assert job.resume_key(0) != BlenderJob("/other/blender", BlenderSettings(), 200, "5.0.1").resume_key(0)
    assert job.resume_key(0) != BlenderJob("/b/blender", BlenderSettings(), 200, "4.2.3").resume_key(0)


def test_blender_command_forms():
    assert blender_command("/x/python3.11") == ["/x/python3.11", str(SCRIPT)]
    assert blender_command("/x/blender")[-2:] == [str(SCRIPT), "--"]


CRASHING_BLENDER = """#!{python}
# stands in for a Blender that starts, then dies on every pass (as a segfault in Cycles would)
import json, os, sys
fd = int(sys.argv[sys.argv.index("--reply-fd") + 1])
os.write(fd, (json.dumps({{"ready": True, "blender": "crashing"}}) + "\\n").encode())
sys.stdin.readline()
print("Segmentation fault in the render", flush=True)
os._exit(139)
"""


def test_a_scene_whose_pass_crashes_every_time_is_retried_then_named_in_one_line(tmp_path):
    fake = tmp_path / "python-crashing"
    fake.write_text(CRASHING_BLENDER.format(python=sys.executable))
    fake.chmod(0o755)
    done = _synth(tmp_path, "--blender", str(fake))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "2 scene(s) not rendered" in lines[0] and "CLEVR_val_000000.png" in lines[0]
    assert "failed 3 times" in lines[0] and "Segmentation fault in the render" in lines[0]
    assert not (tmp_path / "out" / "images").exists()  # nothing moved into place
