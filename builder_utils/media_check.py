"""Cheap checks of media files at build time, so a corrupt file fails the build, not a training loop.

``datasets`` opens a media file only when a row is decoded, maybe weeks later. PNGs: every chunk's
CRC, nothing decompressed; a RIFF file shorter than its header is truncated (libsndfile would
silently decode fewer frames); a megabyte of FLAC silence can decode to gigabytes. Each check
records size and sha256, by which the export re-checks (size and mtime can both be faked).
README, "Data safety".

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
import hashlib
import json
import os
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from builder_utils.json_input import shown_path

__all__ = ["DECODED_FLOOR", "MAX_DECODED_RATIO", "MediaError", "check_all", "check_audio_size", "check_png", "check_wav",
           "check_zip", "load_checked", "recording", "save_checked", "summarize", "verify_unchanged"]

# absolute path -> (size, sha256 hex, check name) as the last check of this process saw it
_CHECKED: dict[str, tuple[int, str, str]] = {}
_RECORDING: list[set[str]] = []
CHECKED_RECORD = "media-checked.json"
#: The command name the record of checked media is written under, in the cache folder's ownership record.
CHECK_COMMAND = "media check"

# Decoded audio (16-bit samples) per byte of file. FLAC of real sound is 1.5-3x, Ogg Vorbis at
# its lowest bitrates about 30x; 100x leaves room for near-silence and refuses a bomb, whose
# ratio is in the thousands. Small files get a floor: 16 MB decoded harms no one.
MAX_DECODED_RATIO = 100
DECODED_FLOOR = 16 << 20
# Zip members: deflate of WAV or PNG is 1-3x, of text 5-10x; a bomb is 1000x. A member of up to
# 1 MB may compress better (a small file of zeros); the archive as a whole is held to the same
# ratio (a bomb split into many small members) and to 1 TiB extracted (CLEVR's 18 GB zip is the
# largest we read).
MAX_ZIP_RATIO = 100
MAX_ZIP_TOTAL = 1 << 40
_ZIP_MEMBER_FLOOR = 1 << 20
_DECODE_BLOCK = 1 << 16
_UNKNOWN_FRAMES = 2**63 - 1
_RUN = 64  # files per task of check_all's threads  # libsndfile's count for a stream that does not declare its length


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
    """Refuse a PNG declaring more than ``MAX_IMAGE_PIXELS`` before Pillow opens it: Pillow only warns
    up to twice the limit and raises a non-``OSError`` beyond it."""
    with open(path, "rb") as fh:
        head = fh.read(24)
    if limit is None or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return  # not a PNG (Pillow's open says so) or no limit set
    width, height = struct.unpack(">II", head[16:24])
    if width * height > limit:
        raise MediaError(path, f"refused: the image declares {width}x{height} pixels, more than the "
                               f"{limit} Pillow decodes (PIL.Image.MAX_IMAGE_PIXELS); a decompression bomb?")


def check_wav(path: str | os.PathLike) -> tuple[int, int]:
    """Read an audio file's header with soundfile; returns ``(sample rate, channels)`` or raises :class:`MediaError`.

    Example:
        >>> import tempfile, os
        >>> import numpy as np, soundfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
        >>> soundfile.write(path, np.zeros(100, dtype=np.float32), 44100)
        >>> check_wav(path)
        (44100, 1)
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
        if info.format != "WAV":
            _check_decoded_length(path, size, info)
    except (soundfile.LibsndfileError, RuntimeError, OSError) as exc:
        raise MediaError(path, f"not a readable audio file ({exc})") from None
    return int(info.samplerate), int(info.channels)


def check_audio_size(name: str | os.PathLike, frames: int, channels: int, size: int) -> None:
    """Refuse audio that decodes (16-bit samples) to more than :data:`MAX_DECODED_RATIO` times ``size``.

    Example:
        >>> check_audio_size("a.flac", frames=10**9, channels=1, size=1_250_000)
        Traceback (most recent call last):
        ...
        builder_utils.media_check.MediaError: a.flac: refused: 1000000000 frames of 1 channel(s) in 1250000 bytes decode to 2000000000 bytes, more than 100 times the file; an audio bomb?
    """
    decoded = frames * channels * 2
    if decoded > max(MAX_DECODED_RATIO * size, DECODED_FLOOR):
        raise MediaError(name, f"refused: {frames} frames of {channels} channel(s) in {size} bytes decode to "
                               f"{decoded} bytes, more than {MAX_DECODED_RATIO} times the file; an audio bomb?")


def _check_decoded_length(path: str | os.PathLike, size: int, info) -> None:
    """Decode block by block, never past the bound: a header may omit its length (libsndfile then
    reports the largest count) or lie."""
    import soundfile

    declared = None if info.frames >= _UNKNOWN_FRAMES else info.frames
    if declared is not None:
        check_audio_size(path, declared, info.channels, size)
    bound = declared if declared is not None else max(MAX_DECODED_RATIO * size, DECODED_FLOOR) // (2 * info.channels)
    decoded = 0
    with soundfile.SoundFile(path) as source:
        for block in source.blocks(_DECODE_BLOCK, dtype="int16"):
            decoded += len(block)
            if decoded > bound:
                if declared is not None:
                    raise MediaError(path, f"decodes to more than the {declared} frames its header declares")
                check_audio_size(path, decoded, info.channels, size)
    if declared is not None and decoded < declared:
        raise MediaError(path, f"truncated audio file: its header declares {declared} frames, it decodes {decoded}")


def check_zip(path: str | os.PathLike) -> None:
    """Refuse a zip bomb (:data:`MAX_ZIP_RATIO`, :data:`MAX_ZIP_TOTAL`) before anything is extracted.

    The directory is what counts: ``zipfile`` never writes more than a member's declared size.

    Example:
        >>> import tempfile, os, zipfile
        >>> path = os.path.join(tempfile.mkdtemp(), "audio_files.zip")
        >>> with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        ...     z.writestr("a.wav", bytes(10**7))
        >>> check_zip(path)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.media_check.MediaError: .../audio_files.zip: refused: member a.wav extracts to 10000000 bytes from ... bytes (more than 100 times); a zip bomb?
    """
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise MediaError(path, f"not a readable zip archive ({exc})") from None
    total = 0
    for member in members:
        total += member.file_size
        if member.file_size > max(MAX_ZIP_RATIO * member.compress_size, _ZIP_MEMBER_FLOOR):
            raise MediaError(path, f"refused: member {shown_path(member.filename)} extracts to {member.file_size} "
                                   f"bytes from {member.compress_size} bytes (more than {MAX_ZIP_RATIO} times); "
                                   "a zip bomb?")
    size = os.path.getsize(path)
    if total > min(MAX_ZIP_TOTAL, max(MAX_ZIP_RATIO * size, DECODED_FLOOR)):
        raise MediaError(path, f"refused: {len(members)} members extract to {total} bytes in all from an archive "
                               f"of {size} bytes; a zip bomb?")


def check_all(paths: Sequence[str | os.PathLike], check: Callable[[str | os.PathLike], Any],
              workers: int | None = None) -> list:
    """``check`` applied to every path, in threads (they wait on I/O and zlib); the first failure in path order raises.

    Example:
        >>> check_all([], check_png)
        []
    """
    workers = workers or min(8, (os.cpu_count() or 1) * 2)

    def checked(path):
        # digest first: a file changed while it is checked then differs from its record
        size, digest = _digest_of_file(path)
        result = check(path)
        key = os.path.abspath(path)
        _CHECKED[key] = (size, digest, check.__name__)
        for seen in _RECORDING:
            seen.add(key)
        return result

    if len(paths) < 64 or workers == 1:
        return [checked(p) for p in paths]

    def checked_run(run: Sequence) -> list:
        return [checked(p) for p in run]

    # One task per run of 64 files, not per file: a future per file (its lock, condition, result)
    # was garbage interleaved with the records kept, so that Python's allocator kept its arenas
    # (about 1.7 kB a file: 120 MB at CLEVR's 70,000 images, then copied into every build worker).
    runs = [paths[i:i + _RUN] for i in range(0, len(paths), _RUN)]
    pool = ThreadPoolExecutor(workers)
    try:
        return [result for results in pool.map(checked_run, runs) for result in results]
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
    """Write the record of ``paths`` checked in this process to ``folder``/media-checked.json.

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
    from builder_utils.ownership import OutputFolder

    record = {path: _CHECKED[path] for path in map(os.path.abspath, paths) if path in _CHECKED}
    # through the ownership rules like every other write: a record someone else left or edited
    # in the cache folder is refused, not replaced
    with OutputFolder.open(os.path.join(folder, CHECKED_RECORD), command=CHECK_COMMAND, flag="--cache_dir",
                           file=True) as out:
        (out.stage / CHECKED_RECORD).write_text(json.dumps(record), encoding="utf-8")
        out.add([CHECKED_RECORD])


def load_checked(folder: str | os.PathLike) -> int:
    """Load the record a build saved in ``folder``; returns how many files it names (0: none).

    It replaces what this process saw: the build being exported is the one whose checks count."""
    from builder_utils.json_input import JSONInputError, load_json

    try:
        record = load_json(os.path.join(folder, CHECKED_RECORD), what="record of checked media")
    except JSONInputError:
        return 0  # none (a build of an older version) or unreadable: embedding re-checks nothing
    if not isinstance(record, dict):
        return 0
    for path, entry in record.items():
        # a damaged entry is skipped: that file is then embedded as read, as without a record
        if (isinstance(entry, list) and len(entry) == 3 and type(entry[0]) is int and isinstance(entry[1], str)
                and len(entry[1]) == 64 and isinstance(entry[2], str) and entry[2] in _CHECKS):
            _CHECKED[path] = (entry[0], entry[1], entry[2])
    return len(record)


def _digest_of_file(path: str | os.PathLike) -> tuple[int, str]:
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def verify_unchanged(path: str | os.PathLike, data: bytes | memoryview) -> None:
    """Raise :class:`MediaError` if ``data`` (about to be embedded) differs from what the build checked.

    The file is checked again so the message says what it is now; a file never checked passes.

    Example:
        >>> import tempfile, os
        >>> from PIL import Image
        >>> png = os.path.join(tempfile.mkdtemp(), "a.png")
        >>> Image.new("RGB", (4, 3)).save(png)
        >>> _ = check_all([png], check_png)
        >>> verify_unchanged(png, open(png, "rb").read())
        >>> _ = open(png, "r+b").truncate(30)
        >>> verify_unchanged(png, open(png, "rb").read())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.media_check.MediaError: .../a.png: changed since the build checked it (... bytes then, 30 now; not a readable PNG image ...); build again (a fresh cache) or restore the file
    """
    entry = _CHECKED.get(os.path.abspath(path))
    if entry is None or (len(data) == entry[0] and hashlib.sha256(data).hexdigest() == entry[1]):
        return
    try:
        _CHECKS[entry[2]](path)
        now = "still readable, but not the file the build saw"
    except MediaError as exc:
        now = exc.problem
    raise MediaError(path, f"changed since the build checked it ({entry[0]} bytes then, {len(data)} now; {now}); "
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
