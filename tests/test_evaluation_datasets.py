"""The evaluate commands on small real exports of both datasets (one export per module).

Real builders, real Parquet exports loaded with ``datasets.load_dataset``, the real console entry
points: the program oracle scores 100 %, predictions of known accuracy score exactly that,
baselines are deterministic (the lmms-eval tasks: tests/test_lmms_eval_tasks.py).
"""

from __future__ import annotations

import json
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from builder_utils.clevr.evaluate import evaluate_questions
from builder_utils.clevr.evaluate import main as clevr_families_main
from builder_utils.clevr.generate_questions import main as generate_questions
from builder_utils.hub import load_exported
from clevr_math import cli as clevr_cli
from clevr_math import evaluation as math_eval
from clotho_aqa import cli as clotho_cli
from clotho_aqa import evaluation as aqa_eval
from evaluation_exports import make_exports

WORDS = "zero one two three four five six seven eight nine ten".split()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_exports(tmp_path_factory.mktemp("evaluation"))


def _rows(data, hub, config, split="test", drop=("image", "audio")):
    ds = load_exported(data[hub], config, cache_dir=data["cache"])[split]
    return list(ds.remove_columns([c for c in drop if c in ds.column_names]))


@pytest.mark.parametrize("config", ["general", "multihop"])
def test_the_program_oracle_scores_100_percent(data, config):
    report = math_eval.evaluate(data["hub_clevr"], config, "test", scenes=data["clevr"], cache_dir=data["cache"])
    oracle = report["baselines"]["oracle"]["overall"]
    assert oracle["accuracy"] == 1.0 and oracle["correct"] == report["num_questions"] > 0
    assert all(s["accuracy"] == 1.0 for s in report["baselines"]["oracle"]["by_template"].values())


def test_a_data_dir_is_built_and_its_scenes_feed_the_oracle(data):
    report = math_eval.evaluate(data["clevr"], "multihop", "test", cache_dir=data["cache"])
    assert report["baselines"]["oracle"]["overall"]["accuracy"] == 1.0
    assert report["generalisation"]["by_hop"]["multihop"]["train_questions"] == 0  # zero-shot, as the paper's config


def _clevr_predictions(rows, right_every=10, wrong_at=(3, 6, 9)):
    """Right answers in several styles, except positions ``i % right_every in wrong_at``."""
    styles = ["{n}", "Answer: {n}", "\\boxed{{{n}}}", "There are {n} objects left.", "{w}", "The answer is {w}."]
    out, right = [], 0
    for i, row in enumerate(rows):
        n = row["label"]
        if i % right_every in wrong_at:
            text = "I cannot tell." if i % 2 else f"Answer: {n + 1}"
        else:
            text = styles[i % len(styles)].format(n=n, w=WORDS[n] if n < len(WORDS) else n)
            right += 1
        out.append({"question_id": row["question_id"], "prediction": text})
    return out, right


def test_clevr_math_evaluate_command_scores_known_accuracy_exactly(data, capsys):
    rows = _rows(data, "hub_clevr", "general")
    predictions, right = _clevr_predictions(rows)
    path = data["root"] / "math_predictions.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    out = data["root"] / "eval_math"
    status = clevr_cli.main(["evaluate", "--data", str(data["hub_clevr"]), "--config", "general", "--split", "test",
                             "--predictions", str(path), "--out", str(out), "--scenes", str(data["clevr"]),
                             "--cache_dir", str(data["cache"])])
    assert status == 0
    report = json.loads((out / "report.json").read_text())
    assert report["overall"]["accuracy"] == right / len(rows)
    assert report["overall"]["correct"] == right and report["overall"]["total"] == len(rows)
    unparseable = sum(p["prediction"] == "I cannot tell." for p in predictions)
    assert report["overall"]["unparseable"] == unparseable > 0 and report["overall"]["missing"] == 0
    for section in ("by_category", "by_template", "by_num_operations"):
        assert sum(s["total"] for s in report[section].values()) == len(rows)
        assert sum(s["correct"] for s in report[section].values()) == right
    low, high = report["overall"]["ci95"]
    assert low <= report["overall"]["accuracy"] <= high
    assert set(report["baselines"]) == {"majority", "category_prior", "template_prior", "oracle"}
    assert set(report["generalisation"]) == {"by_num_operations", "by_hop"}
    markdown = (out / "report.md").read_text()
    assert "## Generalisation" in markdown and "| model |" in markdown and "## By template" in markdown
    for chart in ("accuracy_by_category.png", "accuracy_by_num_operations.png"):
        assert Image.open(out / chart).format == "PNG"
    assert "| model |" in capsys.readouterr().out


def test_baselines_are_deterministic(data, tmp_path):
    first = math_eval.evaluate(data["hub_clevr"], "general", cache_dir=data["cache"], seed=5)
    again = math_eval.evaluate(data["hub_clevr"], "general", cache_dir=data["cache"], seed=5)
    assert first == again and first["baselines"]["majority"]["overall"]["total"] > 0
    math_eval.write_evaluation(first, tmp_path / "a")
    math_eval.write_evaluation(again, tmp_path / "b")
    for name in ("report.json", "report.md", "accuracy_by_category.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    clotho = [aqa_eval.evaluate(data["hub_clotho"], "questions", cache_dir=data["cache"]) for _ in range(2)]
    assert clotho[0] == clotho[1]


def _clotho_predictions(rows):
    """Yes/no: the majority answer for even positions, the other answer for odd ones; single
    words: a ranked list with the majority (or first) answer second."""
    out = []
    known = sorted({a for row in rows if row["answer_type"] == "single_word" for a in row["answers"]})
    for i, row in enumerate(rows):
        answers = row["answers"]
        if row["answer_type"] == "yes_no":
            majority = max(set(answers), key=answers.count)
            other = "no" if majority == "yes" else "yes"
            out.append((row["question_id"], f"{majority.capitalize()}, it is." if i % 2 == 0 else other))
        else:
            gold = row["majority_answer"] or answers[0]
            wrong = next(a for a in known if a != gold)
            out.append((row["question_id"], [wrong, "zzz", gold.upper()]))  # "zzz" is no answer: skipped
    return out


def test_clotho_evaluate_command_scores_every_labelling_exactly(data):
    rows = _rows(data, "hub_clotho", "questions")
    predictions = _clotho_predictions(rows)
    path = data["root"] / "aqa_predictions.parquet"
    # a list column: the ranked single-word answers, and each yes/no answer as a list of one
    pq.write_table(pa.table({"question_id": [q for q, _ in predictions],
                             "prediction": [p if isinstance(p, list) else [p] for _, p in predictions]}), path)
    out = data["root"] / "eval_aqa"
    assert clotho_cli.main(["evaluate", "--data", str(data["hub_clotho"]), "--predictions", str(path),
                            "--out", str(out), "--cache_dir", str(data["cache"]), "--quiet"]) == 0
    report = json.loads((out / "report.json").read_text())
    by_id = dict(predictions)
    yes_no = [r for r in rows if r["answer_type"] == "yes_no"]
    predicted = {r["question_id"]: ("yes" if str(by_id[r["question_id"]]).lower().startswith("yes") else "no")
                 for r in yes_no}
    unfiltered = sum(a == predicted[r["question_id"]] for r in yes_no for a in r["answers"])
    labels = report["by_labelling"]
    assert labels["yes_no/unfiltered"]["accuracy"] == unfiltered / (3 * len(yes_no))
    assert labels["yes_no/majority"]["accuracy"] == sum(i % 2 == 0 for i, r in enumerate(rows)
                                                        if r["answer_type"] == "yes_no") / len(yes_no)
    unanimous = [r for r in yes_no if r["unanimous"]]
    assert labels["yes_no/unanimous"]["total"] == len(unanimous)
    words = [r for r in rows if r["answer_type"] == "single_word"]
    majority_words = [r for r in words if r["majority_answer"] is not None]
    # the gold answer is second in every ranked list: top-1 0 %, top-5 100 % on the majority labelling
    assert labels["single_word/majority"]["accuracy"] == 0.0 and labels["single_word/majority"]["top_5"] == 1.0
    assert labels["single_word/majority"]["total"] == len(majority_words)
    assert report["overall"]["total"] == 3 * len(rows)
    assert set(report["baselines"]) == {"majority", "question_prior"}
    assert (out / "accuracy_by_labelling.png").exists() and "## By labelling" in (out / "report.md").read_text()


@pytest.mark.parametrize("config", ["all", "yes_no_unfiltered"])
def test_clotho_configs_with_one_row_per_answer_give_the_same_scores(data, config):
    base = aqa_eval.evaluate(data["hub_clotho"], "questions", cache_dir=data["cache"])
    other = aqa_eval.evaluate(data["hub_clotho"], config, cache_dir=data["cache"])
    for name in ("majority", "question_prior"):
        for labelling in ("yes_no/unfiltered", "yes_no/unanimous", "yes_no/majority"):
            expected = base["baselines"][name]["by_labelling"][labelling]
            assert other["baselines"][name]["by_labelling"][labelling] == expected


@pytest.mark.parametrize("argv, message", [
    (["--split", "nope"], "has no split 'nope'; it has: train, validation, test"),
    (["--config", "nope"], "nope"),
    (["--predictions", "{root}/unknown.jsonl"], "1 question_id(s) are not in split 'test'"),
    (["--predictions", "{root}/bad.csv"], "bad.csv: line 1: missing column(s) prediction"),
])
def test_bad_input_is_one_error_line_and_status_2(data, capsys, argv, message):
    (data["root"] / "unknown.jsonl").write_text('{"question_id": "nope", "prediction": "3"}\n')
    (data["root"] / "bad.csv").write_text("question_id\nx\n")
    argv = [a.format(root=data["root"]) for a in argv]
    status = math_eval.main(["--data", str(data["hub_clevr"]), "--out", str(data["root"] / "never"),
                             "--cache_dir", str(data["cache"]), *argv])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("clevr-math evaluate: error: ") and message in err
    assert "Traceback" not in err and not (data["root"] / "never").exists()


# --- classic CLEVR families ------------------------------------------------------------

def test_clevr_families_oracle_and_breakdowns(data, tmp_path):
    scenes = data["clevr"] / "scenes" / "CLEVR_val_scenes.json"
    assert generate_questions(["--input_scene_file", str(scenes), "--output_questions_file", str(tmp_path / "q.json"),
                               "--templates", "clevr", "--seed", "0", "--templates_per_image", "6"]) == 0
    questions = json.loads((tmp_path / "q.json").read_text())["questions"]
    predictions = {str(q["question_index"]): (f"The answer is {q['answer']}." if i % 4 else "hmm")
                   for i, q in enumerate(questions)}
    status = clevr_families_main(["--questions", str(tmp_path / "q.json"), "--out", str(tmp_path / "eval"),
                                  "--train_questions", str(tmp_path / "q.json"), "--scenes", str(scenes)])
    assert status == 0
    report = evaluate_questions(tmp_path / "q.json", predictions, scenes=scenes)
    assert report["baselines"]["oracle"]["overall"]["accuracy"] == 1.0
    expected = sum(1 for i in range(len(questions)) if i % 4) / len(questions)
    assert report["overall"]["accuracy"] == expected
    families = {re.sub(r"\.json$", "", q["template_filename"]) for q in questions}
    assert set(report["by_family"]) == families
    assert set(report["by_question_type"]) <= {"count", "exist", "query", "attribute_compare", "integer_compare",
                                                "relation", "logical_and", "logical_or"}
    written = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert written["baselines"]["oracle"]["overall"]["accuracy"] == 1.0


# -- evaluate on data in memory (issue 40): a Dataset, an IterableDataset, a DatasetDict ----------------


def _without_source(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "data"}


@pytest.mark.parametrize("config", ["general", "multihop"])
def test_clevr_math_evaluate_on_an_in_memory_dataset_equals_its_export(data, config):
    import clevr_math

    splits = load_exported(data["hub_clevr"], config, cache_dir=data["cache"])
    predictions = {qid: str(i % 4) for i, qid in enumerate(splits["test"]["question_id"])}
    on_disk = clevr_math.evaluate(data["hub_clevr"], config, predictions=predictions, scenes=data["clevr"],
                                  cache_dir=data["cache"])
    for given, train in ((splits, None), (splits["test"], splits["train"]),
                         (splits["test"].to_iterable_dataset(), splits["train"].to_iterable_dataset())):
        report = clevr_math.evaluate(given, config, predictions=predictions, scenes=data["clevr"], train=train)
        assert _without_source(report) == _without_source(on_disk)
        assert report["data"].startswith("the given ")
    assert on_disk["baselines"]["oracle"]["overall"]["accuracy"] == 1.0 and on_disk["baselines"]["majority"]


def test_clotho_aqa_evaluate_on_an_in_memory_dataset_equals_its_export(data):
    import clotho_aqa

    splits = load_exported(data["hub_clotho"], "all", cache_dir=data["cache"])
    predictions = dict.fromkeys(splits["test"]["question_id"], "yes")
    on_disk = clotho_aqa.evaluate(data["hub_clotho"], "all", predictions=predictions, cache_dir=data["cache"])
    filtered = splits["test"].filter(lambda qid: True, input_columns="question_id")  # as made in a notebook
    report = clotho_aqa.evaluate(filtered, "all", predictions=predictions, train=splits["train"])
    assert _without_source(report) == _without_source(on_disk) and on_disk["overall"]["total"] > 0


def test_evaluate_scores_a_problem_set_and_a_finite_stream(tmp_path):
    import clevr_math

    problems = clevr_math.problems(size=12, seed=0)
    labels = dict(zip(problems["question_id"], map(str, problems["label"])))
    report = clevr_math.evaluate(problems, predictions=labels)
    assert report["overall"]["accuracy"] == 1.0 and report["num_questions"] == 12
    assert "no train questions: the majority and prior baselines are left out" in report["notes"]
    streamed = clevr_math.evaluate(clevr_math.stream(seed=0, num_questions=12, num_shards=1), predictions=labels)
    assert _without_source(streamed) == _without_source(report)
    written = clevr_math.write_evaluation(report, tmp_path / "eval")
    assert {p.name for p in written} >= {"report.json", "report.md"}
    assert "write_evaluation(evaluate(" in clevr_math.write_evaluation.__doc__
    assert "partial" not in clevr_math.write_evaluation.__doc__


def test_evaluate_refuses_what_is_not_a_dataset_in_one_line():
    import clotho_aqa
    from builder_utils.evaluation.data import EvaluationError

    with pytest.raises(EvaluationError, match=r"^split 'test': a list; evaluate takes a path"):
        clotho_aqa.evaluate({"test": [{"question_id": "a"}]}, "questions")
