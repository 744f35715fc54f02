"""Cheap checks of media files at build time, so a corrupt file fails the build, not a training loop.

A builder stores media files by path; ``datasets`` opens them only when a row is decoded, which
may be weeks later inside a user's training loop. These checks read what is needed to know a file
is whole: a PNG is opened and verified by Pillow (signature, header, every chunk's CRC, up to the
IEND chunk; nothing is decompressed); a WAV's header is read by soundfile, and a RIFF file shorter
than its header declares is reported as truncated (libsndfile would silently decode fewer
frames); a PNG whose header declares more pixels than Pillow decodes (a decompression bomb) is
refused before Pillow opens it. Errors name the file.

What the checks saw is remembered: :func:`check_all` records each file's size and modification
time as it checks it, a builder saves that record with its cached build
(:func:`save_checked` / :func:`load_checked`), and the export calls :func:`verify_unchanged` for
every file it embeds. A file changed since the build checked it is checked again and refused
with a :class:`MediaError` naming it: a cached build never embeds a file it did not check.

Example:
    >>> import tempfile, pathlib
    >>> bad = pathlib.Path(tempfile.mkdtemp()) / "CLEVR_val_000000.png"
    >>> _ = bad.write_bytes(b"")
    >>> check_png(bad)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    builder_utils.media_check.MediaError: .../CLEVR_val_000000.png: not a readable PNG image (the file is empty)
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["MediaError", "check_all", "check_png", "check_wav", "load_checked", "recording", "save_checked",
           "summarize", "verify_unchanged"]

# absolute path -> (size, mtime_ns, check name) as the last check of this process saw it
_CHECKED: dict[str, tuple[int, int, str]] = {}
_RECORDING: list[set[str]] = []
CHECKED_RECORD = "media-checked.json"


class MediaError(ValueError):
    """A media file that cannot be read as what it claims to be; the message starts with its path.

    Example:
        >>> str(MediaError("a.png", "not a readable PNG image (the file is empty)"))
        'a.png: not a readable PNG image (the file is empty)'
    """

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


def check_png(path: str | os.PathLike) -> tuple[int, int]:
    """Open and verify a PNG with Pillow; returns ``(width, height)`` or raises :class:`MediaError`.

    Example:
        >>> import tempfile, os
        >>> from PIL import Image
        >>> path = os.path.join(tempfile.mkdtemp(), "a.png")
        >>> Image.new("RGB", (4, 3)).save(path)
        >>> check_png(path)
        (4, 3)
    """
    from PIL import Image, UnidentifiedImageError

    if os.path.getsize(path) == 0:
        raise MediaError(path, "not a readable PNG image (the file is empty)")
    with open(path, "rb") as fh:
        signature = fh.read(8)
    if signature != b"\x89PNG\r\n\x1a\n":
        # before Pillow opens it: another format's header (a GIF's, say) may declare a size that
        # Pillow refuses as a decompression bomb, which would hide what is wrong with the file
        raise MediaError(path, f"not a PNG image (it starts with {signature[:6]!r})")
    _check_pixels(path, Image.MAX_IMAGE_PIXELS)
    try:
        with Image.open(path) as image:
            if image.format != "PNG":
                raise MediaError(path, f"not a PNG image (Pillow reads it as {image.format})")
            size = image.size
            image.verify()
    except MediaError:
        raise
    except Image.DecompressionBombError as exc:  # not an OSError: it would be a traceback
        raise MediaError(path, f"refused: {exc}") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, struct.error) as exc:
        # Pillow reports a bad chunk as SyntaxError and a truncated file as OSError
        raise MediaError(path, f"not a readable PNG image ({exc or type(exc).__name__})") from None
    return size


def _check_pixels(path: str | os.PathLike, limit: int | None) -> None:
    """Refuse a PNG whose header declares more pixels than Pillow's ``MAX_IMAGE_PIXELS``, before
    Pillow opens it: a few KB of zlib can declare gigabytes of pixels (a decompression bomb), and
    Pillow itself only warns up to twice the limit and raises a non-``OSError`` beyond it."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    if limit is None or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return  # not a PNG (Pillow's open says so) or no limit set
    width, height = struct.unpack(">II", head[16:24])
    if width * height > limit:
        raise MediaError(path, f"refused: the image declares {width}x{height} pixels, more than the "
                               f"{limit} Pillow decodes (PIL.Image.MAX_IMAGE_PIXELS); a decompression bomb?")


def check_wav(path: str | os.PathLike) -> tuple[int, int]:
    """Read an audio file's header with soundfile; returns ``(sample rate, channels)``.

    Raises :class:`MediaError` for an empty, unreadable or truncated file.

    Example:
        >>> import tempfile, os
        >>> import numpy as np, soundfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
        >>> soundfile.write(path, np.zeros(100, dtype=np.float32), 44100)
        >>> check_wav(path)
        (44100, 1)
        >>> _ = open(path, "r+b").truncate(60)
        >>> check_wav(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.media_check.MediaError: .../a.wav: truncated audio file: its header declares 244 bytes, the file has 60
    """
    import soundfile

    size = os.path.getsize(path)
    if size == 0:
        raise MediaError(path, "not a readable audio file (the file is empty)")
    with open(path, "rb") as fh:
        head = fh.read(12)
    if len(head) == 12 and head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        declared = struct.unpack("<I", head[4:8])[0] + 8
        if declared > size:
            raise MediaError(path, f"truncated audio file: its header declares {declared} bytes, the file has {size}")
    try:
        info = soundfile.info(path)
    except (soundfile.LibsndfileError, RuntimeError, OSError) as exc:
        raise MediaError(path, f"not a readable audio file ({exc})") from None
    return int(info.samplerate), int(info.channels)


def check_all(paths: Sequence[str | os.PathLike], check: Callable[[str | os.PathLike], Any],
              workers: int | None = None) -> list:
    """``check`` applied to every path (in threads: the checks mostly wait on I/O and zlib);
    results in order; the first failing path's :class:`MediaError` is raised, in path order.

    Example:
        >>> check_all([], check_png)
        []
    """
    workers = workers or min(8, (os.cpu_count() or 1) * 2)

    def checked(path):
        # stat first: a file changed while it is checked then differs from its record
        st = os.stat(path)
        result = check(path)
        key = os.path.abspath(path)
        _CHECKED[key] = (st.st_size, st.st_mtime_ns, check.__name__)
        for seen in _RECORDING:
            seen.add(key)
        return result

    if len(paths) < 64 or workers == 1:
        return [checked(p) for p in paths]
    pool = ThreadPoolExecutor(workers)
    try:
        return list(pool.map(checked, paths, chunksize=64))
    finally:
        # after a failure or Ctrl-C, the queued checks are dropped rather than run to the end
        pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def recording() -> Iterator[set[str]]:
    """Collect the paths :func:`check_all` checks during the block (a build's media).

    Example:
        >>> with recording() as seen:
        ...     check_all([], check_png)
        []
        >>> seen
        set()
    """
    seen: set[str] = set()
    _RECORDING.append(seen)
    try:
        yield seen
    finally:
        _RECORDING.remove(seen)


def save_checked(folder: str | os.PathLike, paths: Iterable[str]) -> None:
    """Write the record of ``paths`` (those checked in this process) to ``folder``/media-checked.json.

    Example:
        >>> import tempfile, os
        >>> from PIL import Image
        >>> folder = tempfile.mkdtemp()
        >>> png = os.path.join(folder, "a.png")
        >>> Image.new("RGB", (4, 3)).save(png)
        >>> check_all([png], check_png)
        [(4, 3)]
        >>> save_checked(folder, [png]); _CHECKED.clear(); load_checked(folder)
        1
    """
    from builder_utils.atomic import write_atomic

    record = {path: _CHECKED[path] for path in map(os.path.abspath, paths) if path in _CHECKED}
    write_atomic(os.path.join(folder, CHECKED_RECORD), json.dumps(record))


def load_checked(folder: str | os.PathLike) -> int:
    """Remember the record a build saved in ``folder`` (its cache folder); returns how many files
    it names (0 without a record). Its entries replace what this process saw: the build being
    loaded, to be exported, is the one whose checks count."""
    from builder_utils.json_input import JSONInputError, load_json

    try:
        record = load_json(os.path.join(folder, CHECKED_RECORD), what="record of checked media")
    except JSONInputError:
        return 0  # none (a build of an older version) or unreadable: embedding re-checks nothing
    if not isinstance(record, dict):
        return 0
    for path, entry in record.items():
        # a damaged entry is skipped: that file is then embedded as read, as without a record
        if (isinstance(entry, list) and len(entry) == 3 and all(type(v) is int for v in entry[:2])
                and isinstance(entry[2], str) and entry[2] in _CHECKS):
            _CHECKED[path] = (entry[0], entry[1], entry[2])
    return len(record)


def verify_unchanged(path: str | os.PathLike, st: os.stat_result) -> None:
    """Raise :class:`MediaError` if the file ``path`` (whose ``os.stat`` is ``st``) differs in
    size or modification time from when a build checked it; the file is checked again, so the
    message says what it is now. A file no check of this process or record saw passes.

    Example:
        >>> import tempfile, os
        >>> from PIL import Image
        >>> png = os.path.join(tempfile.mkdtemp(), "a.png")
        >>> Image.new("RGB", (4, 3)).save(png)
        >>> _ = check_all([png], check_png)
        >>> verify_unchanged(png, os.stat(png))
        >>> _ = open(png, "r+b").truncate(30)
        >>> verify_unchanged(png, os.stat(png))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.media_check.MediaError: .../a.png: changed since the build checked it (... bytes then, 30 now; not a readable PNG image ...); build again (a fresh cache) or restore the file
    """
    entry = _CHECKED.get(os.path.abspath(path))
    if entry is None or (st.st_size, st.st_mtime_ns) == entry[:2]:
        return
    try:
        _CHECKS[entry[2]](path)
        now = "still readable, but not the file the build saw"
    except MediaError as exc:
        now = exc.problem
    raise MediaError(path, f"changed since the build checked it ({entry[0]} bytes then, {st.st_size} now; {now}); "
                           "build again (a fresh cache) or restore the file")


def summarize(values: Iterable[tuple[str, Any]], expected: Any, limit: int = 3) -> tuple[int, list[str]]:
    """How many ``(name, value)`` pairs differ from ``expected`` and the first ``limit`` names.

    Example:
        >>> summarize([("a.wav", (44100, 1)), ("b.wav", (48000, 2))], (44100, 1))
        (1, ['b.wav (48000, 2)'])
    """
    differing = [f"{name} {value}" for name, value in values if value != expected]
    return len(differing), differing[:limit]


_CHECKS = {check.__name__: check for check in (check_png, check_wav)}
