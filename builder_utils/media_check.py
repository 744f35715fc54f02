"""Cheap checks of media files at build time, so a corrupt file fails the build, not a training loop.

A builder stores media files by path; ``datasets`` opens them only when a row is decoded, which
may be weeks later inside a user's training loop. These checks read what is needed to know a file
is whole: a PNG is opened and verified by Pillow (signature, header, every chunk's CRC, up to the
IEND chunk; nothing is decompressed); a WAV's header is read by soundfile, and a RIFF file shorter
than its header declares is reported as truncated (libsndfile would silently decode fewer
frames). Errors name the file.

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

import os
import struct
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["MediaError", "check_all", "check_png", "check_wav", "summarize"]


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
    if len(paths) < 64 or workers == 1:
        return [check(p) for p in paths]
    pool = ThreadPoolExecutor(workers)
    try:
        return list(pool.map(check, paths, chunksize=64))
    finally:
        # after a failure or Ctrl-C, the queued checks are dropped rather than run to the end
        pool.shutdown(wait=True, cancel_futures=True)


def summarize(values: Iterable[tuple[str, Any]], expected: Any, limit: int = 3) -> tuple[int, list[str]]:
    """How many ``(name, value)`` pairs differ from ``expected`` and the first ``limit`` names.

    Example:
        >>> summarize([("a.wav", (44100, 1)), ("b.wav", (48000, 2))], (44100, 1))
        (1, ['b.wav (48000, 2)'])
    """
    differing = [f"{name} {value}" for name, value in values if value != expected]
    return len(differing), differing[:limit]
