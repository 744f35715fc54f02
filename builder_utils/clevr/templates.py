"""Loading and validating question templates (the format: ``TEMPLATES.md``).

Every template is checked at load time, so a typo in one never surfaces as a wrong question
much later.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from builder_utils.json_input import load_json, shown_path

from .metadata import ATTRIBUTES, Metadata

__all__ = [
    "ATTRIBUTE_TYPES",
    "FILTER_FAMILY",
    "RELATE_FAMILY",
    "SHIPPED_TEMPLATE_SETS",
    "TEMPLATES_ROOT",
    "Constraint",
    "Template",
    "TemplateError",
    "TemplateNode",
    "TemplateSet",
    "load_synonyms",
    "load_template_file",
    "load_template_set",
    "template_set_dir",
]

TEMPLATES_ROOT = Path(__file__).resolve().parent / "templates"
SYNONYMS_FILE = Path(__file__).resolve().parent / "synonyms.json"
SHIPPED_TEMPLATE_SETS = ("clevr", "clevr_math", "clevr_math_chains", "clevr_math_long_chains")

# Metadata type -> scene attribute, for the four attribute types a filter can test.
ATTRIBUTE_TYPES: Mapping[str, str] = MappingProxyType({t: a for a, t in ATTRIBUTES.items()})
# Template-only node types and the node that ends their expansion (None: no final node).
FILTER_FAMILY: Mapping[str, str | None] = MappingProxyType(
    {"filter": None, "filter_unique": "unique", "filter_count": "count", "filter_exist": "exist"}
)
RELATE_FAMILY: Mapping[str, str | None] = MappingProxyType(
    {"relate_filter": None, "relate_filter_unique": "unique", "relate_filter_count": "count",
     "relate_filter_exist": "exist"}
)
CONSTRAINT_TYPES = ("NULL", "NOT_NULL", "NEQ", "OUT_NEQ", "OUT_RANGE")
# Output types a question can be about; any other final output is a template error.
ANSWER_TYPES = ("Bool", "Integer", "Size", "Color", "Material", "Shape")

_PLACEHOLDER = re.compile(r"<[^<>\s\[\]{}]+>")
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
_WORD_SLOT = re.compile(r"\{([A-Za-z][A-Za-z _'-]*)\}")
_KNOWN_TEMPLATE_KEYS = {"params", "text", "nodes", "constraints", "category"}
_KNOWN_NODE_KEYS = {"type", "inputs", "side_inputs", "allow_zero"}
# The shipped templates have at most 26 nodes and chains of 11; programs are compiled and run by
# recursion over a node's inputs, so the depth is bounded far below Python's recursion limit.
MAX_TEMPLATE_NODES = 256
MAX_TEMPLATE_DEPTH = 64


class TemplateError(ValueError):
    """A template file that cannot be used, e.g. ``one_hop.json: template 2: node 3
    (relate_filter_unique): side input '<Q>' is not a param``."""


@dataclass(frozen=True)
class TemplateNode:
    """One node of a program template (``type``, earlier-node ``inputs``, param ``side_inputs``).

    >>> TemplateNode(1, "filter_count", (0,), ("<C>",)).type
    'filter_count'
    """

    index: int
    type: str
    inputs: tuple[int, ...]
    side_inputs: tuple[str, ...] = ()
    allow_zero: bool = False


@dataclass(frozen=True)
class Constraint:
    """A constraint on a template's params or node outputs (see ``TEMPLATES.md``).

    >>> Constraint("NULL", params=("<Z>",)).type
    'NULL'
    """

    type: str
    params: tuple[str, ...] = ()
    nodes: tuple[int, ...] = ()
    min: int | None = None
    max: int | None = None
    # OUT_NEQ on two ObjectSets: also accept two empty sets (so a count of a union can be 0).
    allow_both_empty: bool = False


@dataclass(frozen=True)
class Template:
    """A validated template (``family``: its file's stem; ``family_index``: its place in the set;
    ``params``: name -> type, in declared order; ``answer_type``: the last node's output type).

    For example::

        t = load_template_set("clevr", load_metadata()).templates[0]
        t.key, t.answer_type
        # -> ('compare_integer:0', 'Bool')
    """

    path: str
    family: str
    index: int
    family_index: int
    params: Mapping[str, str]
    text: tuple[str, ...]
    nodes: tuple[TemplateNode, ...]
    constraints: tuple[Constraint, ...]
    category: str
    answer_type: str
    raw: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def key(self) -> str:
        """``family:index``, the exact-family token of ``--question_types``."""
        return f"{self.family}:{self.index}"

    @property
    def where(self) -> str:
        """Where the template lives, for error messages."""
        return f"{self.path}: template {self.index}"


@dataclass(frozen=True)
class TemplateSet:
    """The templates of one folder, files in sorted name order.

    For example::

        tset = load_template_set("clevr_math", load_metadata())
        sorted({t.family for t in tset.templates})
        # -> ['addition', 'adversarial', 'subtraction', 'subtraction-multihop']
    """

    name: str
    directory: str
    templates: tuple[Template, ...]

    @property
    def families(self) -> tuple[str, ...]:
        """Family stems in set order, without repeats."""
        return tuple(dict.fromkeys(t.family for t in self.templates))


def template_set_dir(name: str) -> Path:
    """The folder of a named template set shipped with the package.

    >>> template_set_dir("clevr").name
    'clevr'
    """
    if name not in SHIPPED_TEMPLATE_SETS:
        raise TemplateError(f"unknown template set {name!r} (choose from {', '.join(SHIPPED_TEMPLATE_SETS)})")
    return TEMPLATES_ROOT / name


def load_synonyms(path: str | os.PathLike | None = None) -> dict[str, tuple[str, ...]]:
    """Read a synonyms file (``{"word": ["synonym", ...]}``); ``None`` reads the shipped one.

    For example::

        load_synonyms()["cube"]
        # -> ('cube', 'block')
    """
    path = os.fspath(path) if path is not None else str(SYNONYMS_FILE)
    doc = load_json(path, what="synonyms file", error=TemplateError)
    if not isinstance(doc, dict):
        raise TemplateError(f"{path}: expected a JSON object of word -> list of synonyms")
    synonyms: dict[str, tuple[str, ...]] = {}
    for word, options in doc.items():
        if not isinstance(options, list) or not options or not all(isinstance(o, str) for o in options):
            raise TemplateError(f"{path}: entry {word!r}: expected a non-empty list of strings")
        synonyms[word] = tuple(options)
    return synonyms


def load_template_set(
    source: str | os.PathLike,
    metadata: Metadata,
    synonyms: Mapping[str, Any] | None = None,
) -> TemplateSet:
    """Load a named set (``"clevr"``, ``"clevr_math"``, ...) or a folder of template files.

    For example::

        len(load_template_set("clevr_math", load_metadata()).templates)
        # -> 13
    """
    if isinstance(source, str) and source in SHIPPED_TEMPLATE_SETS and os.path.sep not in source:
        name, directory = source, template_set_dir(source)
    else:
        directory = Path(source)
        name = directory.name
    if not directory.is_dir():
        raise TemplateError(f"{directory}: template folder not found")
    files = sorted(p for p in directory.iterdir() if p.suffix == ".json" and p.is_file() and not p.name.startswith("."))
    if not files:
        raise TemplateError(f"{directory}: no *.json template files")
    templates: list[Template] = []
    for path in files:
        templates.extend(load_template_file(path, metadata, synonyms, first_family_index=len(templates)))
    return TemplateSet(name, str(directory), tuple(templates))


def load_template_file(
    path: str | os.PathLike,
    metadata: Metadata,
    synonyms: Mapping[str, Any] | None = None,
    *,
    first_family_index: int = 0,
) -> list[Template]:
    """Load and validate one template file (a JSON list of templates).

    For example::

        load_template_file("zero_hop.json", load_metadata())[0].family
        # -> 'zero_hop'
    """
    path = Path(path)
    label = shown_path(path)
    doc = load_json(path, what="template file", error=TemplateError)
    if not isinstance(doc, list) or not doc:
        raise TemplateError(f"{label}: expected a non-empty JSON list of templates")
    return [
        _Validator(label, path.stem, i, raw, metadata, synonyms).build(first_family_index + i)
        for i, raw in enumerate(doc)
    ]


class _Validator:
    """Checks one raw template and turns it into a :class:`Template`."""

    def __init__(self, path: str, family: str, index: int, raw: Any, metadata: Metadata, synonyms):
        self.path = path
        self.family = family
        self.index = index
        self.raw = raw
        self.metadata = metadata
        self.synonyms = synonyms

    def fail(self, where: str, message: str) -> TemplateError:
        place = f"{self.path}: template {self.index}"
        return TemplateError(f"{place}: {where}: {message}" if where else f"{place}: {message}")

    def build(self, family_index: int) -> Template:
        raw = self.raw
        if not isinstance(raw, dict):
            raise self.fail("", f"expected a JSON object, got {type(raw).__name__}")
        for key in ("params", "text", "nodes"):
            if key not in raw:
                raise self.fail("", f"missing key {key!r}")
        params = self._params(raw["params"])
        nodes, output_types = self._nodes(raw["nodes"], params)
        self._bindings(nodes, params)
        texts = self._texts(raw["text"], params)
        constraints = self._constraints(raw.get("constraints", []), params, nodes, output_types)
        answer_type = output_types[-1]
        if answer_type not in ANSWER_TYPES:
            raise self.fail(
                f"node {len(nodes) - 1} ({nodes[-1].type})",
                f"the final node outputs {answer_type}; a question must end in one of {', '.join(ANSWER_TYPES)}",
            )
        category = raw.get("category", self.family)
        if not isinstance(category, str) or not category:
            raise self.fail("category", "expected a non-empty string")
        return Template(
            path=self.path,
            family=self.family,
            index=self.index,
            family_index=family_index,
            params=MappingProxyType(params),
            text=texts,
            nodes=tuple(nodes),
            constraints=tuple(constraints),
            category=category,
            answer_type=answer_type,
            raw=MappingProxyType(raw),
        )

    def _params(self, raw_params: Any) -> dict[str, str]:
        if not isinstance(raw_params, list):
            raise self.fail("params", "expected a list")
        params: dict[str, str] = {}
        for k, p in enumerate(raw_params):
            if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("type"), str):
                raise self.fail(f"params[{k}]", 'expected {"type": ..., "name": "<...>"}')
            name, ptype = p["name"], p["type"]
            if not _PLACEHOLDER.fullmatch(name):
                raise self.fail(f"param {name!r}", "names look like <C2>: angle brackets, no spaces")
            if name in params:
                raise self.fail(f"param {name}", "declared twice")
            if ptype not in self.metadata.types:
                raise self.fail(f"param {name}", f"unknown type {ptype!r}")
            if self.metadata.types[ptype] is None and ptype != "Integer":
                raise self.fail(f"param {name}", f"type {ptype} has no values and cannot be a param")
            params[name] = ptype
        return params

    def _nodes(self, raw_nodes: Any, params: dict[str, str]) -> tuple[list[TemplateNode], list[str]]:
        if not isinstance(raw_nodes, list) or not raw_nodes:
            raise self.fail("nodes", "expected a non-empty list")
        if len(raw_nodes) > MAX_TEMPLATE_NODES:
            raise self.fail("nodes", f"{len(raw_nodes)} nodes, more than the {MAX_TEMPLATE_NODES} a template may have")
        depths: list[int] = []
        functions = self.metadata.functions
        nodes: list[TemplateNode] = []
        outputs: list[str] = []
        for k, n in enumerate(raw_nodes):
            if not isinstance(n, dict) or not isinstance(n.get("type"), str):
                raise self.fail(f"node {k}", 'expected an object with a "type"')
            ntype = n["type"]
            where = f"node {k} ({ntype})"
            spec = functions.get(ntype)
            if spec is None:
                raise self.fail(where, f"unknown function {ntype!r} (not in {self.metadata.path})")
            if spec.template_only and ntype not in FILTER_FAMILY and ntype not in RELATE_FAMILY:
                raise self.fail(where, "template-only function without an expansion rule")
            inputs = n.get("inputs", [])
            if not isinstance(inputs, list) or not all(type(i) is int for i in inputs):
                raise self.fail(where, "inputs must be a list of node indices")
            if len(inputs) != len(spec.inputs):
                raise self.fail(where, f"expects {len(spec.inputs)} inputs, got {len(inputs)}")
            for pos, (i, want) in enumerate(zip(inputs, spec.inputs)):
                if not 0 <= i < k:
                    raise self.fail(where, f"input {pos} refers to node {i}, which is not an earlier node")
                if outputs[i] != want:
                    raise self.fail(where, f"input {pos} is node {i}, which outputs {outputs[i]}; expected {want}")
            side = n.get("side_inputs", [])
            if not isinstance(side, list) or not all(isinstance(s, str) for s in side):
                raise self.fail(where, "side_inputs must be a list of param names")
            for name in side:
                if name not in params:
                    raise self.fail(where, f"side input {name!r} is not a declared param")
            self._check_side_types(where, ntype, spec.side_inputs, [params[s] for s in side], side)
            allow_zero = n.get("allow_zero", False)
            if not isinstance(allow_zero, bool):
                raise self.fail(where, "allow_zero must be true or false")
            depths.append(1 + max((depths[i] for i in inputs), default=0))
            if depths[-1] > MAX_TEMPLATE_DEPTH:
                raise self.fail(where, f"a chain of {depths[-1]} nodes, deeper than the {MAX_TEMPLATE_DEPTH} a template "
                                       "may nest")
            nodes.append(TemplateNode(k, ntype, tuple(inputs), tuple(side), allow_zero))
            outputs.append(spec.output)
        return nodes, outputs

    def _check_side_types(self, where: str, ntype: str, declared, given: list[str], names: list[str]) -> None:
        """Side inputs bind to params by type: declared types only, none twice; raw functions need all."""
        seen: dict[str, str] = {}
        for name, ptype in zip(names, given):
            if ptype not in declared:
                raise self.fail(where, f"side input {name} has type {ptype}; {ntype} takes {', '.join(declared) or 'none'}")
            if ptype in seen:
                raise self.fail(where, f"side inputs {seen[ptype]} and {name} both have type {ptype}")
            seen[ptype] = name
        if ntype in RELATE_FAMILY and "Relation" not in seen:
            raise self.fail(where, "needs a Relation side input")
        if ntype not in FILTER_FAMILY and ntype not in RELATE_FAMILY:
            missing = [t for t in declared if t not in seen]
            if missing:
                raise self.fail(where, f"missing side input of type {', '.join(missing)}")

    def _bindings(self, nodes: list[TemplateNode], params: dict[str, str]) -> None:
        bound = {name for node in nodes for name in node.side_inputs}
        for name in params:
            if name not in bound:
                raise self.fail(f"param {name}", "is not a side input of any node, so it never gets a value")

    def _texts(self, raw_texts: Any, params: dict[str, str]) -> tuple[str, ...]:
        if isinstance(raw_texts, str):
            raw_texts = [raw_texts]
        if not isinstance(raw_texts, list) or not raw_texts or not all(isinstance(t, str) for t in raw_texts):
            raise self.fail("text", "expected a non-empty list of strings")
        for v, text in enumerate(raw_texts):
            where = f"text {v}"
            found = set(_PLACEHOLDER.findall(text))
            for name in sorted(found - set(params)):
                raise self.fail(where, f"placeholder {name} is not a declared param")
            for name in params:
                if name not in found:
                    raise self.fail(where, f"param {name} does not appear in this text variant")
            rest = _PLACEHOLDER.sub("", text)
            if "<" in rest or ">" in rest:
                raise self.fail(where, "stray '<' or '>' outside a <param> placeholder")
            outside_optional = _OPTIONAL.sub("", rest)
            if "[" in outside_optional or "]" in outside_optional:
                raise self.fail(where, "unbalanced or nested [optional] brackets")
            slots = _WORD_SLOT.findall(rest)
            leftover = _WORD_SLOT.sub("", rest)
            if "{" in leftover or "}" in leftover:
                raise self.fail(where, "stray '{' or '}' outside a {Word} slot")
            if self.synonyms is not None:
                for word in slots:
                    if slot_synonyms(self.synonyms, word) is None:
                        raise self.fail(where, f"word slot {{{word}}} has no entry in the synonyms file")
        return tuple(raw_texts)

    def _constraints(self, raw: Any, params: dict[str, str], nodes: list[TemplateNode], outputs: list[str]):
        if not isinstance(raw, list):
            raise self.fail("constraints", "expected a list")
        result: list[Constraint] = []
        nulls: set[str] = set()
        not_nulls: set[str] = set()
        for k, c in enumerate(raw):
            if not isinstance(c, dict) or not isinstance(c.get("type"), str):
                raise self.fail(f"constraint {k}", 'expected an object with a "type"')
            ctype = c["type"]
            where = f"constraint {k} ({ctype})"
            if ctype not in CONSTRAINT_TYPES:
                raise self.fail(where, f"unknown constraint type (known: {', '.join(CONSTRAINT_TYPES)})")
            if ctype in ("NULL", "NOT_NULL", "NEQ"):
                names = c.get("params")
                if not isinstance(names, list) or not names or not all(isinstance(p, str) for p in names):
                    raise self.fail(where, "params must be a non-empty list of param names")
                for name in names:
                    if name not in params:
                        raise self.fail(where, f"param {name!r} is not declared")
                if ctype == "NEQ":
                    if len(names) != 2:
                        raise self.fail(where, "takes exactly two params")
                    if params[names[0]] != params[names[1]]:
                        raise self.fail(where, f"{names[0]} and {names[1]} have different types")
                else:
                    for name in names:
                        if params[name] not in ATTRIBUTE_TYPES:
                            raise self.fail(where, f"param {name} has type {params[name]}, which is never null")
                    (nulls if ctype == "NULL" else not_nulls).update(names)
                result.append(Constraint(ctype, params=tuple(names)))
                continue
            if ctype == "OUT_NEQ":
                # The reference format lists the two node indices under "params".
                idx = c.get("nodes", c.get("params"))
                if not isinstance(idx, list) or len(idx) != 2 or not all(type(i) is int for i in idx):
                    raise self.fail(where, "nodes must be a list of two node indices")
                both_empty = c.get("allow_both_empty", False)
                if type(both_empty) is not bool:
                    raise self.fail(where, "allow_both_empty must be true or false")
            else:
                idx = c.get("node", c.get("nodes"))
                idx = [idx] if type(idx) is int else idx
                if not isinstance(idx, list) or len(idx) != 1 or type(idx[0]) is not int:
                    raise self.fail(where, "node must be one node index")
            for i in idx:
                if not 0 <= i < len(nodes):
                    raise self.fail(where, f"node {i} does not exist (the template has {len(nodes)} nodes)")
            if ctype == "OUT_RANGE":
                lo, hi = c.get("min"), c.get("max")
                for name, value in (("min", lo), ("max", hi)):
                    if value is not None and type(value) is not int:
                        raise self.fail(where, f"{name} must be an integer")
                if lo is None and hi is None:
                    raise self.fail(where, "give min, max or both")
                if outputs[idx[0]] not in ("Integer", "ObjectSet"):
                    raise self.fail(where, f"node {idx[0]} outputs {outputs[idx[0]]}; OUT_RANGE needs an Integer or ObjectSet")
                result.append(Constraint(ctype, nodes=tuple(idx), min=lo, max=hi))
            elif both_empty:
                for i in idx:
                    if outputs[i] != "ObjectSet":
                        raise self.fail(where, f"node {i} outputs {outputs[i]}; allow_both_empty needs two ObjectSets")
                result.append(Constraint(ctype, nodes=tuple(idx), allow_both_empty=True))
            else:
                result.append(Constraint(ctype, nodes=tuple(idx)))
        both = nulls & not_nulls
        if both:
            raise self.fail(f"param {sorted(both)[0]}", "is constrained both NULL and NOT_NULL")
        return result


def slot_synonyms(synonyms: Mapping[str, Any], word: str):
    """The synonyms of a ``{Word}`` slot, also under its first letter's other case; ``None`` if none.

    >>> slot_synonyms({"remove": ["remove", "take away"]}, "Remove")
    ['remove', 'take away']
    """
    if word in synonyms:
        return synonyms[word]
    flipped = word[:1].swapcase() + word[1:]
    return synonyms.get(flipped)
