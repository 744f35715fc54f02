"""Compiling a validated template into a search plan, once per template.

One :class:`Step` per node: params bound **by type**, ``NULL`` / ``NOT_NULL`` folded into the
filter keys, constraints placed where they become checkable. Every step runs the executor's
registered function (:data:`.executor.FUNCTIONS`), the language's one implementation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from .executor import FUNCTIONS
from .metadata import ATTRIBUTES, Metadata
from .templates import ATTRIBUTE_TYPES, FILTER_FAMILY, RELATE_FAMILY, Template, TemplateError

__all__ = ["CompiledTemplate", "Recall", "Step", "bound_arithmetic", "compile_template"]

ATTRS: tuple[str, ...] = tuple(ATTRIBUTES)  # size, color, material, shape: filter key order
ATTR_INDEX = {a: i for i, a in enumerate(ATTRS)}
TYPE_ATTR_INDEX = {t: ATTR_INDEX[a] for t, a in ATTRIBUTE_TYPES.items()}
FILTER_FUNCTION = tuple(f"filter_{a}" for a in ATTRS)
NULL_KEY = (None,) * len(ATTRS)

# Step kinds and constraint-check codes.
SCENE, FILTER, RELATE, CHOOSE, SIDE, PLAIN = range(6)
NEQ, OUT_NEQ, OUT_RANGE, IS_NULL, NOT_NULL = range(5)


@dataclass
class Step:
    kind: int
    position: int
    function: str
    inputs: tuple[int, ...]
    suffix: str | None = None
    slots: tuple[tuple[int, str], ...] = ()  # (attribute index, param), side_inputs order
    free: tuple[tuple[int, str], ...] = ()  # slots whose param this step binds
    fixed: tuple[tuple[int, str], ...] = ()  # slots whose param an earlier step bound
    allowed: int = 0  # attribute bits a filter key may set
    required: int = 0  # attribute bits a filter key must set (NOT_NULL)
    rel_param: str | None = None
    rel_fixed: bool = False
    params: tuple[str, ...] = ()  # generic steps: params in declared side-input order
    param_fixed: tuple[bool, ...] = ()
    domains: tuple[tuple[Any, ...], ...] = ()
    allow_zero: bool = False
    bounds: tuple[int | None, int | None] = (None, None)  # OUT_RANGE folded into a choose domain
    sizes: tuple[int | None, int | None] = (None, None)  # OUT_RANGE folded into a filter's selections
    impl: Callable | None = None  # the registered function (choose, side-input and plain steps)
    run: Callable | None = None  # plain and scene steps: run(index, outputs), impl with its inputs bound
    reduce: Callable | None = None  # filter/relate steps: the registered unique/count/exist
    checks: tuple[tuple, ...] = ()
    # ``checks`` as one predicate test(outputs, choices, values) (None: nothing to check), made
    # once per template by _set_checks: the search calls it on every option it tries.
    test: Callable[[list, list, dict], bool] | None = None
    signature: tuple = ()

    @property
    def draws_empty_keys(self) -> bool:
        """Whether the options include empty filter keys: no ``unique`` after, ``sizes`` allow empty."""
        return self.kind == FILTER and self.suffix != "unique" and (self.sizes[0] is None or self.sizes[0] <= 0)


@dataclass
class CompiledTemplate:
    """A template compiled for the search: steps, answer domain and degeneracy targets."""

    template: Template
    steps: tuple[Step, ...]
    answer_domain: tuple[Any, ...]
    raw_relates: tuple[int, ...]
    param_types: dict[str, str]
    dependents: dict[int, tuple[int, ...]]  # raw relate -> later steps that use its output
    arithmetic: tuple[int, ...] = ()  # positions of the arithmetic nodes (Metadata.arithmetic)
    bound_at: dict[str, int] | None = None  # param -> the step that binds it
    # Per step, how the search recognises a failed subtree it has already explored there
    # (None: not worth it or not exact; see Recall and _recalls).
    recalls: tuple[Recall | None, ...] = ()


@dataclass(frozen=True)
class Recall:
    """What the steps from one position on read of the earlier ones. Two visits that agree on it
    explore the same subtree with as many draws; one that found nothing finds nothing again
    (while no question was accepted), so the search replays its cost instead.
    """

    outputs: tuple[int, ...]
    choices: tuple[int, ...]
    params: tuple[str, ...]
    key: Callable[[list, list, dict], tuple] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        pick_outputs, pick_choices, pick_params = (_picker(self.outputs), _picker(self.choices),
                                                   _picker(self.params))
        object.__setattr__(self, "key", lambda outputs, choices, values: (
            pick_outputs(outputs), pick_choices(choices), pick_params(values)))


def _picker(where: tuple) -> Callable[[Any], Any]:
    return itemgetter(*where) if where else (lambda source: None)


def compile_template(template: Template, metadata: Metadata) -> CompiledTemplate:
    """Compile a validated template into a search plan (once per template, not per scene).

    For example::

        compile_template(template, load_metadata()).steps[0].function
        # -> 'scene'
    """
    params = dict(template.params)
    nulls = {p for c in template.constraints if c.type == "NULL" for p in c.params}
    not_nulls = {p for c in template.constraints if c.type == "NOT_NULL" for p in c.params}
    bound_at: dict[str, int] = {}
    steps: list[Step] = []
    for node in template.nodes:
        k = node.index
        spec = metadata.functions[node.type]
        where = f"{template.where}: node {k} ({node.type})"
        if node.type in FILTER_FAMILY or node.type in RELATE_FAMILY:
            relate = node.type in RELATE_FAMILY
            slots, rel_param = [], None
            for p in node.side_inputs:
                if params[p] == "Relation":
                    rel_param = p
                else:
                    slots.append((TYPE_ATTR_INDEX[params[p]], p))
            allowed = sum(1 << a for a, p in slots if p not in nulls)
            required = sum(1 << a for a, p in slots if p in not_nulls and p not in bound_at)
            free = tuple((a, p) for a, p in slots if p not in bound_at)
            fixed = tuple((a, p) for a, p in slots if p in bound_at)
            suffix = (RELATE_FAMILY if relate else FILTER_FAMILY)[node.type]
            if suffix is not None and suffix not in FUNCTIONS:
                raise TemplateError(f"{where}: expands to {suffix!r}, which has no implementation")
            reduce = FUNCTIONS[suffix] if suffix is not None else None
            step = Step(
                kind=RELATE if relate else FILTER,
                position=k,
                function=node.type,
                inputs=node.inputs,
                suffix=suffix,
                slots=tuple(slots),
                free=free,
                fixed=fixed,
                allowed=allowed,
                required=required,
                rel_param=rel_param,
                rel_fixed=rel_param in bound_at if rel_param else False,
                reduce=reduce,
            )
            step.signature = (node.type, allowed, required, tuple(a for a, _ in fixed), step.rel_fixed)
        elif node.type == "scene":
            step = Step(kind=SCENE, position=k, function="scene", inputs=(), run=_whole_scene)
        else:
            impl = FUNCTIONS.get(node.type)
            if impl is None:
                raise TemplateError(f"{where}: declared in the metadata but has no implementation")
            by_type = {params[p]: p for p in node.side_inputs}
            ordered = tuple(by_type[t] for t in spec.side_inputs)
            if node.type == "choose":
                (p,) = ordered
                step = Step(
                    kind=CHOOSE, position=k, function="choose", inputs=node.inputs, params=ordered,
                    param_fixed=(p in bound_at,), allow_zero=node.allow_zero, impl=impl,
                )
            elif ordered:
                step = Step(
                    kind=SIDE, position=k, function=node.type, inputs=node.inputs, params=ordered,
                    param_fixed=tuple(p in bound_at for p in ordered),
                    domains=tuple(metadata.values(params[p]) for p in ordered), impl=impl,
                )
            else:
                step = Step(kind=PLAIN, position=k, function=node.type, inputs=node.inputs, impl=impl,
                            run=_bind_inputs(impl, node.inputs))
        for p in node.side_inputs:
            bound_at.setdefault(p, k)
        steps.append(step)

    _attach_checks(template, metadata, steps, bound_at)

    raw_relates = _intersected_relates(template)
    plan = CompiledTemplate(
        template=template,
        steps=tuple(steps),
        answer_domain=_answer_domain(template.answer_type, metadata),
        raw_relates=raw_relates,
        param_types=params,
        dependents={k: _dependents(template, k) for k in raw_relates},
        arithmetic=tuple(n.index for n in template.nodes if n.type in metadata.arithmetic),
        bound_at=bound_at,
    )
    plan.recalls = _recalls(plan)
    return plan


def _whole_scene(index, outputs) -> int:
    return index.all_mask  # every object of the scene


def _attach_checks(template: Template, metadata: Metadata, steps: list[Step], bound_at: dict[str, int]) -> None:
    """Give each step the constraints it can check first (where their last parameter or node is bound);
    ranges on a choose's X or a filter's selection narrow the step's options instead of rejecting them."""
    family_bound = {
        p for s in steps if s.kind in (FILTER, RELATE) for _, p in s.free
    }
    checks: list[list[tuple]] = [[] for _ in steps]
    set_outputs = {n.index for n in template.nodes if metadata.functions[n.type].output == "ObjectSet"}
    for c in template.constraints:
        if c.type == "NEQ":
            p1, p2 = c.params
            checks[max(bound_at[p1], bound_at[p2])].append((NEQ, p1, p2))
        elif c.type == "OUT_NEQ":
            i, j = c.nodes
            checks[max(i, j)].append((OUT_NEQ, i, j, c.allow_both_empty))
        elif c.type == "OUT_RANGE":
            (i,) = c.nodes
            checks[i].append((OUT_RANGE, i, c.min, c.max, i in set_outputs))
        else:
            # Filter and relate steps enforce NULL / NOT_NULL while listing their options.
            code = IS_NULL if c.type == "NULL" else NOT_NULL
            for p in c.params:
                if p not in family_bound:
                    checks[bound_at[p]].append((code, p))
    for step, found in zip(steps, checks):
        if step.kind == CHOOSE:
            # A range on the drawn X narrows its domain instead of rejecting draws one by one
            # (uniform over the narrowed domain = uniform draws conditioned on the range).
            step.bounds = _fold_ranges(found, step.position)
        elif step.kind == FILTER and step.suffix in (None, "count"):
            # Likewise a range on a filter's selection (its set, or its count) narrows its
            # options: empty keys are not offered where at least one object is required.
            step.sizes = _fold_ranges(found, step.position)
            step.signature += (step.sizes,)
        _set_checks(step, tuple(found), steps)


def _fold_ranges(found: list[tuple], position: int) -> tuple[int | None, int | None]:
    """Pop the OUT_RANGE checks of ``position`` from ``found``; their intersection ``(low, high)``."""
    low, high = None, None
    for chk in [c for c in found if c[0] == OUT_RANGE and c[1] == position]:
        found.remove(chk)
        low = chk[2] if low is None or (chk[2] is not None and chk[2] > low) else low
        high = chk[3] if high is None or (chk[3] is not None and chk[3] < high) else high
    return low, high


def bound_arithmetic(plan: CompiledTemplate, maximum: int) -> None:
    """Prune the search at every arithmetic result above ``maximum``, as soon as its node has run.

    For example::

        bound_arithmetic(plan, 10)
    """
    for k in plan.arithmetic:
        step = plan.steps[k]
        _set_checks(step, step.checks + ((OUT_RANGE, step.position, None, maximum, False),), plan.steps)
    plan.recalls = _recalls(plan)


def _set_checks(step: Step, checks: tuple[tuple, ...], steps: Sequence[Step]) -> None:
    """Set a step's constraint checks and the predicate that runs them."""
    step.checks = checks
    # Ranges on the same output (a template's and --bound_intermediate_counts') are one test.
    ranges: dict[tuple[int, bool], tuple[float, float]] = {}
    merged: list[tuple] = []
    for check in checks:
        if check[0] == OUT_RANGE:
            _, i, low, high, is_set = check
            if (i, is_set) not in ranges:
                merged.append((OUT_RANGE, i, is_set))
            old_low, old_high = ranges.get((i, is_set), (float("-inf"), float("inf")))
            ranges[(i, is_set)] = (max(old_low, float("-inf") if low is None else low),
                                   min(old_high, float("inf") if high is None else high))
        else:
            merged.append(check)
    tests = [_check_test((OUT_RANGE, c[1], *ranges[(c[1], c[2])], c[2]) if c[0] == OUT_RANGE else c, steps)
             for c in merged]
    if not tests:
        step.test = None
    elif len(tests) == 1:
        step.test = tests[0]
    elif len(tests) == 2:
        first, second = tests
        step.test = lambda outputs, choices, values: first(outputs, choices, values) and second(outputs, choices, values)
    else:
        def test(outputs: list, choices: list, values: dict) -> bool:
            for one in tests:
                if not one(outputs, choices, values):
                    return False
            return True

        step.test = test


def _step_reads(step: Step, steps: Sequence[Step]) -> tuple[set[int], set[int], set[str]]:
    """The outputs, choices and params a step and its checks read (its own included)."""
    outputs, choices = set(step.inputs), set()
    if step.kind in (FILTER, RELATE):
        params = {p for _, p in step.fixed} | ({step.rel_param} if step.rel_fixed else set())
    else:
        params = {p for p, fixed in zip(step.params, step.param_fixed) if fixed}
    for check in step.checks:
        code = check[0]
        if code == NEQ:
            params.update(check[1:3])
        elif code in (IS_NULL, NOT_NULL):
            params.add(check[1])
        elif code == OUT_RANGE:
            outputs.add(check[1])
        else:  # OUT_NEQ, which may compare the two choices and inputs (see _check_test)
            i, j = check[1], check[2]
            outputs.update((i, j, *steps[i].inputs[:1], *steps[j].inputs[:1]))
            choices.update((i, j))
    return outputs, choices, params


def _recalls(plan: CompiledTemplate) -> tuple[Recall | None, ...]:
    """Per position k, the :class:`Recall` from step k where one is exact and pays: step k-1 tries
    options, the subtree reads not all of what it binds, and it draws only to order options
    (no relate or empty-key filter: their number of draws varies). A plan checked for
    degeneracy reads everything at acceptance: none."""
    steps = plan.steps
    recalls: list[Recall | None] = [None] * len(steps)
    if plan.raw_relates or plan.bound_at is None:
        return tuple(recalls)
    outputs: set[int] = set()
    choices: set[int] = set()
    params: set[str] = set()
    exact = True
    for k in range(len(steps) - 1, 0, -1):
        step = steps[k]
        more = _step_reads(step, steps)
        outputs |= more[0]
        choices |= more[1]
        params |= more[2]
        exact = exact and step.kind != RELATE and not step.draws_empty_keys
        before = steps[k - 1]
        binds = {p for p, at in plan.bound_at.items() if at == k - 1}
        if (not exact or before.kind in (SCENE, PLAIN) or k - 1 in outputs or k - 1 in choices
                or (binds and binds <= params)):
            continue
        recalls[k] = Recall(
            outputs=tuple(sorted(i for i in outputs if i < k)),
            choices=tuple(sorted(i for i in choices if i < k)),
            params=tuple(sorted(p for p in params if plan.bound_at[p] < k)),
        )
    return tuple(recalls)


def _check_test(check: tuple, steps: Sequence[Step]) -> Callable[[list, list, dict], bool]:
    """One check as a predicate on the search state: True when the state passes."""
    code = check[0]
    if code == NEQ:
        _, p1, p2 = check
        return lambda outputs, choices, values: values[p1] != values[p2]
    if code == IS_NULL:
        p = check[1]
        return lambda outputs, choices, values: values[p] is None
    if code == NOT_NULL:
        p = check[1]
        return lambda outputs, choices, values: values[p] is not None
    if code == OUT_RANGE:
        _, i, low, high, is_set = check
        low = float("-inf") if low is None else low
        high = float("inf") if high is None else high
        if is_set:
            return lambda outputs, choices, values: low <= outputs[i].bit_count() <= high
        return lambda outputs, choices, values: low <= outputs[i] <= high
    _, i, j, allow_both_empty = check  # OUT_NEQ
    a, b = steps[i], steps[j]
    if not (allow_both_empty and a.kind in (FILTER, RELATE) and b.kind in (FILTER, RELATE)):
        return lambda outputs, choices, values: outputs[i] != outputs[j]
    # Two empty selections may be equal when they come from different descriptions (values,
    # relation or anchor), so that "red cubes or red cubes" is never asked but "red cubes or
    # blue spheres", both absent, is.
    ai, bi = a.inputs[0], b.inputs[0]
    return lambda outputs, choices, values: outputs[i] != outputs[j] or (
        outputs[i] == 0 and (choices[i][:-1] != choices[j][:-1] or outputs[ai] != outputs[bi]))


def _intersected_relates(template: Template) -> tuple[int, ...]:
    """Raw ``relate`` nodes subject to the degeneracy check: those not feeding a ``union`` (its
    branches are kept apart by OUT_NEQ; "every object" would make every "yes" degenerate)."""
    feeds_union = {i for n in template.nodes if n.type == "union" for i in n.inputs}
    return tuple(n.index for n in template.nodes if n.type == "relate" and n.index not in feeds_union)


def _dependents(template: Template, source: int) -> tuple[int, ...]:
    """Nodes after ``source`` whose output depends on it, in order."""
    tainted = {source}
    for node in template.nodes[source + 1 :]:
        if tainted.intersection(node.inputs):
            tainted.add(node.index)
    return tuple(sorted(tainted - {source}))


def _bind_inputs(impl: Callable, inputs: tuple[int, ...]) -> Callable:
    """``run(index, outputs)``: ``impl`` on the outputs at ``inputs`` (bound once: no list per call)."""
    if len(inputs) == 1:
        (i,) = inputs
        return lambda index, out: impl(index, (out[i],), ())
    if len(inputs) == 2:
        a, b = inputs
        return lambda index, out: impl(index, (out[a], out[b]), ())
    return lambda index, out: impl(index, tuple([out[j] for j in inputs]), ())


def _answer_domain(answer_type: str, metadata: Metadata) -> tuple[Any, ...]:
    if answer_type == "Bool":
        return (True, False)
    if answer_type == "Integer":
        return tuple(range(11))
    return metadata.values(answer_type)
