"""Atomic file writes: a temporary file in the target's folder, renamed over the target.

The temporary file is in the same folder because :func:`os.replace` is atomic only within one
file system. A reader or a crashed run never sees a half-written output.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

__all__ = ["atomic_output", "write_atomic"]

_MODES = ("w", "wb")
_NEWLINES = (None, "", "\n", "\r", "\r\n")
# O_EXCL: never open a file someone else created; O_BINARY/O_NOINHERIT only exist on Windows.
_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
          | getattr(os, "O_NOINHERIT", 0) | getattr(os, "O_BINARY", 0))
_ATTEMPTS = 100
_NAME_MAX = 255  # bytes in one file name on Linux and macOS file systems


def _create_temp(path: Path) -> tuple[int, Path]:
    # Unlike tempfile.mkstemp (always 0o600), mode 0o666 lets the umask decide, so the renamed
    # file gets the same permissions as one written with a plain open().
    # A legal name of up to 255 bytes must still get a legal temporary name: a long one is
    # shortened to a digest (the temporary name only has to be unique and hidden).
    stem = path.name
    if len(stem.encode("utf-8", "surrogateescape")) > _NAME_MAX - len(".12345678.tmp") - 1:
        import hashlib  # rarely needed, and it loads OpenSSL (~3 ms)

        stem = hashlib.sha256(os.fsencode(stem)).hexdigest()[:32]
    for _ in range(_ATTEMPTS):
        # os.urandom is what secrets.token_hex draws from, without secrets' imports (~2 ms)
        tmp = path.with_name(f".{stem}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, _FLAGS, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name} after {_ATTEMPTS} tries")


@contextmanager
def atomic_output(
    path: str | os.PathLike,
    mode: str = "w",
    *,
    encoding: str | None = "utf-8",
    newline: str | None = None,
) -> Iterator[IO]:
    """Open a temporary file next to ``path``; rename it over ``path`` when the block succeeds.

    ``mode`` is ``"w"`` or ``"wb"``; parent folders are created; permissions follow the umask. If
    the block raises, ``path`` is untouched. Errors name ``path``, never the temporary file.

    Example:
        >>> import tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> target = Path(folder.name) / "numbers.txt"
        >>> with atomic_output(target) as fh:
        ...     for n in range(3):
        ...         _ = fh.write(f"{n}\\n")
        >>> with atomic_output(target) as fh:
        ...     _ = fh.write("half")
        ...     raise RuntimeError("failed mid-way")
        Traceback (most recent call last):
        RuntimeError: failed mid-way
        >>> target.read_text()      # untouched, and no temporary file left behind
        '0\\n1\\n2\\n'
        >>> sorted(p.name for p in Path(folder.name).iterdir())
        ['numbers.txt']
        >>> folder.cleanup()
    """
    if mode not in _MODES:
        raise ValueError(f"atomic_output: mode must be one of {_MODES}, got {mode!r} (for {os.fspath(path)})")
    if mode == "w":
        # checked before any file exists, so a bad argument leaves nothing behind
        if newline not in _NEWLINES:
            raise ValueError(f"atomic_output: newline must be one of {_NEWLINES}, got {newline!r} (for {os.fspath(path)})")
        if encoding is not None:
            codecs.lookup(encoding)
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a folder; the output must be a file name")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = _create_temp(path)
    except OSError as exc:
        # The hidden temporary name would only confuse: name the output the user gave.
        raise type(exc)(f"{path}: cannot write this file ({exc.strerror or exc})") from None
    try:
        # open() closes fd itself if it fails once it has taken it over
        handle = open(fd, "wb") if mode == "wb" else open(fd, "w", encoding=encoding, newline=newline)
        with handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        # BaseException too: a KeyboardInterrupt must not leave a stray temporary file either.
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(
    path: str | os.PathLike,
    data: str | bytes,
    *,
    encoding: str = "utf-8",
    newline: str | None = None,
) -> None:
    """Write ``data`` (text, encoded with ``encoding``, or bytes) to ``path`` atomically (:func:`atomic_output`).

    Example:
        >>> import tempfile
        >>> folder = tempfile.TemporaryDirectory()
        >>> target = Path(folder.name) / "sub" / "a.txt"    # the folder is created
        >>> write_atomic(target, "é")
        >>> target.read_bytes()
        b'\\xc3\\xa9'
        >>> folder.cleanup()
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        with atomic_output(path, "wb") as fh:
            fh.write(data)
    elif isinstance(data, str):
        with atomic_output(path, "w", encoding=encoding, newline=newline) as fh:
            fh.write(data)
    else:
        raise TypeError(f"write_atomic: data for {os.fspath(path)} must be str or bytes, got {type(data).__name__}")
