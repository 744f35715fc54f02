"""Writing an accepted instantiation as a released CLEVR program."""

from __future__ import annotations

from typing import Any

from .engine import Instance
from .plan import CHOOSE, FILTER, FILTER_FUNCTION, RELATE, SIDE, CompiledTemplate

__all__ = ["expand_program", "matching_steps"]


def expand_program(plan: CompiledTemplate, instance: Instance) -> list[dict[str, Any]]:
    """The released-form program of an instance: template-only nodes expanded into
    ``filter_*`` chains (non-null values, in the node's side-input order) and their final
    ``relate``/``unique``/``count``/``exist``.

    >>> from builder_utils.clevr.synth import generate_scenes
    >>> from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
    >>> gen = QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=0))
    >>> question = next(iter(gen.generate(generate_scenes(1, seed=0, split="val"))))
    >>> question["program"][:2]        # written by expand_program: released form
    [{'function': 'scene', 'inputs': [], 'value_inputs': []}, {'function': 'filter_color', 'inputs': [0], 'value_inputs': ['red']}]
    """
    program: list[dict[str, Any]] = []
    append = program.append
    position: list[int] = []  # template node -> the released node that gives its output
    for step, choice in zip(plan.steps, instance.choices):
        kind = step.kind
        if kind == FILTER or kind == RELATE:
            cur = position[step.inputs[0]]
            if kind == RELATE:
                key = choice[1]
                append({"function": "relate", "inputs": [cur], "value_inputs": [choice[0]]})
                cur = len(program) - 1
            else:
                key = choice[0]
            for a, _ in step.slots:
                value = key[a]
                if value is not None:
                    append({"function": FILTER_FUNCTION[a], "inputs": [cur], "value_inputs": [value]})
                    cur = len(program) - 1
            if step.suffix:
                append({"function": step.suffix, "inputs": [cur], "value_inputs": []})
                cur = len(program) - 1
            position.append(cur)
            continue
        if kind == CHOOSE:
            value_inputs = [str(choice)]
        elif kind == SIDE:
            value_inputs = [str(v) for v in choice]
        else:
            value_inputs = []
        inputs = step.inputs
        # Spelled out for the usual one or two inputs: a comprehension costs a call.
        if len(inputs) == 1:
            released = [position[inputs[0]]]
        elif len(inputs) == 2:
            released = [position[inputs[0]], position[inputs[1]]]
        else:
            released = [position[i] for i in inputs]
        append({"function": step.function, "inputs": released, "value_inputs": value_inputs})
        position.append(len(program) - 1)
    return program


def matching_steps(plan: CompiledTemplate) -> tuple[bool, ...]:
    """Per template node, whether its choice ends with the set it matched (``NodeTrace.selected``).

    >>> from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
    >>> plan = QuestionGenerator(GeneratorOptions(templates="clevr_math")).plans[0]
    >>> [step.function for step in plan.steps], matching_steps(plan)
    (['scene', 'filter', 'count', 'choose', 'addition'], (False, True, False, False, False))
    """
    return tuple(step.kind in (FILTER, RELATE) for step in plan.steps)
