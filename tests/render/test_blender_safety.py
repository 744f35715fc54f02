"""Issue 37 with the real Blender (``make test-render``): a full disk during a render keeps no
truncated image, and a kill while Blender starts or renders leaves no Blender process (SIGTERM,
SIGINT, and kill -9 or SIGHUP of the command, which run no cleanup). The same
rows against a stand-in Blender run in the default suite (tests/safety/test_safety_blender.py).

The full disk is a small tmpfs mounted in a mount namespace of the test's own (``unshare``: as
root, or as a user where unprivileged user namespaces are on), so the test needs no privilege
beyond that and leaves no mount behind.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "safety"))
from safety_harness import Case, run_case  # noqa: E402

from builder_utils.ownership import STAGING_PREFIX  # noqa: E402

# 240x160 at 1 sample: a PNG of about 40 KB. 160 KB of tmpfs holds the record, the scene graphs
# and a few images, then fills during a render.
SMALL = ["--width", "240", "--height", "160", "--samples", "1"]
FULL_DISK_KB = 160


def _blender() -> str:
    blender = os.environ.get("CLEVR_BLENDER")
    assert blender, "make test-render names the interpreter in CLEVR_BLENDER"
    return blender


def _synth_argv(out: Path, scenes: str = "val=6") -> list[str]:
    return [sys.executable, "-m", "builder_utils.clevr.synth", "--out", str(out), "--num_scenes", scenes,
            "--seed", "4", "--renderer", "blender", "--blender", _blender(), "--quiet", *SMALL]


def _can_mount_tmpfs(tmp: Path) -> str | None:
    if shutil.which("unshare") is None:
        return "no unshare(1)"
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(tmp))}"],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"cannot mount a tmpfs in a namespace: {probe.stderr.strip()}"


def test_a_full_disk_during_a_render_keeps_no_truncated_image_and_a_rerun_finishes(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    why = _can_mount_tmpfs(disk)
    if why:
        pytest.skip(why)
    out, copy = disk / "W", tmp_path / "copy"
    argv = " ".join(shlex.quote(a) for a in _synth_argv(out))
    # one namespace: the first run on a full disk, then the same run with room, each tree copied out
    script = f"""
mount -t tmpfs -o size={FULL_DISK_KB}k tmpfs {shlex.quote(str(disk))} || exit 90
{argv} 2> {shlex.quote(str(tmp_path / 'full.err'))}; echo $? > {shlex.quote(str(tmp_path / 'full.rc'))}
cp -a {shlex.quote(str(out))} {shlex.quote(str(copy))} 2>/dev/null
mount -o remount,size=64m {shlex.quote(str(disk))} || exit 91
{argv} 2> {shlex.quote(str(tmp_path / 'room.err'))}; echo $? > {shlex.quote(str(tmp_path / 'room.rc'))}
cp -a {shlex.quote(str(out))} {shlex.quote(str(tmp_path / 'done'))}
"""
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    full_err = (tmp_path / "full.err").read_text()
    assert (tmp_path / "full.rc").read_text().strip() == "2", full_err
    lines = full_err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in full_err, full_err
    # bpy 5.0.1 reports a PNG cut short by the full disk as saved: the driver's decode refuses it
    assert "is not complete" in full_err, full_err
    assert not (copy / "images").exists()  # no world from a full disk
    staged = list(copy.glob(f"{STAGING_PREFIX}*/images/val/*.png")) if copy.exists() else []
    for path in staged:  # whatever a full disk left staged decodes whole: never a truncated PNG
        with Image.open(path) as image:
            image.load()
            assert image.size == (240, 160), path

    room_err = (tmp_path / "room.err").read_text()
    assert (tmp_path / "room.rc").read_text().strip() == "0", room_err
    images = sorted((tmp_path / "done" / "images" / "val").iterdir())
    assert [p.name for p in images] == [f"CLEVR_val_{k:06d}.png" for k in range(6)]
    for path in images:
        with Image.open(path) as image:
            image.load()
            assert image.size == (240, 160), path


def _no_blender_left(tmp: Path, done) -> None:
    # the harness checks every process of the command's tree ended; this names what it saw
    assert "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


KILLS = [
    Case(f"{name} while Blender starts", setup=lambda tmp: ["python", *_synth_argv(tmp / "W", "val=2")[1:]],
         exit_code=128 + signum, interrupt=signum, wait_at="blender-started", no_debris_under=(),
         stderr_has="interrupted", check=_no_blender_left)
    for name, signum in (("SIGTERM", signal.SIGTERM), ("SIGINT", signal.SIGINT))
] + [
    Case(f"{name} while Blender renders", setup=lambda tmp: ["python", *_synth_argv(tmp / "W", "val=2")[1:]],
         exit_code=128 + signum, interrupt=signum, wait_at="blender-pass@2", no_debris_under=(),
         stderr_has="interrupted", check=_no_blender_left)
    for name, signum in (("SIGTERM", signal.SIGTERM),)
] + [
    # no cleanup runs in the command: the watchdog beside Blender ends its group
    Case(f"{name} of the command while Blender {when}",
         setup=lambda tmp: ["python", *_synth_argv(tmp / "W", "val=2")[1:]], exit_code=-signum, interrupt=signum,
         wait_at=point, no_debris_under=())
    for name, signum in (("kill -9", signal.SIGKILL), ("SIGHUP", signal.SIGHUP))
    for when, point in (("starts", "blender-started"), ("renders", "blender-pass@2"))
]


@pytest.mark.parametrize("case", KILLS, ids=[case.name for case in KILLS])
def test_a_kill_leaves_no_blender_process(case, tmp_path):
    run_case(case, tmp_path)
