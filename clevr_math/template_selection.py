"""Which templates a CLEVR-Math configuration uses, and the category names they declare."""

from __future__ import annotations

from builder_utils.clevr import load_metadata
from builder_utils.clevr.changes import CHANGES_CATEGORY
from builder_utils.clevr.question_types import QuestionTypeError, select_templates
from builder_utils.clevr.templates import Template, TemplateError, TemplateSet, load_template_set
from clevr_math.config import CATEGORIES, ClevrMathConfig, ConfigError


def in_split(category: str, holdout_category: str | None, clevr_split: str) -> bool:
    """Whether questions of ``category`` belong to ``clevr_split`` (a held-out category: test only, alone).

    Example:
        >>> in_split("multihop", "multihop", "test"), in_split("insertion", "multihop", "test")
        (True, False)
    """
    return holdout_category is None or (category == holdout_category) == (clevr_split == "test")


def template_set(config: ClevrMathConfig) -> TemplateSet:
    """The configuration's template set (a shipped name or a folder), validated.

    Example:
        >>> len(template_set(ClevrMathConfig(name="x")).templates)
        13
    """
    try:
        return load_template_set(config.template_set, load_metadata())
    except TemplateError as exc:
        raise ConfigError(f"CLEVR-Math config {config.name!r}: template_set: {exc}") from None


def category_names(config: ClevrMathConfig) -> list[str]:
    """ClassLabel names of ``category``: the seven of CATEGORIES first, so their ids never move, then a custom set's own.

    Example:
        >>> category_names(ClevrMathConfig(name="x"))
        ['remove_group', 'remove_subset', 'insertion', 'count_backwards', 'adversarial', 'multihop', 'changes']
    """
    declared = {t.category for t in template_set(config).templates}
    return list(CATEGORIES) + sorted(declared - set(CATEGORIES))


def selected_templates(config: ClevrMathConfig, clevr_split: str) -> list[Template]:
    """The templates of one split: filtered by ``question_types``, ``max_operations``, then the held-out category.

    Example:
        >>> from clevr_math.config import BUILDER_CONFIGS
        >>> [t.key for t in selected_templates(BUILDER_CONFIGS[1], "test")]
        ['subtraction-multihop:0']
    """
    where = f"CLEVR-Math config {config.name!r}"
    templates = template_set(config).templates
    try:
        templates = select_templates(templates, config.question_types)
    except QuestionTypeError as exc:
        raise ConfigError(f"{where}: question_types: {exc}") from None
    if config.max_operations is not None:
        templates = [t for t in templates if _operations(t) <= config.max_operations]
    if not (config.changes and config.holdout_category == CHANGES_CATEGORY):
        # (a held-out `changes` keeps every template: its rows are held out, see ClevrMath._changed_rows)
        templates = [t for t in templates if in_split(t.category, config.holdout_category, clevr_split)]
    if not templates:
        raise ConfigError(
            f"{where}: no template of set {config.template_set!r} is left for the {clevr_split} split "
            f"(question_types={config.question_types!r}, max_operations={config.max_operations!r}, "
            f"holdout_category={config.holdout_category!r})"
        )
    return templates


def longest_chain(config: ClevrMathConfig) -> int:
    """The most arithmetic operations of any template in the configuration's set.

    Example:
        >>> from clevr_math.config import BUILDER_CONFIGS
        >>> longest_chain(BUILDER_CONFIGS[2])  # chains
        5
    """
    return max((_operations(t) for t in template_set(config).templates), default=0)


def _operations(template: Template) -> int:
    # `max_operations` counts the arithmetic nodes, as `num_operations` does.
    return sum(node.type in load_metadata().arithmetic for node in template.nodes)
