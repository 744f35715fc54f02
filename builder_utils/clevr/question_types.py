"""``--question_types``: selecting templates by family, coarse type or exact family index.

Tokens (README, "generate-questions") are lower-cased, ``.json`` dropped, ``-`` read as ``_``.

>>> parse_question_types("Zero-Hop.json, count")
['zero_hop', 'count']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .templates import Template

__all__ = [
    "COARSE_TYPES",
    "QuestionTypeError",
    "coarse_types",
    "parse_question_types",
    "program_coarse_types",
    "select_templates",
]

COARSE_TYPES = (
    "count",
    "exist",
    "query",
    "attribute_compare",
    "integer_compare",
    "relation",
    "logical_and",
    "logical_or",
)
_COUNT = {"count", "filter_count", "relate_filter_count"}
_EXIST = {"exist", "filter_exist", "relate_filter_exist"}
_ATTRIBUTE_COMPARE = {"equal_size", "equal_color", "equal_material", "equal_shape"}
_INTEGER_COMPARE = {"equal_integer", "less_than", "greater_than"}
_SEPARATORS = re.compile(r"[,\s]+")


class QuestionTypeError(ValueError):
    """An unknown ``--question_types`` token, or a selection that matches no template."""


def normalize_token(token: str) -> str:
    """``Zero-Hop.JSON`` -> ``zero_hop``.

    >>> normalize_token("Single-OR.json:3")
    'single_or:3'
    """
    token = token.strip().lower()
    if token.endswith(".json"):
        token = token[: -len(".json")]
    elif ".json:" in token:
        token = token.replace(".json:", ":")
    return token.replace("-", "_")


def parse_question_types(spec: str | Sequence[str] | None) -> list[str]:
    """Split and normalise a question-type selection (a string or a list of strings).

    >>> parse_question_types(["one_hop two_hop", "exist"])
    ['one_hop', 'two_hop', 'exist']
    """
    if spec is None:
        return []
    parts = [spec] if isinstance(spec, str) else list(spec)
    tokens: list[str] = []
    for part in parts:
        tokens.extend(normalize_token(t) for t in _SEPARATORS.split(part) if t.strip())
    return tokens


def coarse_types(template: Template) -> frozenset[str]:
    """The coarse question types a template belongs to (from its node types).

    >>> from builder_utils.clevr.metadata import default_metadata
    >>> from builder_utils.clevr.templates import load_template_set
    >>> [one_hop] = [t for t in load_template_set("clevr", default_metadata()).templates if t.key == "one_hop:0"]
    >>> sorted(coarse_types(one_hop))
    ['count', 'relation']
    """
    return program_coarse_types([node.type for node in template.nodes])


def program_coarse_types(functions: Sequence[str]) -> frozenset[str]:
    """The coarse question types of a program given as its node types in order (the last answers).

    >>> sorted(program_coarse_types(["scene", "relate", "query_color"]))
    ['query', 'relation']
    """
    final = functions[-1] if functions else ""
    types = set(functions)
    found = set()
    if final in _COUNT:
        found.add("count")
    if final in _EXIST:
        found.add("exist")
    if final.startswith("query_"):
        found.add("query")
    if final in _ATTRIBUTE_COMPARE:
        found.add("attribute_compare")
    if final in _INTEGER_COMPARE:
        found.add("integer_compare")
    if any(t == "relate" or t.startswith("relate_filter") for t in types):
        found.add("relation")
    if "intersect" in types:
        found.add("logical_and")
    if "union" in types:
        found.add("logical_or")
    return frozenset(found)


def select_templates(templates: Sequence[Template], spec: str | Sequence[str] | None) -> list[Template]:
    """The templates matching any token of ``spec`` (all when empty), in set order.

    >>> from builder_utils.clevr.metadata import default_metadata
    >>> from builder_utils.clevr.templates import load_template_set
    >>> tset = load_template_set("clevr", default_metadata())
    >>> [t.key for t in select_templates(tset.templates, "zero_hop:0")]
    ['zero_hop:0']
    >>> len(select_templates(tset.templates, "count one_hop")) < len(tset.templates)
    True
    """
    tokens = parse_question_types(spec)
    if not tokens:
        return list(templates)
    families: dict[str, list[Template]] = {}
    for t in templates:
        families.setdefault(normalize_token(t.family), []).append(t)
    wanted: set[int] = set()
    for token in tokens:
        matched = _match(token, templates, families)
        if matched is None:
            raise QuestionTypeError(f"unknown question type {token!r}; valid: {_valid_list(families)}")
        wanted.update(id(t) for t in matched)
    selected = [t for t in templates if id(t) in wanted]
    if not selected:
        raise QuestionTypeError(
            f"--question_types {' '.join(tokens)} matches no template of this set; valid: {_valid_list(families)}"
        )
    return selected


def _match(token: str, templates: Sequence[Template], families: dict[str, list[Template]]) -> Iterable[Template] | None:
    if token in families:
        return families[token]
    if token in COARSE_TYPES:
        return [t for t in templates if token in coarse_types(t)]
    stem, sep, number = token.partition(":")
    if sep and stem in families and number.isdigit():
        return [t for t in families[stem] if t.index == int(number)] or None
    return None


def _valid_list(families: dict[str, list[Template]]) -> str:
    stems = ", ".join(families)
    return f"families {stems}; coarse types {', '.join(COARSE_TYPES)}; or family:index (e.g. {next(iter(families), 'zero_hop')}:0)"
