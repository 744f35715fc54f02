"""Chain-of-thought steps for CLEVR-Math programs: a table of renderers over the engine's.

An operation's meaning is read from the program's shape, so any template in the style of the
shipped sets works: ``subtraction(<before>, count(filter ...))`` removes a group,
``subtraction(<before>, choose(filter ...))`` X objects (the category tells ``remove_subset``
from ``count_backwards`` when both count the chosen group), ``addition(<before>, choose(...))``
inserts X objects described by the ``filter`` before the ``choose``, and a node whose output
nothing uses is an adversarial action. Outside math programs the engine's wording stays.

>>> sorted(MATH_STEPS)
['addition', 'choose', 'count', 'filter', 'subtraction']
>>> CLEVR_MATH_STEPS["filter_unique"] is CLEVR_STEPS["filter_unique"]
True
"""

from __future__ import annotations

from collections.abc import Sequence

from .cot import CLEVR_STEPS, NodeTrace, ProgramShape, StepContext, StepRenderers, plural, program_shape
from .metadata import default_metadata
from .templates import TemplateNode

__all__ = ["CLEVR_MATH_STEPS", "MATH_FUNCTIONS", "MATH_STEPS", "describe_set", "is_math_program"]

_ARITHMETIC = default_metadata().arithmetic
MATH_FUNCTIONS = _ARITHMETIC | {"choose"}
_FILTERS = frozenset({"filter", "filter_size", "filter_color", "filter_material", "filter_shape"})
_ATTRIBUTE_TYPES = ("Size", "Color", "Material")


# The engine's own renderers: programs that are not math programs keep the engine's wording.
_ENGINE_FILTER = CLEVR_STEPS["filter"]
_ENGINE_COUNT = CLEVR_STEPS["count"]
MATH_STEPS = StepRenderers()


def is_math_program(trace: Sequence[NodeTrace]) -> bool:
    """Whether a traced program is a CLEVR-Math one (arithmetic, ``choose`` or an unused node).

    >>> is_math_program([])
    False
    """
    return _is_math(program_shape([item.node for item in trace]))


def _is_math(shape: ProgramShape) -> bool:
    return shape.has_unused or not shape.types.isdisjoint(MATH_FUNCTIONS)


def _filter_chain(nodes: Sequence[TemplateNode], position: int) -> tuple[int, ...]:
    """Node ``position`` and its first inputs back to the first node that is not a filter."""
    chain = []
    k = position
    while nodes[k].type in _FILTERS:
        chain.append(k)
        if not nodes[k].inputs:
            break
        k = nodes[k].inputs[0]
    return tuple(chain)


def _set_noun(trace: Sequence[NodeTrace], chain: Sequence[int], n: int) -> str:
    """The noun phrase of a filter chain's set: each attribute as its nearest filter sets it."""
    words = []
    for ptype in _ATTRIBUTE_TYPES:
        for k in chain:
            value = trace[k].by_type.get(ptype)
            if value is not None:
                words.append(value)
                break
    noun = "object"
    for k in chain:
        value = trace[k].by_type.get("Shape")
        if value is not None:
            noun = value
            break
    words.append(plural(n, noun))
    return " ".join(words)


def describe_set(trace: Sequence[NodeTrace], position: int, n: int = 2) -> str:
    """Noun phrase for the set made by node ``position``, agreeing with ``n`` objects.

    >>> from builder_utils.clevr.templates import TemplateNode
    >>> trace = [NodeTrace(TemplateNode(0, "scene", ()), {}, {}, 0b11),
    ...          NodeTrace(TemplateNode(1, "filter", (0,), ("<C>", "<S>")), {},
    ...                    {"Color": "red", "Shape": "cube"}, 0b11)]
    >>> describe_set(trace, 1), describe_set(trace, 1, n=1), describe_set(trace, 0)
    ('red cubes', 'red cube', 'objects')
    """
    return _set_noun(trace, _filter_chain([item.node for item in trace], position), n)


class _Layout:
    """What these renderers read off a program's nodes alone, kept in its ``ProgramShape.derived``."""

    __slots__ = ("is_math", "chains", "asked", "insertion_source", "insertion_descriptions")

    def __init__(self, nodes: Sequence[TemplateNode], shape: ProgramShape):
        self.is_math = _is_math(shape)
        self.chains = tuple(_filter_chain(nodes, k) for k in range(len(nodes)))
        self.asked = _asked(nodes)
        # Per choose node, the unused filter describing the objects an insertion adds: the
        # nearest filter before it, if nothing uses that filter's output.
        self.insertion_source: dict[int, int | None] = {}
        for c, node in enumerate(nodes):
            if node.type == "choose":
                nearest = next((k for k in range(c - 1, 0, -1) if nodes[k].type in _FILTERS), None)
                self.insertion_source[c] = nearest if nearest is not None and not shape.consumers[nearest] else None
        # The unused filters that describe the objects of the next insertion (the addition step
        # names them): those of the first choose after them, when an addition uses it.
        self.insertion_descriptions: set[int] = set()
        for k, node in enumerate(nodes):
            first = next((c for c in range(k + 1, len(nodes)) if nodes[c].type == "choose"), None)
            if (node.type in _FILTERS and first is not None and self.insertion_source[first] == k
                    and any(nodes[j].type == "addition" for j in shape.consumers[first])):
                self.insertion_descriptions.add(k)


def _layout(ctx: StepContext) -> _Layout:
    derived = ctx.shape.derived
    layout = derived.get(_Layout)
    if layout is None:
        layout = derived[_Layout] = _Layout([item.node for item in ctx.trace], ctx.shape)
    return layout


def _describe(ctx: StepContext, position: int, n: int = 2) -> str:
    """:func:`describe_set` for a renderer, along the filter chain its layout holds."""
    return _set_noun(ctx.trace, _layout(ctx).chains[position], n)


def _asked(nodes: Sequence[TemplateNode]) -> int | None:
    """The node whose set the question counts in the end (``None``: the whole scene)."""
    k = len(nodes) - 1
    while nodes[k].type in _ARITHMETIC:
        k = nodes[k].inputs[0]
    if nodes[k].type == "count":
        k = nodes[k].inputs[0]
    return None if nodes[k].type == "scene" else k


def _asked_noun(ctx: StepContext) -> str:
    """What the question counts in the end: ``objects``, ``red cubes``..."""
    asked = _layout(ctx).asked
    return "objects" if asked is None else _describe(ctx, asked)


def _counted_set(trace: Sequence[NodeTrace], position: int) -> int | None:
    """The node whose set an Integer node counts (``count`` -> its input), else ``None``."""
    item = trace[position]
    return item.node.inputs[0] if item.node.type == "count" else None


def _after_noun(ctx: StepContext, position: int, n: int) -> str:
    """How to name what is left after an operation whose first input is node ``position``."""
    trace = ctx.trace
    counted = _counted_set(trace, position)
    if counted is None or trace[counted].node.type == "scene":
        return plural(n, "object")
    return _describe(ctx, counted, n)


def _listing_sentence(ctx: StepContext, position: int) -> str:
    found = ctx.trace[position].output
    n = found.bit_count()
    if n == 0:
        return f"There are no {_describe(ctx, position)} in the scene."
    return f"There {plural(n, 'is', 'are')} {n} {_describe(ctx, position, n)} in the scene: {ctx.listing(found)}."


@MATH_STEPS.step("filter")
def _filter(ctx: StepContext):
    layout = _layout(ctx)
    if not layout.is_math:
        return _ENGINE_FILTER(ctx)
    position = ctx.position
    if ctx.shape.consumers[position]:
        return _listing_sentence(ctx, position)
    if position in layout.insertion_descriptions:
        return None  # the addition step names the new objects
    # An action on a group the question does not count: the adversarial trick.
    n = ctx.output.bit_count()
    pronoun = plural(n, "it", "them")
    return f"{_listing_sentence(ctx, position)[:-1]}. Removing {pronoun} does not change the number of {_asked_noun(ctx)}."


@MATH_STEPS.step("count")
def _count(ctx: StepContext):
    source = ctx.node.inputs[0]
    n = ctx.output
    if not _layout(ctx).is_math:
        return _ENGINE_COUNT(ctx)
    if ctx.trace[source].node.type == "scene":
        return f"There {plural(n, 'is', 'are')} {n} {plural(n, 'object')} in the scene."
    if source == ctx.position - 1:
        return _ENGINE_COUNT(ctx)
    return f"There {plural(n, 'is', 'are')} {n} {_describe(ctx, source, n)}."


@MATH_STEPS.step("choose")
def _choose(ctx: StepContext):
    if ctx.shape.consumers[ctx.position]:
        return None  # the arithmetic step that uses X states it
    x = ctx.output
    group = _describe(ctx, ctx.node.inputs[0], x)
    return f"Adding {x} {group} does not change the number of {_asked_noun(ctx)}."


@MATH_STEPS.step("subtraction")
def _subtraction(ctx: StepContext) -> str:
    trace = ctx.trace
    a, b = ctx.inputs
    before, amount = ctx.node.inputs
    out = ctx.output
    arithmetic = f"{a} - {b} = {out}"
    amount_node = trace[amount].node
    if amount_node.type == "count" and trace[amount_node.inputs[0]].node.type == "union":
        union = trace[amount_node.inputs[0]].node
        # Agree with the second group's own size ("the large cyan cylinder", not "cylinders").
        second = _describe(ctx, union.inputs[1], trace[union.inputs[1]].output.bit_count())
        return (
            f"Removing the {second} as well ({b} {plural(b, 'object')} in the two groups together) "
            f"leaves {arithmetic} {_after_noun(ctx, before, out)}."
        )
    if amount_node.type == "count":
        group = _describe(ctx, amount_node.inputs[0], b)
        removed = f"the {group}" if b == 1 else f"the {b} {group}"
        return f"Removing {removed} leaves {arithmetic} {_after_noun(ctx, before, out)}."
    if amount_node.type == "choose":
        chosen_from = amount_node.inputs[0]
        if _counted_set(trace, before) == chosen_from:
            # |group| - X is both "remove X of them" and "how many must go to leave X"; only
            # the template's category tells them apart.
            group = _describe(ctx, chosen_from, a)
            if ctx.category == "count_backwards":
                return (f"There {plural(a, 'is', 'are')} {a} {group}; to be left with {b} of them, "
                        f"remove {arithmetic}.")
            if ctx.category == "remove_subset":
                return f"Removing {b} of the {a} {group} leaves {arithmetic} {_describe(ctx, chosen_from, out)}."
            return f"There {plural(a, 'is', 'are')} {a} {group}, and {arithmetic}."
        group = _describe(ctx, chosen_from)
        return f"Removing {b} of the {group} leaves {arithmetic} {_after_noun(ctx, before, out)}."
    return f"{arithmetic}."


@MATH_STEPS.step("addition")
def _addition(ctx: StepContext) -> str:
    trace = ctx.trace
    a, b = ctx.inputs
    before, amount = ctx.node.inputs
    out = ctx.output
    arithmetic = f"{a} + {b} = {out}"
    if trace[amount].node.type == "choose":
        counted = _counted_set(trace, before)
        if counted is not None and trace[counted].node.type != "scene":
            added = _describe(ctx, counted, b)
        else:
            described = _layout(ctx).insertion_source[amount]
            added = _describe(ctx, described, b) if described is not None else plural(b, "object")
        return f"Adding {b} {added} gives {arithmetic} {_after_noun(ctx, before, out)}."
    return f"{arithmetic}."


#: The engine's renderers with CLEVR-Math's in place (they defer to the engine's outside math programs).
CLEVR_MATH_STEPS = {**CLEVR_STEPS, **MATH_STEPS}
