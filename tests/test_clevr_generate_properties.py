"""Property tests of the question generator over random synthetic scenes (hypothesis).

For any seed, scene set and option mix: every program re-executes (with the independent
executor) to its answer, every ``unique`` sees exactly one object, no placeholder or bracket
survives in the text, every template constraint holds on the released program, the same seed
gives the same questions, and runs cut at balancing windows concatenate to the full run.

Constraint checks read param values back from the released program: each template node's
expansion is located in the program (its ``relate``, ``filter_*`` chain and final node), and a
param is null exactly when its filter is absent.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder_utils.clevr.executor import answer, execute
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth import generate_scenes
from builder_utils.clevr.templates import ATTRIBUTE_TYPES, FILTER_FAMILY, RELATE_FAMILY, Template
from builder_utils.clevr.text import POST_PROMPTS

REFERENCE = Path(__file__).parent / "data" / "templates" / "reference"
SETS = {
    "clevr": {},
    "clevr_math": {"max_answer": 10},
    "clevr_math_chains": {"max_answer": 12},
    "reference": {
        "template_dir": str(REFERENCE / "templates"),
        "metadata_file": str(REFERENCE / "metadata.json"),
        "synonyms_json": str(REFERENCE / "synonyms.json"),
    },
}
PROPERTY_SETTINGS = settings(
    max_examples=20, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CORRECTNESS_SETTINGS = settings(PROPERTY_SETTINGS, max_examples=50)


@lru_cache(maxsize=None)
def _scenes(seed: int, count: int) -> tuple:
    return tuple(generate_scenes(count, seed=seed, split="val"))


def _options(name: str, **extra) -> GeneratorOptions:
    return GeneratorOptions(templates="clevr" if name == "reference" else name, **SETS[name], **extra)


def locate(template: Template, program: list[dict]) -> tuple[list[int], dict]:
    """Per template node, the program index of its output; and every param's value read back
    from the program (``None`` = null)."""
    positions: list[int] = []
    values: dict = {}
    i = 0
    for node in template.nodes:
        types = {template.params[p]: p for p in node.side_inputs}
        if node.type in FILTER_FAMILY or node.type in RELATE_FAMILY:
            cur = positions[node.inputs[0]]
            if node.type in RELATE_FAMILY:
                assert program[i]["function"] == "relate" and program[i]["inputs"] == [cur]
                values[types["Relation"]] = program[i]["value_inputs"][0]
                cur, i = i, i + 1
            found = {}
            while (i < len(program) and program[i]["function"].startswith("filter_")
                   and program[i]["inputs"] == [cur]):
                found[program[i]["function"][len("filter_"):]] = program[i]["value_inputs"][0]
                cur, i = i, i + 1
            for ptype, attr in ATTRIBUTE_TYPES.items():
                if ptype in types:
                    values.setdefault(types[ptype], found.get(attr))
                    assert values[types[ptype]] == found.get(attr)  # shared params agree
                else:
                    assert attr not in found
            suffix = (FILTER_FAMILY | RELATE_FAMILY)[node.type]
            if suffix:
                assert program[i]["function"] == suffix and program[i]["inputs"] == [cur]
                cur, i = i, i + 1
            positions.append(cur)
            continue
        step = program[i]
        assert step["function"] == node.type
        assert step["inputs"] == [positions[k] for k in node.inputs]
        assert len(node.side_inputs) == len(step["value_inputs"]) <= 1  # true of every set tested
        for p, value in zip(node.side_inputs, step["value_inputs"]):
            values[p] = int(value) if template.params[p] == "Integer" else value
        positions.append(i)
        i += 1
    assert i == len(program)
    return positions, values


def check_question(q: dict, template: Template, scene: dict, post_prompt: bool = False) -> None:
    program = q["program"]
    assert answer(program, scene) == q["answer"]
    outputs = execute(program, scene)
    for node in program:
        if node["function"] == "unique":
            assert len(outputs[node["inputs"][0]]) == 1
    text = q["question"]
    if post_prompt:  # the answer-format sentence has its own braces: "e.g. {yes}."
        assert text.endswith(POST_PROMPTS[template.answer_type])
        text = text[: -len(POST_PROMPTS[template.answer_type])]
    assert not re.search(r"[<>\[\]{}]", text), text
    assert q["cot"].endswith(f"Answer: {q['answer']}.")
    positions, values = locate(template, program)
    out = [outputs[k] for k in positions]
    assert set(values) == set(template.params)
    for c in template.constraints:
        if c.type == "NULL":
            assert all(values[p] is None for p in c.params), (template.key, c)
        elif c.type == "NOT_NULL":
            assert all(values[p] is not None for p in c.params), (template.key, c)
        elif c.type == "NEQ":
            assert values[c.params[0]] != values[c.params[1]], (template.key, c)
        elif c.type == "OUT_NEQ":
            both_empty = c.allow_both_empty and out[c.nodes[0]] == [] == out[c.nodes[1]]
            assert both_empty or out[c.nodes[0]] != out[c.nodes[1]], (template.key, c)
        else:
            value = out[c.nodes[0]]
            value = len(value) if isinstance(value, list) else value
            assert (c.min is None or value >= c.min) and (c.max is None or value <= c.max), (template.key, c)
    arithmetic = [out[k] for k, n in enumerate(template.nodes) if n.type in ("addition", "subtraction")]
    assert q["intermediate_counts"] == arithmetic and q["num_operations"] == len(arithmetic)


@CORRECTNESS_SETTINGS
@given(
    set_name=st.sampled_from(sorted(SETS)),
    scene_seed=st.integers(0, 10_000),
    num_scenes=st.integers(1, 6),
    seed=st.integers(0, 2**31),
    templates_per_image=st.integers(1, 10),
    instances_per_template=st.integers(1, 2),
    add_post_prompt=st.booleans(),
)
def test_generated_questions_are_correct(set_name, scene_seed, num_scenes, seed, templates_per_image,
                                         instances_per_template, add_post_prompt):
    scenes = _scenes(scene_seed, num_scenes)
    generator = QuestionGenerator(_options(
        set_name, seed=seed, templates_per_image=templates_per_image,
        instances_per_template=instances_per_template, add_post_prompt=add_post_prompt,
    ))
    by_family_index = {t.family_index: t for t in generator.templates}
    by_image = {s["image_index"]: s for s in scenes}
    found = list(generator.generate(list(scenes)))
    per_image: dict[int, dict] = {}
    for q in found:
        template = by_family_index[q["question_family_index"]]
        assert (q["template_filename"], q["template_index"]) == (template.family, template.index)
        check_question(q, template, by_image[q["image_index"]], add_post_prompt)
        per_image.setdefault(q["image_index"], {}).setdefault(template.key, 0)
        per_image[q["image_index"]][template.key] += 1
    for used in per_image.values():
        assert len(used) <= templates_per_image
        assert max(used.values()) <= instances_per_template


@PROPERTY_SETTINGS
@given(
    set_name=st.sampled_from(["clevr", "clevr_math"]),
    scene_seed=st.integers(0, 10_000),
    seed=st.integers(0, 2**31),
    window=st.integers(0, 4),
    cut=st.integers(0, 3),
)
def test_same_seed_is_identical_and_window_slices_concatenate(set_name, scene_seed, seed, window, cut):
    scenes = list(_scenes(scene_seed, 8))
    options = _options(set_name, seed=seed, reset_counts_every=window)
    full = list(QuestionGenerator(options).generate(scenes))
    assert list(QuestionGenerator(options).generate(scenes)) == full
    boundary = min(cut * window, len(scenes)) if window else 0
    pieces = list(QuestionGenerator(options).generate(scenes, 0, boundary))
    pieces += list(QuestionGenerator(options).generate(scenes, boundary, len(scenes)))
    assert pieces == full
