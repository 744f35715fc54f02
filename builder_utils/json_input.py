"""The one reader of JSON *input* (scenes, metadata, templates, predictions, records): hostile text
costs bounded work and fails in one line naming the file and the place.

Beyond ``json``'s syntax errors: nesting deeper than :data:`MAX_DEPTH` (``json`` raises
``RecursionError`` near 1,000 levels, and below that hands deep values to code that may recurse),
and integers past Python's int-to-string limit (``json`` raises a bare ``ValueError`` naming no file).

>>> loads_json("[" * 100_000, where="deep.json")
Traceback (most recent call last):
...
builder_utils.json_input.JSONInputError: deep.json: line 1 column 65: nested more than 64 levels deep
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from itertools import compress
from typing import Any

__all__ = ["MAX_DEPTH", "JSONInputError", "huge_integer", "json_lines", "load_json", "loads_json", "shown_path"]

# No input of ours nests beyond ~6 levels (a template's nodes, a prediction's list of answers);
# 64 leaves room for any honest file and keeps every later recursive walk far from Python's limit.
MAX_DEPTH = 64

_TOO_DEEP = object()
_CONTAINERS = frozenset({list, dict})
_IS_CONTAINER = _CONTAINERS.__contains__
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Structural characters and whole strings (so that brackets inside strings are skipped).
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.DOTALL)


class JSONInputError(ValueError):
    """A JSON input that cannot be read; the message is one line naming the file and the place."""


def shown_path(path: str | os.PathLike) -> str:
    r"""A file name as messages show it: control characters escaped, so a name cannot split or forge a line.

    >>> print(shown_path("a\nb.json"))
    a\nb.json
    """
    text = os.fsdecode(path) if isinstance(path, bytes) else os.fspath(path)
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _line_column(text: str, offset: int, first_line: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return first_line + line, column


def _too_deep_at(text: str) -> int | None:
    """Offset of the first bracket that opens level ``MAX_DEPTH + 1``, or None (strings matched whole)."""
    depth = 0
    for match in _TOKENS.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif char in "]}":
            depth -= 1
    return None


def _depth_exceeds(value: Any, text: str) -> bool:
    """Whether a parsed value nests more than ``MAX_DEPTH``: level by level, no recursion (half a parse's time)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # most JSON Lines rows: nothing to walk
        return False
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        below: list = []
        for container in level:
            items = container.values() if type(container) is dict else container
            below.extend(compress(items, map(_IS_CONTAINER, map(type, items))))
        level = below
    return False


def huge_integer(text: str, start: int = 0) -> tuple[int, str] | None:
    """Where ``text`` holds an integer longer than Python converts, and a description; None if none.

    >>> huge_integer("[1, " + "9" * 4301 + "]")
    (4, 'an integer of 4301 digits (more than the 4300 Python reads)')
    """
    limit = sys.get_int_max_str_digits()
    match = re.compile(r"\d{%d,}" % (limit + 1)).search(text, start) if limit else None
    if match is None:
        return None
    return match.start(), f"an integer of {len(match.group())} digits (more than the {limit} Python reads)"


def loads_json(text: str | bytes, *, where: str, first_line: int = 1,
               error: type[ValueError] = JSONInputError) -> Any:
    """Parse one JSON document; ``where`` names it in messages, ``first_line`` is where it starts (JSON Lines).

    >>> loads_json("[" + "7" * 5000 + "]", where="p.jsonl", first_line=4)
    Traceback (most recent call last):
    ...
    builder_utils.json_input.JSONInputError: p.jsonl: line 4 column 2: an integer of 5000 digits (more than the 4300 Python reads)
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = first_line + text.count(b"\n", 0, exc.start)
            raise error(f"{where}: line {line}: not UTF-8 text ({exc.reason})") from None
    if text.startswith("\ufeff"):  # a UTF-8 byte order mark, as some editors write
        text = text[1:]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        line, column = _line_column(text, exc.pos, first_line)
        raise error(f"{where}: line {line} column {column}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        value = _TOO_DEEP  # located below
    except ValueError as exc:  # the int-to-string limit (a plain ValueError from int())
        found = huge_integer(text)
        if found is None:
            raise error(f"{where}: not valid JSON ({exc})") from None
        line, column = _line_column(text, found[0], first_line)
        raise error(f"{where}: line {line} column {column}: {found[1]}") from None
    if value is _TOO_DEEP or _depth_exceeds(value, text):
        at = _too_deep_at(text)
        place = "" if at is None else "line {} column {}: ".format(*_line_column(text, at, first_line))
        raise error(f"{where}: {place}nested more than {MAX_DEPTH} levels deep")
    return value


def _read_bytes(path: str | os.PathLike, what: str, error: type[ValueError]) -> bytes:
    name = shown_path(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise error(f"{name}: {what} not found") from None
    except IsADirectoryError:
        raise error(f"{name}: expected a {what}, found a folder") from None
    except OSError as exc:
        raise error(f"{name}: cannot read the {what} ({exc.strerror or exc})") from None


def load_json(path: str | os.PathLike, *, what: str = "file", error: type[ValueError] = JSONInputError) -> Any:
    """Read and parse the JSON file ``path``; ``what`` names it in messages ("metadata file").

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "m.json"
    >>> _ = path.write_text('{"ok": true}')
    >>> load_json(path)
    {'ok': True}
    """
    return loads_json(_read_bytes(path, what, error), where=shown_path(path), error=error)


def json_lines(path: str | os.PathLike, *, what: str = "JSON Lines file",
               error: type[ValueError] = JSONInputError) -> Iterator[tuple[int, Any]]:
    """The values of a JSON Lines file with their line numbers; blank lines are skipped.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> _ = path.write_text('{"a": 1}\\n\\n[2]\\n')
    >>> list(json_lines(path))
    [(1, {'a': 1}), (3, [2])]
    """
    name = shown_path(path)
    try:
        handle = open(path, "rb")
    except OSError:
        _read_bytes(path, what, error)  # raises the one-line message
        raise
    with handle:
        for number, line in enumerate(handle, 1):  # one line in memory at a time
            if line.strip():
                yield number, loads_json(line.rstrip(b"\r\n"), where=name, first_line=number, error=error)
