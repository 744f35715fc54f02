"""The scoring spec: Clotho-AQA headlines and labellings, rewards equal to ``evaluate``,
TRL-style completions, linear extraction (counted work), hostile prediction files.

Real builders and exports (a synthetic Clotho-AQA release, synthetic CLEVR scenes), the real
console entry points.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.evaluate import system_result
from builder_utils.evaluation.extract import Work, answer_span, extract_integer, extract_word, extract_yes_no
from builder_utils.evaluation.rewards import format_ok, make_format_reward
from builder_utils.hub import export_builder, load_exported
from clevr_math import ClevrMath
from clevr_math import evaluation as math_eval
from clevr_math import rewards as math_rewards
from clotho_aqa import ClothoAQA
from clotho_aqa import evaluation as aqa_eval
from clotho_aqa import rewards as aqa_rewards
from clotho_aqa.config import registered
from clotho_aqa.synth import write_synthetic_release

CONFIGS = ["questions", "all", "yes_no_unfiltered", "yes_no_unanimous", "yes_no_majority", "single_word",
           "single_word_majority"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("spec")
    release = write_synthetic_release(root / "release", num_files=10, seed=1).root
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)
    cache = root / "cache"
    export_builder(ClothoAQA, root / "hub_clotho", card_template="clotho_aqa", data_dir=release, configs=CONFIGS,
                   cache_dir=cache, progress=False)
    export_builder(ClevrMath, root / "hub_clevr", card_template="clevr_math", data_dir=clevr, configs=["general"],
                   cache_dir=cache, progress=False)
    return {"root": root, "cache": cache, "clotho": root / "hub_clotho", "clevr": root / "hub_clevr"}


def _rows(data, hub, config, split="test"):
    ds = load_exported(data[hub], config, cache_dir=data["cache"])[split]
    return list(ds.remove_columns([c for c in ("image", "audio") if c in ds.column_names]))


def _aqa_predictions(rows):
    """Yes/no: alternately the majority answer and the other one; single words: the first
    annotator's answer in every other question, a wrong word otherwise."""
    out = {}
    for i, row in enumerate(rows):
        answers = row["answers"]
        if row["answer_type"] == "yes_no":
            majority = max(set(answers), key=answers.count)
            out[row["question_id"]] = f"<answer>{majority if i % 2 == 0 else ('no' if majority == 'yes' else 'yes')}</answer>"
        else:
            out[row["question_id"]] = f"I hear {answers[0]}." if i % 2 == 0 else "\\boxed{zzz}"
    return out


@pytest.mark.parametrize("config", CONFIGS)
def test_clotho_headline_is_the_configs_own_labelling(data, config):
    rows = _rows(data, "clotho", "questions")
    predictions = _aqa_predictions(rows)
    full = aqa_eval.evaluate(data["clotho"], "questions", predictions=predictions, cache_dir=data["cache"])
    report = aqa_eval.evaluate(data["clotho"], config, predictions=predictions, cache_dir=data["cache"],
                               ignore_extra_ids=True)
    rows = registered(config)
    name = rows.labelling
    assert report["labelling"]["name"] == report["overall"]["labelling"] == name
    known = {q.question_id for q in aqa_eval.read_questions(
        load_exported(data["clotho"], config, cache_dir=data["cache"])["test"].remove_columns("audio"), config)}
    assert report["ignored_ids"] == len(predictions) - len(known)
    kinds = list(rows.answer_types)
    expected = [full["by_labelling"][f"{k}/{name}"] for k in kinds]
    assert report["overall"]["correct"] == sum(s["correct"] for s in expected)
    assert report["overall"]["total"] == sum(s["total"] for s in expected)
    assert report["overall"]["questions"] == sum(s["questions"] for s in expected) == len(known)
    if name == "unfiltered":
        assert report["overall"]["total"] == 3 * report["overall"]["questions"]
    else:
        assert report["overall"]["total"] == report["overall"]["questions"]
    if kinds != list(aqa_eval.TYPES):
        with pytest.raises(EvaluationError, match="--ignore_extra_ids"):
            aqa_eval.evaluate(data["clotho"], config, predictions=predictions, cache_dir=data["cache"])


def test_the_report_names_the_labelling_and_counts_questions_and_targets(data, tmp_path):
    predictions = _aqa_predictions(_rows(data, "clotho", "questions"))
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"question_id": q, "prediction": p}) + "\n" for q, p in predictions.items()))
    from clotho_aqa import cli

    assert cli.main(["evaluate", "--data", str(data["clotho"]), "--config", "yes_no_majority", "--predictions",
                     str(path), "--out", str(tmp_path / "eval"), "--cache_dir", str(data["cache"]), "--quiet",
                     "--ignore_extra_ids"]) == 0
    markdown = (tmp_path / "eval" / "report.md").read_text()
    assert "## Overall (labelling `majority`: the majority vote" in markdown
    assert "| labelling | questions | targets |" in markdown and "prediction(s) for other questions ignored" in markdown
    assert cli.main(["evaluate", "--data", str(data["clotho"]), "--config", "yes_no_majority", "--predictions",
                     str(path), "--out", str(tmp_path / "never"), "--cache_dir", str(data["cache"])]) == 2


def test_any_of_3_on_hand_made_questions():
    q = aqa_eval.aqa_question
    questions = [q("a", "Is it raining?", ["yes", "no", "no"], "yes_no"),
                 q("b", "Is it loud?", ["no", "no", "no"], "yes_no"),
                 q("c", "What is heard?", ["rain", "water", "rain"], "single_word"),
                 q("d", "How many birds?", ["two", "three", "one"], "single_word"),
                 q("e", "What animal?", ["dog", "dog", "dog"], "single_word")]
    predictions = {"a": "Yes.", "b": "yes", "c": "<answer>water</answer>", "d": "3", "e": ["cat", "dog"]}
    result = system_result(aqa_eval.SPEC, questions, predictions, "questions", {"rain", "water", "two", "three",
                                                                                "one", "dog", "cat"})
    yes_no, words = result["by_labelling"]["yes_no/any_of_3"], result["by_labelling"]["single_word/any_of_3"]
    assert (yes_no["correct"], yes_no["total"], yes_no["questions"]) == (1, 2, 2)  # a: yes is one annotator's
    assert (words["correct"], words["total"], words["top_5_correct"]) == (2, 3, 3)  # e: dog is second
    assert result["by_labelling"]["single_word/majority"]["correct"] == 0  # water is not the majority
    reward = aqa_rewards.make_accuracy_reward("any_of_3", vocabulary={"rain", "water", "two", "three", "one", "dog"})
    assert reward([predictions[x.question_id] for x in questions if x.kind == "single_word"][:2],
                  answers=[list(x.answers) for x in questions[2:4]]) == [1.0, 1.0]


def test_clevr_math_rewards_equal_evaluate(data):
    rows = _rows(data, "clevr", "general")
    styles = ["<think>count</think><answer>{n}</answer>", "\\boxed{{{n}}}", "There are {n} left.", "{m}", "no idea"]
    completions = [styles[i % len(styles)].format(n=r["label"], m=r["label"] + 1) for i, r in enumerate(rows)]
    report = math_eval.evaluate(data["clevr"], "general", predictions={r["question_id"]: c for r, c in
                                                                       zip(rows, completions)}, cache_dir=data["cache"])
    rewards = math_rewards.accuracy_reward(completions, answer=[str(r["label"]) for r in rows], prompts=[None] * len(rows))
    assert sum(rewards) / len(rewards) == report["overall"]["accuracy"]
    assert [math_rewards.compute_score("clevr_math", c, str(r["label"])) for r, c in zip(rows, completions)] == rewards
    assert math_rewards.accuracy_reward(["3", "3"], answer=["3", None]) == [1.0, None]


@pytest.mark.parametrize("labelling", ["majority", "any_of_3", "unanimous"])
def test_clotho_rewards_equal_evaluate(data, labelling):
    rows = _rows(data, "clotho", "questions")
    predictions = _aqa_predictions(rows)
    report = aqa_eval.evaluate(data["clotho"], "questions", predictions=predictions, cache_dir=data["cache"])
    reward = aqa_rewards.make_accuracy_reward(labelling)  # the defaults: the spec's vocabulary, as evaluate's
    values = reward([predictions[r["question_id"]] for r in rows], answer=[r["majority_answer"] for r in rows],
                    answers=[r["answers"] for r in rows], answer_type=[r["answer_type"] for r in rows])
    scored = [v for v in values if v is not None]
    summaries = [s for name, s in report["by_labelling"].items() if name.endswith("/" + labelling)]
    assert len(scored) == sum(s["total"] for s in summaries) > 0
    assert sum(scored) == sum(s["correct"] for s in summaries)
    if labelling == "majority":
        yes_no = [v for v, r in zip(values, rows) if r["answer_type"] == "yes_no" and v is not None]
        assert sum(yes_no) / len(yes_no) == report["by_labelling"]["yes_no/majority"]["accuracy"]
        assert aqa_rewards.accuracy_reward.__name__ == "accuracy_reward"
    verl = [aqa_rewards.compute_score("clotho_aqa", predictions[r["question_id"]], r["answers"],
                                      {"labelling": labelling}) for r in rows if r["answer_type"] == "yes_no"]
    assert verl == [v or 0.0 for v, r in zip(values, rows) if r["answer_type"] == "yes_no"]


def test_trl_conversational_completions_score_like_strings():
    texts = ["<think>two cubes</think>\n<answer>2</answer>", "\\boxed{3}", "I see 4."]
    conversational = [[{"role": "assistant", "content": t}] for t in texts]
    typed = [[{"role": "assistant", "content": [{"type": "text", "text": t}]}] for t in texts]
    answers = ["2", "3", "5"]
    expected = [1.0, 1.0, 0.0]
    for completions in (texts, conversational, typed):
        assert math_rewards.accuracy_reward(completions, answer=answers, completion_ids=None, trainer_state=None) == expected
        assert math_rewards.format_reward(completions) == [1.0, 0.0, 0.0]
        assert make_format_reward("boxed")(completions) == [0.0, 1.0, 0.0]
    assert [f.__name__ for f in (math_rewards.accuracy_reward, math_rewards.format_reward, make_format_reward("boxed"),
                                 aqa_rewards.make_accuracy_reward("any_of_3"))] == [
        "accuracy_reward", "format_reward", "format_reward_boxed", "accuracy_reward_any_of_3"]
    assert aqa_rewards.accuracy_reward([[{"role": "assistant", "content": "No."}]], answer=["no"]) == [1.0]


@pytest.mark.parametrize("text, style, expected", [
    ("<think>a</think><answer>b</answer>", "think_answer", True),
    ("  <think>a</think>\n\n<answer>b</answer>\n", "think_answer", True),
    ("<answer>b</answer>", "think_answer", False),
    ("<think>a</think>x<answer>b</answer>", "think_answer", False),
    ("<think>a</think><answer>b</answer><answer>c</answer>", "think_answer", False),
    ("<answer>b</answer><think>a</think>", "think_answer", False),
    ("so $\\boxed{3}$.", "boxed", True),
    ("\\boxed{3} but then more text", "boxed", False),
    ("no box", "boxed", False),
])
def test_format_conventions(text, style, expected):
    assert format_ok(text, style) is expected


ADVERSARIAL = {
    "open tags": lambda n: "<answer>" * (n // 8),
    "close tags": lambda n: "</answer>" * (n // 9),
    "digits": lambda n: "1" * n,
    "open braces": lambda n: "{" * n,
    "boxed, unclosed": lambda n: "\\boxed{" * (n // 7),
    "markers": lambda n: "answer " + " " * n,
    "deep nesting": lambda n: "{" * (n // 2) + "}" * (n // 2),
    "tag and a long answer": lambda n: "<answer>" + "7" * n,
}


@pytest.mark.parametrize("name", ADVERSARIAL)
def test_extraction_work_is_linear(name):
    make = ADVERSARIAL[name]
    counts = []
    for n in (16_384, 65_536, 262_144):
        work = Work()
        text = make(n)
        extract_integer(text, work)
        extract_yes_no(text, work)
        extract_word(text, work=work)
        counts.append((len(text), work.chars))
    for length, chars in counts:
        assert chars <= 20 * length  # a few passes per extraction, three extractions
    (n1, w1), (_, w2), (n3, w3) = counts
    assert w3 / w1 <= 1.05 * n3 / n1  # 16 times the text: at most 16 times the work


def test_the_quadratic_case_of_the_issue_is_linear_and_bounded_in_memory():
    text = "<answer>" * 16384
    work = Work()
    assert answer_span(text, work) == text
    assert work.chars <= 8 * len(text)
    tracemalloc.start()
    extract_integer("<answer>" + "9" * 1_000_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 6_000_000  # a few copies of the 1 MB text at most, nothing per tag or digit


@pytest.mark.parametrize("name, content, message", [
    ("p.jsonl", '{"question_id": "a", "prediction": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
     "line 1 column 99: nested more"),
    ("p.jsonl", '{"question_id": "a", "prediction": ' + "9" * 10_000 + "}\n", "line 1 column 36: an integer of 10000 digits"),
    ("p.csv", "question_id,prediction\na,\"" + "x" * 200_000 + "\"\n", "not readable CSV (field larger than field limit"),
    # a degenerate but well-formed prediction is read (and would be scored in linear time)
    ("p.jsonl", '{"question_id": "a", "prediction": "' + "<answer>" * 200_000 + '"}\n', "no such folder"),
])
def test_hostile_prediction_files_are_one_line_and_status_2(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    status = math_eval.main(["--data", str(tmp_path / "missing"), "--out", str(tmp_path / "eval"),
                             "--predictions", str(path)])
    err = capsys.readouterr().err
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
