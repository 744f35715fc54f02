"""Loading and validating CLEVR scene files (``{"info": ..., "scenes": [...]}``).

Parsing CLEVR's 70,000 train scenes into Python objects costs several GB, so :func:`load_scenes`
streams the file once, validates every scene and keeps only byte ranges; scenes are parsed on demand.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import reprlib
import threading
from array import array
from collections.abc import Iterator, Sequence
from typing import Any

from builder_utils.json_input import huge_integer

from .metadata import ATTRIBUTES, Metadata, default_metadata

__all__ = ["MAX_OBJECTS", "SceneError", "SceneFile", "load_scenes", "validate_scene"]

logger = logging.getLogger(__name__)

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_CHUNK = 1 << 22
# A decode error this far before the end of the buffer cannot be caused by the buffer
# ending early (scenes are a few KB), so it is reported instead of reading further.
_TRUNCATION_MARGIN = 1 << 20
_ITER_WINDOW = 256
#: A scene file at most this large keeps the scenes its index pass parsed, and hands each out
#: once (see :meth:`SceneFile.window`) instead of parsing it a second time. 4 MiB of text is
#: ~1,900 CLEVR scenes and ~19 MB of objects (4.5x the text), given away window by window;
#: larger files are only indexed, as before.
KEEP_PARSED_BYTES = 1 << 22
_REQUIRED_SCENE_KEYS = ("image_index", "image_filename", "objects", "relationships")

#: The most objects a scene may hold. CLEVR's scenes hold 3 to 10; synthetic worlds (and the
#: stream's harder difficulties) go well beyond, with count answers up to ~60. A scene's
#: relationships grow with the square of its objects (every pair is left/right and front/behind),
#: so this bound also bounds the work of the check and of every question asked about a scene.
MAX_OBJECTS = 128


class SceneError(ValueError):
    """A malformed scene file or scene, e.g. ``scenes.json: scene 3 (CLEVR_val_000003.png):
    objects[2].color: unknown color 'pink' ...``."""


class _Problem(Exception):
    """Internal: a field-level problem, given file and scene context by the caller."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxlist, _REPR.maxstring, _REPR.maxother = 3, 8, 60, 60


def _shown(value: Any) -> str:
    """A value bounded in depth and length: plain repr of a hostile scene's 900-level list would
    recurse, of a megabyte string flood the terminal."""
    return _REPR.repr(value)


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


class _Vocabulary:
    """The value sets scenes are checked against, derived once from the metadata."""

    def __init__(self, metadata: Metadata):
        self.attributes = {attr: (frozenset(metadata.values(t)), metadata.values(t)) for attr, t in ATTRIBUTES.items()}
        self.relations = metadata.values("Relation")
        self.relation_set = frozenset(self.relations)
        self.attribute_sets = tuple((attr, allowed) for attr, (allowed, _) in self.attributes.items())
        self.index_sets: dict[int, frozenset] = {}

    def indices(self, n: int) -> frozenset:
        """The valid object indices of an n-object scene (one set per n: a set per object made the check quadratic)."""
        table = self.index_sets.get(n)
        if table is None:
            table = self.index_sets[n] = frozenset(range(n))
        return table


_VOCABULARIES: dict[int, tuple[Metadata, _Vocabulary]] = {}


def _vocabulary(metadata: Metadata | None) -> _Vocabulary:
    metadata = metadata or default_metadata()
    cached = _VOCABULARIES.get(id(metadata))
    if cached is None or cached[0] is not metadata:
        cached = _VOCABULARIES[id(metadata)] = (metadata, _Vocabulary(metadata))
    return cached[1]


_NUMBER_TYPES = frozenset({int, float})
_INT_TYPE = frozenset({int})


def _looks_valid(scene: Any, vocab: _Vocabulary) -> bool:
    """A fast check of a valid scene by C-level set operations; False means "explain" (then
    :func:`_explain_scene` finds the problem, or accepts a scene this check was conservative about)."""
    try:
        if type(scene) is not dict:
            return False
        index, name, objects, relationships = (
            scene["image_index"], scene["image_filename"], scene["objects"], scene["relationships"]
        )
        if type(index) is not int or index < 0 or type(name) is not str or not name:
            return False
        if type(objects) is not list or type(relationships) is not dict or len(objects) > MAX_OBJECTS:
            return False
        if "split" in scene and type(scene["split"]) is not str:
            return False
        for obj in objects:
            for attr, allowed in vocab.attribute_sets:
                if obj[attr] not in allowed:
                    return False
            coords, pixels = obj["3d_coords"], obj["pixel_coords"]
            if type(coords) is not list or len(coords) != 3 or not _NUMBER_TYPES.issuperset(map(type, coords)):
                return False
            if type(pixels) is not list or not 2 <= len(pixels) <= 3 or not _NUMBER_TYPES.issuperset(map(type, pixels)):
                return False
            # json reads NaN and Infinity literals as floats; they would poison every relation
            if not all(map(math.isfinite, coords)) or not all(map(math.isfinite, pixels)):
                return False
        if relationships.keys() != vocab.relation_set:
            return False
        n = len(objects)
        allowed = vocab.indices(n)
        for per_object in relationships.values():
            if type(per_object) is not list or len(per_object) != n:
                return False
            for i, related in enumerate(per_object):
                # The intersection is smaller than the list when an index repeats or is out of
                # range; the type check rules out 1.0 and True. Work: linear in the list.
                if type(related) is not list or len(allowed.intersection(related)) != len(related) or i in related:
                    return False
                if related and not _INT_TYPE.issuperset(map(type, related)):
                    return False
        return True
    except (KeyError, TypeError):
        return False


def _check_coords(obj: dict, k: int, key: str, lengths: tuple[int, ...]) -> None:
    coords = obj.get(key)
    if coords is None and key not in obj:
        raise _Problem(f"objects[{k}]", f"missing key {key!r}")
    if not isinstance(coords, list) or len(coords) not in lengths or not all(map(_is_number, coords)):
        expected = " or ".join(map(str, lengths))
        raise _Problem(f"objects[{k}].{key}", f"expected a list of {expected} numbers, got {_shown(coords)}")
    for i, value in enumerate(coords):
        if not math.isfinite(value):
            raise _Problem(f"objects[{k}].{key}[{i}]", f"expected a finite number, got {_shown(value)}")


def _check_scene(scene: Any, vocab: _Vocabulary) -> None:
    if not _looks_valid(scene, vocab):
        _explain_scene(scene, vocab)


def _explain_scene(scene: Any, vocab: _Vocabulary) -> None:
    if not isinstance(scene, dict):
        raise _Problem("scene", f"expected a JSON object, got {_type_name(scene)}")
    for key in _REQUIRED_SCENE_KEYS:
        if key not in scene:
            raise _Problem(key, "missing key")
    index = scene["image_index"]
    if type(index) is not int or index < 0:
        raise _Problem("image_index", f"expected a non-negative integer, got {_shown(index)}")
    if not isinstance(scene["image_filename"], str) or not scene["image_filename"]:
        raise _Problem("image_filename", f"expected a non-empty string, got {_shown(scene['image_filename'])}")
    if "split" in scene and not isinstance(scene["split"], str):
        raise _Problem("split", f"expected a string, got {_type_name(scene['split'])}")

    objects = scene["objects"]
    if not isinstance(objects, list):
        raise _Problem("objects", f"expected a list, got {_type_name(objects)}")
    if len(objects) > MAX_OBJECTS:
        raise _Problem("objects", f"{len(objects)} objects, more than the {MAX_OBJECTS} a scene may hold "
                                  "(builder_utils.clevr.scenes.MAX_OBJECTS)")
    for k, obj in enumerate(objects):
        if not isinstance(obj, dict):
            raise _Problem(f"objects[{k}]", f"expected a JSON object, got {_type_name(obj)}")
        for attr, (allowed, ordered) in vocab.attributes.items():
            if attr not in obj:
                raise _Problem(f"objects[{k}]", f"missing key {attr!r}")
            value = obj[attr]
            if not isinstance(value, str) or value not in allowed:
                raise _Problem(
                    f"objects[{k}].{attr}", f"unknown {attr} {_shown(value)} (expected one of {', '.join(ordered)})"
                )
        _check_coords(obj, k, "3d_coords", (3,))
        # Real files store [x, y, depth]; some derived files keep only [x, y].
        _check_coords(obj, k, "pixel_coords", (2, 3))

    relationships = scene["relationships"]
    if not isinstance(relationships, dict):
        raise _Problem("relationships", f"expected a JSON object, got {_type_name(relationships)}")
    extra = sorted(set(relationships) - set(vocab.relations))
    if extra:
        raise _Problem("relationships", f"unknown relations {_shown(extra)} (expected exactly {', '.join(vocab.relations)})")
    n = len(objects)
    for rel in vocab.relations:
        if rel not in relationships:
            raise _Problem("relationships", f"missing relation {rel!r}")
        per_object = relationships[rel]
        if not isinstance(per_object, list) or len(per_object) != n:
            got = f"{len(per_object)} entries" if isinstance(per_object, list) else _type_name(per_object)
            raise _Problem(f"relationships.{rel}", f"expected one list per object ({n}), got {got}")
        for i, related in enumerate(per_object):
            if not isinstance(related, list):
                raise _Problem(f"relationships.{rel}[{i}]", f"expected a list of object indices, got {_type_name(related)}")
            if not related:
                continue
            if not all(type(j) is int for j in related):
                raise _Problem(f"relationships.{rel}[{i}]", f"object indices must be integers, got {_shown(related)}")
            if min(related) < 0 or max(related) >= n:
                bad = next(j for j in related if not 0 <= j < n)
                raise _Problem(
                    f"relationships.{rel}[{i}]", f"object index {bad} out of range (the scene has {n} objects)"
                )
            if i in related:
                raise _Problem(f"relationships.{rel}[{i}]", f"object {i} is listed in relation to itself")
            if len(set(related)) != len(related):
                raise _Problem(f"relationships.{rel}[{i}]", f"duplicate object indices in {_shown(related)}")


def _scene_label(position: int, scene: Any) -> str:
    name = scene.get("image_filename") if isinstance(scene, dict) else None
    return f"scene {position} ({name})" if isinstance(name, str) and name else f"scene {position}"


def validate_scene(scene: Any, *, metadata: Metadata | None = None, where: str = "scene") -> None:
    """Check one scene dict (format and vocabulary); :class:`SceneError` names ``where`` and the field.

    >>> validate_scene({"image_index": 0})
    Traceback (most recent call last):
    ...
    builder_utils.clevr.scenes.SceneError: scene: image_filename: missing key
    """
    try:
        _check_scene(scene, _vocabulary(metadata))
    except _Problem as problem:
        raise SceneError(f"{where}: {problem}") from None


class _Reader:
    """Streams a JSON document in chunks, decoding one value at a time with byte offsets.

    Decoded as latin-1 so that character offsets are byte offsets (UTF-8 sequences never hold
    JSON's structural characters); a value that is not pure ASCII is re-decoded as UTF-8.
    """

    def __init__(self, fh, path: str):
        self.fh = fh
        self.path = path
        self.text = ""
        self.base = 0  # byte offset of text[0] in the file
        self.pos = 0
        self.eof = False
        head = fh.read(3)
        if head != b"\xef\xbb\xbf":  # tolerate a UTF-8 byte order mark
            self.text = head.decode("latin-1")
        else:
            self.base = 3
        self.text_is_ascii = self.text.isascii()

    def _read_more(self, at_least: int = 0) -> bool:
        if self.eof:
            return False
        data = self.fh.read(max(at_least, _CHUNK))
        if not data:
            self.eof = True
            return False
        self.base += self.pos
        self.text = self.text[self.pos :] + data.decode("latin-1")
        self.pos = 0
        self.text_is_ascii = self.text.isascii()
        return True

    def byte_offset(self) -> int:
        return self.base + self.pos

    def peek(self) -> str:
        """Skip whitespace and return the next character ('' at the end of the file)."""
        while True:
            self.pos = _WHITESPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text) or not self._read_more():
                return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self) -> tuple[Any, int, int, bool]:
        """The next JSON value, its start and end byte offsets, and whether it must be re-read as UTF-8."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.text, self.pos)
            except RecursionError:
                raise _JSONSyntax(self.base + self.pos, "nested too deeply") from None
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self.text) - _TRUNCATION_MARGIN
                if near_end and self._read_more(2 * (len(self.text) - self.pos)):
                    continue
                raise _JSONSyntax(self.base + exc.pos, exc.msg) from None
            except ValueError:  # an integer past Python's int-to-string limit
                found = huge_integer(self.text, self.pos)
                if found is None:
                    raise
                raise _JSONSyntax(self.base + found[0], found[1]) from None
            # A number ending exactly at the buffer's end may continue in the next chunk.
            if end == len(self.text) and not self.eof and self._read_more():
                continue
            start = self.base + self.pos
            non_ascii = not self.text_is_ascii and not self.text[self.pos : end].isascii()
            self.pos = end
            return value, start, self.base + end, non_ascii

    def expect(self, chars: str, what: str) -> str:
        char = self.peek()
        if char == "" or char not in chars:
            found = "the end of the file" if char == "" else repr(char)
            raise _JSONSyntax(self.byte_offset(), f"expected {what}, found {found}")
        self.pos += 1
        return char


class _JSONSyntax(Exception):
    def __init__(self, byte_offset: int, message: str):
        super().__init__(message)
        self.byte_offset = byte_offset
        self.message = message


def _line_column(path: str, byte_offset: int) -> tuple[int, int]:
    with open(path, "rb") as fh:
        head = fh.read(byte_offset)
    line = head.count(b"\n") + 1
    return line, byte_offset - (head.rfind(b"\n") + 1) + 1


class SceneFile(Sequence):
    """A validated CLEVR scene file, read on demand: each access parses fresh scene dicts.

    Pickling sends only the path and the byte offsets: cheap to hand to worker processes.

    >>> import pickle, tempfile
    >>> from builder_utils.clevr.synth import write_clevr_folder
    >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 20}, seed=0, render=False, progress=False)
    >>> scenes = load_scenes(root / "scenes" / "CLEVR_val_scenes.json")
    >>> worker_share = pickle.loads(pickle.dumps(scenes.part(10, 20)))   # what a worker receives
    >>> worker_share.window(0, 2) == scenes.window(10, 12)
    True
    """

    def __init__(self, path: str, info: dict, starts: array, ends: array, stamp: tuple[int, int],
                 parsed: list[dict | None] | None = None):
        self.path = path
        self.info = info
        self._abspath = os.path.abspath(path)
        self._starts = starts
        self._ends = ends
        self._stamp = stamp
        # The index pass's own scene objects (small files only), each handed out at most once:
        # None where given away. Never pickled; a part takes over those of its range.
        self._kept = sum(scene is not None for scene in parsed) if parsed else 0
        self._parsed = parsed if self._kept else None
        self._taking = threading.Lock() if self._parsed else None  # two threads never take one scene

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_parsed": None, "_kept": 0, "_taking": None}

    def __len__(self) -> int:
        return len(self._starts)

    def __repr__(self) -> str:
        return f"SceneFile({self.path!r}, {len(self)} scenes)"

    def __getitem__(self, item):
        if isinstance(item, slice):
            start, stop, step = item.indices(len(self))
            if step == 1:
                return self.window(start, max(start, stop))
            return [self[i] for i in range(start, stop, step)]
        index = item.__index__()
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{self.path}: scene index {item} out of range ({len(self)} scenes)")
        return self.window(index, index + 1)[0]

    def __iter__(self) -> Iterator[dict]:
        for start in range(0, len(self), _ITER_WINDOW):
            yield from self.window(start, min(len(self), start + _ITER_WINDOW))

    def _check_unchanged(self) -> None:
        st = os.stat(self._abspath)
        if (st.st_size, st.st_mtime_ns) != self._stamp:
            raise SceneError(f"{self.path}: the file changed after load_scenes indexed it; load it again")

    def window(self, start: int, stop: int) -> list[dict]:
        """Parse scenes ``start`` (inclusive) to ``stop`` (exclusive) with one read.

        >>> import tempfile
        >>> from builder_utils.clevr.synth import write_clevr_folder
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 20}, seed=0, render=False, progress=False)
        >>> [scene["image_index"] for scene in load_scenes(root / "scenes" / "CLEVR_val_scenes.json").window(10, 12)]
        [10, 11]
        """
        if not 0 <= start <= stop <= len(self):
            raise IndexError(f"{self.path}: window [{start}, {stop}) out of range ({len(self)} scenes)")
        if start == stop:
            return []
        self._check_unchanged()
        kept = self._take(start, stop)
        if kept is not None and all(scene is not None for scene in kept):
            return kept
        first = self._starts[start]
        with open(self._abspath, "rb") as fh:
            fh.seek(first)
            blob = fh.read(self._ends[stop - 1] - first)
        starts, ends = self._starts, self._ends
        return [json.loads(blob[starts[k] - first : ends[k] - first]) for k in range(start, stop)]

    def _take(self, start: int, stop: int) -> list[dict | None] | None:
        """Hand out the kept scenes ``[start, stop)`` once (None where taken, or if none is kept): the
        taker holds the only reference."""
        if self._parsed is None:
            return None
        with self._taking:
            parsed = self._parsed
            if parsed is None:
                return None
            taken = parsed[start:stop]
            parsed[start:stop] = [None] * (stop - start)
            self._kept -= sum(scene is not None for scene in taken)
            if not self._kept:
                self._parsed = None
        return taken

    def part(self, start: int, stop: int) -> SceneFile:
        """A ``SceneFile`` over scenes ``[start, stop)`` of the same file (offsets only).

        >>> import tempfile
        >>> from builder_utils.clevr.synth import write_clevr_folder
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 20}, seed=0, render=False, progress=False)
        >>> len(load_scenes(root / "scenes" / "CLEVR_val_scenes.json").part(0, 5))
        5
        """
        if not 0 <= start <= stop <= len(self):
            raise IndexError(f"{self.path}: part [{start}, {stop}) out of range ({len(self)} scenes)")
        # The part takes over the kept scenes of its range (this file then parses them anew).
        return SceneFile(self.path, self.info, self._starts[start:stop], self._ends[start:stop], self._stamp,
                         self._take(start, stop))


def load_scenes(path: str | os.PathLike, *, metadata: Metadata | None = None) -> SceneFile:
    """Read and validate every scene of a CLEVR scene file; :class:`SceneError` names file, scene and field.

    >>> import tempfile
    >>> from builder_utils.clevr.synth import write_clevr_folder
    >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 3}, seed=0, render=False, progress=False)
    >>> scenes = load_scenes(root / "scenes" / "CLEVR_val_scenes.json")
    >>> scenes.info["split"], len(scenes)
    ('val', 3)
    """
    path = os.fspath(path)
    vocab = _vocabulary(metadata)
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        stamp = (st.st_size, st.st_mtime_ns)
        reader = _Reader(fh, path)
        parsed: list[dict] | None = [] if st.st_size <= KEEP_PARSED_BYTES else None
        try:
            info, starts, ends = _index_document(reader, path, vocab, parsed)
        except _JSONSyntax as exc:
            line, column = _line_column(path, exc.byte_offset)
            raise SceneError(f"{path}: line {line} column {column}: not valid JSON ({exc.message})") from None
    return SceneFile(path, info, starts, ends, stamp, parsed)


def _index_document(reader: _Reader, path: str, vocab: _Vocabulary,
                    parsed: list[dict] | None) -> tuple[dict, array, array]:
    first = reader.peek()
    if first == "":
        raise SceneError(f'{path}: empty file (expected a CLEVR scene file {{"info": ..., "scenes": [...]}})')
    if first != "{":
        raise SceneError(f'{path}: top level: expected a JSON object {{"info": ..., "scenes": [...]}}')
    reader.expect("{", "'{'")
    info: dict = {}
    found: tuple[array, array, dict] | None = None
    splits: dict[str, tuple[int, str]] = {}
    if reader.peek() == "}":
        reader.expect("}", "'}'")
    else:
        while True:
            if reader.peek() != '"':
                reader.expect('"', "a key string")
            key = reader.value()[0]
            reader.expect(":", "':'")
            if key == "scenes":
                if found is not None:
                    raise SceneError(f"{path}: top level: duplicate key 'scenes'")
                found = _index_scenes(reader, path, vocab, parsed)
                splits = found[2]
            elif key == "info":
                info, start, end, non_ascii = reader.value()
                if non_ascii:
                    info = _reparse_utf8(path, "info", start, end)
                if not isinstance(info, dict):
                    raise SceneError(f"{path}: info: expected a JSON object, got {_type_name(info)}")
            else:
                reader.value()
            if reader.expect(",}", "',' or '}'") == "}":
                break
    if reader.peek() != "":
        raise _JSONSyntax(reader.byte_offset(), "unexpected data after the top-level object")
    if found is None:
        raise SceneError(f"{path}: top level: missing key 'scenes'")
    _warn_other_splits(path, info.get("split"), splits)
    return info, found[0], found[1]


def _warn_other_splits(path: str, file_split: Any, splits: dict[str, tuple[int, str]]) -> None:
    """Warn of scenes whose ``split`` is not their file's: legal, but questions take the scene's split."""
    if not isinstance(file_split, str):
        return
    for split, (count, first) in splits.items():
        if split != file_split:
            logger.warning("%s: %d scene(s) have split %r but the file's info says %r (first: %s)",
                           path, count, split, file_split, first)


def _index_scenes(reader: _Reader, path: str, vocab: _Vocabulary,
                  parsed: list[dict] | None) -> tuple[array, array, dict]:
    """Byte ranges of the scenes, and per ``split`` (count, first scene) for the warning."""
    starts, ends = array("q"), array("q")
    splits: dict[str, tuple[int, str]] = {}
    if reader.peek() != "[":
        value = reader.value()[0]
        raise SceneError(f"{path}: scenes: expected a list of scenes, got {_type_name(value)}")
    reader.expect("[", "'['")
    if reader.peek() == "]":
        reader.expect("]", "']'")
        return starts, ends, splits
    # image_index keys the per-scene seed and the question ids: a repeat would give two scenes
    # the same questions' randomness and make the output depend on how scenes are sharded.
    seen: dict[int, int] = {}
    position = 0
    while True:
        try:
            scene, start, end, non_ascii = reader.value()
        except _JSONSyntax as exc:
            line, column = _line_column(path, exc.byte_offset)
            raise SceneError(
                f"{path}: scene {position}: line {line} column {column}: not valid JSON ({exc.message})"
            ) from None
        if non_ascii:
            scene = _reparse_utf8(path, f"scene {position}", start, end)
        try:
            _check_scene(scene, vocab)
        except _Problem as problem:
            raise SceneError(f"{path}: {_scene_label(position, scene)}: {problem}") from None
        index = scene["image_index"]
        earlier = seen.setdefault(index, position)
        if earlier != position:
            raise SceneError(f"{path}: {_scene_label(position, scene)}: image_index: {index} repeats "
                             f"the image_index of scene {earlier}")
        split = scene.get("split")
        if split is not None:
            count, first = splits.get(split, (0, _scene_label(position, scene)))
            splits[split] = (count + 1, first)
        starts.append(start)
        ends.append(end)
        if parsed is not None:
            parsed.append(scene)
        position += 1
        if reader.expect(",]", "',' or ']' after a scene") == "]":
            return starts, ends, splits


def _reparse_utf8(path: str, where: str, start: int, end: int) -> Any:
    with open(path, "rb") as fh:
        fh.seek(start)
        blob = fh.read(end - start)
    try:
        return json.loads(blob.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SceneError(f"{path}: {where}: not UTF-8 text at byte {start + exc.start}") from None
