"""Step scene graphs (builder_utils/clevr/steps.py), checked against the plain list-based evaluator.

The evaluator of tests/test_clevr_executor.py runs the programs over lists; the counts, the objects
removed and inserted and what a step keeps are checked here without the module's own reading of
the program (only the templates' shapes, written out below).
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.steps import StepError, UnplaceableStep, check_steps, steps_json
from builder_utils.clevr.synth import generate_scene, visible_pixels
from builder_utils.clevr.synth.insert import add_steps, draw_world, step_scenes, studio_camera
from builder_utils.clevr.synth.scenes import compute_relationships
from test_clevr_executor import reference_execute

FLOOR = 200
CATEGORIES = {"remove_group", "remove_subset", "insertion", "count_backwards", "adversarial", "multihop"}
# Operations per template of the paper's set, read off the texts ("Remove all red cubes. Remove ...").
OPERATIONS = {("subtraction-multihop", 0): 2, ("adversarial", 0): 2}


def _questions(templates: str, num_scenes: int, max_objects: int = 10, **options):
    gen = QuestionGenerator(GeneratorOptions(templates=templates, seed=0, bound_intermediate_counts=True, **options),
                            on_question=functools.partial(add_steps, seed=0))
    for index in range(num_scenes):
        scene = generate_scene(0, "val", index, max_objects=max_objects)
        for question in gen.generate_scene(scene, index):
            yield scene, question


def _expected_operations(question) -> int:
    found = re.fullmatch(r"(?:chain|same_sign)_(\d)", question["template_filename"])
    if found:
        return int(found.group(1))
    return OPERATIONS.get((question["template_filename"], question["template_index"]), 1)


def _asked_filters(program) -> list[dict]:
    """The filter nodes of the set the question counts last (a plain walk: arithmetic -> count -> filters)."""
    k = len(program) - 1
    while program[k]["function"] in ("addition", "subtraction"):
        k = program[k]["inputs"][0]
    k = program[k]["inputs"][0]
    chain = []
    while program[k]["function"] != "scene":
        chain.append(program[k])
        k = program[k]["inputs"][0]
    return chain


def _count(scene, filters) -> int:
    program = [{"function": "scene", "inputs": [], "value_inputs": []}]
    for node in reversed(filters):
        program.append({"function": node["function"], "inputs": [len(program) - 1], "value_inputs": node["value_inputs"]})
    program.append({"function": "count", "inputs": [len(program) - 1], "value_inputs": []})
    return reference_execute(program, scene)[-1]


def _key(obj) -> str:
    return json.dumps(obj, sort_keys=True)


def _check_row(scene, question):
    steps = question["steps"]
    program = question["program"]
    assert len(steps) == _expected_operations(question), question["question"]
    first = reference_execute(program, scene)
    sets = [set(map(_key, (scene["objects"][i] for i in out))) for node, out in zip(program, first)
            if node["function"].startswith("filter_") or node["function"] == "union"]
    chooses = {int(node["value_inputs"][0]) for node in program if node["function"] == "choose"}
    worlds = [scene, *steps]
    for before, after in zip(worlds, worlds[1:]):
        old, new = list(map(_key, before["objects"])), list(map(_key, after["objects"]))
        if len(new) < len(old):  # a removal: the others unchanged, in order; the gone ones one group's
            remaining = iter(old)
            assert all(obj in remaining for obj in new)
            gone = set(old) - set(new)
            assert any(gone <= group for group in sets)
        else:  # an insertion: every object kept as it was, the new ones after them, as many as a choose says
            assert new[:len(old)] == old and len(new) - len(old) in chooses
        assert after["relationships"] == compute_relationships([o["3d_coords"] for o in after["objects"]],
                                                               after["directions"])
        assert min(visible_pixels(after), default=FLOOR) >= FLOOR
    asked = _asked_filters(program)
    counts = [_count(world, asked) for world in worlds]
    if question["category"] == "count_backwards":
        assert counts[0] - counts[1] == int(question["answer"]) == question["intermediate_counts"][0]
        return
    assert counts[-1] == int(question["answer"])
    # Each counted operation's count, on its step (adversarial: the first removal is the counted one).
    assert counts[1:1 + len(question["intermediate_counts"])] == question["intermediate_counts"]


def test_every_category_gets_steps_that_the_list_evaluator_confirms():
    seen = set()
    for scene, question in _questions("clevr_math", 24, max_answer=10, templates_per_image=13):
        _check_row(scene, question)
        check_steps(scene, question["program"], question["category"], question["steps"],
                    question["intermediate_counts"], question["answer"])
        seen.add(question["category"])
    assert seen == CATEGORIES


@pytest.mark.parametrize("family, scenes, least", [("chain_8", 40, 3), ("chain_5", 20, 3), ("same_sign_4", 20, 3),
                                                   ("same_sign_6", 30, 1)])
def test_chains_up_to_8_operations(family, scenes, least):
    # Eight insertions in a row (same_sign_8) pass the ~14 objects the floor holds: their steps are
    # refused (test_a_full_floor_makes_the_generator_choose_another_question).
    checked = 0
    for scene, question in _questions("clevr_math_long_chains", scenes, max_objects=12, max_answer=30,
                                      question_types=(family,)):
        _check_row(scene, question)
        checked += 1
    assert checked >= least


def test_the_same_seed_gives_the_same_steps_and_a_wrong_step_is_refused():
    scene, question = next((s, q) for s, q in _questions("clevr_math", 6, max_answer=10, templates_per_image=13)
                           if q["category"] == "insertion")
    again = step_scenes(scene, question["program"], question["category"], seed=0, question=question["question"])
    assert steps_json(again) == steps_json(question["steps"])
    moved = json.loads(steps_json(question["steps"]))
    moved[0]["objects"][0]["3d_coords"][0] += 0.5  # a kept object moved
    with pytest.raises(StepError, match="changed the objects it kept"):
        check_steps(scene, question["program"], question["category"], moved, question["intermediate_counts"],
                    question["answer"])
    with pytest.raises(StepError, match="the answer is"):
        check_steps(scene, question["program"], question["category"], question["steps"],
                    question["intermediate_counts"], str(int(question["answer"]) + 1))


def test_step_images_by_pillow_show_every_object_and_differ_per_step():
    scene, question = next((s, q) for s, q in _questions("clevr_math_long_chains", 6, max_answer=30,
                                                          question_types=("chain_3",)))
    camera = studio_camera(scene)
    images = [draw_world(world, camera) for world in [scene, *question["steps"]]]
    assert [image.size for image in images] == [(480, 320)] * 4
    pixels = [image.tobytes() for image in images]
    assert len(set(pixels)) == 4  # each operation changes the picture


def test_a_real_clevr_camera_is_recovered_from_pixel_coords():
    from builder_utils.clevr.synth.camera import Camera

    truth = Camera(location=(7.0, -7.3, 5.2))
    scene = generate_scene(0, "val", 3, camera=truth)
    fitted = studio_camera(scene)
    assert max(abs(a - b) for a, b in zip(fitted.location, truth.location)) < 0.05


def test_insertions_in_a_jittered_camera_world_are_projected_by_that_camera():
    # Real CLEVR jitters its camera per image: new objects' pixel_coords must come from that camera.
    from builder_utils.clevr.synth.camera import Camera

    truth = Camera(location=(7.6, -6.6, 5.1))
    gen = QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=0, max_answer=10, question_types=("addition",)),
                            on_question=functools.partial(add_steps, seed=0))
    checked = 0
    for index in range(6):
        scene = generate_scene(0, "val", index, camera=truth)
        for question in gen.generate_scene(scene, index):
            new = question["steps"][0]["objects"][len(scene["objects"]):]
            for obj in new:
                px, py, _ = truth.project_point(obj["3d_coords"])
                assert abs(px - obj["pixel_coords"][0]) <= 2 and abs(py - obj["pixel_coords"][1]) <= 2
                checked += 1
            assert min(visible_pixels(question["steps"][0], truth)) >= FLOOR
    assert checked >= 3


def test_a_full_floor_makes_the_generator_choose_another_question():
    # Crowded worlds and eight insertions: a question whose steps do not fit is replaced by another
    # template's question on the same scene, never kept with a wrong world.
    plain = QuestionGenerator(GeneratorOptions(templates="clevr_math_long_chains", seed=0, max_answer=30,
                                               bound_intermediate_counts=True, question_types=("same_sign_8", "chain_2"),
                                               templates_per_image=1))
    stepped = QuestionGenerator(GeneratorOptions(templates="clevr_math_long_chains", seed=0, max_answer=30,
                                                 bound_intermediate_counts=True, question_types=("same_sign_8", "chain_2"),
                                                 templates_per_image=1), on_question=functools.partial(add_steps, seed=0))
    replaced = 0
    for index in range(20):
        scene = generate_scene(0, "val", index, max_objects=12)
        asked = plain.generate_scene(scene, index)
        unplaceable = []
        for question in asked:
            try:
                step_scenes(scene, question["program"], question["category"], seed=0, question=question["question"])
            except UnplaceableStep:
                unplaceable.append(question["question"])
        kept = stepped.generate_scene(scene, index)
        assert not {q["question"] for q in kept} & set(unplaceable)
        if unplaceable:  # the one question plain asks: stepped asks the other template's instead
            assert [q["template_filename"] for q in kept] == ["chain_2"]
            replaced += 1
        for question in kept:
            _check_row(scene, question)
    assert replaced >= 1


def test_stream_rows_carry_steps_and_their_images_in_order():
    import io

    from PIL import Image

    from clevr_math import problems, stream

    rows = list(stream(seed=4, num_questions=6, num_shards=1, render_steps=True, num_operations=3).decode(False))
    for row in rows:
        scene, steps = json.loads(row["scene"]), json.loads(row["steps"])
        question = {"program": row["program"], "steps": steps, "answer": str(row["label"]), "question": row["question"],
                    "category": "multihop", "template_filename": row["template"], "template_index": 0,
                    "intermediate_counts": [len(step["objects"]) for step in steps]}
        _check_row(scene, question)
        assert question["intermediate_counts"][-1] == row["label"]
        assert len(row["images"]) == len(steps) + 1 == 4
        assert [part["type"] for part in row["prompt"][-1]["content"]] == ["image"] * 4 + ["text"]
        assert row["verl_prompt"][-1]["content"].startswith("<image>" * 4 + row["question"][:5])
        drawn = [Image.open(io.BytesIO(image["bytes"])) for image in row["images"]]
        assert drawn[0].tobytes() == draw_world(scene, studio_camera(scene)).tobytes()
        for world, image in zip([scene, *steps], drawn):
            assert image.tobytes() == draw_world(world, studio_camera(scene)).tobytes()
            assert min(visible_pixels(world), default=FLOOR) >= FLOOR
    plain = list(stream(seed=4, num_questions=2, num_shards=1, num_operations=3).decode(False))
    assert all(row["steps"] is None and len(row["images"]) == 1 for row in plain)
    table = problems(size=3, seed=4, step_scenes=True, num_operations=2)
    assert all(len(json.loads(text)) == 2 for text in table["steps"])
    with pytest.raises(ValueError, match="takes one image"):  # a trainer layout would drop the step images
        stream(seed=4, render_steps=True, trainer_format="easyr1")


# -- the builder: steps, step images and the changes configuration ----------------------------


@pytest.fixture(scope="module")
def small_clevr(tmp_path_factory):
    from builder_utils.clevr.synth import write_clevr_folder

    root = tmp_path_factory.mktemp("clevr_steps") / "CLEVR_v1.0"
    write_clevr_folder(root, {"train": 6, "val": 3, "test": 3}, seed=0, progress=False)
    return root


def test_builder_rows_carry_checked_steps_and_every_world(small_clevr, tmp_path):
    from builder_utils.clevr import load_scenes
    from clevr_math import ClevrMath

    builder = ClevrMath(config_name="general", data_dir=str(small_clevr), cache_dir=str(tmp_path / "cache"),
                        render_steps=True)
    builder.download_and_prepare()
    rows = builder.as_dataset()["train"].cast_column("step_images", builder.info.features["step_images"])
    scenes = {s["image_filename"]: s for s in load_scenes(small_clevr / "scenes" / "CLEVR_train_scenes.json")}
    names = rows.features["category"].names
    for row in rows:
        scene, steps = scenes[row["image_filename"]], json.loads(row["steps"])
        check_steps(scene, row["program"], names[row["category"]], steps, row["intermediate_counts"], str(row["label"]))
        assert len(row["step_images"]) == len(steps) + 1
        for world, image in zip([scene, *steps], row["step_images"]):
            assert image.tobytes() == draw_world(world, studio_camera(scene)).tobytes()


def test_changes_configuration_builds_exports_loads_and_its_rewards_score(small_clevr, tmp_path):
    import datasets

    from builder_utils.clevr import load_scenes
    from builder_utils.hub import export_builder
    from clevr_math import ClevrMath
    from clevr_math.rewards import accuracy_reward, compute_score

    out = tmp_path / "hub"
    export_builder(ClevrMath, out, card_template="clevr_math", data_dir=str(small_clevr), configs=["changes"],
                   cache_dir=str(tmp_path / "cache"), progress=False)
    loaded = datasets.load_dataset(str(out), "changes")
    train = loaded["train"]
    assert len(train) > 0 and set(train.features["category"].names) >= {"changes"}
    assert {train.features["category"].int2str(c) for c in train["category"]} == {"changes"}
    scenes = {s["image_filename"]: s for s in load_scenes(small_clevr / "scenes" / "CLEVR_train_scenes.json")}
    kinds = set()
    for row in train:
        scene, steps = scenes[row["image_filename"]], json.loads(row["steps"])
        before, after = scene, steps[0]
        counts = (len(before["objects"]), len(after["objects"]))
        text = row["question"]
        if text.endswith("How many objects were removed?"):
            assert row["label"] == counts[0] - counts[1]
        elif text.endswith("How many objects were added?"):
            assert row["label"] == counts[1] - counts[0]
        elif text.endswith("there before?"):
            assert row["label"] == counts[0] and len(row["step_images"]) == 1
        else:
            asked = re.search(r"How many (\w+?)s? (?:objects )?were (removed|added)\?$", text)
            attribute = "shape" if asked.group(2) == "removed" else "color"
            value = asked.group(1)
            a = sum(o[attribute] == value for o in before["objects"])
            b = sum(o[attribute] == value for o in after["objects"])
            assert row["label"] == abs(a - b)
        kinds.add(row["question_family_index"])
        assert len(row["step_images"]) in (1, 2)
        right, wrong = str(row["label"]), str(row["label"] + 1)
        assert accuracy_reward([f"<answer>{right}</answer>", f"<answer>{wrong}</answer>"], answer=[right, right]) == [1.0, 0.0]
        assert compute_score("clevr_math", f"Answer: {right}", right) == 1.0
        assert compute_score("clevr_math", f"Answer: {wrong}", right) == 0.0
    assert len(kinds) >= 3
    # The prompts configuration of a build with render_steps: every world of a problem, one placeholder each.
    export_builder(ClevrMath, tmp_path / "hub_steps", card_template="clevr_math", data_dir=str(small_clevr),
                   configs=["prompts"], builder_kwargs={"render_steps": True}, cache_dir=str(tmp_path / "cache2"),
                   progress=False)
    prompts = datasets.load_dataset(str(tmp_path / "hub_steps"), "prompts")["train"]
    images = [len(r["images"]) for r in prompts]
    placeholders = [sum(p["type"] == "image" for p in r["prompt"][-1]["content"]) for r in prompts]
    assert images == placeholders and max(images) >= 2
