"""Every step of a CLEVR-Math problem as a world: the scene graph after each operation.

A problem's operations are read from its released program, as :mod:`math_cot` reads them, and
executed by the executor on the first world, so a removal drops exactly the objects the program
removes:

- ``subtraction(<before>, count(S))`` removes every object of ``S`` (a ``union`` counts both
  groups: the second removal takes what the first left of it);
- ``subtraction(<before>, choose(S, X))`` removes X objects of ``S``, drawn from the seed
  (``count_backwards`` removes ``|S| - X``, leaving X);
- ``addition(<before>, choose(., X))`` inserts X objects described by the set ``<before>`` counts,
  else by the unused filter just before the ``choose``; an attribute the question leaves open is
  drawn from the seed;
- a node nothing uses is an action the question does not count (the adversarial trick): an
  unused filter removes its objects, an unused ``choose`` inserts X objects of its set's kind.

Operations happen in program order (the node that carries each one), which is the text's order
in every shipped template. The worlds themselves are made by :func:`builder_utils.clevr.synth.insert.step_scenes`
(the one place that knows the placement and visibility rules: this module stays below the
synthetic world); a step that cannot be placed raises :class:`UnplaceableStep`, and the
generator then chooses another question (``QuestionGenerator(on_question=...)``).

>>> from builder_utils.clevr.synth import generate_scene
>>> from builder_utils.clevr.synth.insert import step_scenes
>>> scene = generate_scene(0, "val", 1)
>>> program = [{"function": "scene", "inputs": [], "value_inputs": []},
...            {"function": "count", "inputs": [0], "value_inputs": []},
...            {"function": "choose", "inputs": [0], "value_inputs": ["2"]},
...            {"function": "addition", "inputs": [1, 2], "value_inputs": []}]
>>> steps = step_scenes(scene, program, "insertion", seed=0)
>>> n = len(scene["objects"])
>>> check_steps(scene, program, "insertion", steps, [n + 2], str(n + 2))
>>> check_steps(scene, program, "insertion", [scene], [n + 2], str(n + 2))
Traceback (most recent call last):
...
builder_utils.clevr.steps.StepError: step 1: an insertion of 2 changed the objects it kept
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from .executor import answer, execute

__all__ = ["Operation", "StepError", "UnplaceableStep", "check_steps", "counting_program", "operations", "steps_json"]

_ARITHMETIC = ("addition", "subtraction")
_FILTER_PREFIX = "filter_"
_ATTRIBUTES = ("size", "color", "material", "shape")


class StepError(ValueError):
    """A program whose operations cannot be read, or step scene graphs that fail a check; the message says which."""


class UnplaceableStep(RuntimeError):
    """An insertion found no free, visible spot on the floor (the generator chooses another question)."""


@dataclass(frozen=True)
class Operation:
    """One operation: ``kind`` "remove" (objects ``removed``, indices of the first world) or "insert"
    (``count`` objects with the ``attributes`` the question names); ``node`` carries it in the
    program, ``arithmetic`` is the arithmetic node giving the count after it (None: not counted)."""

    kind: str
    node: int
    count: int
    removed: tuple[int, ...] = ()
    attributes: dict = field(default_factory=dict)
    arithmetic: int | None = None


def _consumers(program: Sequence[dict]) -> list[list[int]]:
    users: list[list[int]] = [[] for _ in program]
    for k, node in enumerate(program):
        for j in node["inputs"]:
            users[j].append(k)
    return users


def _is_filter(node: dict) -> bool:
    return node["function"].startswith(_FILTER_PREFIX)


def _named_attributes(program: Sequence[dict], position: int) -> dict:
    """The attributes a filter chain names, walking back from ``position`` to ``scene``."""
    named: dict[str, str] = {}
    k = position
    while k is not None and _is_filter(program[k]):
        named.setdefault(program[k]["function"][len(_FILTER_PREFIX):], program[k]["value_inputs"][0])
        k = program[k]["inputs"][0] if program[k]["inputs"] else None
    return named


def _counted_set(program: Sequence[dict], position: int) -> int | None:
    """The set node an Integer node ends up counting (through arithmetic ``before`` inputs)."""
    k = position
    while program[k]["function"] in _ARITHMETIC:
        k = program[k]["inputs"][0]
    return program[k]["inputs"][0] if program[k]["function"] == "count" else None


def _insertion_description(program: Sequence[dict], users, choose: int, before: int | None) -> dict:
    counted = _counted_set(program, before) if before is not None else None
    if counted is not None and program[counted]["function"] != "scene":
        return _named_attributes(program, counted)
    nearest = next((k for k in range(choose - 1, 0, -1) if _is_filter(program[k])), None)
    if nearest is not None and not users[nearest]:
        return _named_attributes(program, nearest)
    return {}


def _descriptions(program: Sequence[dict], users) -> set[int]:
    """Unused filters that describe the objects of the next insertion (not removals)."""
    described = set()
    for c, node in enumerate(program):
        if node["function"] != "choose" or not any(program[j]["function"] == "addition" for j in users[c]):
            continue
        nearest = next((k for k in range(c - 1, 0, -1) if _is_filter(program[k])), None)
        if nearest is not None and not users[nearest]:
            described.add(nearest)
    return described


def operations(program: Sequence[dict], category: str | None, outputs: Sequence) -> list[Operation]:
    """The operations of a released program, in order, from the executor's ``outputs`` on the first world.

    Example:
        >>> program = [{"function": "scene", "inputs": [], "value_inputs": []},
        ...            {"function": "count", "inputs": [0], "value_inputs": []},
        ...            {"function": "filter_color", "inputs": [0], "value_inputs": ["red"]},
        ...            {"function": "count", "inputs": [2], "value_inputs": []},
        ...            {"function": "subtraction", "inputs": [1, 3], "value_inputs": []}]
        >>> operations(program, "remove_group", [[0, 1, 2], 3, [0, 2], 2, 1])
        [Operation(kind='remove', node=3, count=2, removed=(0, 2), attributes={}, arithmetic=4)]
    """
    users = _consumers(program)
    last = len(program) - 1
    found: list[Operation] = []
    described = _descriptions(program, users)
    for k, node in enumerate(program):
        function = node["function"]
        if function in _ARITHMETIC:
            before, amount = node["inputs"]
            found.append(_arithmetic_operation(program, users, outputs, category, k, before, amount))
        elif k != last and not users[k] and k not in described:
            if _is_filter(node):
                found.append(Operation("remove", k, len(outputs[k]), tuple(outputs[k])))
            elif function == "choose":
                attributes = _named_attributes(program, node["inputs"][0])
                found.append(Operation("insert", k, int(outputs[k]), attributes=attributes))
    return sorted(found, key=lambda op: op.node)


def _arithmetic_operation(program, users, outputs, category, k, before, amount) -> Operation:
    function = program[k]["function"]
    source = program[amount]
    if source["function"] == "count" and function == "subtraction":
        removed = outputs[source["inputs"][0]]
        return Operation("remove", amount, len(removed), tuple(removed), arithmetic=k)
    if source["function"] == "choose":
        x = int(outputs[amount])
        if function == "addition":
            return Operation("insert", amount, x, attributes=_insertion_description(program, users, amount, before),
                             arithmetic=k)
        group = tuple(outputs[source["inputs"][0]])
        number = len(group) - x if category == "count_backwards" else x
        # Which X of the group go is not the program's to say: drawn from the seed (synth.insert.step_scenes).
        return Operation("remove", amount, number, group, arithmetic=k)
    raise StepError(f"node {k} ({function}): its second input is a {source['function']}, not an operation's "
                    "count or choose")


def counting_program(program: Sequence[dict], set_node: int | None) -> list[dict]:
    """A program counting what node ``set_node`` selects (None: every object), to run on any step.

    Example:
        >>> program = [{"function": "scene", "inputs": [], "value_inputs": []},
        ...            {"function": "filter_shape", "inputs": [0], "value_inputs": ["cube"]}]
        >>> [node["function"] for node in counting_program(program, 1)]
        ['scene', 'filter_shape', 'count']
    """
    chain = []
    k = set_node
    while k is not None and program[k]["function"] != "scene":
        if not _is_filter(program[k]):
            raise StepError(f"node {k} ({program[k]['function']}): a counted set must be filters over the scene")
        chain.append(program[k])
        k = program[k]["inputs"][0]
    nodes = [{"function": "scene", "inputs": [], "value_inputs": []}]
    for node in reversed(chain):
        nodes.append({"function": node["function"], "inputs": [len(nodes) - 1], "value_inputs": list(node["value_inputs"])})
    nodes.append({"function": "count", "inputs": [len(nodes) - 1], "value_inputs": []})
    return nodes


def check_steps(scene: dict, program: Sequence[dict], category: str | None, steps: Sequence[dict],
                intermediate_counts: Sequence[int] | None, expected_answer: str) -> None:
    """Raise :class:`StepError` unless the steps agree with the question: each counted step's count
    (executed on that step's scene graph) is its entry of ``intermediate_counts``, the last step's
    is the answer, and every step keeps the objects it does not remove unchanged. Example: the
    module docstring.
    """
    ops = operations(program, category, execute(program, scene))
    if len(ops) != len(steps):
        raise StepError(f"{len(steps)} step scene graphs for {len(ops)} operations")
    asked = counting_program(program, _counted_set(program, len(program) - 1))
    arithmetic = [k for k, node in enumerate(program) if node["function"] in _ARITHMETIC]
    counts = dict(zip(arithmetic, intermediate_counts or ()))
    worlds = [scene, *steps]
    gone: set[int] = set()  # first-world objects removed so far (a union's second removal skips them)
    for number, (op, step) in enumerate(zip(ops, steps), start=1):
        expected = op.count
        if op.kind == "remove" and op.count == len(op.removed):
            expected = len(set(op.removed) - gone)
        gone |= set(op.removed) if op.count == len(op.removed) else set()
        _check_kept(worlds[number - 1], step, op.kind, expected, number)
        if op.arithmetic is None or op.arithmetic not in counts:
            continue
        counted = counting_program(program, _counted_set(program, op.arithmetic))
        got = int(answer(counted, step))
        if category == "count_backwards":  # the count is what went, not what is left
            got = int(answer(counted, worlds[number - 1])) - got
        if got != counts[op.arithmetic]:
            raise StepError(f"step {number}: the count on its scene graph is {got}, intermediate_counts says "
                            f"{counts[op.arithmetic]}")
    final = int(answer(asked, worlds[-1]))
    if category == "count_backwards":
        final = int(answer(asked, worlds[-2])) - final
    if str(final) != str(expected_answer):
        raise StepError(f"the last step's count is {final}, the answer is {expected_answer}")


def _check_kept(before: dict, after: dict, kind: str, number_changed: int, number: int) -> None:
    old = [json.dumps(obj, sort_keys=True) for obj in before["objects"]]
    new = [json.dumps(obj, sort_keys=True) for obj in after["objects"]]
    if kind == "remove":
        kept = iter(old)
        in_order = all(obj in kept for obj in new)  # a subsequence of the objects before, unchanged
        if len(old) - len(new) != number_changed or not in_order:
            raise StepError(f"step {number}: a removal of {number_changed} left {len(new)} of {len(old)} objects, "
                            "or changed one it kept")
    elif new[:len(old)] != old or len(new) - len(old) != number_changed:
        raise StepError(f"step {number}: an insertion of {number_changed} changed the objects it kept")


def steps_json(steps: Sequence[dict]) -> str:
    """The ``steps`` column: the step scene graphs as JSON text (sorted keys, like the ``scene`` column).

    Example:
        >>> steps_json([{"objects": []}])
        '[{"objects": []}]'
    """
    return json.dumps(list(steps), sort_keys=True)
