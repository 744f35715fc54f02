"""Options declared once: the framework every options class, builder config and command uses.

An option is one dataclass field made by :func:`option` (default, check, help, flag group,
builder exposure); the checks, argparse flags and builder-config fields are derived from it.

>>> _Example(size=0)
Traceback (most recent call last):
...
ValueError: size must be an integer >= 1, got 0
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "MAX_SEED",
    "MAX_WORKERS",
    "PATH_ROLES",
    "Choice",
    "FilePath",
    "Flag",
    "Instance",
    "Integer",
    "Number",
    "Share",
    "Text",
    "Words",
    "add_builder_flags",
    "add_option_flags",
    "builder_fields",
    "builder_kwargs_from_args",
    "check_options",
    "declared_from_args",
    "declared_paths",
    "generator_settings",
    "given_path_values",
    "is_bool",
    "joined_path_values",
    "option",
    "option_names",
    "options_from_args",
    "path_values",
]

_KEY = "generator_option"

PATH_ROLES = ("input", "input_dir", "output", "output_dir", "cache")
"""What a declared path is to its command: a file or folder read, a file or folder written, a cache."""

MAX_SEED = 2**64 - 1
"""The largest seed any option takes: 64 bits, what numpy's and Python's generators take whole
(and what the seeds derived inside a stream use); no user needs more."""

MAX_WORKERS = 256
"""The most worker processes (or threads) any option starts: more than any one machine's cores."""


# -- checks: each knows its value kind, so that it also gives the argparse flag ----------------


class Integer:
    """An ``int`` (not a bool) ``>= minimum`` (and ``<= maximum`` if given); ``None`` too when ``optional``.

    >>> Integer(1)("templates_per_image", True)
    Traceback (most recent call last):
    ...
    ValueError: templates_per_image must be an integer >= 1, got True
    """

    def __init__(self, minimum: int, *, maximum: int | None = None, optional: bool = False):
        self.minimum, self.maximum, self.optional = minimum, maximum, optional

    def __call__(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return value
        if type(value) is not int or value < self.minimum or (self.maximum is not None and value > self.maximum):
            alternative = " or None" if self.optional else ""
            bound = f">= {self.minimum}" if self.maximum is None else f"in {self.minimum}..{self.maximum}"
            raise ValueError(f"{name} must be an integer {bound}{alternative}, got {value!r}")
        return value

    def flag(self) -> dict:
        return {"type": int}  # checked with the other options, when the options class is made

    def parse(self, text: str) -> int:
        """An argparse ``type``: the checked integer, or one argparse error line.

        >>> Integer(1, maximum=8).parse("9")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: must be an integer in 1..8, got 9
        """
        try:
            value = int(text)
        except ValueError:
            value = text
        try:
            return self("", value)
        except ValueError as exc:  # argparse's own error line, with the check's message
            raise argparse.ArgumentTypeError(str(exc).lstrip()) from None


class Share:
    """A fraction in [0, 1] (an ``int`` or ``float``, not a bool); ``None`` too when ``optional``.

    >>> Share(optional=True)("adversarial", 1.5)
    Traceback (most recent call last):
    ...
    ValueError: adversarial must be a number in [0, 1] or None, got 1.5
    """

    def __init__(self, *, optional: bool = False):
        self.optional = optional

    def __call__(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return value
        if type(value) not in (int, float) or not 0 <= value <= 1:
            alternative = " or None" if self.optional else ""
            raise ValueError(f"{name} must be a number in [0, 1]{alternative}, got {value!r}")
        return float(value)

    def flag(self) -> dict:
        return {"type": float}


class Number:
    """A finite real number (an ``int`` or ``float``, numpy's too, not a bool) within the bounds given;
    ``None`` too when ``optional``. Returned as a ``float``: NaN and infinities never pass.

    >>> Number(minimum=0)("format_weight", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: format_weight must be a finite number >= 0, got nan
    >>> Number()("value", 1)
    1.0
    """

    def __init__(self, *, minimum: float | None = None, maximum: float | None = None, optional: bool = False):
        self.minimum, self.maximum, self.optional = minimum, maximum, optional

    def __call__(self, name: str, value: Any) -> Any:
        import math
        import numbers

        if value is None and self.optional:
            return value
        ok = (isinstance(value, numbers.Real) and not is_bool(value) and math.isfinite(value)
              and (self.minimum is None or value >= self.minimum) and (self.maximum is None or value <= self.maximum))
        if not ok:
            bounds = [f">= {self.minimum}" if self.minimum is not None else "",
                      f"<= {self.maximum}" if self.maximum is not None else ""]
            bound = " and ".join(b for b in bounds if b)
            alternative = " or None" if self.optional else ""
            raise ValueError(f"{name} must be a finite number{' ' + bound if bound else ''}{alternative}, got {value!r}")
        return float(value)

    def flag(self) -> dict:
        return {"type": float}


class Text:
    """A string of at most ``max_length`` printable characters (no newline: it goes into one JSON
    field and one log line); ``pattern`` (a regular expression) restricts it further.

    >>> Text(20, pattern=r"[A-Za-z0-9_-]+")("filename_prefix", "a/b")
    Traceback (most recent call last):
    ...
    ValueError: filename_prefix must match [A-Za-z0-9_-]+ (1 to 20 characters), got 'a/b'
    """

    def __init__(self, max_length: int, *, pattern: str | None = None):
        self.max_length, self.pattern = max_length, pattern

    def __call__(self, name: str, value: Any) -> Any:
        import re

        if not isinstance(value, str) or not value.isprintable() or len(value) > self.max_length or (
                self.pattern is not None and re.fullmatch(self.pattern, value) is None):
            what = f"match {self.pattern} (1 to" if self.pattern else "be printable text (at most"
            raise ValueError(f"{name} must {what} {self.max_length} characters), got {value!r}")
        return value

    def flag(self) -> dict:
        return {}


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a boolean, numpy's included (no subclass of ``bool``, and no number to a user).

    >>> import numpy
    >>> is_bool(numpy.bool_(True)), is_bool(1)
    (True, False)
    """
    return isinstance(value, bool) or type(value).__name__ in ("bool_", "bool") and type(value).__module__ == "numpy"


class Instance:
    """An instance of one of ``types`` (an API argument that is an object: a curriculum, the
    options of a run); ``None`` too when ``optional``.

    >>> Instance(dict, optional=True)("extra_info", "labelling")
    Traceback (most recent call last):
    ...
    ValueError: extra_info must be a dict or None, got str 'labelling'
    """

    def __init__(self, *types: type, optional: bool = False):
        self.types, self.optional = types, optional

    def __call__(self, name: str, value: Any) -> Any:
        if (value is None and self.optional) or isinstance(value, self.types):
            return value
        kinds = " or ".join(t.__name__ for t in self.types) + (" or None" if self.optional else "")
        article = "an" if kinds[0].lower() in "aeiou" else "a"
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise ValueError(f"{name} must be {article} {kinds}, got {type(value).__name__} {shown}")

    def flag(self) -> dict:
        return {}


class Flag:
    """``True`` or ``False`` (a command-line switch).

    >>> Flag()("add_post_prompt", "yes")
    Traceback (most recent call last):
    ...
    ValueError: add_post_prompt must be True or False, got 'yes'
    """

    def __call__(self, name: str, value: Any) -> Any:
        if type(value) is not bool:
            raise ValueError(f"{name} must be True or False, got {value!r}")
        return value

    def flag(self) -> dict:
        return {"action": "store_true"}


class Choice:
    """One of a fixed list of strings; ``None`` too when ``optional``.

    >>> Choice(("a", "b"))("mode", "c")
    Traceback (most recent call last):
    ...
    ValueError: mode must be one of a, b, got 'c'
    """

    def __init__(self, choices: Sequence[str], *, optional: bool = False):
        self.choices, self.optional = tuple(choices), optional

    def __call__(self, name: str, value: Any) -> Any:
        if value is None and self.optional:
            return value
        if value not in self.choices:
            alternative = "None or " if self.optional else ""
            raise ValueError(f"{name} must be {alternative}one of {', '.join(self.choices)}, got {value!r}")
        return value

    def flag(self) -> dict:
        return {"choices": self.choices}


class FilePath:
    """``None`` or a file-system path (``str`` or ``os.PathLike``).

    >>> FilePath()("metadata_file", 3)
    Traceback (most recent call last):
    ...
    ValueError: metadata_file must be a path or None, got 3
    """

    def __call__(self, name: str, value: Any) -> Any:
        if value is not None and not isinstance(value, (str, os.PathLike)):
            raise ValueError(f"{name} must be a path or None, got {value!r}")
        return value

    def flag(self) -> dict:
        return {}


class Words:
    """``None`` or non-empty strings (a list, or comma-separated); a tuple, so a builder config can hash it.

    >>> Words()("question_types", "count,exist")
    ('count', 'exist')
    >>> Words()("question_types", [])
    Traceback (most recent call last):
    ...
    ValueError: question_types is empty; pass None to keep every template
    """

    def __call__(self, name: str, value: Any) -> Any:
        if value is None:
            return value
        words = tuple(w for w in value.split(",") if w) if isinstance(value, str) else value
        if isinstance(words, (str, bytes)) or not isinstance(words, Sequence) or not all(
            isinstance(w, str) and w for w in words
        ):
            raise ValueError(f"{name} must be a list of non-empty strings, got {value!r}")
        if not words:
            raise ValueError(f"{name} is empty; pass None to keep every template")
        return tuple(words)

    def flag(self) -> dict:
        return {"nargs": "+", "metavar": "WORD"}


Check = Callable[[str, Any], Any]


def option(default: Any, check: Check, help: str, *, group: str | None = "generation", builder: bool = False,
           requires: str | None = None, ignored_with: str | None = None, flag: dict | None = None,
           role: str | None = None, fallback: Callable[[Any], Any] | None = None,
           path_of: Callable[[Any], Any] | None = None, aliases: dict[str, dict[str, Any] | None] | None = None):
    """Declare one option (a dataclass field of an options class or a builder config).

    ``check(name, value)`` returns the normalised value or raises ``ValueError``. ``group`` None:
    no flag. ``requires``: an option that must not be None when this one is truthy; this one is
    not checked while ``ignored_with`` is set. A path option names its ``role`` so the data-safety
    rules see every declared path, defaults included; ``fallback(obj)`` stands in for None;
    ``path_of(value)`` is the path a value names when it may be a name too (a shipped template set).
    ``aliases``: other flag names of this same option (another tool's, e.g. CLEVR's), each mapped to
    None (the same values) or to its own values -> this option's (``{"0": "cpu", "1": "gpu"}``).

    >>> [f.name for f in dataclasses.fields(_Example) if f.metadata[_KEY]["builder"]]
    ['seed', 'size']
    """
    if role is not None and role not in PATH_ROLES:
        raise ValueError(f"role must be one of {', '.join(PATH_ROLES)}, got {role!r}")
    meta = {"check": check, "help": help, "group": group, "builder": builder, "requires": requires,
            "ignored_with": ignored_with, "flag": flag or {}, "role": role, "fallback": fallback,
            "path_of": path_of, "aliases": dict(aliases or {})}
    return dataclasses.field(default=default, metadata={_KEY: meta})


def declared_paths(cls: type) -> tuple[tuple[str, str], ...]:
    """``(name, role)`` of every path option ``cls`` declares (``option(..., role=...)``).

    >>> declared_paths(_Example)
    (('out', 'output_dir'),)
    """
    return tuple((f.name, f.metadata[_KEY]["role"]) for f in _declared(cls) if f.metadata[_KEY]["role"] is not None)


def path_values(*objs: Any) -> dict[str, dict[str, Any]]:
    """role -> ``{"--NAME": path}`` of every path the ``objs`` declare, ``fallback`` standing in for None.

    >>> path_values(_Example(out="o"))
    {'output_dir': {'--out': 'o'}}
    """
    found: dict[str, dict[str, Any]] = {}
    for obj in objs:
        for f in _declared(type(obj)):
            meta = f.metadata[_KEY]
            if meta["role"] is None:
                continue
            value = getattr(obj, f.name)
            if value is None and meta["fallback"] is not None:
                value = meta["fallback"](obj)
            found.setdefault(meta["role"], {})[f"--{f.name}"] = _as_path(meta, value)
    return found


def given_path_values(cls: type, given: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """role -> ``{"--NAME": path}`` of the paths ``cls`` declares among ``given`` (options by name, such
    as a command's builder options): what :func:`path_values` gives of an object, before one is made.

    >>> given_path_values(_Example, {"out": "o", "seed": 3})
    {'output_dir': {'--out': 'o'}}
    """
    found: dict[str, dict[str, Any]] = {}
    for f in _declared(cls):
        meta = f.metadata[_KEY]
        if meta["role"] is not None and given and given.get(f.name) is not None:
            found.setdefault(meta["role"], {})[f"--{f.name}"] = _as_path(meta, given[f.name])
    return found


def joined_path_values(*found: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Several :func:`path_values` results as one (a later flag of the same role and name wins).

    >>> joined_path_values({"input": {"--a": "x"}}, {"input": {"--b": "y"}, "cache": {"--c": "z"}})
    {'input': {'--a': 'x', '--b': 'y'}, 'cache': {'--c': 'z'}}
    """
    joined: dict[str, dict[str, Any]] = {}
    for paths in found:
        for role, flags in paths.items():
            joined.setdefault(role, {}).update(flags)
    return joined


def _as_path(meta: dict, value: Any) -> Any:
    return meta["path_of"](value) if value is not None and meta["path_of"] is not None else value


def declared_from_args(args: argparse.Namespace, cls: type) -> Any:
    """The declared options ``cls`` of a parsed command line (what :func:`path_values` reads).

    >>> declared_from_args(argparse.Namespace(out="o", seed=1, size=3, verbose=False), _Example).out
    'o'
    """
    return cls(**{f.name: getattr(args, f.name) for f in _declared(cls) if hasattr(args, f.name)})


def _declared(cls: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(cls) if _KEY in f.metadata]


def option_names(*, cls: type, builder: bool | None = None) -> tuple[str, ...]:
    """Names of the declared options (only those builders expose, with ``builder=True``).

    >>> "verbose" in option_names(cls=_Example), "verbose" in option_names(cls=_Example, builder=True)
    (True, False)
    """
    return tuple(f.name for f in _declared(cls) if builder is None or f.metadata[_KEY]["builder"] == builder)


def check_options(obj: Any, *, where: str | None = None, error: type[Exception] = ValueError) -> None:
    """Check (and normalise in place) every declared option of ``obj``; errors are ``error("<where>: <message>")``.

    >>> check_options(_Example(), where="config 'x'")
    """
    for f in _declared(type(obj)):
        meta = f.metadata[_KEY]
        ignored_with = meta["ignored_with"]
        if ignored_with is not None and getattr(obj, ignored_with, None) is not None:
            continue
        try:
            value = meta["check"](f.name, getattr(obj, f.name))
            if meta["requires"] is not None and value and getattr(obj, meta["requires"], None) is None:
                raise ValueError(f"{f.name} needs {meta['requires']}")
        except ValueError as exc:
            raise error(f"{where}: {exc}" if where else str(exc)) from None
        if value is not getattr(obj, f.name):
            object.__setattr__(obj, f.name, value)


def add_option_flags(parser: argparse.ArgumentParser, groups: dict[str, Any] | None = None, *,
                     cls: type) -> None:
    """Add a ``--NAME`` flag per command-line option; ``groups``: group name -> the command's argument group.

    >>> parser = argparse.ArgumentParser()
    >>> add_option_flags(parser, cls=_Example)
    >>> parser.parse_args(["--size", "10"]).size
    10
    """
    groups = dict(groups or {})
    for f in _declared(cls):
        meta = f.metadata[_KEY]
        if meta["group"] is None:
            continue
        group = groups.get(meta["group"])
        if group is None:
            group = groups[meta["group"]] = parser.add_argument_group(meta["group"])
        keywords = {"default": f.default, "help": meta["help"], **meta["check"].flag(), **meta["flag"]}
        aliases = meta.get("aliases", {})
        same = [f"--{name}" for name, values in aliases.items() if values is None]
        group.add_argument(f"--{f.name}", *same, **keywords)
        for name, values in aliases.items():
            if values is not None:
                _add_value_alias(group, f.name, name, values)


def _add_value_alias(group: Any, dest: str, name: str, values: dict[str, Any]) -> None:
    """``--NAME`` for option ``dest`` under another tool's values, translated (``--use_gpu 1`` -> ``gpu``)."""
    def translate(text: str) -> Any:
        if text not in values:
            raise argparse.ArgumentTypeError(f"expected one of {', '.join(values)}, got {text!r}")
        return values[text]

    shown = ", ".join(f"{key} = --{dest} {value}" for key, value in values.items())
    # SUPPRESS: the option's own flag sets the default; this one only sets a value when given
    # choices: the translated values, so the flag is bounded by construction (a word among a few)
    group.add_argument(f"--{name}", dest=dest, type=translate, default=argparse.SUPPRESS,
                       choices=list(dict.fromkeys(values.values())), metavar="{" + ",".join(values) + "}", help=f"the same as --{dest}, under another name and values ({shown})")


def options_from_args(args: argparse.Namespace, cls: type, **overrides: Any) -> Any:
    """The options a command line asks for (flags of :func:`add_option_flags`), ``overrides`` applied.

    >>> parser = argparse.ArgumentParser()
    >>> add_option_flags(parser, cls=_Example)
    >>> options_from_args(parser.parse_args(["--seed", "3"]), _Example).seed
    3
    """
    names = [f.name for f in _declared(cls) if f.metadata[_KEY]["group"] is not None]
    return cls(**{**{name: getattr(args, name) for name in names}, **overrides})


def builder_fields(name: str, cls: type, **defaults: Any) -> type:
    """A dataclass of the ``builder=True`` options, for a builder config to inherit; ``defaults`` replace some.

    >>> Fields = builder_fields("Fields", _Example, size=10)
    >>> Fields().size, [f.name for f in dataclasses.fields(Fields)][-1]
    (10, 'size')
    """
    unknown = set(defaults) - set(option_names(builder=True, cls=cls))
    if unknown:
        raise TypeError(f"not options builders expose: {', '.join(sorted(unknown))}")
    specs = []
    for f in _declared(cls):
        if f.metadata[_KEY]["builder"]:
            default = defaults.get(f.name, f.default)
            specs.append((f.name, f.type, dataclasses.field(default=default, metadata=f.metadata)))
    return dataclasses.make_dataclass(name, specs)


def add_builder_flags(parser: argparse.ArgumentParser, config_cls: type, title: str = "builder options",
                      only: Sequence[str] | None = None) -> list[str]:
    """A ``--NAME`` flag per builder option of ``config_cls``, no default (an absent flag leaves the
    configuration's own value), a name the command uses left to it; returns the names added.

    >>> parser = argparse.ArgumentParser()
    >>> add_builder_flags(parser, builder_fields("Fields", _Example))
    ['seed', 'size']
    >>> parser.parse_args(["--seed", "3"]).seed, hasattr(parser.parse_args([]), "seed")
    (3, False)
    """
    taken = set(parser._option_string_actions)  # argparse has no public lookup of existing flags
    group = parser.add_argument_group(title)
    added = []
    for f in _declared(config_cls):
        meta = f.metadata[_KEY]
        if not meta["builder"] or f"--{f.name}" in taken or (only is not None and f.name not in only):
            continue
        text = meta["help"] if "%(default)s" in meta["help"] else meta["help"] + " (default: %(default)s)"
        # The default is shown, not set: an absent flag must leave the configuration's own value.
        keywords = {**meta["check"].flag(), **meta["flag"], "help": text.replace("%(default)s", str(f.default)),
                    "default": argparse.SUPPRESS}
        group.add_argument(f"--{f.name}", **keywords)
        added.append(f.name)
    # Recorded on the parsed arguments: a flag of the same name another part of the command adds
    # later (or added before) is not a builder option.
    parser.set_defaults(builder_flags=tuple(added))
    return added


def builder_kwargs_from_args(args: argparse.Namespace, config_cls: type) -> dict[str, Any]:
    """The builder options given on the command line (flags of :func:`add_builder_flags`), as kwargs.

    >>> parser = argparse.ArgumentParser()
    >>> _ = add_builder_flags(parser, builder_fields("Fields", _Example))
    >>> builder_kwargs_from_args(parser.parse_args(["--size", "5"]), builder_fields("Fields", _Example))
    {'size': 5}
    """
    names = getattr(args, "builder_flags", None)
    return {f.name: getattr(args, f.name) for f in _declared(config_cls)
            if f.metadata[_KEY]["builder"] and hasattr(args, f.name) and (names is None or f.name in names)}


def generator_settings(obj: Any, cls: type) -> dict[str, Any]:
    """The builder options' values of a builder config, as kwargs for the options class ``cls``.

    >>> generator_settings(builder_fields("Fields", _Example, seed=4)(), _Example)["seed"]
    4
    """
    return {name: getattr(obj, name) for name in option_names(builder=True, cls=cls)}


@dataclasses.dataclass
class _Example:
    """A small options class for the examples above."""

    seed: int = option(0, Integer(0), "random seed (%(default)s)", builder=True)
    size: int = option(3, Integer(1), "a size (%(default)s)", builder=True)
    verbose: bool = option(False, Flag(), "say more", group="running")
    out: str | None = option(None, FilePath(), "output folder", group="inputs and outputs", role="output_dir")

    def __post_init__(self) -> None:
        check_options(self)
