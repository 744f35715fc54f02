"""Chain-of-thought text for generated questions: tables of per-function step renderers.

Another module extends :data:`CLEVR_STEPS` with a table of its own (``{**CLEVR_STEPS, **MINE}``,
as :mod:`builder_utils.clevr.math_cot` does), so which renderer wins is said where the tables
are combined, not by the order of imports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .executor import SceneIndex, answer_text
from .metadata import ATTRIBUTES
from .templates import TemplateNode

__all__ = [
    "CLEVR_STEPS",
    "NodeTrace",
    "ProgramShape",
    "SceneWords",
    "StepContext",
    "StepRenderers",
    "plural",
    "program_shape",
    "render_cot",
]

ATTRIBUTE_ORDER = tuple(ATTRIBUTES)  # size, color, material, shape: how objects are described
RELATION_PHRASES = {"left": "to the left of", "right": "to the right of", "behind": "behind", "front": "in front of"}

StepRenderer = Callable[["StepContext"], "str | Sequence[str] | None"]


class StepRenderers(dict):
    """``{function: renderer}``; a renderer returns a sentence, a list of them or ``None`` (no step).

    >>> mine = StepRenderers()
    >>> @mine.step("my_function")
    ... def _mine(ctx):
    ...     return f"The result is {ctx.output}."
    >>> sorted({**StepRenderers({"a": None}), **mine})
    ['a', 'my_function']
    """

    def step(self, function: str, renderer: StepRenderer | None = None):
        """Add the renderer of ``function`` (or return a decorator that adds it)."""

        def add(fn: StepRenderer) -> StepRenderer:
            if function in self:
                raise ValueError(f"a chain-of-thought renderer for {function!r} is already in this table")
            self[function] = fn
            return fn

        return add(renderer) if renderer is not None else add


#: The CLEVR functions' renderers (filled below).
CLEVR_STEPS = StepRenderers()


@dataclass(slots=True)
class NodeTrace:
    """What one template node did in an accepted instantiation: ``values`` by param, ``by_type`` by
    param type (``None``: null), ``selected`` the bitmask a filter matched before its ``unique``/``count``."""

    node: TemplateNode
    values: dict[str, Any]
    by_type: dict[str, Any]
    output: Any
    selected: int | None = None


@dataclass(frozen=True)
class ProgramShape:
    """What a program's nodes alone decide, built once per template (``has_unused``: an adversarial
    action; ``derived``: what renderers work out, under keys of their own)."""

    consumers: tuple[tuple[int, ...], ...]
    types: frozenset[str]
    has_unused: bool
    outputs_object: tuple[bool, ...]
    derived: dict = field(default_factory=dict, compare=False, repr=False)


def program_shape(nodes: Sequence[TemplateNode]) -> ProgramShape:
    """The :class:`ProgramShape` of a program's nodes.

    >>> shape = program_shape([TemplateNode(0, "scene", ()), TemplateNode(1, "count", (0,))])
    >>> shape.consumers, shape.has_unused
    (((1,), ()), False)
    """
    consumers: list[list[int]] = [[] for _ in nodes]
    for k, node in enumerate(nodes):
        for i in node.inputs:
            if i < k and k not in consumers[i]:
                consumers[i].append(k)
    last = len(nodes) - 1
    has_unused = any(not consumers[k] for k in range(last) if nodes[k].type != "scene")
    return ProgramShape(tuple(map(tuple, consumers)), frozenset(node.type for node in nodes), has_unused,
                        tuple(_outputs_object(node.type) for node in nodes))


@dataclass
class SceneWords:
    """The object phrases and set listings written on one scene, shared by its questions' chains."""

    objects: dict[int, str] = field(default_factory=dict)
    sets: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class StepContext:
    """Everything a renderer may read about one node, plus wording helpers.

    ``inputs`` are raw outputs (ObjectSet: bitmask, Object: index); ``trace`` holds every node.
    ``category``: programs of one shape mean different things ("remove X of the N cubes" and "how
    many must go to leave X" are both ``N - X``). One context moves along the program: a renderer
    must not keep it, and modifies a :func:`dataclasses.replace` view."""

    trace: Sequence[NodeTrace]
    position: int
    index: SceneIndex
    step_number: int
    subject: int | None = None
    subject_set: int | None = None  # the node whose object set the previous step described
    extra: dict = field(default_factory=dict)
    category: str | None = None
    shape: ProgramShape | None = None  # render_cot always sets it
    words: SceneWords = field(default_factory=SceneWords)

    @property
    def here(self) -> NodeTrace:
        return self.trace[self.position]

    # The properties below index the trace themselves rather than go through ``here``:
    # renderers read them several times per step.
    @property
    def node(self) -> TemplateNode:
        return self.trace[self.position].node

    @property
    def function(self) -> str:
        return self.trace[self.position].node.type

    @property
    def output(self) -> Any:
        return self.trace[self.position].output

    @property
    def inputs(self) -> list[Any]:
        trace = self.trace
        return [trace[i].output for i in trace[self.position].node.inputs]

    @property
    def input_nodes(self) -> list[NodeTrace]:
        trace = self.trace
        return [trace[i] for i in trace[self.position].node.inputs]

    def describe(self, obj: int) -> str:
        """``small yellow rubber cylinder``: every attribute of an object."""
        o = self.index.objects[obj]
        return " ".join([o[a] for a in ATTRIBUTE_ORDER])

    def location(self, obj: int) -> str:
        """``(190, 122)``: the object's rounded pixel coordinates."""
        coords = self.index.scene["objects"][obj].get("pixel_coords") or [0, 0]
        return f"({round(coords[0])}, {round(coords[1])})"

    def the(self, obj: int) -> str:
        """``the small yellow rubber cylinder, located near (190, 122)``."""
        known = self.words.objects
        phrase = known.get(obj)
        if phrase is None:
            phrase = known[obj] = f"the {self.describe(obj)}, located near {self.location(obj)}"
        return phrase

    def listing(self, mask: int) -> str:
        """The objects of a set, each with its location, joined with commas and "and"."""
        known = self.words.sets
        text = known.get(mask)
        if text is None:
            items = []
            rest = mask
            while rest:  # the set's objects in index order, lowest bit first
                low = rest & -rest
                items.append(self.the(low.bit_length() - 1))
                rest ^= low
            if len(items) <= 2:
                text = " and ".join(items)
            else:
                text = ", ".join(items[:-1]) + ", and " + items[-1]
            known[mask] = text
        return text

    def refer(self, node_position: int) -> str:
        """``that object`` when the earlier node's object was the previous step's subject, else its description."""
        obj = self.trace[node_position].output
        if self.subject == node_position:
            return "that object"
        return f"the {self.describe(obj)}"

    def filter_words(self, plural: bool = False) -> str:
        """The node's attribute values as a noun phrase: ``small red cubes`` / ``object``."""
        by_type = self.here.by_type
        words = [by_type[t] for t in ("Size", "Color", "Material") if by_type.get(t) is not None]
        noun = by_type.get("Shape") or "object"
        words.append(noun + ("s" if plural else ""))
        return " ".join(words)

    def from_scene(self, input_position: int = 0) -> bool:
        """Whether the node's input is the whole scene (a ``scene`` node)."""
        return self.input_nodes[input_position].node.type == "scene"


def render_cot(
    trace: Sequence[NodeTrace],
    index: SceneIndex,
    answer: Any,
    *,
    category: str | None = None,
    extra: dict | None = None,
    shape: ProgramShape | None = None,
    words: SceneWords | None = None,
    renderers: Mapping[str, StepRenderer] = CLEVR_STEPS,
) -> str:
    """The chain of thought of one instantiation: numbered steps, then ``Answer: <answer>.``

    Nodes without a renderer get a plain step naming the function and its result, so the text
    is never empty.

    >>> from builder_utils.clevr.templates import TemplateNode
    >>> scene = {"objects": [], "relationships": {}}
    >>> trace = [NodeTrace(TemplateNode(0, "scene", ()), {}, {}, 0),
    ...          NodeTrace(TemplateNode(1, "count", (0,)), {}, {}, 0)]
    >>> print(render_cot(trace, SceneIndex(scene, validate=False), 0, category="zero_hop"))
    Step 1: Counting the objects in the scene gives 0.
    Answer: 0.
    """
    lines: list[str] = []
    extra = dict(extra or {})
    if shape is None:
        shape = program_shape([item.node for item in trace])
    if words is None:
        words = SceneWords()
    outputs_object = shape.outputs_object
    # One context moves along the program, cheaper than a fresh one per node: renderers read
    # it and take a modified view with dataclasses.replace.
    ctx = StepContext(trace, 0, index, 1, None, None, extra, category, shape, words)
    for position, item in enumerate(trace):
        ctx.position = position
        produced = renderers.get(item.node.type, _fallback)(ctx)
        if produced is None:
            continue
        if isinstance(produced, str):
            lines.append(f"Step {len(lines) + 1}: {produced}")
        else:
            for line in produced:
                lines.append(f"Step {len(lines) + 1}: {line}")
        ctx.step_number = len(lines) + 1
        ctx.subject = position if outputs_object[position] and isinstance(item.output, int) else None
        ctx.subject_set = position
    lines.append(f"Answer: {answer_text(answer)}.")
    return "\n".join(lines)


def _outputs_object(t: str) -> bool:
    return t.endswith("unique") or t == "unique"


def _fallback(ctx: StepContext) -> str:
    return f"Applying {ctx.function.replace('_', ' ')} gives {answer_text(ctx.output)}."


def plural(n: int, singular: str, plural: str | None = None) -> str:
    """The word agreeing with ``n``: ``plural(2, "cube")`` is ``cubes``, ``plural(1, "is", "are")`` ``is``.

    >>> plural(2, "cube"), plural(1, "is", "are")
    ('cubes', 'is')
    """
    return singular if n == 1 else (plural or singular + "s")


# -- renderers for the CLEVR functions -------------------------------------------------------


@CLEVR_STEPS.step("scene")
def _scene(ctx: StepContext) -> None:
    return None


@CLEVR_STEPS.step("filter_unique")
def _filter_unique(ctx: StepContext) -> str:
    obj = ctx.output
    if ctx.from_scene():
        verb = "I first find" if ctx.step_number == 1 else "Next, I find"
        return f"{verb} {ctx.the(obj)}."
    if ctx.filter_words() == "object":
        return f"That leaves exactly one object: {ctx.the(obj)}."
    return f"Among those objects, the only {ctx.filter_words()} is {ctx.the(obj)}."


def _group_phrase(ctx: StepContext) -> str:
    return "in the scene" if ctx.from_scene() else "among those objects"


@CLEVR_STEPS.step("filter")
def _filter(ctx: StepContext) -> str:
    found = ctx.output
    n = found.bit_count()
    where = _group_phrase(ctx)
    if n == 0:
        return f"There are no {ctx.filter_words(plural=True)} {where}."
    noun = ctx.filter_words(plural=n != 1)
    return f"There {plural(n, 'is', 'are')} {n} {noun} {where}: {ctx.listing(found)}."


@CLEVR_STEPS.step("filter_count")
def _filter_count(ctx: StepContext) -> str:
    return _filter(_with_output(ctx, ctx.here.selected))


@CLEVR_STEPS.step("filter_exist")
def _filter_exist(ctx: StepContext) -> str:
    found = ctx.here.selected
    where = _group_phrase(ctx)
    if not found:
        return f"There is no {ctx.filter_words()} {where}."
    return f"There is at least one {ctx.filter_words()} {where}: {ctx.listing(found)}."


def _with_output(ctx: StepContext, output: Any) -> StepContext:
    """A view of ``ctx`` whose node output is replaced (to reuse a renderer)."""
    here = ctx.here
    trace = list(ctx.trace)
    trace[ctx.position] = NodeTrace(here.node, here.values, here.by_type, output, here.selected)
    return replace(ctx, trace=trace)


def _relation(ctx: StepContext) -> str:
    rel = ctx.here.by_type.get("Relation")
    return RELATION_PHRASES.get(rel, f"{rel} of")


@CLEVR_STEPS.step("relate_filter_unique")
def _relate_filter_unique(ctx: StepContext) -> str:
    subject = ctx.filter_words()
    return (
        f"The {subject} {_relation(ctx)} {ctx.refer(ctx.node.inputs[0])} is {ctx.the(ctx.output)}."
    )


def _relate_matches(ctx: StepContext, found: int) -> str:
    rel, anchor = _relation(ctx), ctx.refer(ctx.node.inputs[0])
    n = found.bit_count()
    if n == 0:
        return f"No matching object is {rel} {anchor}."
    return (
        f"There {plural(n, 'is', 'are')} {n} matching {plural(n, 'object')} {rel} {anchor}: "
        f"{ctx.listing(found)}."
    )


@CLEVR_STEPS.step("relate_filter")
def _relate_filter(ctx: StepContext) -> str:
    return _relate_matches(ctx, ctx.output)


@CLEVR_STEPS.step("relate_filter_count")
def _relate_filter_count(ctx: StepContext) -> str:
    return _relate_matches(ctx, ctx.here.selected)


@CLEVR_STEPS.step("relate_filter_exist")
def _relate_filter_exist(ctx: StepContext) -> str:
    found = ctx.here.selected
    if not found:
        return _relate_matches(ctx, found)
    return f"At least one matching object is {_relation(ctx)} {ctx.refer(ctx.node.inputs[0])}: {ctx.listing(found)}."


@CLEVR_STEPS.step("relate")
def _relate(ctx: StepContext) -> str:
    found = ctx.output
    rel, anchor = _relation(ctx), ctx.refer(ctx.node.inputs[0])
    if not found:
        return f"No object is {rel} {anchor}."
    if found.bit_count() == 1:
        return f"The object {rel} {anchor} is {ctx.listing(found)}."
    return f"The objects {rel} {anchor} are: {ctx.listing(found)}."


def _same(attr: str):
    def render(ctx: StepContext) -> str:
        obj = ctx.inputs[0]
        value = ctx.index.objects[obj][attr]
        anchor = ctx.refer(ctx.node.inputs[0])
        found = ctx.output
        if not found:
            return f"No other object has the same {attr} as {anchor} ({value})."
        if found.bit_count() == 1:
            return f"The other object with the same {attr} as {anchor} ({value}) is {ctx.listing(found)}."
        return f"The other objects with the same {attr} as {anchor} ({value}) are: {ctx.listing(found)}."

    return render


def _query(attr: str):
    def render(ctx: StepContext) -> str:
        return f"The {attr} of {ctx.refer(ctx.node.inputs[0])} is {ctx.output}."

    return render


def _equal_attr(attr: str):
    def render(ctx: StepContext) -> str:
        a, b = ctx.inputs
        if ctx.output:
            return f"Both are {a}, so they have the same {attr}."
        return f"One is {a} and the other is {b}, so their {attr}s differ."

    return render


def _filter_attr(attr: str):
    def render(ctx: StepContext) -> str:
        value = next(iter(ctx.here.values.values()), None)
        found = ctx.output
        n = found.bit_count()
        if n == 0:
            return f"None of them is {value}."
        return f"Of those, {n} {plural(n, 'is', 'are')} {value}: {ctx.listing(found)}."

    return render


for _attr in ATTRIBUTE_ORDER:
    CLEVR_STEPS.step(f"same_{_attr}", _same(_attr))
    CLEVR_STEPS.step(f"query_{_attr}", _query(_attr))
    CLEVR_STEPS.step(f"equal_{_attr}", _equal_attr(_attr))
    CLEVR_STEPS.step(f"filter_{_attr}", _filter_attr(_attr))


@CLEVR_STEPS.step("unique")
def _unique(ctx: StepContext) -> str:
    return f"Exactly one object remains: {ctx.the(ctx.output)}."


@CLEVR_STEPS.step("union")
def _union(ctx: StepContext) -> str:
    found = ctx.output
    n = found.bit_count()
    if n == 0:
        return "Neither group has any object."
    return f"Together, the two groups hold {n} {plural(n, 'object')}: {ctx.listing(found)}."


@CLEVR_STEPS.step("intersect")
def _intersect(ctx: StepContext) -> str:
    found = ctx.output
    n = found.bit_count()
    if n == 0:
        return "No object belongs to both groups."
    return f"{n} {plural(n, 'object')} {plural(n, 'belongs', 'belong')} to both groups: {ctx.listing(found)}."


@CLEVR_STEPS.step("count")
def _count(ctx: StepContext) -> str:
    n = ctx.output
    source = ctx.node.inputs[0]
    if ctx.subject_set == source:
        return f"Counting them gives {n}."
    return f"Counting {_set_phrase(ctx, source)} gives {n}."


def _set_phrase(ctx: StepContext, position: int) -> str:
    """A noun phrase for the object set output by an earlier node."""
    item = ctx.trace[position]
    view = replace(ctx, position=position, subject_set=None)
    if item.node.type in ("filter", "filter_count", "filter_exist"):
        return f"the {view.filter_words(plural=True)} {_group_phrase(view)}"
    if item.node.type.startswith("relate_filter"):
        anchor = ctx.trace[item.node.inputs[0]].output
        return f"the matching objects {_relation(view)} the {ctx.describe(anchor)}"
    if item.node.type == "scene":
        return "the objects in the scene"
    return "those objects"


@CLEVR_STEPS.step("exist")
def _exist(ctx: StepContext) -> str:
    if ctx.output:
        return "So at least one such object exists."
    return "So no such object exists."


@CLEVR_STEPS.step("equal_integer")
def _equal_integer(ctx: StepContext) -> str:
    a, b = ctx.inputs
    return f"{a} and {b} are equal." if ctx.output else f"{a} and {b} are not equal."


@CLEVR_STEPS.step("less_than")
def _less_than(ctx: StepContext) -> str:
    a, b = ctx.inputs
    return f"{a} is less than {b}." if ctx.output else f"{a} is not less than {b}."


@CLEVR_STEPS.step("greater_than")
def _greater_than(ctx: StepContext) -> str:
    a, b = ctx.inputs
    return f"{a} is greater than {b}." if ctx.output else f"{a} is not greater than {b}."


@CLEVR_STEPS.step("equal_object")
def _equal_object(ctx: StepContext) -> str:
    return "They are the same object." if ctx.output else "They are different objects."


# Plain arithmetic wording; builder_utils.clevr.math_cot.CLEVR_MATH_STEPS replaces it with richer text.
@CLEVR_STEPS.step("addition")
def _addition(ctx: StepContext) -> str:
    a, b = ctx.inputs
    return f"{a} + {b} = {ctx.output}."


@CLEVR_STEPS.step("subtraction")
def _subtraction(ctx: StepContext) -> str:
    a, b = ctx.inputs
    return f"{a} - {b} = {ctx.output}."


@CLEVR_STEPS.step("choose")
def _choose(ctx: StepContext) -> str:
    available = ctx.inputs[0].bit_count()
    return f"The question takes {ctx.output} of the {available} such {plural(available, 'object')}."

