"""The question generator (builder_utils/clevr/generate.py, engine.py, text.py, cot.py) and the
``generate-questions`` command, on synthetic scenes and hand-made ones.

Answers are checked with the executor (builder_utils/clevr/executor.py), which is written
independently of the search, and the chain of thought against the scene graph.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from builder_utils.clevr.balance import AnswerBalancer, balancing_windows
from builder_utils.clevr.cot import CLEVR_STEPS, NodeTrace, StepRenderers, render_cot
from builder_utils.clevr.math_cot import CLEVR_MATH_STEPS, MATH_STEPS
from builder_utils.clevr.engine import search
from builder_utils.clevr.executor import SceneIndex, answer, execute
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator, generate_parallel, scene_seed
from builder_utils.clevr.generate_questions import main, write_questions
from builder_utils.clevr.choices import SceneData, filter_choices, relate_choices
from builder_utils.clevr.synth import generate_scenes
from builder_utils.clevr.templates import TemplateNode
from builder_utils.clevr.text import POST_PROMPTS, TextPlan, number_agreement, realise
from clevr_scene_factory import make_scene, write_scene_file

REFERENCE = Path(__file__).parent / "data" / "templates" / "reference"
FIELDS = [
    "image_filename", "image_index", "split", "question", "program", "answer", "template_filename",
    "question_family_index", "template_index", "category", "cot", "num_operations", "intermediate_counts",
]
RELATION_PHRASE = {"left": "to the left of", "right": "to the right of", "behind": "behind", "front": "in front of"}


@pytest.fixture(scope="module")
def scenes():
    return generate_scenes(24, seed=3, split="val")


@pytest.fixture(scope="module")
def questions(scenes):
    return list(QuestionGenerator(GeneratorOptions(seed=1)).generate(scenes))


def scene_file(tmp_path: Path, scenes: list[dict], name: str = "scenes.json") -> Path:
    return write_scene_file(tmp_path / name, scenes, split="val")


def template_dir(tmp_path: Path, templates: list[dict], name: str = "family") -> Path:
    folder = tmp_path / f"templates_{name}"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(templates), encoding="utf-8")
    return folder


# -- the questions ---------------------------------------------------------------------------


def test_questions_have_every_field_in_released_form(questions, scenes):
    assert len(questions) == 10 * len(scenes)  # 10 templates per image on these scenes
    by_index = {s["image_index"]: s for s in scenes}
    for q in questions:
        assert list(q) == FIELDS
        assert q["image_filename"] == by_index[q["image_index"]]["image_filename"]
        assert q["split"] == "val"
        assert isinstance(q["answer"], str) and isinstance(q["cot"], str)
        for node in q["program"]:
            assert set(node) == {"function", "inputs", "value_inputs"}
            assert all(isinstance(v, str) for v in node["value_inputs"])
        assert q["num_operations"] == 0 and q["intermediate_counts"] == []
        assert q["category"] == q["template_filename"]


def test_every_program_reexecutes_to_its_answer_and_every_unique_sees_one_object(questions, scenes):
    by_index = {s["image_index"]: s for s in scenes}
    for q in questions:
        scene = by_index[q["image_index"]]
        assert answer(q["program"], scene) == q["answer"], q["question"]
        outputs = execute(q["program"], scene)
        for node in q["program"]:
            if node["function"] == "unique":
                assert len(outputs[node["inputs"][0]]) == 1


def test_question_text_is_clean(questions):
    for q in questions:
        text = q["question"]
        assert not re.search(r"[<>\[\]{}]", text), text
        assert "  " not in text and text == text.strip()
        assert text[0].isupper() and text[-1] in "?.", text
        assert not re.search(r"\s[?.,;]", text), text


def test_all_nine_families_are_used_and_answers_are_balanced(questions):
    families = {q["template_filename"] for q in questions}
    assert families == {
        "zero_hop", "one_hop", "two_hop", "three_hop", "same_relate",
        "comparison", "compare_integer", "single_and", "single_or",
    }
    by_template: dict[int, dict[str, int]] = {}
    for q in questions:
        counts = by_template.setdefault(q["question_family_index"], {})
        counts[q["answer"]] = counts.get(q["answer"], 0) + 1
    for counts in by_template.values():
        ordered = sorted(counts.values())
        # An answer is only accepted while its count is at most 1.1x the runner-up's.
        assert len(ordered) == 1 or ordered[-1] <= 1.1 * ordered[-2] + 1


def test_same_seed_gives_the_same_questions_and_another_seed_others(scenes):
    first = list(QuestionGenerator(GeneratorOptions(seed=5)).generate(scenes, 0, 8))
    again = list(QuestionGenerator(GeneratorOptions(seed=5)).generate(scenes, 0, 8))
    other = list(QuestionGenerator(GeneratorOptions(seed=6)).generate(scenes, 0, 8))
    assert json.dumps(first) == json.dumps(again)
    assert [q["question"] for q in first] != [q["question"] for q in other]


def test_slices_cut_at_window_boundaries_concatenate_to_the_full_run(scenes):
    options = GeneratorOptions(seed=2, reset_counts_every=6)
    full = list(QuestionGenerator(options).generate(scenes))
    pieces = []
    for start, stop in [(0, 6), (6, 18), (18, 24)]:
        pieces += list(QuestionGenerator(options).generate(scenes, start, stop))
    assert pieces == full
    # One generator reused across slices gives the same, since counts reset at window starts.
    reused = QuestionGenerator(options)
    assert list(reused.generate(scenes, 12, 24)) + list(reused.generate(scenes, 0, 12)) == full[120:] + full[:120]


def test_parallel_generation_equals_one_process(scenes):
    options = GeneratorOptions(seed=4, reset_counts_every=6)
    serial = list(QuestionGenerator(options).generate(scenes))
    windows = []
    parallel = list(generate_parallel(options, scenes, num_workers=2, on_window=lambda a, b: windows.append((a, b))))
    assert parallel == serial
    assert windows == balancing_windows(len(scenes), 6)


def test_scene_randomness_depends_on_seed_and_image_index_only():
    assert scene_seed(0, 7) == scene_seed(0, 7)
    assert len({scene_seed(s, i) for s in range(3) for i in range(50)}) == 150
    assert scene_seed(0, 7) == 1735517397771561436  # fixed forever: a stable hash, not hash()


# -- chain of thought ------------------------------------------------------------------------


def _index(objects):
    scene = make_scene([(z, c, m, s, 0, 0) for z, c, m, s, _, _ in objects])
    for obj, (*_, px, py) in zip(scene["objects"], objects):
        obj["pixel_coords"] = [px, py, 10.0]
    return SceneIndex(scene)


def _relate_node(k, rel_param="<R>"):
    return TemplateNode(k, "relate_filter_unique", (k - 1,), (rel_param, "<Z2>", "<C2>", "<M2>", "<S2>"))


def test_three_hop_chain_of_thought_has_seed_001_format():
    index = _index([
        ("small", "yellow", "rubber", "cylinder", 190, 122),
        ("small", "blue", "rubber", "sphere", 231, 104),
        ("small", "brown", "rubber", "cube", 69, 97),
    ])
    none = {"Size": None, "Color": None, "Material": None, "Shape": None}
    trace = [
        NodeTrace(TemplateNode(0, "scene", ()), {}, {}, 0b111),
        NodeTrace(TemplateNode(1, "filter_unique", (0,), ("<Z>", "<C>", "<M>", "<S>")), {},
                  {"Size": None, "Color": "yellow", "Material": None, "Shape": "cylinder"}, 0, 0b1),
        NodeTrace(_relate_node(2), {}, {"Relation": "right", **none}, 1, 0b10),
        NodeTrace(_relate_node(3), {}, {"Relation": "behind", **none}, 2, 0b100),
        NodeTrace(TemplateNode(4, "relate_filter_count", (3,), ("<R>", "<Z2>", "<C2>", "<M2>", "<S2>")), {},
                  {"Relation": "right", **none, "Shape": "sphere"}, 0, 0),
    ]
    assert render_cot(trace, index, 0) == (
        "Step 1: I first find the small yellow rubber cylinder, located near (190, 122).\n"
        "Step 2: The object to the right of that object is the small blue rubber sphere, located near (231, 104).\n"
        "Step 3: The object behind that object is the small brown rubber cube, located near (69, 97).\n"
        "Step 4: No matching object is to the right of that object.\n"
        "Answer: 0."
    )


def test_generated_three_hop_chains_follow_the_program(questions, scenes):
    by_index = {s["image_index"]: s for s in scenes}
    three_hop = [q for q in questions if q["template_filename"] == "three_hop"]
    assert three_hop
    for q in three_hop:
        scene = by_index[q["image_index"]]
        outputs = execute(q["program"], scene)
        objects = [outputs[k] for k, n in enumerate(q["program"]) if n["function"] == "unique"]
        relations = [n["value_inputs"][0] for n in q["program"] if n["function"] == "relate"]
        lines = q["cot"].split("\n")

        def seen(obj):
            o = scene["objects"][obj]
            x, y = o["pixel_coords"][:2]
            return f"the {o['size']} {o['color']} {o['material']} {o['shape']}, located near ({round(x)}, {round(y)})"

        assert lines[0] == f"Step 1: I first find {seen(objects[0])}."
        for k, (obj, rel) in enumerate(zip(objects[1:], relations), start=2):
            assert re.fullmatch(rf"Step {k}: The [a-z ]+ {RELATION_PHRASE[rel]} that object is {re.escape(seen(obj))}\.",
                                lines[k - 1]), lines[k - 1]
        assert lines[3].startswith("Step 4: ") and RELATION_PHRASE[relations[2]] + " that object" in lines[3]
        assert lines[-1] == f"Answer: {q['answer']}."


def test_every_family_gets_a_concrete_chain_of_thought(questions):
    for q in questions:
        lines = q["cot"].split("\n")
        assert lines[-1] == f"Answer: {q['answer']}."
        assert len(lines) >= 2
        assert all(re.match(rf"Step {k}: \S", line) for k, line in enumerate(lines[:-1], 1)), q["cot"]
        assert "Applying" not in q["cot"]  # the generic fallback is never needed for our families
    comparisons = [q for q in questions if q["template_filename"] == "comparison"]
    assert all("Next, I find" in q["cot"] or "of the" in q["cot"] for q in comparisons)
    counts = [q for q in questions if q["template_filename"] == "compare_integer"]
    assert all(re.search(r"\d+ (is|and|is not)", q["cot"]) for q in counts)


def test_other_modules_extend_the_renderer_tables_without_changing_them():
    mine = StepRenderers()
    mine.step("count", lambda ctx: f"Counted {ctx.output}.")
    index = _index([("small", "red", "metal", "cube", 1, 2)])
    trace = [NodeTrace(TemplateNode(0, "scene", ()), {}, {}, 1),
             NodeTrace(TemplateNode(1, "count", (0,)), {}, {}, 1)]
    assert render_cot(trace, index, 1, renderers={**CLEVR_STEPS, **mine}) == "Step 1: Counted 1.\nAnswer: 1."
    assert render_cot(trace, index, 1) == "Step 1: Counting the objects in the scene gives 1.\nAnswer: 1."
    with pytest.raises(ValueError, match="already in this table"):
        mine.step("count", lambda ctx: "")


def _three_cubes_trace():
    """``|cubes| - X`` with 3 cubes and X = 2: the program of "remove 2 of the cubes, how many
    cubes are left" and of "how many cubes must go to leave 2"."""
    objects = [("large", "red", "metal", "cube", 10, 10), ("small", "blue", "rubber", "cube", 20, 10),
               ("small", "red", "rubber", "cube", 30, 10)]
    trace = [
        NodeTrace(TemplateNode(0, "scene", ()), {}, {}, 0b111),
        NodeTrace(TemplateNode(1, "filter", (0,), ("<S>",)), {"<S>": "cube"}, {"Shape": "cube"}, 0b111, 0b111),
        NodeTrace(TemplateNode(2, "count", (1,)), {}, {}, 3),
        NodeTrace(TemplateNode(3, "choose", (1,), ("<X>",)), {"<X>": 2}, {"Integer": 2}, 2),
        NodeTrace(TemplateNode(4, "subtraction", (2, 3)), {}, {}, 1),
    ]
    return trace, _index(objects)


def test_cot_renderers_see_the_category_and_word_subset_removal_and_counting_backwards():
    trace, index = _three_cubes_trace()
    seen = {}
    spy = StepRenderers({"scene": lambda ctx: seen.setdefault("category", ctx.category)})
    render_cot(trace, index, 1, category="remove_subset", renderers={**CLEVR_MATH_STEPS, **spy})
    assert seen == {"category": "remove_subset"}

    def last_step(category):
        return render_cot(trace, index, 1, category=category, renderers=CLEVR_MATH_STEPS).split("\n")[-2]

    assert last_step("remove_subset") == "Step 3: Removing 2 of the 3 cubes leaves 3 - 2 = 1 cube."
    assert last_step("count_backwards") == "Step 3: There are 3 cubes; to be left with 2 of them, remove 3 - 2 = 1."
    assert last_step(None) == "Step 3: There are 3 cubes, and 3 - 2 = 1."  # no category: neutral
    assert last_step("multihop") == last_step(None)


def test_the_math_table_is_the_engine_table_with_the_math_renderers_in_place():
    assert CLEVR_MATH_STEPS == {**CLEVR_STEPS, **MATH_STEPS}
    assert CLEVR_STEPS["filter"] is not MATH_STEPS["filter"]  # neither table was changed by the other
    trace, index = _three_cubes_trace()
    # Outside math programs, the engine's own filter wording is kept.
    plain = render_cot(trace[:3], index, 3, category="zero_hop", renderers=CLEVR_MATH_STEPS)
    assert plain.split("\n")[0].startswith("Step 1: There are 3 cubes in the scene: the large red metal cube")


# -- text ------------------------------------------------------------------------------------


def test_text_realisation_rules():
    types = {"<Z>": "Size", "<C>": "Color", "<S>": "Shape", "<C2>": "Color", "<S2>": "Shape", "<R>": "Relation"}
    synonyms = {"thing": ["thing", "object"], "cube": ["cube", "block"], "left": ["left of", "to the left of"],
                "remove": ["remove", "take away"]}
    texts = ["{Remove} the <Z> <C> <S>s [that are] <R> another <C2> <S2>; is <S> a <S> [really]?"]
    values = {"<Z>": None, "<C>": "red", "<S>": "cube", "<C2>": "blue", "<S2>": None, "<R>": "left"}
    outcomes = {realise(texts, types, values, synonyms, random.Random(seed)) for seed in range(40)}
    for text in outcomes:
        # one synonym draw per param, so both <S> read the same; <Z> null reads as nothing
        assert re.fullmatch(
            r"(Remove|Take away) the red (cube|block)s (that are )?(left of|to the left of) "
            r"a blue (thing|object); is (cube|block) a \2( really)?\?", text), text
        assert text.count("cube") in (0, 3)
    assert any("that are" in t for t in outcomes) and any("that are" not in t for t in outcomes)
    # "another" stays when the two objects are not told apart by a stated attribute
    same = dict(values, **{"<C2>": None})
    assert "another" in realise(texts, types, same, synonyms, random.Random(0))
    # a/an agree with the next word and "1 ... balls" is singular
    assert realise(["Is there a <S>?"], {"<S>": "Shape"}, {"<S>": None}, {"thing": ["object"]},
                   random.Random(0)) == "Is there an object?"


def test_text_plan_matches_substituting_into_the_text_step_by_step():
    # TextPlan renders through format strings and skips rules that cannot apply; substituting
    # into the variant text one rule at a time (each as a regex over the whole text) must give
    # the same texts and leave the generator in the same state, including slots inside
    # optional segments, a param written twice, null words next to punctuation, "other".
    from builder_utils.clevr.templates import _OPTIONAL, _WORD_SLOT, slot_synonyms
    from builder_utils.clevr.text import _ANOTHER, _ARTICLE, _OTHER, _agree, _contrasted_pairs, null_word

    def step_by_step(texts, types, values, synonyms, rng, agreement):
        text = texts[int(rng.random() * len(texts))]
        for name, ptype in types.items():
            word = null_word(ptype) if values.get(name) is None else str(values[name])
            options = synonyms.get(word)
            text = text.replace(name, options[int(rng.random() * len(options))] if options else word)

        def slot(m):
            found = slot_synonyms(synonyms, m.group(1)) or ()
            upper = m.group(1)[:1].isupper()
            cased = [(c[:1].upper() if upper else c[:1].lower()) + c[1:] for c in found]
            return cased[int(rng.random() * len(cased))] if cased else m.group(1)

        text = _WORD_SLOT.sub(slot, text)
        text = _OPTIONAL.sub(lambda m: m.group(1) if rng.random() < 0.5 else "", text)
        text = re.sub(r"\s+", " ", text).strip()
        for a, b in _contrasted_pairs(types):
            if values.get(a) is not None and values.get(b) is not None and values[a] != values[b]:
                text = _ANOTHER.sub(lambda m: m.group(1), _OTHER.sub("", text))
                break
        text = _ARTICLE.sub(_agree, agreement(text))
        text = re.sub(r"\s+", " ", re.sub(r"\s+([?.,;:!])", r"\1", text)).strip()
        return text[:1].upper() + text[1:]

    types = {"<Z>": "Size", "<C>": "Color", "<S>": "Shape", "<C2>": "Color", "<X>": "Integer"}
    synonyms = {"thing": ["thing", "object"], "cube": ["cube", "block"], "large": ["large", "big"],
                "remove": ["remove", "take away"], "add": ["add", "insert"]}
    texts = ["{Remove} <X> [big {remove}d] <Z> <C> <S>s [of <C2>] ?", "Is an other <C> <S> , a <Z> <S> <C2>?",
             "[{Add}] 1 more <Z> <C> <S>s [, or <X>] . <C2> <S>s [.]"]
    agreement = number_agreement(["red", "blue", "large", "big"], ["cube", "block", "thing", "object"])
    plan = TextPlan(texts, types, synonyms, agreement=agreement)
    for seed in range(300):
        draw = random.Random(seed)
        values = {name: draw.choice(choices) for name, choices in
                  [("<Z>", [None, "large"]), ("<C>", [None, "red"]), ("<S>", [None, "cube"]),
                   ("<C2>", [None, "red", "blue"]), ("<X>", [1, 3])]}
        ours, theirs = random.Random(seed), random.Random(seed)
        assert plan.render(values, ours) == step_by_step(texts, types, values, synonyms, theirs, agreement)
        assert ours.random() == theirs.random()


def test_post_prompt_changes_only_the_question(tmp_path, scenes):
    path = scene_file(tmp_path, scenes[:6])
    plain, prompted = tmp_path / "plain.json", tmp_path / "prompted.json"
    assert main(["--input_scene_file", str(path), "--output_questions_file", str(plain)]) == 0
    assert main(["--input_scene_file", str(path), "--output_questions_file", str(prompted), "--add_post_prompt"]) == 0
    a = json.loads(plain.read_text())["questions"]
    b = json.loads(prompted.read_text())["questions"]
    assert len(a) == len(b) == 60
    kinds = set()
    for x, y in zip(a, b):
        suffix = y["question"][len(x["question"]):]
        assert y["question"].startswith(x["question"] + " ")
        assert suffix.strip() in POST_PROMPTS.values()
        kinds.add(suffix.strip())
        assert {k: v for k, v in x.items() if k != "question"} == {k: v for k, v in y.items() if k != "question"}
    for y in b:
        (kind,) = [k for k, sentence in POST_PROMPTS.items() if y["question"].endswith(" " + sentence)]
        if kind == "Bool":
            assert y["answer"] in ("yes", "no")
        elif kind == "Integer":
            assert y["answer"].isdigit()
    assert len(kinds) >= 5


# -- constraints, params and the search ------------------------------------------------------


def _params(*pairs):
    return [{"type": t, "name": n} for t, n in pairs]


def test_extension_constraints_hold_and_params_bind_by_type(tmp_path, scenes):
    templates = [
        {   # NEQ, NOT_NULL, a filter listing only color and shape, OUT_RANGE on a set
            "params": _params(("Shape", "<S1>"), ("Color", "<C1>"), ("Shape", "<S2>"), ("Color", "<C2>")),
            "text": ["{Remove} all <C1> <S1>s. How many <C2> <S2>s are there?"],
            "nodes": [
                {"type": "scene", "inputs": []},
                {"type": "filter", "inputs": [0], "side_inputs": ["<S1>", "<C1>"]},
                {"type": "filter_count", "inputs": [0], "side_inputs": ["<C2>", "<S2>"]},
            ],
            "constraints": [
                {"type": "NOT_NULL", "params": ["<C1>", "<S1>", "<C2>", "<S2>"]},
                {"type": "NEQ", "params": ["<S1>", "<S2>"]},
                {"type": "OUT_RANGE", "node": 1, "min": 1},
            ],
            "category": "adversarial",
        },
        {   # choose binds an Integer param; a param shared by two nodes reads one value
            "params": _params(("Shape", "<S>"), ("Integer", "<X>")),
            "text": ["{Remove} <X> <S>s. How many <S>s are left?"],
            "nodes": [
                {"type": "scene", "inputs": []},
                {"type": "filter", "inputs": [0], "side_inputs": ["<S>"]},
                {"type": "choose", "inputs": [1], "side_inputs": ["<X>"]},
                {"type": "filter_count", "inputs": [0], "side_inputs": ["<S>"]},
                {"type": "subtraction", "inputs": [3, 2]},
            ],
            "constraints": [{"type": "NOT_NULL", "params": ["<S>"]}],
        },
    ]
    folder = template_dir(tmp_path, templates, "math")
    options = GeneratorOptions(template_dir=str(folder), seed=9, max_answer=3)
    found = list(QuestionGenerator(options).generate(scenes))
    by_index = {s["image_index"]: s for s in scenes}
    kinds = {q["template_index"] for q in found}
    assert kinds == {0, 1}
    for q in found:
        scene = by_index[q["image_index"]]
        assert answer(q["program"], scene) == q["answer"]
        assert int(q["answer"]) <= 3
        values = [n["value_inputs"] for n in q["program"]]
        if q["template_index"] == 0:
            assert q["category"] == "adversarial"
            filters = [n for n in q["program"] if n["function"].startswith("filter_")]
            assert [n["function"] for n in filters] == ["filter_shape", "filter_color", "filter_color", "filter_shape"]
            assert filters[0]["value_inputs"] != filters[3]["value_inputs"]  # NEQ on the shapes
            removed = execute(q["program"], scene)[2]
            assert len(removed) >= 1  # OUT_RANGE min 1
            assert re.match(r"(Remove|Subtract|Take away|Withdraw) all ", q["question"])
        else:
            choose = next(n for n in q["program"] if n["function"] == "choose")
            x = int(choose["value_inputs"][0])
            shapes = [v[0] for v, n in zip(values, q["program"]) if n["function"] == "filter_shape"]
            assert len(set(shapes)) == 1  # shared param
            available = len(execute(q["program"], scene)[choose["inputs"][0]])
            assert 1 <= x <= available
            assert f" {x} " in q["question"]
            assert q["num_operations"] == 1 and q["intermediate_counts"] == [int(q["answer"])]
            assert "-" in q["cot"] and q["cot"].endswith(f"Answer: {q['answer']}.")


def test_choose_with_allow_zero_draws_zero_and_its_programs_reexecute(tmp_path, scenes):
    template = {
        "params": _params(("Color", "<C>"), ("Shape", "<S>"), ("Integer", "<X>")),
        "text": ["{Remove} <X> of the <C> <S>s. How many <C> <S>s are left?"],
        "nodes": [
            {"type": "scene", "inputs": []},
            {"type": "filter", "inputs": [0], "side_inputs": ["<C>", "<S>"]},
            {"type": "count", "inputs": [1]},
            {"type": "choose", "inputs": [1], "side_inputs": ["<X>"], "allow_zero": True},
            {"type": "subtraction", "inputs": [2, 3]},
        ],
        "constraints": [{"type": "NOT_NULL", "params": ["<S>"]}],
    }
    folder = template_dir(tmp_path, [template], "zero")
    found = list(QuestionGenerator(GeneratorOptions(template_dir=str(folder), seed=1, instances_per_template=2))
                 .generate(scenes))
    by_index = {s["image_index"]: s for s in scenes}
    drawn = set()
    for q in found:
        scene = by_index[q["image_index"]]
        assert answer(q["program"], scene) == q["answer"], q["question"]
        (choose,) = [n for n in q["program"] if n["function"] == "choose"]
        x = int(choose["value_inputs"][0])
        available = len(execute(q["program"], scene)[choose["inputs"][0]])
        assert 0 <= x <= available and int(q["answer"]) == available - x
        assert re.search(rf"\b{x}\b", q["question"])
        drawn.add(x)
    assert 0 in drawn and len(drawn) >= 3


def test_a_second_run_in_one_process_sees_the_template_files_as_they_are_now(tmp_path):
    """The command hands its freshly loaded generator to its windows (no second load), so a
    caller that edits a template between two runs with the same flags gets the new text."""
    folder = tmp_path / "templates"
    folder.mkdir()
    source = json.loads((REFERENCE / "templates" / "counting.json").read_text())
    (folder / "counting.json").write_text(json.dumps(source))
    path = scene_file(tmp_path, generate_scenes(4, seed=2, split="val"))
    out = tmp_path / "q.json"
    argv = ["--input_scene_file", str(path), "--output_questions_file", str(out), "--template_dir", str(folder),
            "--quiet"]
    assert main(argv) == 0
    first = json.loads(out.read_text())["questions"]
    assert first and not any(q["question"].startswith("Tell me") for q in first)
    for template in source:
        template["text"] = ["Tell me: " + text for text in template["text"]]
    (folder / "counting.json").write_text(json.dumps(source))
    assert main(argv) == 0
    second = json.loads(out.read_text())["questions"]
    assert len(second) == len(first) and all(q["question"].startswith("Tell me: ") for q in second)


def _plan(tmp_path, nodes, params, name):
    text = " ".join(p["name"] for p in params) + "?"
    folder = template_dir(tmp_path, [{"params": params, "text": [text], "nodes": nodes}], name)
    generator = QuestionGenerator(GeneratorOptions(template_dir=str(folder)))
    return generator.plans[0], generator.metadata.values("Relation")


ALL_ATTRS = [("Size", "<Z>"), ("Color", "<C>"), ("Material", "<M>"), ("Shape", "<S>")]
ALL_ATTRS2 = [("Size", "<Z2>"), ("Color", "<C2>"), ("Material", "<M2>"), ("Shape", "<S2>")]
FOUR_OBJECTS = [("large", "red", "metal", "cube", 0, 0), ("small", "blue", "rubber", "sphere", 2, 0),
                ("large", "green", "rubber", "cylinder", -2, 0), ("small", "red", "rubber", "sphere", 0, 2)]


def _matches(obj, key):
    return all(v is None or obj[a] == v for a, v in zip(("size", "color", "material", "shape"), key))


def test_empty_filter_options_prefer_scene_objects_outside_the_input_set(tmp_path):
    nodes = [
        {"type": "scene", "inputs": []},
        {"type": "filter_unique", "inputs": [0], "side_inputs": [n for _, n in ALL_ATTRS]},
        {"type": "relate", "inputs": [1], "side_inputs": ["<R>"]},
        {"type": "filter_exist", "inputs": [2], "side_inputs": [n for _, n in ALL_ATTRS2]},
    ]
    plan, relations = _plan(tmp_path, nodes, _params(*ALL_ATTRS, ("Relation", "<R>"), *ALL_ATTRS2), "exist")
    scene = make_scene(FOUR_OBJECTS)
    objects = scene["objects"]
    data = SceneData(SceneIndex(scene), relations)
    vocabulary = [(z, c, m, s) for z in (None, "small", "large")
                  for c in (None, "gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
                  for m in (None, "rubber", "metal") for s in (None, "cube", "sphere", "cylinder")]
    inputs = {1}  # the small blue rubber sphere alone
    elsewhere = {k for k in vocabulary if any(_matches(objects[i], k) for i in range(4))
                 and not any(_matches(objects[i], k) for i in inputs)}
    options, empties = filter_choices(plan.steps[3], data, 0b0010, {})
    wanted = options.count(None)
    assert wanted == len(options) - wanted == 16  # filter_exist: as many empty as present
    rng = random.Random(0)
    drawn = [empties.draw(rng) for _ in range(len(elsewhere))]
    assert all(selected == 0 for _, selected in drawn)
    assert {key for key, _ in drawn} == elsewhere  # every scene combination first, once each
    after = empties.draw(rng)[0]
    assert after not in elsewhere and not any(_matches(o, after) for o in objects)  # then the vocabulary

    # Over the whole scene nothing lies outside the input: empty options come from the vocabulary.
    whole, empties = filter_choices(plan.steps[3], data, 0b1111, {})
    for _ in range(whole.count(None)):
        key, selected = empties.draw(rng)
        assert selected == 0 and not any(_matches(o, key) for o in objects)


def test_relate_filter_offers_empty_selections_like_filter(tmp_path):
    def relate_plan(kind):
        nodes = [
            {"type": "scene", "inputs": []},
            {"type": "filter_unique", "inputs": [0], "side_inputs": [n for _, n in ALL_ATTRS]},
            {"type": kind, "inputs": [1], "side_inputs": ["<R>", *(n for _, n in ALL_ATTRS2)]},
        ]
        nodes.append({"type": "count" if kind == "relate_filter" else "query_color", "inputs": [2]})
        return _plan(tmp_path, nodes, _params(*ALL_ATTRS, ("Relation", "<R>"), *ALL_ATTRS2), kind)

    scene = make_scene(FOUR_OBJECTS)
    index = SceneIndex(scene)
    plan, relations = relate_plan("relate_filter")
    data = SceneData(index, relations)
    for obj in range(4):
        options = relate_choices(plan.steps[2], data, obj, {}, random.Random(obj))
        empty = [(rel, key) for rel, key, selected in options if not selected]
        singles = sum(1 for _, _, selected in options if selected and not selected & (selected - 1))
        assert len(empty) == len(set(empty))
        possible = sum(1 for rel in relations for key, mask in data.keys(0b1111, 0)
                       if not index.relation_masks[rel][obj] & mask)
        assert len(empty) == min(singles, possible) > 0
        for rel, key in empty:  # a combination of the scene, just not there
            assert any(_matches(o, key) for o in scene["objects"])
            assert not index.relation_masks[rel][obj] & data.key_mask(key)
    unique_plan, _ = relate_plan("relate_filter_unique")
    for obj in range(4):
        assert all(selected for _, _, selected in relate_choices(unique_plan.steps[2], data, obj, {}, random.Random(0)))


def test_filter_options_come_from_the_declared_input_not_the_previous_node(tmp_path, scenes):
    # Node 2 reads the scene (node 0) while node 1 just narrowed it. The reference drew node
    # 2's values from the previous node's objects, so the second branch always described an
    # object of the first; from the declared input it can describe any object of the scene.
    template = {
        "params": _params(("Color", "<C>"), ("Shape", "<S>"), ("Color", "<C2>"), ("Shape", "<S2>")),
        "text": ["How many things are <C> <S>s or <C2> <S2>s?"],
        "nodes": [
            {"type": "scene", "inputs": []},
            {"type": "filter", "inputs": [0], "side_inputs": ["<C>", "<S>"]},
            {"type": "filter", "inputs": [0], "side_inputs": ["<C2>", "<S2>"]},
            {"type": "union", "inputs": [1, 2]},
            {"type": "count", "inputs": [3]},
        ],
    }
    folder = template_dir(tmp_path, [template], "declared_input")
    options = GeneratorOptions(template_dir=str(folder), seed=0, instances_per_template=2)
    found = list(QuestionGenerator(options).generate(scenes))
    by_index = {s["image_index"]: s for s in scenes}
    outside = 0
    for q in found:
        scene = by_index[q["image_index"]]
        outputs = execute(q["program"], scene)
        assert answer(q["program"], scene) == q["answer"]
        (union,) = [n for n in q["program"] if n["function"] == "union"]
        first, second = (set(outputs[i]) for i in union["inputs"])
        # The attribute values the second branch filters on, read back from the program.
        k, wanted = union["inputs"][1], {}
        while q["program"][k]["function"].startswith("filter_"):
            wanted[q["program"][k]["function"][len("filter_"):]] = q["program"][k]["value_inputs"][0]
            k = q["program"][k]["inputs"][0]
        described = [i for i in first if all(scene["objects"][i][a] == v for a, v in wanted.items())]
        if second and not described:
            outside += 1
    assert len(found) >= len(scenes) and outside >= 3


@pytest.mark.parametrize("key", ["single_or:0", "single_or:6", "single_or:7"])
def test_a_count_over_a_union_can_be_zero_but_never_repeats_a_description(key, scenes):
    # OUT_NEQ keeps the two branches of the union apart; with allow_both_empty two empty
    # branches pass too (two different descriptions that match nothing), so 0 occurs.
    generator = QuestionGenerator(GeneratorOptions(seed=0, question_types=key))
    (template,) = generator.templates
    (constraint,) = [c for c in template.constraints if c.type == "OUT_NEQ"]
    assert constraint.allow_both_empty
    by_index = {s["image_index"]: s for s in scenes}
    zeros = 0
    for q in generator.generate(scenes):
        program = q["program"]
        outputs = execute(program, by_index[q["image_index"]])
        assert answer(program, by_index[q["image_index"]]) == q["answer"]
        (union,) = [k for k, n in enumerate(program) if n["function"] == "union"]
        left, right = program[union]["inputs"]
        assert outputs[left] != outputs[right] or outputs[left] == [] == outputs[right]
        if q["answer"] == "0":
            zeros += 1

            def description(k):  # the filter / relate chain down to a unique or the scene
                chain = []
                while program[k]["function"] not in ("unique", "scene"):
                    chain.append((program[k]["function"], program[k]["value_inputs"]))
                    k = program[k]["inputs"][0]
                return chain, outputs[k] if program[k]["function"] == "unique" else None

            assert description(left) != description(right), q["question"]
    assert zeros >= 2


def test_relate_filter_questions_can_count_zero(tmp_path, scenes):
    template = {
        "params": _params(*ALL_ATTRS, ("Relation", "<R>"), *ALL_ATTRS2),
        "text": ["Count the <Z2> <C2> <M2> <S2>s lying <R> the <Z> <C> <M> <S>."],
        "nodes": [
            {"type": "scene", "inputs": []},
            {"type": "filter_unique", "inputs": [0], "side_inputs": [n for _, n in ALL_ATTRS]},
            {"type": "relate_filter", "inputs": [1], "side_inputs": ["<R>", *(n for _, n in ALL_ATTRS2)]},
            {"type": "count", "inputs": [2]},
        ],
    }
    folder = template_dir(tmp_path, [template], "relate_count")
    found = list(QuestionGenerator(GeneratorOptions(template_dir=str(folder), seed=2)).generate(scenes))
    by_index = {s["image_index"]: s for s in scenes}
    for q in found:
        assert answer(q["program"], by_index[q["image_index"]]) == q["answer"]
    assert "0" in {q["answer"] for q in found}


def test_single_and_finds_no_answers_that_survive_the_degeneracy_check():
    """Empty filters over an intersection of relations are scene objects found elsewhere, so a
    "no" depends on the relations; drawn from the whole vocabulary (an absent colour), it
    would not, and the degeneracy check would refuse nearly all of them."""
    generator = QuestionGenerator(GeneratorOptions(question_types=["single_and:0", "single_and:1"]))
    relations = generator.metadata.values("Relation")
    for plan in generator.plans:
        answers = []
        for scene in generate_scenes(40, seed=5, split="val"):
            found = search(plan, SceneData(SceneIndex(scene), relations), random.Random(scene["image_index"]),
                           lambda answer: True)
            answers += [instance.answer for instance in found]
        zero = sum(a in (0, False) for a in answers)
        assert len(answers) >= 30 and zero >= 0.15 * len(answers), (plan.template.key, zero, len(answers))


def test_single_and_questions_are_not_degenerate(questions, scenes):
    """Replacing either relate of an intersection by the whole scene must change the result."""
    by_index = {s["image_index"]: s for s in scenes}
    checked = 0
    for q in (q for q in questions if q["template_filename"] == "single_and"):
        scene = by_index[q["image_index"]]
        program = q["program"]
        outputs = execute(program, scene)
        final = program[-1]
        for k, node in enumerate(program):
            if node["function"] != "relate":
                continue
            changed = [dict(n) for n in program]
            changed[k] = {"function": "scene", "inputs": [], "value_inputs": []}
            try:
                new_outputs = execute(changed, scene)
            except Exception:
                continue  # the question has no answer without the relation: it matters
            same_answer = new_outputs[-1] == outputs[-1]
            if final["function"] in ("count", "exist"):
                same_answer = same_answer and new_outputs[final["inputs"][0]] == outputs[final["inputs"][0]]
            assert not same_answer, q["question"]
            checked += 1
    assert checked


def test_an_unsatisfiable_template_costs_a_bounded_search(tmp_path, scenes):
    never = {
        "params": _params(("Color", "<C>")),
        "text": ["How many <C> things are there?"],
        "nodes": [{"type": "scene", "inputs": []}, {"type": "filter_count", "inputs": [0], "side_inputs": ["<C>"]}],
        "constraints": [{"type": "OUT_RANGE", "node": 1, "min": 99}],
    }
    folder = template_dir(tmp_path, [never])
    generator = QuestionGenerator(GeneratorOptions(template_dir=str(folder), search_budget=50))
    assert list(generator.generate(scenes)) == []
    (stats,) = generator.stats
    assert stats.tried == len(scenes) and stats.instantiated == 0
    assert stats.states <= 50 * len(scenes)


def test_templates_are_tried_in_ascending_use_count(scenes):
    # One template per image: a template used once waits until every other template that can
    # be instantiated has been used as often (a random order would repeat one within a few
    # images: 24 draws from 83 templates almost surely collide).
    generator = QuestionGenerator(GeneratorOptions(seed=4, templates_per_image=1))
    found = list(generator.generate(scenes))
    assert len(found) == len(scenes) < len(generator.templates)
    used = [(q["template_filename"], q["template_index"]) for q in found]
    assert len(set(used)) == len(used)
    # With two templates, uses alternate.
    pair = QuestionGenerator(GeneratorOptions(seed=4, templates_per_image=1, question_types="zero_hop:0 zero_hop:1"))
    keys = [q["template_index"] for q in pair.generate(scenes)]
    counts = [keys[: k + 1].count(0) - keys[: k + 1].count(1) for k in range(len(keys))]
    assert len(keys) == len(scenes) and all(-1 <= c <= 1 for c in counts)


def test_answer_balancer_follows_the_reference_rules():
    b = AnswerBalancer(range(11))
    b.add(3)
    assert not b.allows(3) and b.allows(4)  # 1 > 1.1 * 0
    b.add(4)
    assert b.allows(3) and b.allows(4)
    for _ in range(5):
        b.add(3)
        b.add(4)
    assert b.allows(3)  # counts 6 and 6, both far below 5 * max(median, 5)
    pair = AnswerBalancer(["yes", "no"])
    for _ in range(30):
        pair.add("yes")
        pair.add("no")
    assert pair.allows("yes") and pair.allows("no")  # 30 <= 1.1 * 30 and 30 <= 5 * 30
    wide = AnswerBalancer(range(11))
    for _ in range(26):
        wide.add(0)
        wide.add(1)
    # the median count is 0, so 5 * max(0, 5) = 25 caps both frequent answers
    assert not wide.allows(0) and not wide.allows(1) and wide.allows(2)
    assert balancing_windows(10, 4) == [(0, 4), (4, 8), (8, 10)]


def test_answer_balancer_refuses_by_the_rule_after_every_addition():
    # add() skips the sort while a known limit holds: after every addition, what it allows
    # must be what the rule gives on the counts from scratch (skewed draws, a growing domain).
    def refused(counts):
        ordered = sorted(counts.values())
        if len(ordered) < 2:
            return set()
        limit = min(1.1 * ordered[-2], 5.0 * max(ordered[len(ordered) // 2], 5))
        return {a for a, c in counts.items() if c > limit}

    rng = random.Random(7)
    for domain in (range(11), (), ("yes", "no")):
        b = AnswerBalancer(domain)
        answers = list(domain) or ["red", "blue", "green"]
        for _ in range(400):
            answer = answers[min(int(rng.expovariate(0.7)), len(answers) - 1)]
            b.add(answer)
            assert {a for a in b.counts if not b.allows(a)} == refused(b.counts)


def test_reference_format_templates_metadata_and_synonyms_generate(scenes):
    options = GeneratorOptions(
        template_dir=str(REFERENCE / "templates"),
        metadata_file=str(REFERENCE / "metadata.json"),
        synonyms_json=str(REFERENCE / "synonyms.json"),
        seed=3,
    )
    found = list(QuestionGenerator(options).generate(scenes))
    by_index = {s["image_index"]: s for s in scenes}
    assert {q["template_filename"] for q in found} == {"counting", "relating"}
    assert len({(q["template_filename"], q["template_index"]) for q in found}) == 8
    for q in found:
        assert answer(q["program"], by_index[q["image_index"]]) == q["answer"]
        assert not re.search(r"[<>\[\]]", q["question"])


# -- the command -----------------------------------------------------------------------------


def test_cli_writes_the_file_and_workers_do_not_change_it(tmp_path, scenes):
    path = scene_file(tmp_path, scenes)
    outputs = {}
    for workers in (1, 2):
        out = tmp_path / f"q{workers}.json"
        argv = ["--input_scene_file", str(path), "--output_questions_file", str(out), "--seed", "7",
                "--reset_counts_every", "6", "--num_workers", str(workers)]
        assert main(argv) == 0
        outputs[workers] = out.read_bytes()
    assert outputs[1] == outputs[2]
    doc = json.loads(outputs[1])
    assert doc["info"]["split"] == "val"
    assert [q["question_index"] for q in doc["questions"]] == list(range(len(doc["questions"])))
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ownership.json", "q1.json", "q2.json", "scenes.json"]


def test_cli_slices_at_window_boundaries_concatenate(tmp_path, scenes):
    path = scene_file(tmp_path, scenes)
    common = ["--input_scene_file", str(path), "--reset_counts_every", "8"]
    main(common + ["--output_questions_file", str(tmp_path / "all.json")])
    main(common + ["--output_questions_file", str(tmp_path / "a.json"), "--num_scenes", "8"])
    main(common + ["--output_questions_file", str(tmp_path / "b.json"), "--scene_start_idx", "8"])
    full = json.loads((tmp_path / "all.json").read_text())["questions"]
    parts = json.loads((tmp_path / "a.json").read_text())["questions"] + json.loads(
        (tmp_path / "b.json").read_text())["questions"]
    strip = lambda qs: [{k: v for k, v in q.items() if k != "question_index"} for q in qs]  # noqa: E731
    assert strip(parts) == strip(full)


def test_cli_question_types_and_named_sets(tmp_path, scenes):
    path = scene_file(tmp_path, scenes[:8])
    out = tmp_path / "q.json"
    assert main(["--input_scene_file", str(path), "--output_questions_file", str(out),
                 "--question_types", "Zero-Hop:0,", "exist"]) == 0
    found = json.loads(out.read_text())["questions"]
    assert found
    for q in found:
        assert (q["template_filename"], q["template_index"]) == ("zero_hop", 0) or q["answer"] in ("yes", "no")
    assert main(["--input_scene_file", str(path), "--output_questions_file", str(out),
                 "--templates", "clevr_math", "--max_answer", "10"]) == 0
    math = json.loads(out.read_text())["questions"]
    assert {q["template_filename"] for q in math} <= {"subtraction", "addition", "adversarial", "subtraction-multihop"}
    assert all(0 <= int(q["answer"]) <= 10 for q in math)


def _error_of(argv, capsys) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_cli_bad_input_is_one_clear_line_and_no_output(tmp_path, scenes, capsys):
    out = tmp_path / "out.json"
    missing = _error_of(["--input_scene_file", str(tmp_path / "nope.json"), "--output_questions_file", str(out)], capsys)
    assert "nope.json" in missing
    bad_scene = [dict(scenes[0])]
    bad_scene[0]["objects"] = [dict(o) for o in scenes[0]["objects"]]
    bad_scene[0]["objects"][1]["color"] = "pink"
    path = scene_file(tmp_path, bad_scene, "bad_scenes.json")
    message = _error_of(["--input_scene_file", str(path), "--output_questions_file", str(out)], capsys)
    assert "bad_scenes.json" in message and "scene 0" in message and "pink" in message
    broken = tmp_path / "broken.json"
    broken.write_text('{"info": {}, "scenes": [', encoding="utf-8")
    assert "broken.json" in _error_of(["--input_scene_file", str(broken), "--output_questions_file", str(out)], capsys)
    good = scene_file(tmp_path, scenes[:2], "good.json")
    folder = template_dir(tmp_path, [{"params": [], "text": ["Q?"], "nodes": [{"type": "scenery", "inputs": []}]}])
    message = _error_of(["--input_scene_file", str(good), "--output_questions_file", str(out),
                         "--template_dir", str(folder)], capsys)
    assert "family.json: template 0: node 0 (scenery)" in message
    message = _error_of(["--input_scene_file", str(good), "--output_questions_file", str(out),
                         "--question_types", "four_hop"], capsys)
    assert "four_hop" in message and "zero_hop" in message
    message = _error_of(["--input_scene_file", str(good), "--output_questions_file", str(out),
                         "--templates", "clevr_math", "--question_types", "query"], capsys)
    assert "matches no template" in message
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_interrupted_write_leaves_no_file_behind(tmp_path):
    def questions():
        yield {"question": "Is it?"}
        raise RuntimeError("generation failed half-way")

    out = tmp_path / "q.json"
    with pytest.raises(RuntimeError):
        write_questions(out, {"split": "val"}, questions())
    assert list(tmp_path.iterdir()) == []
    assert write_questions(out, {"split": "val"}, [{"question": "Q?"}, '{"question": "R?"}']) == 2
    assert out.read_text() == json.dumps(
        {"info": {"split": "val"}, "questions": [{"question": "Q?", "question_index": 0},
                                                  {"question": "R?", "question_index": 1}]})
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_cli_output_does_not_depend_on_the_hash_seed(tmp_path, scenes):
    path = scene_file(tmp_path, scenes[:6])
    root = Path(__file__).resolve().parent.parent
    digests = []
    for hash_seed in ("1", "2"):
        out = tmp_path / f"h{hash_seed}.json"
        env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(root))
        subprocess.run(
            [sys.executable, "-m", "builder_utils.clevr.generate_questions", "--input_scene_file", str(path),
             "--output_questions_file", str(out), "--seed", "3"],
            check=True, env=env, cwd=tmp_path, capture_output=True,
        )
        digests.append(out.read_bytes())
    assert digests[0] == digests[1]


def test_cli_verbose_reports_each_template_search(tmp_path, scenes, capsys):
    path = scene_file(tmp_path, scenes[:2])
    assert main(["--input_scene_file", str(path), "--output_questions_file", str(tmp_path / "q.json"),
                 "--verbose", "--time_dfs", "--templates_per_image", "2"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"CLEVR_val_000000\.png: \w+:\d+: (1 question\(s\)|nothing), \d+ states in [\d.]+ ms", err)
    assert "wrote 4 questions for 2 scenes" in err


def test_parquet_output_matches_the_json_and_a_rerun_replaces_only_our_shards(tmp_path, scenes):
    import pyarrow.parquet as pq

    path = scene_file(tmp_path, scenes)
    common = ["--input_scene_file", str(path), "--seed", "2", "--reset_counts_every", "4"]
    assert main(common + ["--output_questions_file", str(tmp_path / "q.json")]) == 0
    out = tmp_path / "shards"
    assert main(common + ["--output_questions_file", str(out), "--output_format", "parquet",
                          "--scenes_per_shard", "6"]) == 0
    expected = json.loads((tmp_path / "q.json").read_text())["questions"]
    index = json.loads((out / "index.json").read_text())
    assert [s["file"] for s in index["shards"]] == [f"questions-0000{k}-of-00003.parquet" for k in range(3)]
    assert [(s["scene_start"], s["scene_stop"]) for s in index["shards"]] == [(0, 8), (8, 16), (16, 24)]
    rows = [row for s in index["shards"] for row in pq.read_table(out / s["file"]).to_pylist()]
    assert rows == expected
    # a second run with bigger shards: the three old shards go, the new one and the index stay
    assert main(common + ["--output_questions_file", str(out), "--output_format", "parquet",
                          "--scenes_per_shard", "100"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".ownership.json", "index.json", "questions-00000-of-00001.parquet"]
    assert pq.read_table(out / "questions-00000-of-00001.parquet").to_pylist() == expected


def test_generate_questions_says_what_it_wrote_in_one_line_unless_quiet(tmp_path):
    """The one CLI style: a success line naming the count and the file; --quiet drops it."""
    scenes = tmp_path / "scenes.json"
    scenes.write_text(json.dumps({"info": {"split": "val"}, "scenes": generate_scenes(3, seed=1, split="val")}))
    script = Path(sys.executable).parent / "generate-questions"  # the console script, as users run it
    command = [str(script) if script.exists() else "generate-questions", "--templates", "clevr_math",
               "--input_scene_file", str(scenes), "--output_questions_file", str(tmp_path / "q.json")]
    env = {**os.environ, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    said = subprocess.run(command, capture_output=True, text=True, env=env)
    count = len(json.loads((tmp_path / "q.json").read_text())["questions"])
    assert said.returncode == 0 and count > 0
    assert said.stderr.splitlines() == [f"generate-questions: wrote {count} questions for 3 scenes to {tmp_path / 'q.json'}"]
    quiet = subprocess.run([*command, "--quiet"], capture_output=True, text=True, env=env)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_windows_run_on_several_threads_of_one_process_give_the_one_thread_questions(scenes):
    # A Dask worker started with several threads runs tasks side by side in one process: each
    # thread must balance its own window.
    from concurrent.futures import ThreadPoolExecutor

    from builder_utils.clevr.generate import run_window

    options = GeneratorOptions(templates="clevr_math", seed=2, reset_counts_every=2)
    windows = [(a, scenes[a:a + 2]) for a in range(0, len(scenes) - 1, 2)] * 3
    alone = [run_window(options, window, a, "json") for a, window in windows]
    with ThreadPoolExecutor(4) as pool:
        side_by_side = list(pool.map(lambda task: run_window(options, task[1], task[0], "json"), windows))
    assert side_by_side == alone
