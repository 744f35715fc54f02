"""Metrics on synthetic predictions of known accuracy (exact), intervals, baselines, report files."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from builder_utils.evaluation.accuracy import bootstrap_interval, score, summarize
from builder_utils.evaluation.spec import Baseline, Question
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.report import write_report
from builder_utils.evaluation.evaluate import system_result
from clevr_math.evaluation import SPEC as MATH_SPEC, math_question
from clotho_aqa.evaluation import SPEC as AQA_SPEC, aqa_question

# The same right answer n, written the ways models write it.
RIGHT = ["{n}", "Answer: {n}", "\\boxed{{{n}}}", "There are {n} objects left.", "{word}", "The answer is {word}.",
         "<answer>{n}</answer>", "Step 1: 10 objects. Step 2: 10 - 4 = {n}.\nAnswer: {n}."]
WRONG = ["{m}", "Answer: {m}", "There are {m_word} cubes left.", "\\boxed{{{m}}}"]
WORDS = "zero one two three four five six seven eight nine ten eleven".split()
CATEGORIES = ["remove_group", "insertion", "multihop", "adversarial"]


def _questions(count: int):
    return [math_question(f"q{i}", str(i % 10), CATEGORIES[i % 4], f"t[{i % 3}]", 1 + (i % 4 == 2))
            for i in range(count)]


def _predictions(questions, right: set[int], unparseable: set[int], missing: set[int]) -> dict[str, str]:
    out = {}
    for i, q in enumerate(questions):
        n = int(q.answers[0])
        if i in missing:
            continue
        if i in unparseable:
            out[q.question_id] = "I cannot tell from the image."
        elif i in right:
            out[q.question_id] = RIGHT[i % len(RIGHT)].format(n=n, word=WORDS[n])
        else:
            m = n + 1
            out[q.question_id] = WRONG[i % len(WRONG)].format(m=m, m_word=WORDS[m])
    return out


def test_seventy_percent_right_in_many_styles_scores_exactly_seventy_percent():
    questions = _questions(100)
    right = set(range(0, 100)) - set(range(3, 100, 10)) - set(range(7, 100, 10)) - set(range(9, 100, 10))
    assert len(right) == 70
    unparseable, missing = {3, 13, 23}, {7, 17}
    result = system_result(MATH_SPEC, questions, _predictions(questions, right, unparseable, missing))
    overall = result["overall"]
    assert overall["accuracy"] == 0.7
    assert (overall["correct"], overall["total"], overall["unparseable"], overall["missing"]) == (70, 100, 3, 2)
    for category, summary in result["by_category"].items():
        members = [i for i, q in enumerate(questions) if q.keys["category"] == category]
        assert summary["correct"] == len(right & set(members)) and summary["total"] == len(members)
        assert summary["accuracy"] == len(right & set(members)) / len(members)
    assert list(result["by_category"]) == CATEGORIES[:2] + ["adversarial", "multihop"]  # the paper's order
    assert set(result["by_num_operations"]) == {"1", "2"} and set(result["by_hop"]) == {"single-hop", "multihop"}
    assert result["by_hop"]["multihop"]["total"] == 25


def test_clotho_labellings_on_known_predictions():
    questions = [
        aqa_question("a", "Is it raining?", ("yes", "yes", "yes"), "yes_no"),   # unanimous
        aqa_question("b", "Is there a dog?", ("no", "no", "yes"), "yes_no"),     # majority no
        aqa_question("c", "Is it loud?", ("yes", "no", "no"), "yes_no"),          # majority no
        aqa_question("d", "What is heard?", ("rain", "rain", "water"), "single_word"),
        aqa_question("e", "How many birds?", ("two", "three", "one"), "single_word"),  # no majority
    ]
    predictions = {"a": "Yes.", "b": "Yes, there is.", "c": "no", "d": ["water", "rain"], "e": "I hear 3 birds"}
    result = system_result(AQA_SPEC, questions, predictions, "questions", {"rain", "water", "two", "three", "one", "birds"})
    labels = result["by_labelling"]
    # unfiltered: a 3/3, b 1/3, c 2/3 -> 6/9
    assert (labels["yes_no/unfiltered"]["correct"], labels["yes_no/unfiltered"]["total"]) == (6, 9)
    assert (labels["yes_no/unanimous"]["correct"], labels["yes_no/unanimous"]["total"]) == (1, 1)
    assert (labels["yes_no/majority"]["correct"], labels["yes_no/majority"]["total"]) == (2, 3)
    # single word, top-1: d predicts water (1 of 3 answers), e predicts three (1 of 3)
    sw = labels["single_word/unfiltered"]
    assert (sw["correct"], sw["total"], sw["top_5_correct"]) == (2, 6, 4)
    assert (labels["single_word/majority"]["correct"], labels["single_word/majority"]["top_5"]) == (0, 1.0)
    assert result["overall"]["correct"] == 8 and result["overall"]["total"] == 15
    assert list(result["by_category"]) == ["yes_no", "single_word"]


def test_bootstrap_intervals_are_seeded_and_contain_the_accuracy():
    assert bootstrap_interval(70, 100, seed=3) == bootstrap_interval(70, 100, seed=3)
    assert bootstrap_interval(70, 100, seed=3) != bootstrap_interval(70, 100, seed=4)
    low, high = bootstrap_interval(70, 100, seed=0, resamples=2000)
    assert 0.58 < low < 0.7 < high < 0.8
    assert bootstrap_interval(0, 10) == [0.0, 0.0] and bootstrap_interval(0, 0) is None
    empty = summarize([])
    assert empty["accuracy"] is None and empty["ci95"] is None


def test_baselines_are_deterministic_whatever_the_row_order():
    train = _questions(60)
    test = _questions(20)
    first = [b.predictions(train, test) for b in MATH_SPEC.baselines]
    assert [b.predictions(list(reversed(train)), test) for b in MATH_SPEC.baselines] == first
    # ties go to the answer that sorts first; an unseen key backs off to the next, then to the majority
    train = [Question(f"t{i}", (a,), "word", {"k": k, "g": "x"}) for i, (k, a) in enumerate(
        [("k", "3"), ("k", "1"), ("k", "3"), ("k", "1"), ("j", "b"), ("j", "a"), ("j", "b"), ("j", "c")])]
    test = [Question("a", ("1",), "word", {"k": "k", "g": "x"}), Question("b", ("1",), "word", {"k": "z", "g": "x"}),
            Question("c", ("1",), "word", {"k": "z", "g": "y"})]
    assert Baseline("majority").predictions(train, test)["a"] == ["1"]
    assert Baseline("majority", top_k=5).predictions(train[4:], test)["a"] == ["b", "a", "c"]
    assert Baseline("prior", ("k", "g")).predictions(train, test) == {"a": ["1"], "b": ["1"], "c": ["1"]}
    assert Baseline("prior", ("k",)).predictions(train[4:], test[:1]) == {"a": ["b"]}


def test_report_files_are_written_whole_and_never_over_a_users_file(tmp_path):
    report = {"overall": summarize([score(["1"], "1")])}
    out = tmp_path / "eval"
    from builder_utils.evaluation.report import Chart

    charts = [Chart("acc.png", "Accuracy", [("all", {"model": 1.0, "majority": None})], ["model", "majority"])]
    paths = write_report(out, report, "# r", charts)
    assert sorted(p.name for p in paths) == ["acc.png", "report.json", "report.md"]
    assert json.loads((out / "report.json").read_text())["overall"]["accuracy"] == 1.0
    assert Image.open(out / "acc.png").size[0] > 500
    write_report(out, report, "# again", charts)  # ours, unchanged: replaced
    assert (out / "report.md").read_text() == "# again\n"
    (out / "report.md").write_text("# edited by hand\n")
    with pytest.raises(EvaluationError, match="report.md: exists and .*changed since evaluate wrote it.*--overwrite"):
        write_report(out, report, "# r", charts)
    assert (out / "report.md").read_text() == "# edited by hand\n"
    write_report(out, report, "# again", charts, overwrite=True)
    assert (out / "report.md").read_text() == "# again\n"
    (tmp_path / "file").write_text("mine")
    with pytest.raises(EvaluationError, match="not a folder"):
        write_report(tmp_path / "file", report, "# r")
    assert (tmp_path / "file").read_text() == "mine"
    assert [p.name for p in out.glob(".*")] == [".ownership.json"]  # the record only: no temporary file
