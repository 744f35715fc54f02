"""Instantiating one template on one scene: a depth-first search over object bitmasks.

A state is pruned as soon as it fails; every option tried counts against a per-template
budget, so a template a scene cannot satisfy costs bounded work.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from .executor import InvalidProgram, SceneIndex
from .choices import SceneData, filter_choices, relate_choices
from .plan import CHOOSE, FILTER, PLAIN, RELATE, SCENE, SIDE, CompiledTemplate, Step

__all__ = ["Instance", "SearchStats", "search"]


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
    """Work done by one search (``replayed``: states not explored again, see :class:`~.plan.Recall`)."""

    states: int = 0
    exhausted_budget: bool = False
    replayed: int = 0


def _run_impl(step: Step, index: SceneIndex, outputs: Sequence[Any], values: tuple) -> Any:
    return step.impl(index, tuple([outputs[i] for i in step.inputs]), values)


def search(
    plan: CompiledTemplate,
    data: SceneData,
    rng: random.Random,
    admissible: Callable[[Any], bool],
    on_accept: Callable[[Instance], bool | None] | None = None,
    *,
    max_instances: int = 1,
    budget: int = 5000,
    stats: SearchStats | None = None,
    replay: bool = True,
) -> list[Instance]:
    """Find up to ``max_instances`` instantiations of ``plan`` on a scene.

    ``on_accept`` runs at once, so the next candidate sees the updated answer counts; when it
    returns False the instance is refused and the search goes on. A failed
    subtree met again is replayed (``replay=False``, the tests' reference, explores it): the same
    result, provided ``admissible`` keeps its verdict until the next acceptance (as balancing does).

    For example::

        found = search(plan, data, random.Random(0), lambda answer: True)
    """
    found, remaining, replayed = _depth_first(plan, data, rng, admissible, on_accept, max_instances, budget, replay)
    if stats is not None:
        stats.states += budget - remaining if remaining >= 0 else budget
        stats.exhausted_budget = remaining < 0
        stats.replayed += replayed
    return found


def _step_pool(step: Step, kind: int, data: SceneData, outputs: list, values: dict, rng: random.Random):
    """The options step ``step`` tries: ``(pool, empties, single)``; ``empties`` draws a filter's empty
    selection, ``single`` says a side-input step has one param. The caller draws their order with
    :func:`~.choices.shuffled` written inline (the same draws of ``rng.random()`` at the same moments:
    one before each option, none after the last one taken), which spares a generator frame per option."""
    if kind == FILTER:
        options, empties = filter_choices(step, data, outputs[step.inputs[0]], values)
        return list(options), empties, False
    if kind == RELATE:
        return list(relate_choices(step, data, outputs[step.inputs[0]], values, rng)), None, False
    if kind == CHOOSE:
        (p,) = step.params
        available = outputs[step.inputs[0]].bit_count()
        low = 0 if step.allow_zero else 1
        if step.bounds[0] is not None and step.bounds[0] > low:
            low = step.bounds[0]
        if step.bounds[1] is not None and step.bounds[1] < available:
            available = step.bounds[1]
        if step.param_fixed[0]:
            return ([values[p]] if low <= values[p] <= available else []), None, False
        return list(range(low, available + 1)), None, False
    # A function with side inputs: its params range over their types' values.
    domains = [(values[p],) if fixed else domain
               for p, fixed, domain in zip(step.params, step.param_fixed, step.domains)]
    single = len(domains) == 1
    return (list(domains[0]) if single else _product(domains)), None, single


def _depth_first(plan: CompiledTemplate, data: SceneData, rng: random.Random, admissible: Callable[[Any], bool],
                 on_accept, max_instances: int, budget: int, replay: bool) -> tuple[list[Instance], int, int]:
    """:func:`search`'s work: ``(found, budget left (negative: exhausted), options replayed)``."""
    steps = plan.steps
    n = len(steps)
    index = data.index
    outputs: list[Any] = [None] * n
    choices: list[Any] = [None] * n
    values: dict[str, Any] = {}
    found: list[Instance] = []
    remaining = budget
    # The search runs millions of times per dataset: the hot names are bound locally once.
    rand = rng.random
    # Subtrees that found nothing, by (position, what they read): their cost in options tried
    # and in those of plain steps (which draw nothing). Valid until a question is accepted.
    failed: dict[tuple, tuple[int, int]] = {}
    plains = replayed = 0
    recalls = (plan.recalls if replay else ()) or (None,) * n

    def recall(k: int) -> bool:
        """Visit step ``k``, or replay a failed subtree (its cost and draws taken) as if explored again."""
        nonlocal remaining, plains, replayed
        key = (k, recalls[k].key(outputs, choices, values))
        cost = failed.get(key)
        if cost is not None and cost[0] <= remaining:
            remaining -= cost[0]
            plains += cost[1]
            replayed += cost[0]
            for _ in repeat(None, cost[0] - cost[1]):
                rand()
            return False
        before, before_plains, before_found = remaining, plains, len(found)
        if visit(k):
            return True
        if len(found) == before_found:
            failed[key] = (before - remaining, plains - before_plains)
        return False

    def visit(k: int) -> bool:
        """Try the options of step ``k``; True means stop the whole search."""
        nonlocal remaining, plains
        if k == n:  # a complete state
            instance = _complete(plan, data, outputs, choices, values, admissible, on_accept)
            if instance is None:
                return False
            found.append(instance)
            failed.clear()  # the answer counts changed: what failed may not fail again
            return len(found) >= max_instances
        step = steps[k]
        kind = step.kind
        test = step.test
        nxt = k + 1
        go = visitors[nxt]
        if kind == PLAIN or kind == SCENE:  # the most frequent kinds first: no options to draw
            remaining -= 1
            if remaining < 0:
                return True
            plains += 1
            try:
                outputs[k] = step.run(index, outputs)
            except InvalidProgram:
                return False
            return (test is None or test(outputs, choices, values)) and go(nxt)
        family = kind == FILTER or kind == RELATE
        if family:
            reduce, free, rel_param = step.reduce, step.free, step.rel_param
        pool, empties, single = _step_pool(step, kind, data, outputs, values, rng)
        size = len(pool)
        for i in range(size):
            j = i + int(rand() * (size - i))
            option = pool[j]
            pool[j] = pool[i]
            remaining -= 1
            if remaining < 0:
                return True
            if family:
                if option is None:
                    option = empties.draw(rng)
                    if option is None:
                        continue
                if kind == RELATE:
                    rel, key, selected = option
                    values[rel_param] = rel
                else:
                    key, selected = option
                for a, p in free:
                    values[p] = key[a]
                if reduce is None:
                    outputs[k] = selected
                else:
                    try:
                        outputs[k] = reduce(index, (selected,), ())
                    except InvalidProgram:
                        continue
            elif kind == CHOOSE:
                values[step.params[0]] = option
                outputs[k] = option
            else:
                option = (option,) if single else option
                for p, v in zip(step.params, option):
                    values[p] = v
                try:
                    outputs[k] = _run_impl(step, index, outputs, tuple(str(v) for v in option))
                except InvalidProgram:
                    continue
            choices[k] = option
            if (test is None or test(outputs, choices, values)) and go(nxt):
                return True
        return False

    visitors = [visit if r is None else recall for r in recalls] + [visit]
    try:
        visit(0)
    finally:
        # The visitors refer to each other through this list: emptying it frees them, and the
        # whole search state with them, at once rather than at the next garbage collection
        # (millions of searches would otherwise fill the collector's young generation).
        visitors.clear()
    return found, remaining, replayed


def _complete(plan: CompiledTemplate, data: SceneData, outputs: list, choices: list, values: dict,
              admissible: Callable[[Any], bool], on_accept) -> Instance | None:
    """A complete state as an accepted instance, or None: an inadmissible answer, a degenerate relation,
    or refused by ``on_accept`` (its step worlds cannot be placed: the search goes on)."""
    if not admissible(outputs[-1]):
        return None
    if plan.raw_relates and _degenerate(plan, data, outputs, choices):
        return None
    instance = Instance(list(outputs), list(choices), dict(values))
    if on_accept is not None and on_accept(instance) is False:
        return None
    return instance


def _product(domains: Sequence[Sequence[Any]]) -> list[tuple]:
    combos: list[tuple] = [()]
    for domain in domains:
        combos = [c + (v,) for c in combos for v in domain]
    return combos


def _degenerate(plan: CompiledTemplate, data: SceneData, outputs: list, choices: list) -> bool:
    """Whether a raw ``relate`` narrowing an intersection changes nothing if it outputs the whole
    scene: answer and final reduced set alike (the answer alone would make every "yes" degenerate)."""
    final = plan.steps[-1]
    before = _reduced_set(final, outputs, choices)
    for position in plan.raw_relates:
        result = _reevaluate(plan, data, outputs, choices, position, data.index.all_mask)
        if result is not None and result[0] == outputs[-1] and result[1] == before:
            return True
    return False


def _reduced_set(step: Step, outputs: list, choices: list) -> int | None:
    """The object set a final count/exist node reduces to its answer (``None`` otherwise)."""
    if step.kind in (FILTER, RELATE) and step.suffix in ("count", "exist"):
        return choices[step.position][-1]
    if step.function in ("count", "exist"):
        return outputs[step.inputs[0]]
    return None


def _reevaluate(plan: CompiledTemplate, data: SceneData, outputs: list, choices: list, start: int, override: Any):
    """``(answer, reduced set)`` when node ``start`` outputs ``override`` (``None``: no answer then)."""
    index = data.index
    new = list(outputs)
    new_choices = list(choices)
    new[start] = override
    steps = plan.steps
    try:
        for k in plan.dependents[start]:
            step = steps[k]
            kind, choice = step.kind, choices[k]
            if kind == SCENE:
                new[k] = index.all_mask
            elif kind == FILTER:
                key = choice[0]
                selected = new[step.inputs[0]] & data.key_mask(key)
                new_choices[k] = (key, selected)
                new[k] = selected if step.reduce is None else step.reduce(index, (selected,), ())
            elif kind == RELATE:
                rel, key = choice[0], choice[1]
                selected = index.relation_masks[rel][new[step.inputs[0]]] & data.key_mask(key)
                new_choices[k] = (rel, key, selected)
                new[k] = selected if step.reduce is None else step.reduce(index, (selected,), ())
            elif kind == CHOOSE:
                # The drawn X is at least 1 unless the node allows zero, so the registered
                # choose's 0 <= X <= |set| is the whole check.
                new[k] = step.impl(index, (new[step.inputs[0]],), (str(choice),))
            elif kind == SIDE:
                new[k] = _run_impl(step, index, new, tuple(str(v) for v in choice))
            else:
                new[k] = step.run(index, new)
    except InvalidProgram:
        return None
    return new[-1], _reduced_set(plan.steps[-1], new, new_choices)
