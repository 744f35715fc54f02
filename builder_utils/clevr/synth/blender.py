"""Render synthetic CLEVR scenes with Blender's Cycles, in CLEVR's own look, without importing ``bpy``.

``bpy`` is GPL-3 and each of its wheels serves one Python only, so the package never imports it:
``blender_script.py`` runs in one long-lived Blender process per worker (no start-up cost per
image). The passes of a scene: README, "Rendered by Blender".
"""

from __future__ import annotations

import atexit
import hashlib
import io
import json
import logging
import math
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from builder_utils.media_check import MediaError, check_png
from builder_utils.wait_points import wait_point

from .camera import CLEVR_CAMERA_LOCATION, Camera
from .studio import CAMERA_JITTER, LIGHT_JITTER, LIGHTS, still_studio, studio_for, world_camera  # noqa: F401 (public here too)
from .vocabulary import COLOR_RGB

__all__ = ["ATTEMPTS", "BLENDER_ENV", "BlenderRenderer", "BlenderSettings", "BlenderUnavailable", "DEVICES",
           "SceneRenderFailed", "blender_command", "find_blender", "studio_for"]

logger = logging.getLogger(__name__)

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
# A reply is a line of JSON (pixel_coords: 3 numbers an object); a Blender printing megabytes
# without a newline on the reply descriptor is broken, not slow.
MAX_REPLY_BYTES = 1 << 20

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
    # CLEVR's --render_min_bounces, --render_max_bounces, --render_tile_size (None: the studio's own)
    min_bounces: int | None = None
    max_bounces: int | None = None
    tile_size: int | None = None
    # the vocabulary's colours (0-255 RGB) and radii as (name, value) pairs; None: CLEVR's
    colours: tuple | None = None
    radii: tuple | None = None
    # CLEVR's own asset files, when given: (base scene .blend, shape folder, material folder,
    # shape name -> file stem pairs, material name -> node group pairs); clevr_assets.py loads them
    assets: tuple | None = None

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


def _pillow_draws(settings: BlenderSettings) -> bool:
    """Whether the Pillow renderer's outlines draw this vocabulary's objects as Blender does: every
    colour and size named as CLEVR names it, every size of CLEVR's radius (colours do not change an
    outline, but the Pillow renderer knows only CLEVR's names).

    Example:
        >>> _pillow_draws(BlenderSettings(radii=(("large", 0.7), ("small", 0.35))))
        True
        >>> _pillow_draws(BlenderSettings(radii=(("large", 0.9),)))
        False
    """
    from .vocabulary import SIZE_RADIUS

    colours = dict(settings.colours or ())
    radii = dict(settings.radii or ())
    return (all(name in COLOR_RGB for name in colours)
            and all(SIZE_RADIUS.get(name) == radius for name, radius in radii.items()))


def studio_camera(studio: dict, settings: BlenderSettings) -> Camera:
    """The pinhole model of a studio's camera (``directions``; Blender's projection gives ``pixel_coords``).

    Example:
        >>> studio_camera(studio_for(0, "val", 3), BlenderSettings()).width
        480
    """
    return Camera(location=tuple(studio["camera"]), width=settings.width, height=settings.height,
                  focal_px=settings.width * 35.0 / 32.0)


class _BlenderProcess:
    """One Blender process: requests on stdin, replies on a pipe of their own (stdout is Blender's).

    Blender runs in a session (and process group) of its own, and every way it ends here ends the
    whole group: a launcher script that does not ``exec`` leaves Blender as its child, which a kill
    of the direct child alone would leave running.
    """

    def __init__(self, command: list[str], settings: BlenderSettings):
        self.command = command
        self.tail: deque[str] = deque(maxlen=20)
        reply_read, reply_write = os.pipe()
        studio_settings = {**asdict(settings), "colours": dict(settings.colours or COLOR_RGB.items()),
                           "radii": dict(settings.radii or ()), "index_levels": INDEX_LEVELS,
                           "depth_range": DEPTH_RANGE,
                           # where studio_for's jitter starts from: CLEVR's base scene moves by the offsets
                           "studio_centre": {"camera": CLEVR_CAMERA_LOCATION,
                                             "lights": {name: light["location"] for name, light in LIGHTS.items()}}}
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
        self._lifeline = _watchdog(self.process.pid)
        self._buffer = b""
        self._drain = threading.Thread(target=self._keep_tail, daemon=True)
        self._drain.start()
        try:
            wait_point("blender-started")
            why = self._started()
        except BaseException:
            self.kill()  # interrupted while Blender starts: it must not outlive this process
            raise
        if why is not None:
            self.kill()
            raise BlenderUnavailable(f"{command[0]}: not a Blender that runs the CLEVR studio ({why}); {INSTALL}")

    def _started(self) -> str | None:
        """Read the ready reply (setting :attr:`version`); None, or why this is not a usable Blender."""
        try:
            ready = self._read(START_TIMEOUT_S)
        except EOFError:
            return self.last_output() or "it exited without a word"
        except RuntimeError as exc:
            return str(exc)
        if ready is None:
            return self.last_output() or f"no answer within {START_TIMEOUT_S:.0f} s"
        if ready.get("ready") is not True:
            return _text(ready.get("error")) or self.last_output() or f"its first reply is {_shown(ready)}, not ready"
        version = ready.get("blender")
        if not isinstance(version, str) or not version.strip() or len(version) > 100:
            return f"its ready reply names no Blender version: {_shown(ready)}"
        self.version = version
        return None

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
        """The next reply; None after ``timeout`` seconds; ``EOFError`` when the process is gone;
        ``RuntimeError`` for a reply that is not one line of a JSON object."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_REPLY_BYTES:
                raise RuntimeError(f"Blender's reply is longer than {MAX_REPLY_BYTES} bytes without a line end")
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
        try:
            reply = json.loads(line)
        except ValueError:  # not UTF-8 or not JSON
            reply = None
        if not isinstance(reply, dict):
            raise RuntimeError(f"Blender replied {_shown(line.decode('utf-8', 'replace'))}, not a JSON object")
        return reply

    def request(self, message: dict, timeout: float) -> dict:
        """Send one request; its reply, or ``RuntimeError`` (the process is then unusable)."""
        try:
            self.process.stdin.write((json.dumps(message) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            raise RuntimeError(f"Blender exited ({self.last_output() or 'no message'})") from None
        wait_point("blender-pass")
        try:
            reply = self._read(timeout)
        except EOFError:
            status = self._exit_status(10)
            raise RuntimeError(f"Blender exited with status {status} ({self.last_output() or 'no message'})") from None
        if reply is None:
            raise RuntimeError(f"Blender gave no answer within {timeout:.0f} s")
        if "error" in reply:
            raise RuntimeError(f"Blender: {_text(reply['error']) or _shown(reply)}")
        return reply

    def _exit_status(self, timeout: float) -> int | str:
        """Blender's exit status within ``timeout`` seconds (else ``"unknown"``), the process left
        unreaped: its id then names its group until :meth:`close`, never a stranger's."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = os.waitid(os.P_PID, self.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped already
                return self.process.returncode if self.process.returncode is not None else "unknown"
            if found is not None:
                return found.si_status
            if time.monotonic() >= deadline:
                return "unknown"
            time.sleep(0.02)

    def _end_group(self) -> None:
        if self.process.returncode is not None:
            return  # reaped: its id may name another's group by now
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass  # the group is gone already

    def kill(self) -> None:
        """End Blender's whole process group now (SIGKILL: a hung Blender ignores anything else), then close."""
        self._end_group()
        self.close()

    def close(self) -> None:
        """Let Blender end at the end of its input (10 s), then end what is left of its group."""
        if self._replies is None:
            return
        try:
            self.process.stdin.close()  # the script ends at the end of its input
        except OSError:
            pass
        self._exit_status(10)
        self._end_group()  # what a launcher left behind, or a Blender that did not end in time
        self.process.wait()
        if self._lifeline is not None:  # stopped, not woken: Blender's group is gone already
            self._lifeline.kill()
            self._lifeline.wait()
            self._lifeline.stdin.close()
        os.close(self._replies)
        self._replies = None


# Blender's watchdog: it reads its input to the end, which comes when the process that started it
# ends, however it ends (kill -9 and SIGHUP run no cleanup), then ends the process group it is in.
_WATCHDOG = "import os, sys; sys.stdin.buffer.read(); os.killpg(int(sys.argv[1]), 9)"


def _watchdog(group: int) -> subprocess.Popen | None:
    """A watchdog process that ends Blender's process group ``group`` when this process ends (None: none started).

    Blender itself cannot watch: it reads its requests only between passes, and a hung or long
    pass would outlive this process.
    """
    import sys

    try:
        # a session of its own: the terminal's Ctrl-C is for this process to act on (Blender's
        # group is in another session, which no process of this one can join)
        return subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG, str(group)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None


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
        """Stop the process group now (a failed or interrupted pass); the next pass starts a new one."""
        if self._process is not None:
            process, self._process = self._process, None
            process.kill()

    def start(self) -> str:
        """Start the process (if it is not running); returns Blender's version."""
        if self._process is None:
            self._process = _BlenderProcess(self.command, self.settings)
        return self._process.version

    def _pass(self, message: dict, what: str, check: Callable[[dict], Any]) -> Any:
        """``check(reply)`` of the first attempt whose reply and image pass it (``RuntimeError``
        if not); each attempt in a fresh process after a failure, its image written anew."""
        failures = []
        image = Path(message["png"])
        for _ in range(ATTEMPTS):
            self.start()
            image.unlink(missing_ok=True)  # an attempt that writes nothing must not pass on an older image
            try:
                return check(self._process.request(message, self.settings.pass_timeout()))
            except RuntimeError as exc:
                failures.append(str(exc))
                self.kill()
            except BaseException:
                self.kill()  # interrupted: do not wait for the pass Blender is in
                raise
        raise SceneRenderFailed(f"{what}: failed {ATTEMPTS} times; last: {failures[-1]}")

    def index_map(self, scene: dict, studio: dict, scratch: Path) -> tuple[np.ndarray, list[list]]:
        """The flat-colour pass as object indices (0: studio, k + 1: object k), and the ``pixel_coords``."""
        path = scratch / f".index-{os.getpid()}.png"

        def check(reply: dict) -> tuple[np.ndarray, list[list]]:
            coords = _pixel_coords(reply, len(scene["objects"]))
            red = _complete_png(path, self.settings)[1][..., 0].astype(np.float64)
            return np.rint(red * (INDEX_LEVELS / 255.0)).astype(np.int64), coords

        try:
            return self._pass({"op": "index", "scene": _plain(scene), "studio": studio, "png": str(path)},
                              f"scene {scene['image_filename']} (object-index pass)", check)
        finally:
            path.unlink(missing_ok=True)

    def depth_map(self, scene: dict, studio: dict, scratch: Path) -> np.ndarray:
        """Each pixel's depth along the camera's axis (world units, float32), from Blender's depth pass."""
        from PIL import Image

        path = scratch / f".depth-{os.getpid()}.png"

        def check(reply: dict) -> np.ndarray:
            try:
                check_png(path)  # complete to IEND; the 16-bit grey is read below, not as RGB
                with Image.open(path) as image:
                    grey = np.asarray(image)
            except FileNotFoundError:
                raise RuntimeError(f"Blender wrote no image {path.name}") from None
            except MediaError as exc:
                raise RuntimeError(f"Blender's image {path.name} is not complete: {exc.problem}") from None
            if grey.shape[:2] != (self.settings.height, self.settings.width):
                raise RuntimeError(f"Blender's depth image {path.name} is {grey.shape[1]}x{grey.shape[0]}")
            grey = grey[..., 0] if grey.ndim == 3 else grey
            return (grey.astype(np.float64) * (DEPTH_RANGE / 65535.0)).astype(np.float32)

        try:
            return self._pass({"op": "depth", "scene": _plain(scene), "studio": studio, "png": str(path)},
                              f"scene {scene['image_filename']} (depth pass)", check)
        finally:
            path.unlink(missing_ok=True)

    def index_pass(self, scene: dict, studio: dict, scratch: Path) -> tuple[list[int], list[list]]:
        """Each object's visible pixels on the flat-colour pass, and its ``pixel_coords``."""
        from .visibility import count_visible_pixels

        labels, coords = self.index_map(scene, studio, scratch)
        return count_visible_pixels(labels, len(scene["objects"])), coords

    def scene_for(self, seed: int, split: str, image_index: int, *, min_pixels_per_object: int,
                  scratch: Path, max_objects: int | None = None, rules=None, jitter: dict | None = None) -> dict:
        """The scene graph of (seed, split, index); its studio in ``"_studio"``. The visibility rule is
        decided on the Pillow renderer's outlines (the one geometry both renderers draw alike), so
        with the same studio (``jitter``: :func:`studio_for`'s) either renderer can draw the world.

        ``rules``: the world's :class:`~builder_utils.clevr.synth.scenes.WorldRules`."""
        from .scenes import generate_scene

        studio = studio_for(seed, split, image_index, jitter)
        camera = studio_camera(studio, self.settings)
        # folder.py always passes the world's vocabulary; CLEVR's own (or any part of it) is one the
        # Pillow outlines draw alike, and only then is the world the Pillow renderer's (issue 35)
        if _pillow_draws(self.settings):
            scene = generate_scene(seed, split, image_index, camera, max_objects=max_objects, rules=rules,
                                   min_pixels_per_object=min_pixels_per_object)
            scene["_studio"] = studio
            return scene
        # a vocabulary of the user's (colours, sizes) the Pillow renderer cannot draw: Blender's own index pass
        last: list = [None, None]  # the scene counted last, and its pixel_coords

        def count_pixels(scene: dict) -> list[int]:
            counts, last[1] = self.index_pass(scene, studio, scratch)
            last[0] = scene
            return counts

        scene = generate_scene(seed, split, image_index, camera, max_objects=max_objects, rules=rules,
                               min_pixels_per_object=min_pixels_per_object, count_pixels=count_pixels)
        coords = last[1]
        if last[0] is not scene:  # no floor: nothing was counted, so ask Blender for the projection alone
            _, coords = self.index_pass(scene, studio, scratch)
        for obj, pixel in zip(scene["objects"], coords):
            obj["pixel_coords"] = pixel
        scene["_studio"] = studio
        return scene

    def render(self, scene: dict, path: Path, blend: Path | None = None) -> str:
        """Render ``scene`` to ``path`` through a hidden file renamed: ``path`` is a PNG that decodes
        completely at the settings' size, or absent (a full disk truncates a PNG that Blender
        reports as saved). Returns the image's sha256 (hex). ``blend``: also save the studio with
        the scene as a ``.blend`` file there (CLEVR's ``--save_blendfiles``).
        """
        studio = scene["_studio"]
        partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
        blend_partial = None if blend is None else blend.with_name(f".partial-{os.getpid()}-{blend.name}")
        try:
            message = {"op": "render", "scene": _plain(scene), "studio": studio, "png": str(partial),
                       "seed": studio["seed"]}
            if blend_partial is not None:
                message["blend"] = str(blend_partial)
            digest = self._pass(message, f"scene {scene['image_filename']}",
                                lambda reply: _complete_png(partial, self.settings)[0])
            if blend_partial is not None:
                if not blend_partial.is_file():
                    raise SceneRenderFailed(f"scene {scene['image_filename']}: Blender saved no .blend file")
                os.replace(blend_partial, blend)
            os.replace(partial, path)
        finally:
            partial.unlink(missing_ok=True)
            if blend_partial is not None:
                blend_partial.unlink(missing_ok=True)
        return digest


def _plain(scene: dict) -> dict:
    return {k: v for k, v in scene.items() if not k.startswith("_")}


def _text(value: Any) -> str:
    """A reply's message as one short line ("" for none)."""
    if value is None:
        return ""
    return " ".join(str(value).split())[:300]


def _shown(value: Any) -> str:
    """A reply shown in a message: one line, at most 120 characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return repr(text if len(text) <= 120 else text[:117] + "...")


def _complete_png(path: Path, settings: BlenderSettings) -> tuple[str, np.ndarray]:
    """The sha256 and RGB pixels of the PNG at ``path``, decoded completely at the settings' size;
    else ``RuntimeError`` (one line): Blender's reply says nothing about what reached the disk."""
    from PIL import Image

    try:
        check_png(path)  # every chunk's CRC to IEND: a truncated file fails here
        data = path.read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            image.load()  # decompressed to the last row
            size, pixels = image.size, np.asarray(image.convert("RGB"))
    except FileNotFoundError:
        raise RuntimeError(f"Blender wrote no image {path.name}") from None
    except MediaError as exc:
        raise RuntimeError(f"Blender's image {path.name} is not complete: {exc.problem}") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise RuntimeError(f"Blender's image {path.name} does not decode: {_text(exc) or type(exc).__name__}") from None
    if size != (settings.width, settings.height):
        raise RuntimeError(f"Blender's image {path.name} is {size[0]}x{size[1]}, not "
                           f"{settings.width}x{settings.height}")
    return hashlib.sha256(data).hexdigest(), pixels


def _pixel_coords(reply: dict, count: int) -> list[list]:
    """The index reply's ``pixel_coords``: ``count`` triples (x, y: integers; depth: a finite number)."""
    coords = reply.get("pixel_coords")
    if not isinstance(coords, list) or len(coords) != count:
        raise RuntimeError(f"Blender's index reply has no pixel_coords for {count} object(s): {_shown(reply)}")
    for triple in coords:
        if not (isinstance(triple, list) and len(triple) == 3 and all(type(v) is int for v in triple[:2])
                and type(triple[2]) in (int, float) and math.isfinite(triple[2])
                and all(abs(v) <= 10**6 for v in triple)):
            raise RuntimeError(f"Blender's index reply has a malformed pixel_coords entry {_shown(triple)} "
                               "(expected [x, y, depth] numbers)")
    return coords


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
    version: str  # what the executable said it is when the run started (its ready reply)
    rules: object = None  # the world's WorldRules (None: CLEVR's defaults)
    jitter: tuple = ()  # studio_for's jitter as (name, amount) pairs (empty: CLEVR's)
    blend_dir: str | None = None  # --save_blendfiles: the .blend files' folder (split folders inside)

    def resume_key(self, seed: int) -> str:
        """A name for the images of this run, kept by a re-run: seed, settings (not device or
        threads: they change the noise, not the picture), studio (the lights, the script) and the
        Blender (executable and version: a world never mixes two Blenders' images).

        Example:
            >>> job = BlenderJob("/usr/bin/blender", BlenderSettings(), 200, "5.0.1")
            >>> job.resume_key(0) == job.resume_key(0) != job.resume_key(1)
            True
            >>> job.resume_key(0) != BlenderJob("/usr/bin/blender", BlenderSettings(), 200, "4.2.0").resume_key(0)
            True
        """
        settings = asdict(self.settings)
        del settings["device"], settings["threads"]
        world = None if self.rules is None else repr(self.rules)  # a frozen dataclass of plain values
        what = json.dumps({"seed": seed, "settings": settings, "floor": self.min_pixels_per_object,
                           "world": world, "jitter": list(self.jitter), "blend": self.blend_dir is not None,
                           "lights": LIGHTS, "camera_jitter": CAMERA_JITTER, "light_jitter": LIGHT_JITTER,
                           "script": hashlib.sha256(SCRIPT.read_bytes()).hexdigest(),
                           "executable": self.executable, "version": self.version,
                           "assets_script": hashlib.sha256(SCRIPT.with_name("clevr_assets.py").read_bytes()).hexdigest()
                           if self.settings.assets else None}, sort_keys=True)
        return "blender-" + hashlib.sha256(what.encode("utf-8")).hexdigest()[:16]


FAILED = "_failed"
"""Key of the placeholder :func:`render_chunk` returns for a scene that failed: its message."""


def render_chunk(seed: int, split: str, start: int, stop: int, image_dir: str | None, progress_dir: str,
                 job: BlenderJob) -> list[dict]:
    """Scenes ``[start, stop)`` rendered into ``image_dir`` (``None``: scene graphs only).

    A finished scene (PNG and graph in ``progress_dir``) is read back; one that failed comes back
    as ``{FAILED: message}``, so the run names every failed scene.
    """
    from .scenes import FILENAME_PREFIX, image_filename
    from .visibility import VisibilityError

    images, progress = None if image_dir is None else Path(image_dir), Path(progress_dir)
    renderer = renderer_for(blender_command(job.executable), job.settings)
    scenes = []
    for index in range(start, stop):
        name = image_filename(split, index, getattr(job.rules, "filename_prefix", FILENAME_PREFIX))
        done = progress / (name[: -len(".png")] + ".json")
        if images is not None:
            kept = _finished(done, images / name, job.settings)
            if kept is not None:
                scenes.append(kept)
                continue
        version = renderer.start()
        if version != job.version:  # a worker whose Blender is not the one the run started with
            raise BlenderUnavailable(f"{job.executable}: Blender {version} on this worker, {job.version} where the "
                                     "run started; one world is rendered by one Blender")
        try:
            scene = renderer.scene_for(seed, split, index, min_pixels_per_object=job.min_pixels_per_object,
                                       scratch=progress, rules=job.rules, jitter=dict(job.jitter) or None)
            blend = None
            if images is not None and job.blend_dir is not None:
                blend = Path(job.blend_dir) / split / (name[: -len(".png")] + ".blend")
                blend.parent.mkdir(parents=True, exist_ok=True)
            digest = None if images is None else renderer.render(scene, images / name, blend)
        except (SceneRenderFailed, VisibilityError) as exc:
            scenes.append({FAILED: str(exc)})
            continue
        scene = _plain(scene)
        if images is not None:
            _write_then_rename(done, json.dumps({**scene, _IMAGE_SHA256: digest}, allow_nan=False))
        scenes.append(scene)
    return scenes


_IMAGE_SHA256 = "_image_sha256"  # a progress record's digest of its image (not part of the scene graph)


def _finished(record: Path, image: Path, settings: BlenderSettings) -> dict | None:
    """The scene graph of a scene a stopped run finished, or None to render it again: its record
    and image are verified, not trusted (the record names the image and its sha256, and the image
    decodes completely at the settings' size)."""
    if not record.is_file() or not image.is_file():
        return None
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
        if not (isinstance(kept, dict) and kept.get("image_filename") == image.name
                and isinstance(kept.get("objects"), list)):
            raise RuntimeError("not this scene's record")
        if _complete_png(image, settings)[0] != kept.get(_IMAGE_SHA256):
            raise RuntimeError("the image is not the one its record names")
    except (OSError, ValueError, RuntimeError) as exc:
        logger.info("%s: kept by a stopped run but %s; rendered again", image.name, _text(exc))
        record.unlink(missing_ok=True)
        image.unlink(missing_ok=True)
        return None
    return _plain(kept)


def _write_then_rename(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
