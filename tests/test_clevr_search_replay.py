"""The search's replay of failed subtrees (:class:`builder_utils.clevr.plan.Recall`) against
the search that explores every subtree: for any template of the shipped sets, scene, answer
check and budget, both find the same instances after the same states and leave the random
generator in the same state, so the questions that follow are the same too. The replay must
also save work: on the templates that have a recall point, some states are replayed.
"""

from __future__ import annotations

import json
import random
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builder_utils.clevr.choices import SceneData
from builder_utils.clevr.engine import SearchStats, search
from builder_utils.clevr.executor import SceneIndex
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.plan import FILTER, OUT_RANGE, _recalls, _set_checks, compile_template
from builder_utils.clevr.synth import generate_scenes

# The shipped templates' recall points read outputs only; this one's reads a param of the step
# before it (the NEQ on the shapes), which the key must then hold.
PARAM_KEYED = {
    "params": [{"type": t, "name": n} for t, n in (("Color", "<C1>"), ("Shape", "<S1>"), ("Color", "<C2>"),
                                                   ("Shape", "<S2>"))],
    "text": ["There are <C1> <S1>s. What size is the <C2> <S2>?"],
    "nodes": [
        {"type": "scene", "inputs": []},
        {"type": "filter", "inputs": [0], "side_inputs": ["<C1>", "<S1>"]},
        {"type": "filter_unique", "inputs": [0], "side_inputs": ["<C2>", "<S2>"]},
        {"type": "query_size", "inputs": [2]},
    ],
    "constraints": [{"type": "NEQ", "params": ["<S1>", "<S2>"]}, {"type": "NOT_NULL", "params": ["<S1>"]}],
}
SETS = ("clevr_math", "clevr_math_chains", "clevr", "param_keyed")


@lru_cache(maxsize=None)
def _generator(templates: str, max_answer: int | None) -> QuestionGenerator:
    options = {"templates": templates}
    if templates == "param_keyed":
        folder = Path(tempfile.mkdtemp()) / "templates"
        folder.mkdir()
        (folder / "keyed.json").write_text(json.dumps([PARAM_KEYED]), encoding="utf-8")
        options = {"template_dir": str(folder)}
    return QuestionGenerator(GeneratorOptions(**options, max_answer=max_answer,
                                              bound_intermediate_counts=max_answer is not None))


@lru_cache(maxsize=None)
def _scenes(seed: int) -> list[dict]:
    return generate_scenes(4, seed=seed, split="val")


def _run(plan, scene, generator, seed, refused, budget, replay):
    rng = random.Random(seed)
    stats = SearchStats()
    data = SceneData(SceneIndex(scene), generator._relations)
    found = search(plan, data, rng, lambda answer: str(answer) not in refused, max_instances=2,
                   budget=budget, stats=stats, replay=replay)
    # ``replayed`` is left out: it is the one figure meant to differ.
    return [(i.outputs, i.choices, i.values) for i in found], (stats.states, stats.exhausted_budget), rng.getstate()


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    templates=st.sampled_from(SETS),
    max_answer=st.sampled_from([None, 6]),
    scene_seed=st.integers(0, 3),
    seed=st.integers(0, 2**32),
    refused=st.sets(st.sampled_from([str(n) for n in range(12)] + ["True", "False", "small", "large"]),
                    max_size=14),
    budget=st.sampled_from([40, 300, 5000]),
    pick=st.integers(0, 10**6),
)
def test_replaying_a_failed_subtree_is_exploring_it_again(templates, max_answer, scene_seed, seed, refused,
                                                           budget, pick):
    generator = _generator(templates, max_answer)
    with_recall = [p for p in generator.plans if any(p.recalls)]
    plans = with_recall if with_recall and pick % 2 else generator.plans
    plan = plans[pick % len(plans)]
    for scene in _scenes(scene_seed):
        explored = _run(plan, scene, generator, seed, refused, budget, replay=False)
        replayed = _run(plan, scene, generator, seed, refused, budget, replay=True)
        assert replayed == explored  # the same instances, states and draws (the next search's stream)


def test_the_replay_saves_work_where_balancing_refuses_answers():
    # "Add X small red rubber cubes. How many objects are there?": the cubes do not change the
    # answer, so once every X failed for one filter choice, the other filter choices replay it.
    generator = _generator("clevr_math", None)
    (plan,) = [p for p in generator.plans if p.template.key == "addition:2"]
    assert plan.recalls[3] is not None
    stats = SearchStats()
    explored = SearchStats()
    for scene in _scenes(0):
        _run(plan, scene, generator, 1, {str(n) for n in range(11)}, 5000, replay=False)
        data = SceneData(SceneIndex(scene), generator._relations)
        search(plan, data, random.Random(1), lambda answer: False, stats=stats)
        search(plan, data, random.Random(1), lambda answer: False, stats=explored, replay=False)
    assert stats.states == explored.states > 0
    assert stats.replayed > stats.states // 2


def test_a_recall_key_holds_the_params_its_subtree_reads():
    (plan,) = _generator("param_keyed", None).plans
    assert plan.recalls[2] is not None and plan.recalls[2].params == ("<S1>",)
    generator = _generator("param_keyed", None)
    stats = SearchStats()
    for scene in _scenes(1):
        search(plan, SceneData(SceneIndex(scene), ()), random.Random(0), lambda answer: False, stats=stats)
    assert stats.replayed > 0
    # A subtree that failed for one shape may succeed for another: a key without the shape
    # would replay the failure.
    for scene in [s for seed in range(4) for s in _scenes(seed)]:
        for refused in ({"small"}, {"large"}):
            for seed in range(3):
                explored = _run(plan, scene, generator, seed, refused, 5000, replay=False)
                assert _run(plan, scene, generator, seed, refused, 5000, replay=True) == explored


def _without_folded_ranges(plan):
    """The plan with each filter's folded range (``Step.sizes``) back as a check tried option
    by option, empty keys offered again: the search as it was before the folding."""
    for step in plan.steps:
        if step.kind == FILTER and step.sizes != (None, None):
            low, high = step.sizes
            step.sizes = (None, None)
            step.signature = step.signature[:-1] + (("unfolded",),)
            _set_checks(step, step.checks + ((OUT_RANGE, step.position, low, high, step.suffix is None),), plan.steps)
    plan.recalls = _recalls(plan)
    return plan


@pytest.mark.parametrize("templates", ["clevr_math", "clevr_math_chains"])
def test_a_filter_range_folded_into_its_options_finds_every_instance_checking_it_finds(templates):
    # Enumerating every instance (no budget, every answer accepted) with the range folded and
    # with it checked option by option: the same instances, so the folding only spares draws.
    generator = _generator(templates, None)
    plans = [p for p in generator.plans if any(s.sizes != (None, None) for s in p.steps) and len(p.steps) <= 8]
    assert plans
    for plan in plans:
        reference = _without_folded_ranges(compile_template(plan.template, generator.metadata))
        for scene in _scenes(2)[:2]:
            found = []
            for candidate in (plan, reference):
                data = SceneData(SceneIndex(scene), generator._relations)
                instances = search(candidate, data, random.Random(0), lambda answer: True, max_instances=10**9,
                                   budget=10**8)
                # Empty keys elsewhere are drawn at random, so differ between the two runs: the
                # instances compared are those that select objects at every filter.
                found.append({(tuple(i.choices), frozenset(i.values.items())) for i in instances
                              if all(c[-1] for s, c in zip(candidate.steps, i.choices) if s.kind == FILTER)})
            assert found[0] == found[1] and found[0]
