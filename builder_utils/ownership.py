"""The mechanics every "what this command wrote" record shares: one small JSON file beside the output.

Three records say what a command may replace: the Hub export's manifest (files, with size and
sha256: :mod:`builder_utils.hub.manifest`), the synthetic CLEVR world's manifest (its splits:
:mod:`builder_utils.clevr.synth.folder`) and the demos' folder list and marker files
(:mod:`builder_utils.owned`). Their grains differ; what they share is here:

- :func:`write_record`: the JSON written atomically (:func:`builder_utils.atomic.write_atomic`),
  so a crash never leaves a half-written record; :func:`record_text` gives the exact bytes
  (``indent`` and ``sort_keys`` as the caller's format fixed them, newline-terminated);
- :func:`read_record`: absent is ``None``; a symlink, a folder or malformed content is a
  :class:`RecordError` naming the file (a record behind a symlink is never trusted: it could
  make someone else's files look like ours); the caller's ``parse`` validates the content;
- :func:`foreign`, :func:`not_a_folder`: whether a path is someone else's (a symlink, or there
  but not recorded) or cannot be a folder we write into, checked before anything is replaced.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> read_record(folder / ".demo.json", writer="demo") is None
    True
    >>> _ = write_record(folder / ".demo.json", {"folders": ["cache"]}, indent=1)
    >>> read_record(folder / ".demo.json", writer="demo")
    {'folders': ['cache']}
    >>> _ = (folder / ".demo.json").write_text("{")
    >>> read_record(folder / ".demo.json", writer="demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    builder_utils.ownership.RecordError: .../.demo.json: cannot read the demo's manifest (...); move it away
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any, TypeVar

from builder_utils.atomic import write_atomic

__all__ = ["RecordError", "foreign", "not_a_folder", "read_record", "record_text", "write_record"]

T = TypeVar("T")


class RecordError(ValueError):
    """A record that exists but cannot be read or trusted; the message names the file."""


def record_text(data: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """The record's JSON text with a final newline; the same data gives the same bytes.

    Example:
        >>> record_text({"b": 1, "a": [2]}, indent=1, sort_keys=True)
        '{\\n "a": [\\n  2\\n ],\\n "b": 1\\n}\\n'
    """
    return json.dumps(data, indent=indent, sort_keys=sort_keys) + "\n"


def write_record(path: str | os.PathLike, data: Any, *, indent: int | None = None, sort_keys: bool = False) -> Path:
    """Write :func:`record_text` of ``data`` to ``path`` atomically; return the path.

    A symlink at ``path`` is replaced, not followed (:func:`os.replace` renames over the link).

    Example:
        >>> import tempfile
        >>> path = write_record(Path(tempfile.mkdtemp()) / ".x.json", {"written_by": "x"})
        >>> path.read_text()
        '{"written_by": "x"}\\n'
    """
    path = Path(path)
    write_atomic(path, record_text(data, indent=indent, sort_keys=sort_keys))
    return path


def read_record(
    path: str | os.PathLike,
    parse: Callable[[Any], T] | None = None,
    *,
    writer: str,
    noun: str = "manifest",
    remedy: str = "move it away",
    error: type[RecordError] = RecordError,
) -> T | Any | None:
    """The record at ``path`` (``parse(json)`` when ``parse`` is given), or ``None`` when absent.

    ``error`` (a :class:`RecordError` subclass) names ``path``: ``"<path>: not a regular file;
    <writer> writes its <noun> there, move it away"`` for a symlink or a folder, and ``"<path>:
    cannot read the <writer>'s <noun> (<why>); <remedy>"`` for unreadable or malformed content,
    including any ``ValueError``, ``KeyError``, ``TypeError`` or ``AttributeError`` that
    ``parse`` raises while validating it.

    Example:
        >>> import tempfile
        >>> path = write_record(Path(tempfile.mkdtemp()) / "r.json", {"format": 2})
        >>> read_record(path, lambda data: data["format"], writer="export")
        2
        >>> read_record(path, lambda data: data["files"], writer="export")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.ownership.RecordError: .../r.json: cannot read the export's manifest ('files'); move it away
    """
    path = Path(path)
    if not os.path.lexists(path):
        return None
    if path.is_symlink() or not path.is_file():
        raise error(f"{path}: not a regular file; {writer} writes its {noun} there, move it away")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if parse is None else parse(data)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise error(f"{path}: cannot read the {writer}'s {noun} ({exc}); {remedy}") from None


def foreign(root: str | os.PathLike, relative: str, recorded: Container[str]) -> bool:
    """Whether ``root/relative`` is someone else's: a symlink, or there and not in ``recorded``.

    A command replaces a path only when this is false (absent, or recorded as written by it).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); (root / "notes").mkdir()
        >>> foreign(root, "notes", set()), foreign(root, "notes", {"notes"}), foreign(root, "new", set())
        (True, False, False)
    """
    path = Path(root) / relative
    return path.is_symlink() or (os.path.lexists(path) and relative not in recorded)


def not_a_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` cannot be a folder a command writes into: a symlink, or there and not a folder.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); _ = (root / "f").write_text("x")
        >>> not_a_folder(root), not_a_folder(root / "f"), not_a_folder(root / "new")
        (False, True, False)
    """
    path = Path(path)
    return path.is_symlink() or (path.exists() and not path.is_dir())
