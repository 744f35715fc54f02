"""Questions over a change: what happened between a world and the world after one operation.

A CLEVR-Math question of one operation (a removal of a group, of X objects of a group, or an
insertion) and its step scene graph give a problem that shows both worlds and asks about the
operation: how many objects were removed or added, how many of one kind, or (showing the world
after only) how many there were before. Each answer is computed on the step scene graphs
(counts before and after, by the executor) and must equal the answer of the problem's program
on the first world, as every answer is checked.

>>> from functools import partial
>>> from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
>>> from builder_utils.clevr.synth import generate_scene
>>> from builder_utils.clevr.synth.insert import add_steps
>>> gen = QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=0, max_answer=10,
...                                          question_types=("subtraction:4",)), on_question=partial(add_steps, seed=0))
>>> scene = generate_scene(0, "val", 0)
>>> question = gen.generate_scene(scene, 0)[0]
>>> change = change_question(question, scene, seed=0)
>>> change["category"], change["shows"] in ("both", "after")
('changes', True)
"""

from __future__ import annotations

import hashlib
import random

from .executor import answer, execute
from .metadata import default_metadata
from .steps import StepError, counting_program, operations

__all__ = ["CHANGE_KINDS", "CHANGES_CATEGORY", "CHANGES_TEMPLATES", "change_question"]

CHANGES_CATEGORY = "changes"
#: The kinds of question, in a fixed order (their ``question_family_index``).
CHANGE_KINDS = ("removed", "removed_kind", "added", "added_kind", "before")
#: The one-operation templates of the paper's set a change is read from (not count_backwards:
#: its removal is a question, not an operation shown).
CHANGES_TEMPLATES = ("subtraction:0", "subtraction:1", "subtraction:2", "subtraction:4", "subtraction:5",
                     "addition:0", "addition:1", "addition:2")

_SCENE = {"function": "scene", "inputs": [], "value_inputs": []}
_BOTH = "The first image shows a scene, the second the same scene after some objects were {verb}. "


def _kinds(op) -> tuple[str, ...]:
    if op.kind == "remove":
        return ("removed", "removed_kind", "before") if op.count == len(op.removed) else ("removed", "before")
    return ("added", "added_kind", "before")


def _rng(seed: int, question: dict) -> random.Random:
    digest = hashlib.blake2b(f"changes:{seed}:{question['image_index']}:{question['question']}".encode(),
                             digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _count(scene: dict, attribute: str | None = None, value: str | None = None) -> int:
    program = [dict(_SCENE)]
    if attribute is not None:
        program.append({"function": f"filter_{attribute}", "inputs": [0], "value_inputs": [value]})
    return int(answer(counting_program(program, len(program) - 1), scene))


def change_question(question: dict, scene: dict, *, seed: int = 0) -> dict:
    """The question over the change of a one-operation ``question`` (with ``steps``); its ``shows``
    says which worlds the problem shows (``both``: before and after, ``after``: the second only).
    Raises :class:`StepError` when the answer on the step scene graphs and the program's differ.
    Example: the module docstring.
    """
    program = question["program"]
    ops = operations(program, question["category"], execute(program, scene))
    if len(ops) != 1 or len(question["steps"]) != 1:
        raise StepError(f"a change question needs one operation, {question['question']!r} has {len(ops)}")
    op, after = ops[0], question["steps"][0]
    rng = _rng(seed, question)
    kind = rng.choice(_kinds(op))
    metadata = default_metadata()
    verb = "removed" if op.kind == "remove" else "added"
    kind_of: tuple = ()  # the attribute and value a kind question asks about
    if kind in ("removed", "added"):
        text = _BOTH.format(verb=verb) + f"How many objects were {verb}?"
        on_steps = abs(_count(scene) - _count(after))
        exact = op.kind == "remove" and op.count == len(op.removed)
        new_program = _counted_or_chosen(_group_filters(program, op) if exact else [], on_steps, exact=exact)
    elif kind == "removed_kind":
        # mostly a shape that was removed, so that 0 is not the usual answer
        gone = sorted({scene["objects"][i]["shape"] for i in op.removed})
        shape = rng.choice(gone if gone and rng.random() < 0.7 else sorted(metadata.values("Shape")))
        text = _BOTH.format(verb=verb) + f"How many {shape}s were removed?"
        kind_of = ("shape", shape)
        on_steps = _count(scene, "shape", shape) - _count(after, "shape", shape)
        filters = _group_filters(program, op) + [("shape", shape)]
        new_program = _counted_or_chosen(filters, on_steps, exact=True)
    elif kind == "added_kind":
        new = sorted({obj["color"] for obj in after["objects"][len(scene["objects"]):]})
        colour = rng.choice(new if new and rng.random() < 0.7 else sorted(metadata.values("Color")))
        text = _BOTH.format(verb=verb) + f"How many {colour} objects were added?"
        kind_of = ("color", colour)
        on_steps = _count(after, "color", colour) - _count(scene, "color", colour)
        new_program = _counted_or_chosen([], on_steps, exact=False)
    else:
        text = f"The image shows a scene after {_operation_words(op)}. How many objects were there before?"
        on_steps = _count(scene)
        new_program = _counted_or_chosen([], on_steps, exact=True)
    got = int(answer(new_program, scene))
    if got != on_steps or on_steps < 0:
        raise StepError(f"{text!r}: {on_steps} on the step scene graphs, {got} by the program")
    return {**question, "question": text, "program": new_program, "answer": str(on_steps),
            "template_filename": CHANGES_CATEGORY, "question_family_index": CHANGE_KINDS.index(kind),
            "template_index": CHANGE_KINDS.index(kind), "category": CHANGES_CATEGORY,
            "cot": _reasoning(kind, scene, after, on_steps, *kind_of), "num_operations": 1,
            "intermediate_counts": [_count(after)], "shows": "after" if kind == "before" else "both",
            "changed": question["question"]}


def _group_filters(program, op) -> list[tuple[str, str]]:
    """The removed group's filters, in program order (attribute, value)."""
    node = op.node if program[op.node]["function"].startswith("filter_") else program[op.node]["inputs"][0]
    chain = []
    while program[node]["function"].startswith("filter_"):
        chain.append((program[node]["function"][len("filter_"):], program[node]["value_inputs"][0]))
        node = program[node]["inputs"][0]
    return chain[::-1]


def _counted_or_chosen(filters, value: int, *, exact: bool) -> list[dict]:
    """A program giving ``value`` on the first world: the group counted when the answer is all of
    it (``exact``), else the drawn number as ``choose``'s value (X of a group, new objects)."""
    program = [dict(_SCENE)]
    for attribute, wanted in filters:
        program.append({"function": f"filter_{attribute}", "inputs": [len(program) - 1], "value_inputs": [wanted]})
    if exact:
        program.append({"function": "count", "inputs": [len(program) - 1], "value_inputs": []})
    else:
        program.append({"function": "choose", "inputs": [0], "value_inputs": [str(value)]})
    return program


def _operation_words(op) -> str:
    if op.kind == "remove":
        return f"{op.count} object{'s were' if op.count != 1 else ' was'} removed"
    return f"{op.count} object{'s were' if op.count != 1 else ' was'} added"


def _reasoning(kind: str, before: dict, after: dict, value: int, attribute=None, wanted=None) -> str:
    n, m = len(before["objects"]), len(after["objects"])
    if kind == "before":
        changed = n - m
        arithmetic = f"{m} + {changed}" if changed >= 0 else f"{m} - {-changed}"
        return f"The scene holds {m} objects after the change, so before it held {arithmetic} = {value}. Answer: {value}."
    noun = "objects"
    if attribute is not None:
        n, m = _count(before, attribute, wanted), _count(after, attribute, wanted)
        noun = f"{wanted}s" if attribute == "shape" else f"{wanted} objects"
    arithmetic = f"{n} - {m}" if n >= m else f"{m} - {n}"
    return f"The first scene has {n} {noun}, the second {m}: {arithmetic} = {value}. Answer: {value}."
