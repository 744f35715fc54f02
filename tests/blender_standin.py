"""A stand-in for Blender running the CLEVR studio script, for the tests that need no Blender: it
speaks the driver's protocol (a ready reply, then one reply per request on ``--reply-fd``) and
misbehaves as asked, the way a real Blender can (a full disk, a crash, a hang, a broken reply).

Run as ``python blender_standin.py STATE_DIR BEHAVIOUR [Blender's arguments ...]``, through a
launcher made by :func:`launcher`. ``BEHAVIOUR`` is comma-separated words:

- ``version=V``: the version it reports (default ``5.0.1``); its images' colour follows it;
- ``tag=T``: another build of the same version (its images' colour follows it too);
- ``half``: its rendered images are the first half of a PNG (what a full disk leaves), reported as saved;
- ``wide``: its images are twice as wide as asked;
- ``fail=NAME``: every request about the image ``NAME`` is an error reply;
- ``ready=list`` / ``ready=noversion``: a JSON list, or a ready reply without a version;
- ``reply=list`` / ``reply=text`` / ``reply=nocoords``: every pass's reply is a JSON list, not
  JSON, or (index passes) an object without ``pixel_coords``;
- ``hang=start`` / ``hang=pass``: it stops answering while starting, or on its first pass;
- ``crash=child``: on each pass it starts a child process that sleeps, then dies (status 139).

Every process it starts, itself included, writes its pid to ``STATE_DIR/pids/`` first.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path


def launcher(folder: Path, state: Path, behaviour: str, *, name: str = "blender", exec_: bool = True) -> Path:
    """An executable ``folder/name`` starting the stand-in; ``exec_=False``: a shell script that
    stays the stand-in's parent (a launcher that does not ``exec``)."""
    folder.mkdir(parents=True, exist_ok=True)
    (state / "pids").mkdir(parents=True, exist_ok=True)
    path = folder / name
    run = f'"{sys.executable}" "{Path(__file__).resolve()}" "{state}" "{behaviour}" "$@"'
    path.write_text(f"#!/bin/sh\n{'exec ' if exec_ else ''}{run}\n" + ("" if exec_ else "exit $?\n"))
    path.chmod(0o755)
    return path


def alive_pids(state: Path) -> list[int]:
    """The recorded processes still running (zombies count as gone)."""
    alive = []
    for entry in (state / "pids").iterdir():
        try:
            status = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if status != "Z":
            alive.append(int(entry.name))
    return alive


def wait_all_gone(state: Path, timeout: float = 10.0) -> list[int]:
    """Poll until every recorded process has ended (a SIGKILL lands at once, its reaping a moment
    later); returns those still alive after ``timeout`` seconds, killing them."""
    deadline = time.monotonic() + timeout
    while alive_pids(state) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = alive_pids(state)
    for pid in left:
        os.kill(pid, 9)
    return left


def _record(state: Path) -> None:
    (state / "pids" / str(os.getpid())).touch()


def _png(width: int, height: int, colour: tuple[int, int, int], stripes: int = 0) -> bytes:
    from PIL import Image

    image = Image.new("RGB", (width, height), colour)
    for k in range(stripes):  # the index pass: object k's red level in its own band of columns
        band = Image.new("RGB", (width // (stripes + 1), height), (round((k + 1) * 255 / 16), 0, 0))
        image.paste(band, ((k + 1) * (width // (stripes + 1)), 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def main(argv: list[str]) -> int:
    state, behaviour = Path(argv[1]), dict(w.partition("=")[::2] for w in argv[2].split(",") if w)
    _record(state)
    fd = int(argv[argv.index("--reply-fd") + 1])
    settings = json.loads(argv[argv.index("--settings") + 1])

    def reply(message) -> None:
        os.write(fd, ((message if isinstance(message, str) else json.dumps(message)) + "\n").encode())

    if behaviour.get("hang") == "start":
        time.sleep(3600)
    version = behaviour.get("version", "5.0.1")
    ready = {"list": [True], "noversion": {"ready": True}}.get(behaviour.get("ready"), {"ready": True, "blender": version})
    reply(ready)
    colour = tuple(zlib.crc32((version + behaviour.get("tag", "")).encode()).to_bytes(4, "big")[:3])
    for line in sys.stdin:
        request = json.loads(line)
        scene = request["scene"]
        if behaviour.get("hang") == "pass":
            time.sleep(3600)
        if behaviour.get("crash") == "child":
            code = f"import pathlib, os, time; pathlib.Path({str(state / 'pids')!r}, str(os.getpid())).touch(); time.sleep(3600)"
            subprocess.Popen([sys.executable, "-c", code])
            time.sleep(0.5)  # the child has recorded itself
            print("Segmentation fault in the render", flush=True)
            os._exit(139)
        if behaviour.get("fail") == scene["image_filename"]:
            reply({"error": f"RuntimeError: cannot render {scene['image_filename']}"})
            continue
        width = settings["width"] * (2 if "wide" in behaviour else 1)
        objects = len(scene["objects"])
        if request["op"] == "index":
            data = _png(width, settings["height"], (0, 0, 0), stripes=objects)
            answer = {"pixel_coords": [[10 * k, 20, 5.0] for k in range(objects)]}
        else:
            # the colour: the version's, shifted by the scene's first object (images differ)
            shift = len(json.dumps(scene["objects"][0], sort_keys=True)) % 50 if objects else 0
            data = _png(width, settings["height"], tuple((c + shift) % 256 for c in colour))
            answer = {"done": True}
        if "half" in behaviour and request["op"] == "render":
            data = data[: len(data) // 2]
        Path(request["png"]).write_bytes(data)
        reply_kind = behaviour.get("reply")
        if reply_kind == "list":
            answer = [answer]
        elif reply_kind == "text":
            answer = "Saved: the image"
        elif reply_kind == "nocoords" and request["op"] == "index":
            answer = {"cpu_s": 0.1}
        reply(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
