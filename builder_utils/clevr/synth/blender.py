"""Render synthetic CLEVR scenes with Blender's Cycles, in CLEVR's own look, without importing ``bpy``.

``bpy`` is GPL-3 and each of its wheels serves one Python only, so the package never imports it:
``blender_script.py`` runs in one long-lived Blender process per worker (no start-up cost per
image). The passes of a scene: README, "Rendered by Blender".
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .camera import Camera
from .studio import CAMERA_JITTER, LIGHT_JITTER, LIGHTS, still_studio, studio_for, world_camera  # noqa: F401 (public here too)
from .vocabulary import COLOR_RGB

__all__ = ["ATTEMPTS", "BLENDER_ENV", "BlenderRenderer", "BlenderSettings", "BlenderUnavailable", "DEVICES",
           "SceneRenderFailed", "blender_command", "find_blender", "studio_for"]

BLENDER_ENV = "CLEVR_BLENDER"
SCRIPT = Path(__file__).resolve().with_name("blender_script.py")
INSTALL = ("install Blender 4.2 or later (https://www.blender.org/download/) and put `blender` on PATH, "
           "or `pip install bpy==5.0.1` into a Python 3.11 environment; then pass --blender PATH "
           f"or set {BLENDER_ENV}")
DEVICES = ("cpu", "gpu")
# With OpenImageDenoise, 10 samples keep small objects as clean as large ones against a 64-sample
# render (inside their masks: small 39.5 dB mean, 31.1 worst; large 42.6, 29.5; at 6 samples small
# metal objects were blotched, 27.8 worst) for about 3 CPU-s an image: benchmarks/bench_fidelity.py
# --clean, BENCHMARKS.md "Fidelity to CLEVR's images".
DEFAULT_SAMPLES = 10
# One pass tried this many times in all, each time in a fresh Blender process, before its
# scene is named as failed.
ATTEMPTS = 3
START_TIMEOUT_S = 180.0
# A pass's limit: generous for a loaded machine (the default image takes ~4 CPU-s).
PASS_TIMEOUT_S = 120.0
PASS_TIMEOUT_PER_SAMPLE_S = 6.0

# the script's object-index pass: object k is red (k + 1) / INDEX_LEVELS
INDEX_LEVELS = 16
# the script's depth pass: grey = depth along the camera's axis / DEPTH_RANGE, in a 16-bit PNG
# (steps of 1 mm in world units)
DEPTH_RANGE = 65.535


class BlenderUnavailable(ValueError):
    """No usable Blender interpreter: the message says which path failed and what to install."""


class SceneRenderFailed(RuntimeError):
    """A scene whose pass failed every attempt; the message names the scene and the last failure."""


@dataclass(frozen=True)
class BlenderSettings:
    """What a Blender process renders with (``device="gpu"``: OptiX, CUDA or HIP; ``threads=0``: every core).

    Example:
        >>> BlenderSettings().samples, BlenderSettings(samples=64, denoise=False).denoise
        (10, False)
    """

    width: int = 480
    height: int = 320
    samples: int = DEFAULT_SAMPLES
    denoise: bool = True
    device: str = "cpu"
    threads: int = 0

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        for name in ("width", "height", "samples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    def pass_timeout(self) -> float:
        """Seconds a pass may take before its process is killed (scales with samples and area)."""
        return PASS_TIMEOUT_S + PASS_TIMEOUT_PER_SAMPLE_S * self.samples * self.width * self.height / (480 * 320)


def blender_command(executable: str | os.PathLike) -> list[str]:
    """The studio script's command line: ``executable`` is a Python importing ``bpy`` if named ``python*``.

    Example:
        >>> blender_command("/opt/blender/blender")[1:4]
        ['--background', '--factory-startup', '-noaudio']
        >>> blender_command(".venv-render/bin/python")[1] == str(SCRIPT)
        True
    """
    executable = os.fspath(executable)
    if Path(executable).name.lower().startswith("python"):
        return [executable, str(SCRIPT)]
    return [executable, "--background", "--factory-startup", "-noaudio", "--python", str(SCRIPT), "--"]


def find_blender(path: str | os.PathLike | None = None) -> list[str]:
    """The command line of ``path``, else ``$CLEVR_BLENDER``, else ``blender`` on ``PATH``.

    Example:
        >>> find_blender("/nonexistent/blender")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.clevr.synth.blender.BlenderUnavailable: --blender /nonexistent/blender: no such executable; install Blender ...
    """
    if path is not None:
        where, given = "--blender", os.fspath(path)
    elif os.environ.get(BLENDER_ENV):
        where, given = f"${BLENDER_ENV}", os.environ[BLENDER_ENV]
    else:
        found = shutil.which("blender")
        if found is None:
            raise BlenderUnavailable(f"--renderer blender: no Blender found (no --blender, no ${BLENDER_ENV}, "
                                     f"no `blender` on PATH); {INSTALL}")
        where, given = "PATH", found
    resolved = shutil.which(given) if os.sep not in given else (given if os.access(given, os.X_OK) and
                                                                os.path.isfile(given) else None)
    if resolved is None:
        raise BlenderUnavailable(f"{where} {given}: no such executable; {INSTALL}")
    # absolute, not resolved through symlinks: a venv's python must stay the venv's
    return blender_command(os.path.abspath(resolved))


def studio_camera(studio: dict, settings: BlenderSettings) -> Camera:
    """The pinhole model of a studio's camera (``directions``; Blender's projection gives ``pixel_coords``).

    Example:
        >>> studio_camera(studio_for(0, "val", 3), BlenderSettings()).width
        480
    """
    return Camera(location=tuple(studio["camera"]), width=settings.width, height=settings.height,
                  focal_px=settings.width * 35.0 / 32.0)


class _BlenderProcess:
    """One Blender process: requests on stdin, replies on a pipe of their own (stdout is Blender's)."""

    def __init__(self, command: list[str], settings: BlenderSettings):
        self.command = command
        self.tail: deque[str] = deque(maxlen=20)
        reply_read, reply_write = os.pipe()
        studio_settings = {**asdict(settings), "colours": COLOR_RGB, "index_levels": INDEX_LEVELS,
                           "depth_range": DEPTH_RANGE}
        try:
            self.process = subprocess.Popen(
                [*command, "--reply-fd", str(reply_write), "--settings", json.dumps(studio_settings)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, pass_fds=(reply_write,),
                # a Ctrl-C is for this process to act on, not for Blender
                start_new_session=True)
        except OSError as exc:
            os.close(reply_read)
            os.close(reply_write)
            raise BlenderUnavailable(f"{command[0]}: cannot run it ({exc.strerror or exc}); {INSTALL}") from None
        os.close(reply_write)
        self._replies = reply_read
        self._buffer = b""
        self._drain = threading.Thread(target=self._keep_tail, daemon=True)
        self._drain.start()
        alive = True
        try:
            ready = self._read(START_TIMEOUT_S)
        except EOFError:
            ready, alive = None, False
        if ready is None or not ready.get("ready"):
            self.process.kill()
            self.close()
            why = (ready or {}).get("error") or self.last_output() or (
                f"no answer within {START_TIMEOUT_S:.0f} s" if alive else "it exited without a word")
            raise BlenderUnavailable(f"{command[0]}: not a Blender that runs the CLEVR studio ({why}); {INSTALL}")
        self.version = ready.get("blender")

    def _keep_tail(self) -> None:
        for line in self.process.stdout:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self.tail.append(text)

    def last_output(self) -> str:
        """The last line Blender printed that says something (a Python error, usually)."""
        time.sleep(0.05)  # let the drain thread catch the last lines of a dead process
        for line in reversed(self.tail):
            if not line.startswith(("Fra:", "Blender quit", "Saved:", "Time:")):
                return line[:300]
        return ""

    def _read(self, timeout: float) -> dict | None:
        """The next reply; None after ``timeout`` seconds; ``EOFError`` when the process is gone."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._replies], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._replies, 1 << 16)
            if not chunk:
                raise EOFError
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def request(self, message: dict, timeout: float) -> dict:
        """Send one request; its reply, or ``RuntimeError`` (the process is then unusable)."""
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise RuntimeError(f"Blender exited ({self.last_output() or 'no message'})") from None
        try:
            reply = self._read(timeout)
        except EOFError:
            try:
                status = self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                status = "unknown"
            raise RuntimeError(f"Blender exited with status {status} ({self.last_output() or 'no message'})") from None
        if reply is None:
            raise RuntimeError(f"Blender gave no answer within {timeout:.0f} s")
        if "error" in reply:
            raise RuntimeError(f"Blender: {reply['error']}")
        return reply

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()  # the script ends at the end of its input
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        os.close(self._replies)


class BlenderRenderer:
    """Renders scenes in one Blender process (started on first use, restarted after a failure).

    Example (prose: it needs Blender)::

        with BlenderRenderer(find_blender(), BlenderSettings()) as renderer:
            scene = renderer.scene_for(0, "val", 0, min_pixels_per_object=200, scratch=Path("/tmp"))
            renderer.render(scene, Path("/tmp/CLEVR_val_000000.png"))
    """

    def __init__(self, command: Sequence[str], settings: BlenderSettings):
        self.command = list(command)
        self.settings = settings
        self._process: _BlenderProcess | None = None

    def __enter__(self) -> "BlenderRenderer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._process is not None:
            self._process.close()
            self._process = None

    def kill(self) -> None:
        """Stop the process now (a failed or interrupted pass); the next pass starts a new one."""
        if self._process is not None:
            self._process.process.kill()
            self.close()

    def start(self) -> str:
        """Start the process (if it is not running); returns Blender's version."""
        if self._process is None:
            self._process = _BlenderProcess(self.command, self.settings)
        return self._process.version

    def _pass(self, message: dict, what: str) -> dict:
        failures = []
        for _ in range(ATTEMPTS):
            self.start()
            try:
                return self._process.request(message, self.settings.pass_timeout())
            except RuntimeError as exc:
                failures.append(str(exc))
                self.kill()
            except BaseException:
                self.kill()  # interrupted: do not wait for the pass Blender is in
                raise
        raise SceneRenderFailed(f"{what}: failed {ATTEMPTS} times; last: {failures[-1]}")

    def index_map(self, scene: dict, studio: dict, scratch: Path) -> tuple[np.ndarray, list[list]]:
        """The flat-colour pass as object indices (0: studio, k + 1: object k), and the ``pixel_coords``."""
        from PIL import Image

        path = scratch / f".index-{os.getpid()}.png"
        reply = self._pass({"op": "index", "scene": _plain(scene), "studio": studio, "png": str(path)},
                           f"scene {scene['image_filename']} (object-index pass)")
        try:
            with Image.open(path) as image:
                red = np.asarray(image.convert("RGB"))[..., 0].astype(np.float64)
        finally:
            path.unlink(missing_ok=True)
        return np.rint(red * (INDEX_LEVELS / 255.0)).astype(np.int64), reply["pixel_coords"]

    def depth_map(self, scene: dict, studio: dict, scratch: Path) -> np.ndarray:
        """Each pixel's depth along the camera's axis (world units, float32), from Blender's depth pass."""
        from PIL import Image

        path = scratch / f".depth-{os.getpid()}.png"
        self._pass({"op": "depth", "scene": _plain(scene), "studio": studio, "png": str(path)},
                   f"scene {scene['image_filename']} (depth pass)")
        try:
            with Image.open(path) as image:
                red = np.asarray(image)
        finally:
            path.unlink(missing_ok=True)
        red = red[..., 0] if red.ndim == 3 else red
        return (red.astype(np.float64) * (DEPTH_RANGE / 65535.0)).astype(np.float32)

    def index_pass(self, scene: dict, studio: dict, scratch: Path) -> tuple[list[int], list[list]]:
        """Each object's visible pixels on the flat-colour pass, and its ``pixel_coords``."""
        from .visibility import count_visible_pixels

        labels, coords = self.index_map(scene, studio, scratch)
        return count_visible_pixels(labels, len(scene["objects"])), coords

    def scene_for(self, seed: int, split: str, image_index: int, *, min_pixels_per_object: int,
                  scratch: Path, max_objects: int | None = None) -> dict:
        """The scene graph of (seed, split, index); its studio in ``"_studio"``. The same world as
        ``--renderer pillow`` gives (:func:`world_camera`; the visibility rule on the Pillow
        renderer's outlines, the one geometry both draw alike), so either renderer can draw it."""
        from .scenes import MAX_OBJECTS, generate_scene

        studio = studio_for(seed, split, image_index)
        scene = generate_scene(seed, split, image_index, studio_camera(studio, self.settings),
                               max_objects=max_objects or MAX_OBJECTS, min_pixels_per_object=min_pixels_per_object)
        scene["_studio"] = studio
        return scene

    def render(self, scene: dict, path: Path) -> None:
        """Render ``scene`` to ``path`` through a hidden file renamed: ``path`` is complete or absent."""
        studio = scene["_studio"]
        partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
        try:
            self._pass({"op": "render", "scene": _plain(scene), "studio": studio, "png": str(partial),
                        "seed": studio["seed"]}, f"scene {scene['image_filename']}")
            if not partial.is_file():
                raise SceneRenderFailed(f"scene {scene['image_filename']}: Blender wrote no image")
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)


def _plain(scene: dict) -> dict:
    return {k: v for k, v in scene.items() if not k.startswith("_")}


# One renderer per worker process, kept between tasks like the question generator is kept per
# thread: a Blender process costs seconds to start.
_RENDERERS: dict[tuple, BlenderRenderer] = {}
_LOCK = threading.Lock()


def renderer_for(command: Sequence[str], settings: BlenderSettings) -> BlenderRenderer:
    """This process's renderer for ``command`` and ``settings`` (any other it kept is closed).

    Example:
        >>> renderer_for(["blender"], BlenderSettings()) is renderer_for(["blender"], BlenderSettings())
        True
    """
    # the process id too: a forked pool worker must start its own Blender, not talk to its parent's
    key = (tuple(command), settings, os.getpid())
    with _LOCK:
        renderer = _RENDERERS.get(key)
        if renderer is None:
            for pid_old, old in ((k[2], r) for k, r in _RENDERERS.items()):
                if pid_old == os.getpid():
                    old.close()
            _RENDERERS.clear()
            renderer = _RENDERERS[key] = BlenderRenderer(command, settings)
        return renderer


@atexit.register
def _close_renderers() -> None:
    for key, renderer in _RENDERERS.items():
        if key[2] == os.getpid():
            renderer.close()
    _RENDERERS.clear()


# -- a world's scenes, a chunk at a time (on any worker) -----------------------------------


@dataclass(frozen=True)
class BlenderJob:
    """What every task of one ``--renderer blender`` run shares (picklable, for any worker)."""

    executable: str  # an absolute path: the command line is made on the worker, with its own script path
    settings: BlenderSettings
    min_pixels_per_object: int

    def resume_key(self, seed: int) -> str:
        """A name for the images of this run, kept by a re-run: seed, settings (not device or
        threads: they change the noise, not the picture) and studio (the lights, the script).

        Example:
            >>> job = BlenderJob("/usr/bin/blender", BlenderSettings(), 200)
            >>> job.resume_key(0) == job.resume_key(0) != job.resume_key(1)
            True
        """
        import hashlib

        settings = asdict(self.settings)
        del settings["device"], settings["threads"]
        what = json.dumps({"seed": seed, "settings": settings, "floor": self.min_pixels_per_object,
                           "lights": LIGHTS, "camera_jitter": CAMERA_JITTER, "light_jitter": LIGHT_JITTER,
                           "script": hashlib.sha256(SCRIPT.read_bytes()).hexdigest()}, sort_keys=True)
        return "blender-" + hashlib.sha256(what.encode("utf-8")).hexdigest()[:16]


FAILED = "_failed"
"""Key of the placeholder :func:`render_chunk` returns for a scene that failed: its message."""


def render_chunk(seed: int, split: str, start: int, stop: int, image_dir: str | None, progress_dir: str,
                 job: BlenderJob) -> list[dict]:
    """Scenes ``[start, stop)`` rendered into ``image_dir`` (``None``: scene graphs only).

    A finished scene (PNG and graph in ``progress_dir``) is read back; one that failed comes back
    as ``{FAILED: message}``, so the run names every failed scene.
    """
    from .scenes import image_filename
    from .visibility import VisibilityError

    images, progress = None if image_dir is None else Path(image_dir), Path(progress_dir)
    renderer = renderer_for(blender_command(job.executable), job.settings)
    scenes = []
    for index in range(start, stop):
        name = image_filename(split, index)
        done = progress / (name[: -len(".png")] + ".json")
        if images is not None and done.is_file() and (images / name).is_file():
            scenes.append(json.loads(done.read_text(encoding="utf-8")))
            continue
        try:
            scene = renderer.scene_for(seed, split, index, min_pixels_per_object=job.min_pixels_per_object,
                                       scratch=progress)
            if images is not None:
                renderer.render(scene, images / name)
        except (SceneRenderFailed, VisibilityError) as exc:
            scenes.append({FAILED: str(exc)})
            continue
        scene = _plain(scene)
        if images is not None:
            _write_then_rename(done, json.dumps(scene, allow_nan=False))
        scenes.append(scene)
    return scenes


def _write_then_rename(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
