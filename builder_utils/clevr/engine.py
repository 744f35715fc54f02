"""Instantiating one template on one scene: a depth-first search over object bitmasks.

Each template is compiled once into a plan (:class:`CompiledTemplate`): one step per template
node, with its params bound by type, the constraints that become checkable after it, and for
template-only nodes (``filter_unique``, ``relate_filter_count`` ...) the rules that enumerate
their filter options. The search then walks the steps in order, trying options in a random
order drawn from the scene's generator, pruning a partial state as soon as a ``unique`` sees
other than one object or a constraint fails, and accepting a complete state when the answer
balancer and the degeneracy check agree. Every option tried counts against a per-template
budget, so a template that cannot be satisfied on a scene costs a bounded amount of work.

Options come from the attribute combinations present among the node's *declared* input
objects (for relate nodes, among the scene's objects related to the input object), plus for
``count``/``exist``/``filter`` nodes a few combinations that match nothing, drawn eagerly, so
that 0 and "no" answers occur.

>>> from builder_utils.clevr.metadata import load_metadata
>>> plan = compile_template(template, load_metadata())        # doctest: +SKIP
>>> found = search(plan, SceneData(index), rng, balancer)      # doctest: +SKIP
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .executor import FUNCTIONS, InvalidProgram, SceneIndex
from .metadata import ATTRIBUTES, Metadata
from .templates import ATTRIBUTE_TYPES, FILTER_FAMILY, RELATE_FAMILY, Template, TemplateError

__all__ = [
    "ARITHMETIC_FUNCTIONS",
    "CompiledTemplate",
    "Instance",
    "SceneData",
    "SearchStats",
    "compile_template",
    "search",
]

ATTRS: tuple[str, ...] = tuple(ATTRIBUTES)  # size, color, material, shape: filter key order
_ATTR_INDEX = {a: i for i, a in enumerate(ATTRS)}
_TYPE_ATTR_INDEX = {t: _ATTR_INDEX[a] for t, a in ATTRIBUTE_TYPES.items()}
_FILTER_FUNCTION = tuple(f"filter_{a}" for a in ATTRS)
_NULL_KEY = (None,) * len(ATTRS)
ARITHMETIC_FUNCTIONS = frozenset({"addition", "subtraction"})
# Share of "trivial" relate options (the relation does not narrow the filter) kept, as in
# the reference generator.
_TRIVIAL_FRACTION = 0.1

_SCENE, _FILTER, _RELATE, _CHOOSE, _SIDE, _PLAIN = range(6)
_NEQ, _OUT_NEQ, _OUT_RANGE, _IS_NULL, _NOT_NULL = range(5)


class _Invalid(Exception):
    """A step has no valid output on this state (internal to the search)."""


@dataclass
class _Step:
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
    impl: Callable | None = None
    fast: Callable | None = None  # fast(index, outputs) for common plain functions
    checks: tuple[tuple, ...] = ()
    signature: tuple = ()


@dataclass
class CompiledTemplate:
    """A template compiled for the search: steps, answer domain and degeneracy targets.

    >>> plan = compile_template(template, load_metadata())     # doctest: +SKIP
    >>> plan.template.key                                       # doctest: +SKIP
    'zero_hop:0'
    """

    template: Template
    steps: tuple[_Step, ...]
    answer_domain: tuple[Any, ...]
    raw_relates: tuple[int, ...]
    param_types: dict[str, str]
    dependents: dict[int, tuple[int, ...]]  # raw relate -> later steps that use its output


@dataclass
class Instance:
    """One accepted instantiation: raw node outputs, per-node choices, param values."""

    outputs: list[Any]
    choices: list[Any]
    values: dict[str, Any]

    @property
    def answer(self) -> Any:
        return self.outputs[-1]


@dataclass
class SearchStats:
    """Work done by one search: ``states`` tried, whether the budget ran out."""

    states: int = 0
    exhausted_budget: bool = False


class SceneData:
    """A :class:`SceneIndex` plus the per-scene caches of the search (filter keys present in
    the scene, option lists per node signature and input). Build one per scene; it is shared
    by every template tried on that scene and dropped afterwards, so nothing leaks into
    output.

    >>> data = SceneData(SceneIndex(scene))                    # doctest: +SKIP
    """

    __slots__ = ("index", "relations", "_by_support", "_keys", "_filters", "_relates", "_key_masks")

    def __init__(self, index: SceneIndex, relations: Sequence[str]):
        self.index = index
        self.relations = tuple(relations)
        by_support: list[dict[tuple, int]] = [{} for _ in range(1 << len(ATTRS))]
        for i, obj in enumerate(index.objects):
            bit = 1 << i
            full = tuple(obj[a] for a in ATTRS)
            for support in range(1 << len(ATTRS)):
                key = tuple(v if support >> a & 1 else None for a, v in enumerate(full))
                table = by_support[support]
                table[key] = table.get(key, 0) | bit
        self._by_support = by_support
        self._keys: dict[tuple[int, int], list[tuple[tuple, int]]] = {}
        self._filters: dict[tuple, tuple] = {}
        self._relates: dict[tuple, tuple] = {}
        self._key_masks = {key: mask for table in by_support for key, mask in table.items()}

    def keys(self, allowed: int, required: int) -> list[tuple[tuple, int]]:
        """Filter keys present in the scene using only ``allowed`` attributes and all of the
        ``required`` ones, with the mask of the objects each selects."""
        cached = self._keys.get((allowed, required))
        if cached is None:
            cached = []
            for support, table in enumerate(self._by_support):
                if support & ~allowed == 0 and support & required == required:
                    cached.extend(table.items())
            self._keys[(allowed, required)] = cached
        return cached

    def key_mask(self, key: tuple) -> int:
        """Objects of the scene matching a filter key (0 if the combination is absent)."""
        return self._key_masks.get(key, 0)


def compile_template(template: Template, metadata: Metadata) -> CompiledTemplate:
    """Compile a validated template into a search plan (once per template, not per scene).

    >>> compile_template(template, load_metadata()).steps[0].function   # doctest: +SKIP
    'scene'
    """
    params = dict(template.params)
    nulls = {p for c in template.constraints if c.type == "NULL" for p in c.params}
    not_nulls = {p for c in template.constraints if c.type == "NOT_NULL" for p in c.params}
    bound_at: dict[str, int] = {}
    steps: list[_Step] = []
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
                    slots.append((_TYPE_ATTR_INDEX[params[p]], p))
            allowed = sum(1 << a for a, p in slots if p not in nulls)
            required = sum(1 << a for a, p in slots if p in not_nulls and p not in bound_at)
            free = tuple((a, p) for a, p in slots if p not in bound_at)
            fixed = tuple((a, p) for a, p in slots if p in bound_at)
            suffix = (RELATE_FAMILY if relate else FILTER_FAMILY)[node.type]
            for name in (suffix,) if suffix else ():
                if name not in FUNCTIONS:
                    raise TemplateError(f"{where}: expands to {name!r}, which has no implementation")
            step = _Step(
                kind=_RELATE if relate else _FILTER,
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
            )
            step.signature = (node.type, allowed, required, tuple(a for a, _ in fixed), step.rel_fixed)
        elif node.type == "scene":
            step = _Step(kind=_SCENE, position=k, function="scene", inputs=())
        else:
            impl = FUNCTIONS.get(node.type)
            if impl is None:
                raise TemplateError(f"{where}: declared in the metadata but has no implementation")
            by_type = {params[p]: p for p in node.side_inputs}
            ordered = tuple(by_type[t] for t in spec.side_inputs)
            if node.type == "choose":
                (p,) = ordered
                step = _Step(
                    kind=_CHOOSE, position=k, function="choose", inputs=node.inputs, params=ordered,
                    param_fixed=(p in bound_at,), allow_zero=node.allow_zero, impl=impl,
                )
            elif ordered:
                step = _Step(
                    kind=_SIDE, position=k, function=node.type, inputs=node.inputs, params=ordered,
                    param_fixed=tuple(p in bound_at for p in ordered),
                    domains=tuple(metadata.values(params[p]) for p in ordered), impl=impl,
                )
            else:
                step = _Step(kind=_PLAIN, position=k, function=node.type, inputs=node.inputs, impl=impl,
                             fast=_fast_plain(node.type, node.inputs))
        for p in node.side_inputs:
            bound_at.setdefault(p, k)
        steps.append(step)

    family_bound = {
        p for s in steps if s.kind in (_FILTER, _RELATE) for _, p in s.free
    }
    checks: list[list[tuple]] = [[] for _ in steps]
    set_outputs = {n.index for n in template.nodes if metadata.functions[n.type].output == "ObjectSet"}
    for c in template.constraints:
        if c.type == "NEQ":
            p1, p2 = c.params
            checks[max(bound_at[p1], bound_at[p2])].append((_NEQ, p1, p2))
        elif c.type == "OUT_NEQ":
            i, j = c.nodes
            checks[max(i, j)].append((_OUT_NEQ, i, j))
        elif c.type == "OUT_RANGE":
            (i,) = c.nodes
            checks[i].append((_OUT_RANGE, i, c.min, c.max, i in set_outputs))
        else:
            # Filter and relate steps enforce NULL / NOT_NULL while listing their options.
            code = _IS_NULL if c.type == "NULL" else _NOT_NULL
            for p in c.params:
                if p not in family_bound:
                    checks[bound_at[p]].append((code, p))
    for step, found in zip(steps, checks):
        step.checks = tuple(found)

    return CompiledTemplate(
        template=template,
        steps=tuple(steps),
        answer_domain=_answer_domain(template.answer_type, metadata),
        raw_relates=_intersected_relates(template),
        param_types=params,
        dependents={k: _dependents(template, k) for k in _intersected_relates(template)},
    )


def _intersected_relates(template: Template) -> tuple[int, ...]:
    """Raw ``relate`` nodes subject to the degeneracy check: those not feeding a ``union``.

    Dropping one branch of a union cannot be modelled by "every object" (that would make
    every "yes" degenerate), and its two branches are kept apart by OUT_NEQ instead.
    """
    feeds_union = {i for n in template.nodes if n.type == "union" for i in n.inputs}
    return tuple(n.index for n in template.nodes if n.type == "relate" and n.index not in feeds_union)


def _dependents(template: Template, source: int) -> tuple[int, ...]:
    """Nodes after ``source`` whose output depends on it, in order."""
    tainted = {source}
    for node in template.nodes[source + 1 :]:
        if tainted.intersection(node.inputs):
            tainted.add(node.index)
    return tuple(sorted(tainted - {source}))


def _fast_plain(function: str, inputs: tuple[int, ...]) -> Callable | None:
    """A direct implementation of a common side-input-free function on raw values, with its
    input positions bound; ``None`` for others (they run through the executor's registry,
    which stays the reference: the tests re-execute every generated program with it)."""
    if len(inputs) == 1:
        (i,) = inputs
        if function == "count":
            return lambda index, out: out[i].bit_count()
        if function == "exist":
            return lambda index, out: out[i] != 0
        if function == "unique":
            return lambda index, out: _finish("unique", out[i])
        if function.startswith("query_") and function[6:] in _ATTR_INDEX:
            attr = function[6:]
            return lambda index, out: index.objects[out[i]][attr]
        if function.startswith("same_") and function[5:] in _ATTR_INDEX:
            attr = function[5:]
            return lambda index, out: index.attribute_masks[attr][index.objects[out[i]][attr]] & ~(1 << out[i])
        return None
    if len(inputs) == 2:
        a, b = inputs
        if function == "union":
            return lambda index, out: out[a] | out[b]
        if function == "intersect":
            return lambda index, out: out[a] & out[b]
        if function.startswith("equal_"):
            return lambda index, out: out[a] == out[b]
        if function == "less_than":
            return lambda index, out: out[a] < out[b]
        if function == "greater_than":
            return lambda index, out: out[a] > out[b]
        if function == "addition":
            return lambda index, out: out[a] + out[b]
        if function == "subtraction":
            return lambda index, out: _nonnegative(out[a] - out[b])
    return None


def _nonnegative(value: int) -> int:
    if value < 0:
        raise _Invalid
    return value


def _answer_domain(answer_type: str, metadata: Metadata) -> tuple[Any, ...]:
    if answer_type == "Bool":
        return (True, False)
    if answer_type == "Integer":
        return tuple(range(11))
    return metadata.values(answer_type)


def _shuffled(items: Sequence[Any], rng: random.Random) -> Iterator[Any]:
    """Items in a uniformly random order, drawn lazily: a search that succeeds on its first
    options pays for a few draws instead of a full shuffle."""
    a = list(items)
    n = len(a)
    rand = rng.random
    for i in range(n):
        j = i + int(rand() * (n - i))
        a[i], a[j] = a[j], a[i]
        yield a[i]


def _filter_options(step: _Step, data: SceneData, mask: int, values: dict) -> tuple[list, "_EmptyKeys | None"]:
    """The options of a filter-family step on input ``mask``: ``(key, selected)`` pairs for
    the combinations present, plus (for count/exist/filter) ``None`` placeholders that stand
    for combinations matching nothing, drawn from the returned :class:`_EmptyKeys` when the
    shuffled iteration reaches them (most searches stop after a few options)."""
    fixed_values = tuple(values[p] for _, p in step.fixed)
    cache_key = (step.signature, mask, fixed_values)
    cached = data._filters.get(cache_key)
    if cached is None:
        options, present, singles = [], set(), 0
        unique = step.suffix == "unique"
        drop_null = step.function == "filter"
        for key, key_mask in data.keys(step.allowed, step.required):
            if fixed_values and any(key[a] != v for (a, _), v in zip(step.fixed, fixed_values)):
                continue
            selected = key_mask & mask
            if not selected:
                continue
            present.add(key)
            single = not selected & (selected - 1)
            singles += single
            if (unique and not single) or (drop_null and key == _NULL_KEY):
                continue
            options.append((key, selected))
        extra = 0
        domains = None
        if not unique:
            extra = len(options) if step.suffix == "exist" else singles
            domains = _key_domains(step, data, fixed_values)
            room = 1
            for d in domains:
                room *= len(d)
            extra = max(0, min(extra, room - len(present) - (drop_null and _NULL_KEY not in present)))
        cached = (options + [None] * extra, frozenset(present), domains)
        data._filters[cache_key] = cached
    options, present, domains = cached
    if domains is None or not options or options[-1] is not None:
        return options, None
    return options, _EmptyKeys(domains, present, step.function == "filter")


def _key_domains(step: _Step, data: SceneData, fixed_values: tuple) -> tuple[tuple, ...]:
    """Per attribute, the values a filter key of this step may take (null included)."""
    fixed = {a: v for (a, _), v in zip(step.fixed, fixed_values)}
    domains = []
    for a, attr in enumerate(ATTRS):
        if a in fixed:
            domains.append((fixed[a],))
        elif step.allowed >> a & 1:
            vals = tuple(data.index.attribute_masks[attr])
            domains.append(vals if step.required >> a & 1 else vals + (None,))
        else:
            domains.append((None,))
    return tuple(domains)


class _EmptyKeys:
    """Draws distinct filter keys that match none of the input objects, each attribute
    uniformly among its values and null (as the reference generator intended)."""

    __slots__ = ("domains", "present", "drop_null", "seen")

    def __init__(self, domains: tuple, present: frozenset, drop_null: bool):
        self.domains = domains
        self.present = present
        self.drop_null = drop_null
        self.seen: set = set()

    def draw(self, rng: random.Random):
        """A fresh empty ``(key, 0)`` option, or ``None`` if none turned up in 64 draws."""
        rand = rng.random
        for _ in range(64):
            key = tuple([d[int(rand() * len(d))] for d in self.domains])
            if key in self.present or key in self.seen or (self.drop_null and key == _NULL_KEY):
                continue
            self.seen.add(key)
            return key, 0
        return None


def _relate_options(step: _Step, data: SceneData, obj: int, values: dict, rng: random.Random) -> list:
    fixed_values = tuple(values[p] for _, p in step.fixed)
    rel_value = values[step.rel_param] if step.rel_fixed else None
    cache_key = (step.signature, obj, fixed_values, rel_value)
    cached = data._relates.get(cache_key)
    if cached is None:
        unique = step.suffix == "unique"
        include_zero = step.suffix in ("count", "exist")
        keys = [
            (key, key_mask)
            for key, key_mask in data.keys(step.allowed, step.required)
            if not fixed_values or all(key[a] == v for (a, _), v in zip(step.fixed, fixed_values))
        ]
        nontrivial, trivial = [], []
        rel_masks = data.index.relation_masks
        for rel in (rel_value,) if step.rel_fixed else data.relations:
            related = rel_masks[rel][obj]
            for key, key_mask in keys:
                selected = related & key_mask
                if unique:
                    if not selected or selected & (selected - 1):
                        continue
                elif not selected and not include_zero:
                    continue
                (trivial if selected == key_mask else nontrivial).append((rel, key, selected))
        cached = (nontrivial, trivial)
        data._relates[cache_key] = cached
    nontrivial, trivial = cached
    keep = int(round(len(nontrivial) * _TRIVIAL_FRACTION / (1 - _TRIVIAL_FRACTION)))
    if keep and trivial:
        chosen = []
        for option in _shuffled(trivial, rng):
            chosen.append(option)
            if len(chosen) == keep:
                break
        return nontrivial + chosen
    return nontrivial


def _finish(suffix: str | None, selected: int) -> Any:
    if suffix is None:
        return selected
    if suffix == "unique":
        if not selected or selected & (selected - 1):
            raise _Invalid
        return selected.bit_length() - 1
    if suffix == "count":
        return selected.bit_count()
    return selected != 0


def _run_impl(step: _Step, index: SceneIndex, outputs: Sequence[Any], values: tuple) -> Any:
    try:
        return step.impl(index, [outputs[i] for i in step.inputs], values)
    except InvalidProgram:
        raise _Invalid from None


def search(
    plan: CompiledTemplate,
    data: SceneData,
    rng: random.Random,
    admissible: Callable[[Any], bool],
    on_accept: Callable[[Instance], None] | None = None,
    *,
    max_instances: int = 1,
    budget: int = 5000,
    stats: SearchStats | None = None,
) -> list[Instance]:
    """Find up to ``max_instances`` instantiations of ``plan`` on a scene.

    A complete, valid state is accepted when ``admissible(answer)`` (answer balancing,
    answer range) holds and the question is not degenerate; ``on_accept(instance)`` then runs
    at once, so that the next candidate already sees the updated answer counts. The search
    stops after ``budget`` options tried.

    >>> found = search(plan, data, random.Random(0), lambda answer: True)   # doctest: +SKIP
    """
    steps = plan.steps
    n = len(steps)
    index = data.index
    outputs: list[Any] = [None] * n
    choices: list[Any] = [None] * n
    values: dict[str, Any] = {}
    found: list[Instance] = []
    remaining = [budget]
    relations = plan.raw_relates

    def check(step: _Step) -> bool:
        for chk in step.checks:
            code = chk[0]
            if code == _NEQ:
                if values[chk[1]] == values[chk[2]]:
                    return False
            elif code == _OUT_NEQ:
                if outputs[chk[1]] == outputs[chk[2]]:
                    return False
            elif code == _OUT_RANGE:
                value = outputs[chk[1]]
                if chk[4]:
                    value = value.bit_count()
                if (chk[2] is not None and value < chk[2]) or (chk[3] is not None and value > chk[3]):
                    return False
            elif code == _IS_NULL:
                if values[chk[1]] is not None:
                    return False
            elif values[chk[1]] is None:
                return False
        return True

    def leaf() -> bool:
        if not admissible(outputs[-1]):
            return False
        if relations and _degenerate(plan, data, outputs, choices):
            return False
        instance = Instance(list(outputs), list(choices), dict(values))
        found.append(instance)
        if on_accept is not None:
            on_accept(instance)
        return len(found) >= max_instances

    def visit(k: int) -> bool:
        """Try the options of step ``k``; True means stop the whole search."""
        if k == n:
            return leaf()
        step = steps[k]
        kind = step.kind
        if kind == _FILTER or kind == _RELATE:
            empties = None
            if kind == _FILTER:
                options, empties = _filter_options(step, data, outputs[step.inputs[0]], values)
            else:
                options = _relate_options(step, data, outputs[step.inputs[0]], values, rng)
            suffix, free, rel_param = step.suffix, step.free, step.rel_param
            for option in _shuffled(options, rng):
                remaining[0] -= 1
                if remaining[0] < 0:
                    return True
                if option is None:
                    option = empties.draw(rng)
                    if option is None:
                        continue
                if kind == _RELATE:
                    rel, key, selected = option
                    values[rel_param] = rel
                else:
                    key, selected = option
                for a, p in free:
                    values[p] = key[a]
                try:
                    outputs[k] = _finish(suffix, selected)
                except _Invalid:
                    continue
                choices[k] = option
                if check(step) and visit(k + 1):
                    return True
            return False
        if kind == _SCENE or kind == _PLAIN:
            remaining[0] -= 1
            if remaining[0] < 0:
                return True
            if kind == _SCENE:
                outputs[k] = index.all_mask
            else:
                try:
                    fast = step.fast
                    outputs[k] = fast(index, outputs) if fast is not None else _run_impl(step, index, outputs, ())
                except _Invalid:
                    return False
            return check(step) and visit(k + 1)
        if kind == _CHOOSE:
            (p,) = step.params
            available = outputs[step.inputs[0]].bit_count()
            low = 0 if step.allow_zero else 1
            if step.param_fixed[0]:
                domain = [values[p]] if low <= values[p] <= available else []
            else:
                domain = range(low, available + 1)
            for x in _shuffled(domain, rng):
                remaining[0] -= 1
                if remaining[0] < 0:
                    return True
                values[p] = x
                outputs[k] = x
                choices[k] = x
                if check(step) and visit(k + 1):
                    return True
            return False
        # A function with side inputs: its params range over their types' values.
        domains = [
            (values[p],) if fixed else domain
            for p, fixed, domain in zip(step.params, step.param_fixed, step.domains)
        ]
        combos = domains[0] if len(domains) == 1 else _product(domains)
        for combo in _shuffled(combos, rng):
            remaining[0] -= 1
            if remaining[0] < 0:
                return True
            combo = (combo,) if len(domains) == 1 else combo
            for p, v in zip(step.params, combo):
                values[p] = v
            try:
                outputs[k] = _run_impl(step, index, outputs, tuple(str(v) for v in combo))
            except _Invalid:
                continue
            choices[k] = combo
            if check(step) and visit(k + 1):
                return True
        return False

    visit(0)
    if stats is not None:
        stats.states += budget - remaining[0] if remaining[0] >= 0 else budget
        stats.exhausted_budget = remaining[0] < 0
    return found


def _product(domains: Sequence[Sequence[Any]]) -> list[tuple]:
    combos: list[tuple] = [()]
    for domain in domains:
        combos = [c + (v,) for c in combos for v in domain]
    return combos


def _degenerate(plan: CompiledTemplate, data: SceneData, outputs: list, choices: list) -> bool:
    """True when a raw ``relate`` that narrows an intersection does not matter: with its
    output replaced by the whole scene, the answer is unchanged and so is the object set the
    final count/exist reduces (for exist, "yes" alone would make every yes degenerate)."""
    final = plan.steps[-1]
    before = _reduced_set(final, outputs, choices)
    for position in plan.raw_relates:
        result = _reevaluate(plan, data, outputs, choices, position, data.index.all_mask)
        if result is not None and result[0] == outputs[-1] and result[1] == before:
            return True
    return False


def _reduced_set(step: _Step, outputs: list, choices: list) -> int | None:
    """The object set a final count/exist node reduces to its answer (``None`` otherwise)."""
    if step.kind in (_FILTER, _RELATE) and step.suffix in ("count", "exist"):
        return choices[step.position][-1]
    if step.function in ("count", "exist"):
        return outputs[step.inputs[0]]
    return None


def _reevaluate(plan: CompiledTemplate, data: SceneData, outputs: list, choices: list, start: int, override: Any):
    """``(answer, reduced set)`` when node ``start`` outputs ``override`` and every later
    node keeps its chosen params; ``None`` if the program then has no answer."""
    index = data.index
    new = list(outputs)
    new_choices = list(choices)
    new[start] = override
    steps = plan.steps
    try:
        for k in plan.dependents[start]:
            step = steps[k]
            kind, choice = step.kind, choices[k]
            if kind == _SCENE:
                new[k] = index.all_mask
            elif kind == _FILTER:
                key = choice[0]
                selected = new[step.inputs[0]] & _key_mask(data, key)
                new_choices[k] = (key, selected)
                new[k] = _finish(step.suffix, selected)
            elif kind == _RELATE:
                rel, key = choice[0], choice[1]
                selected = index.relation_masks[rel][new[step.inputs[0]]] & _key_mask(data, key)
                new_choices[k] = (rel, key, selected)
                new[k] = _finish(step.suffix, selected)
            elif kind == _CHOOSE:
                available = new[step.inputs[0]].bit_count()
                if not (0 if step.allow_zero else 1) <= choice <= available:
                    raise _Invalid
                new[k] = choice
            elif kind == _SIDE:
                new[k] = _run_impl(step, index, new, tuple(str(v) for v in choice))
            elif step.fast is not None:
                new[k] = step.fast(index, new)
            else:
                new[k] = _run_impl(step, index, new, ())
    except _Invalid:
        return None
    return new[-1], _reduced_set(plan.steps[-1], new, new_choices)


def _key_mask(data: SceneData, key: tuple) -> int:
    """Objects matching a key; a key absent from the scene matches nothing except that the
    all-null key matches every object."""
    if key == _NULL_KEY:
        return data.index.all_mask
    return data.key_mask(key)


def expand_program(plan: CompiledTemplate, instance: Instance) -> list[dict[str, Any]]:
    """The released-form program of an instance: template-only nodes expanded into
    ``filter_*`` chains (non-null values, in the node's side-input order) and their final
    ``relate``/``unique``/``count``/``exist``.

    >>> expand_program(plan, instance)[0]                       # doctest: +SKIP
    {'function': 'scene', 'inputs': [], 'value_inputs': []}
    """
    program: list[dict[str, Any]] = []
    position: list[int] = []
    for step, choice in zip(plan.steps, instance.choices):
        kind = step.kind
        if kind == _FILTER or kind == _RELATE:
            cur = position[step.inputs[0]]
            if kind == _RELATE:
                rel, key = choice[0], choice[1]
                program.append({"function": "relate", "inputs": [cur], "value_inputs": [rel]})
                cur = len(program) - 1
            else:
                key = choice[0]
            for a, _ in step.slots:
                if key[a] is not None:
                    program.append({"function": _FILTER_FUNCTION[a], "inputs": [cur], "value_inputs": [key[a]]})
                    cur = len(program) - 1
            if step.suffix:
                program.append({"function": step.suffix, "inputs": [cur], "value_inputs": []})
                cur = len(program) - 1
            position.append(cur)
            continue
        if kind == _CHOOSE:
            value_inputs = [str(choice)]
        elif kind == _SIDE:
            value_inputs = [str(v) for v in choice]
        else:
            value_inputs = []
        program.append(
            {"function": step.function, "inputs": [position[i] for i in step.inputs], "value_inputs": value_inputs}
        )
        position.append(len(program) - 1)
    return program


def selected_sets(plan: CompiledTemplate, instance: Instance) -> list[int | None]:
    """Per template node, the object set a filter or relate node matched (else ``None``)."""
    return [
        choice[-1] if step.kind in (_FILTER, _RELATE) else None
        for step, choice in zip(plan.steps, instance.choices)
    ]
