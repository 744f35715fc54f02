"""``clevr-math counting-sets``: R1-V's CoGenT counting sets and the out-of-distribution sets, on small worlds."""

from __future__ import annotations

import json
import re

import datasets
import pytest

from builder_utils.clevr.evaluate import oracle_answers, read_clevr_questions
from builder_utils.clevr.synth import cogent_combos
from clevr_math.cli import main as clevr_main
from clevr_math.counting_sets import ITEMS_QUESTION, OOD_CAMERA_JITTER

SIZES = {"train": 12, "val_a": 4, "val_b": 4}
OOD_SIZE = 4
SOLUTION = re.compile(r"<answer> (\d+) </answer>")


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    root = tmp_path_factory.mktemp("counting")
    argv = ["counting-sets", "--out", str(root), "--sizes", ",".join(map(str, SIZES.values())),
            "--ood", "crowded", "camera", "--ood_size", str(OOD_SIZE), "--quiet"]
    assert clevr_main(argv) == 0
    return root


def _rows(out, layout: str, name: str) -> datasets.Dataset:
    return datasets.Dataset.from_parquet(str(out / "sets" / layout / f"{name}.parquet"))


def _scenes(out, name: str) -> list[dict]:
    split = "train" if name == "train" else "val"
    return json.loads((out / "worlds" / name / "scenes" / f"CLEVR_{split}_scenes.json").read_text())["scenes"]


@pytest.mark.parametrize("name", [*SIZES, "crowded", "camera"])
def test_every_solution_is_the_evaluators_answer_on_the_kept_scene_graph(out, name):
    questions_file = out / "sets" / "questions" / f"{name}.json"
    questions = json.loads(questions_file.read_text())["questions"]
    oracle = oracle_answers(read_clevr_questions(questions_file), out / "worlds" / name / "scenes")
    rows = _rows(out, "r1v", name)
    assert len(rows) == len(questions) == SIZES.get(name, OOD_SIZE)
    for row, question in zip(rows, questions):
        assert row["problem"] == question["question"]
        assert SOLUTION.fullmatch(row["solution"]).group(1) == oracle[str(question["question_index"])]
        assert row["image_filename"] == question["image_filename"]


def test_the_sets_mix_clevrs_counting_families_with_how_many_items(out):
    questions = json.loads((out / "sets" / "questions" / "train.json").read_text())["questions"]
    families = {q["template_filename"] for q in questions}
    assert ITEMS_QUESTION in {q["question"] for q in questions}
    assert families - {"items.json"}, "no CLEVR counting family"
    for q in questions:  # every program ends in a count: a counting question, never exist / compare
        assert q["program"][-1].get("type", q["program"][-1].get("function")) == "count"


def test_a_sets_hold_no_cube_or_cylinder_of_a_b_colour(out):
    b_only = {shape: set(cogent_combos("B")[shape]) - set(cogent_combos("A")[shape]) for shape in ("cube", "cylinder")}
    for name in ("train", "val_a", "crowded", "camera"):
        for scene in _scenes(out, name):
            for obj in scene["objects"]:
                assert obj["color"] not in b_only.get(obj["shape"], set()), (name, scene["image_filename"], obj)
    b_colours = [(o["shape"], o["color"]) for s in _scenes(out, "val_b") for o in s["objects"] if o["shape"] in b_only]
    assert b_colours and all(colour in b_only[shape] for shape, colour in b_colours)


def test_the_r1v_and_easyr1_layouts(out):
    r1v, easyr1 = _rows(out, "r1v", "val_b"), _rows(out, "easyr1", "val_b")
    assert {"image", "problem", "solution"} <= set(r1v.column_names)
    assert r1v[0]["image"].size == (480, 320)
    assert len(easyr1[0]["images"]) == 1 and easyr1[0]["problem"].startswith("<image>")
    assert [SOLUTION.fullmatch(s).group(1) for s in r1v["solution"]] == easyr1["answer"]


def test_the_out_of_distribution_sets_differ_as_their_cards_say(out):
    crowded = _scenes(out, "crowded")
    assert all(11 <= len(scene["objects"]) <= 14 for scene in crowded)
    assert max(int(a) for a in _rows(out, "easyr1", "crowded")["answer"]) > 10
    info = json.loads((out / "worlds" / "camera" / "scenes" / "CLEVR_val_scenes.json").read_text())["info"]
    assert info["controls"]["camera_jitter"] == OOD_CAMERA_JITTER
    card = (out / "sets" / "README.md").read_text()
    for line in ("| crowded | 4 | 11-14 objects", "| camera | 4 | another view", "| val_b | 4 | CoGenT-B colours"):
        assert line in card


def test_the_same_seed_writes_the_same_sets(tmp_path):
    digests = []
    for run in ("a", "b"):
        assert clevr_main(["counting-sets", "--out", str(tmp_path / run), "--sizes", "2,1,1", "--quiet"]) == 0
        digests.append([(tmp_path / run / "sets" / "r1v" / f"{n}.parquet").read_bytes() for n in SIZES])
    assert digests[0] == digests[1]


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "5,0,5"], "sizes must be 3 integers"),
    (["--sizes", "5,5"], "sizes must be 3 integers"),
    (["--ood", "fog"], "ood: unknown set 'fog'"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    assert clevr_main(["counting-sets", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_other_sizes_over_a_written_world_are_refused_without_overwrite(tmp_path, capsys):
    assert clevr_main(["counting-sets", "--out", str(tmp_path), "--sizes", "2,1,1", "--quiet"]) == 0
    assert clevr_main(["counting-sets", "--out", str(tmp_path), "--sizes", "3,1,1", "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert clevr_main(["counting-sets", "--out", str(tmp_path), "--sizes", "3,1,1", "--quiet", "--overwrite"]) == 0
    assert len(datasets.Dataset.from_parquet(str(tmp_path / "sets" / "r1v" / "train.parquet"))) == 3
