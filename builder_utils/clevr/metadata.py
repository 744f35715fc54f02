"""The CLEVR functional language: value types and function signatures (``metadata.json``).

The shipped file follows the public CLEVR schema, written by this project, plus CLEVR-Math's
``addition``, ``subtraction`` and ``choose``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from builder_utils.json_input import loads_json, shown_path

__all__ = ["ATTRIBUTES", "FunctionSpec", "Metadata", "MetadataError", "load_metadata", "default_metadata"]

# Scene object attribute -> the metadata type holding its vocabulary.
ATTRIBUTES: Mapping[str, str] = MappingProxyType(
    {"size": "Size", "color": "Color", "material": "Material", "shape": "Shape"}
)

_FUNCTION_KEYS = {"name", "inputs", "side_inputs", "output", "terminal", "template_only"}
# Keys that carry documentation only; tolerated so the reference's own file also loads.
_OPTIONAL_DOC_KEYS = {"description", "properties"}


class MetadataError(ValueError):
    """A metadata file that does not follow the schema; the message names file and entry."""


@dataclass(frozen=True)
class FunctionSpec:
    """Signature of one function of the language.

    >>> load_metadata().functions["relate"].side_inputs
    ('Relation',)
    """

    name: str
    inputs: tuple[str, ...]
    side_inputs: tuple[str, ...]
    output: str
    terminal: bool
    template_only: bool


@dataclass(frozen=True)
class Metadata:
    """Parsed metadata: ``types`` (values, ``None`` for ``ObjectSet`` ...) and ``functions``.

    >>> "red" in load_metadata().types["Color"]
    True
    """

    dataset: str
    types: Mapping[str, tuple[str, ...] | None]
    functions: Mapping[str, FunctionSpec]
    path: str

    @functools.cached_property
    def arithmetic(self) -> frozenset[str]:
        """The arithmetic functions, the one definition behind ``num_operations`` and ``intermediate_counts``.

        >>> sorted(load_metadata().arithmetic)
        ['addition', 'subtraction']
        """
        return frozenset(
            name for name, spec in self.functions.items()
            if spec.output == "Integer" and spec.inputs and all(t == "Integer" for t in spec.inputs)
        )

    def values(self, type_name: str) -> tuple[str, ...]:
        """The allowed values of a value type (``Color`` ...), or ``()`` for the others.

        >>> load_metadata().values("Size")
        ('small', 'large')
        """
        return self.types.get(type_name) or ()


def _fail(path: str, where: str, message: str) -> MetadataError:
    return MetadataError(f"{path}: {where}: {message}")


def _check_type_list(path: str, where: str, value, known: Mapping) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _fail(path, where, f"expected a list of type names, got {type(value).__name__}")
    for k, item in enumerate(value):
        if item not in known:
            raise _fail(path, f"{where}[{k}]", f"unknown type {item!r} (known: {', '.join(known)})")
    return tuple(value)


def _parse(doc, path: str) -> Metadata:
    if not isinstance(doc, dict):
        raise _fail(path, "top level", f"expected a JSON object, got {type(doc).__name__}")
    for key in ("dataset", "types", "functions"):
        if key not in doc:
            raise _fail(path, "top level", f"missing key {key!r}")
    if not isinstance(doc["dataset"], str):
        raise _fail(path, "dataset", "expected a string")
    raw_types = doc["types"]
    if not isinstance(raw_types, dict) or not raw_types:
        raise _fail(path, "types", "expected a non-empty object of type name -> list of values or null")
    types: dict[str, tuple[str, ...] | None] = {}
    for name, values in raw_types.items():
        if values is None:
            types[name] = None
            continue
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise _fail(path, f"types.{name}", "expected null or a list of non-empty strings")
        if len(set(values)) != len(values):
            raise _fail(path, f"types.{name}", "duplicate values")
        types[name] = tuple(values)
    missing = [t for t in ATTRIBUTES.values() if not types.get(t)] + (
        ["Relation"] if not types.get("Relation") else []
    )
    if missing:
        raise _fail(path, "types", f"missing value lists for {', '.join(missing)}")

    raw_functions = doc["functions"]
    if not isinstance(raw_functions, list):
        raise _fail(path, "functions", "expected a list")
    functions: dict[str, FunctionSpec] = {}
    for i, entry in enumerate(raw_functions):
        label = f"functions[{i}]"
        if not isinstance(entry, dict):
            raise _fail(path, label, f"expected an object, got {type(entry).__name__}")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise _fail(path, label, "missing or empty 'name'")
        label = f"functions[{i}] ({name!r})"
        unknown = set(entry) - _FUNCTION_KEYS - _OPTIONAL_DOC_KEYS
        if unknown:
            raise _fail(path, label, f"unknown keys {sorted(unknown)}")
        for key in ("inputs", "output"):
            if key not in entry:
                raise _fail(path, label, f"missing key {key!r}")
        if name in functions:
            raise _fail(path, label, "duplicate function name")
        inputs = _check_type_list(path, f"{label}.inputs", entry["inputs"], types)
        side_inputs = _check_type_list(path, f"{label}.side_inputs", entry.get("side_inputs", []), types)
        output = entry["output"]
        if output not in types:
            raise _fail(path, f"{label}.output", f"unknown type {output!r}")
        flags = {}
        for key in ("terminal", "template_only"):
            flags[key] = entry.get(key, False)
            if not isinstance(flags[key], bool):
                raise _fail(path, f"{label}.{key}", "expected true or false")
        functions[name] = FunctionSpec(name, inputs, side_inputs, output, flags["terminal"], flags["template_only"])
    return Metadata(doc["dataset"], MappingProxyType(types), MappingProxyType(functions), path)


def load_metadata(path: str | os.PathLike | None = None) -> Metadata:
    """Load and validate a metadata file (``None``: the shipped one); errors name file and entry.

    >>> load_metadata().functions["filter_unique"].template_only
    True
    """
    if path is None:
        return default_metadata()
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError as exc:
        raise _fail(path, "file", f"not UTF-8 text ({exc.reason})") from None
    return _parse_text(text, path)


def _parse_text(text: str, path: str) -> Metadata:
    return _parse(loads_json(text, where=shown_path(path), error=MetadataError), path)


@functools.cache
def default_metadata() -> Metadata:
    """The shipped metadata, parsed once per process.

    >>> default_metadata() is default_metadata()
    True
    """
    # Beside this module, as the shipped templates and synonyms are found (templates.py); not
    # importlib.resources, whose import (with zipfile) costs ~5 ms of every command's start-up.
    with open(os.path.join(os.path.dirname(__file__), "metadata.json"), encoding="utf-8") as fh:
        text = fh.read()
    return _parse_text(text, "builder_utils/clevr/metadata.json")
