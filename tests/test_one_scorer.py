"""One scorer by default: ``evaluate``, the training rewards (TRL's ``accuracy_reward`` and
verl's ``compute_score``) and the lmms-eval tasks' ``process_results`` give the same score to the
same completion, each with its default arguments.

A table of completions (answers alone, in tags, inside sentences, as number words and digits,
wrong, empty) goes through all of them on real exports of both datasets (the real builders); the
lmms-eval functions are called in-process from the task utils (lmms-eval itself is not needed:
tests/test_lmms_eval_harness.py runs them inside it). ``evaluate`` is run once per row of the
table, on every test question, and compared by labelling; the rewards and the lmms-eval records
question by question.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clevr_math import evaluation as math_eval
from clevr_math import rewards as math_rewards
from clevr_math.lmms_eval import utils as math_utils
from clotho_aqa import evaluation as aqa_eval
from clotho_aqa import rewards as aqa_rewards
from clotho_aqa.lmms_eval import utils as aqa_utils
from clotho_aqa.answers import normalize_answer
from clotho_aqa.columns import single_word_vocabulary
from clotho_aqa.release import find_release_files, read_questions
from clotho_aqa.scoring import ANSWER_VOCABULARY, RULES, SPEC, VOCABULARY_FILE, aqa_question
from evaluation_exports import make_exports
from evaluation_exports import media_free_rows as _rows

#: Clotho-AQA completions: {w} an annotator's answer of the question (the majority when there is
#: one), {W} the same in capitals, {yn} the yes/no majority, {other} the other yes/no answer.
CLOTHO_TABLE = [
    "It is {w}.", "{W}.", "<answer>{w}</answer>", "<think>I hear it.</think><answer>The {w}</answer>",
    "The answer is {w}", "I think it is {w} or rain.", "It sounds like {w}.", "{w}s", "\\boxed{{zzz}}",
    "It is metal.", "2", "", "{yn}", "{YN}, it is.", "<answer>{other}</answer>", "y", "Nope.", "I cannot tell.",
]
#: CLEVR-Math completions: {n} the answer, {m} a wrong one, {word} the answer as a word.
CLEVR_TABLE = ["{n}", "There are {n} left.", "\\boxed{{{n}}}", "<think>5 - 2</think><answer>{n}</answer>",
               "{word} objects.", "Removing {m} leaves {n}.", "Answer: {m}", "I cannot tell.", ""]
_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_exports(tmp_path_factory.mktemp("one_scorer"))


def _clotho_text(template: str, row: dict) -> str:
    answers = row["answers"]
    word = row["majority_answer"] or answers[0]
    yes_no = row["majority_answer"] if row["answer_type"] == "yes_no" and row["majority_answer"] else "yes"
    return template.format(w=word, W=word.upper(), yn=yes_no, YN=yes_no.capitalize(),
                           other="no" if yes_no == "yes" else "yes")


@pytest.mark.parametrize("template", CLOTHO_TABLE)
def test_clotho_completions_score_the_same_everywhere(data, template):
    rows = _rows(data, "hub_clotho", "questions")
    texts = [_clotho_text(template, row) for row in rows]
    report = aqa_eval.evaluate(data["hub_clotho"], "questions", predictions={r["question_id"]: t for r, t in
                                                                             zip(rows, texts)},
                               cache_dir=data["cache"], resamples=10)
    records = [aqa_utils.clotho_aqa_process_results(row, [text]) for row, text in zip(rows, texts)]
    for name in RULES:
        rewards = aqa_rewards.make_accuracy_reward(name)(
            texts, answer=[r["majority_answer"] for r in rows], answers=[r["answers"] for r in rows],
            answer_type=[r["answer_type"] for r in rows])
        for kind in ("yes_no", "single_word"):
            labelling = f"{kind}/{name}"
            metric = next(m for m, lab in aqa_utils.METRICS.items() if lab == labelling)
            mine = [(record[metric].get("score"), reward) for record, reward, row in zip(records, rewards, rows)
                    if row["answer_type"] == kind]
            assert [lmms for lmms, _ in mine] == [reward for _, reward in mine], (labelling, template)
            summary = report["by_labelling"][labelling]
            assert sum(r[metric]["correct"] for r in records) == summary["correct"], (labelling, template)
            assert sum(r[metric]["targets"] for r in records) == summary["total"], (labelling, template)
            scored = [v for _, v in mine if v is not None]
            if name != "unfiltered":  # one target a question: the rewards' sum is evaluate's count
                assert (sum(scored), len(scored)) == (summary["correct"], summary["total"]), (labelling, template)
        verl = [aqa_rewards.compute_score("clotho_aqa", text, row["answers"], {"labelling": name})
                for text, row in zip(texts, rows)]
        assert verl == [reward or 0.0 for reward in rewards], (name, template)
    # the defaults: majority for the rewards and verl, the config's own labelling for evaluate
    default = aqa_rewards.accuracy_reward(texts, answers=[r["answers"] for r in rows])
    assert default == aqa_rewards.make_accuracy_reward("majority")(texts, answers=[r["answers"] for r in rows])
    assert [aqa_rewards.compute_score("clotho_aqa", t, r["answers"]) for t, r in zip(texts, rows)] == \
        [v or 0.0 for v in default]


def test_the_issues_single_word_example_scores_one_everywhere(data):
    """ "It is metal." against "metal": 1.0 in evaluate, the rewards and lmms-eval (it was 1.0 in
    evaluate only, which alone was given the data's answers)."""
    assert "metal" in ANSWER_VOCABULARY
    question = aqa_question("a.wav#4", "What is the bell made of?", ["metal", "metal", "wood"], "single_word")
    doc = {"question_id": question.question_id, "question": "What is the bell made of?",
           "answers": list(question.answers), "answer_type": "single_word", "file_name": "a.wav"}
    records = aqa_utils.clotho_aqa_process_results(doc, ["It is metal."])
    assert records["single_word_majority_top1"]["score"] == 1.0 and records["single_word_top1"]["score"] == 2 / 3
    assert aqa_rewards.accuracy_reward(["It is metal."], answers=[doc["answers"]]) == [1.0]
    assert aqa_rewards.compute_score("clotho_aqa", "It is metal.", doc["answers"]) == 1.0
    assert SPEC.reward(question, "It is metal.", SPEC.labelling("single_word/majority")) == 1.0
    # and evaluate on an export: a question whose answer is a word, answered in a sentence
    rows = [r for r in _rows(data, "hub_clotho", "questions") if r["answer_type"] == "single_word"
            and r["majority_answer"]]
    predictions = {r["question_id"]: f"It is {r['majority_answer']}." for r in rows}
    report = aqa_eval.evaluate(data["hub_clotho"], "questions", predictions=predictions, cache_dir=data["cache"],
                               resamples=10, ignore_extra_ids=True)
    assert report["by_labelling"]["single_word/majority"]["correct"] == len(rows) > 0


def test_a_word_outside_the_shipped_answers_is_still_read_as_itself():
    """A release with answers the shipped vocabulary lacks: the one-word span is that word, the
    same in every scorer; a sentence without a known word stays unparseable."""
    assert "kazoo" not in ANSWER_VOCABULARY
    doc = {"question_id": "b.wav#5", "question": "What sound?", "answers": ["kazoo"] * 3,
           "answer_type": "single_word", "file_name": "b.wav"}
    for text, expected in (("<answer>Kazoo</answer>", 1.0), ("It is kazoo.", 0.0), ("kazoos", 0.0)):
        assert aqa_utils.clotho_aqa_process_results(doc, [text])["single_word_majority_top1"]["score"] == expected
        assert aqa_rewards.accuracy_reward([text], answers=[doc["answers"]]) == [expected]
    question = aqa_question("q", "What sound?", ["kazoo"] * 3, "single_word")
    assert SPEC.answers(question, "It is kazoo.") == [] and SPEC.answers(question, "Kazoo!") == ["kazoo"]


@pytest.mark.parametrize("config", ["general", "multihop"])
def test_clevr_math_completions_score_the_same_everywhere(data, config):
    rows = _rows(data, "hub_clevr", config)
    for template in CLEVR_TABLE:
        texts = [template.format(n=r["label"], m=r["label"] + 1, word=_WORDS[r["label"]]) for r in rows]
        report = math_eval.evaluate(data["hub_clevr"], config, predictions={r["question_id"]: t for r, t in
                                                                            zip(rows, texts)},
                                    cache_dir=data["cache"], resamples=10)
        records = [math_utils.clevr_math_process_results(row, [text])["accuracy"] for row, text in zip(rows, texts)]
        rewards = math_rewards.accuracy_reward(texts, answer=[str(r["label"]) for r in rows])
        verl = [math_rewards.compute_score("clevr_math", text, str(r["label"])) for text, r in zip(texts, rows)]
        assert [record["score"] for record in records] == rewards == verl, template
        assert sum(rewards) == report["overall"]["correct"] and len(rows) == report["overall"]["total"], template


def test_the_shipped_answers_are_the_releases_label_classes_and_cover_the_synthetic_release(data, tmp_path):
    lines = [line for line in VOCABULARY_FILE.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    assert lines == sorted(set(lines)) and len(lines) == len(ANSWER_VOCABULARY) == 828
    assert all(normalize_answer(word) == word and word not in ("yes", "no") for word in lines)
    # the demo's synthetic release: every single-word answer is a shipped one (its label classes too)
    questions = read_questions(find_release_files(data["release"])["csv"])
    assert {a for q in questions if q.answer_type == "single_word" for a in q.answers} <= ANSWER_VOCABULARY
    # the official release, when its QA tables are at hand (never needed: CLOTHO_AQA_CSV_DIR)
    folder = os.environ.get("CLOTHO_AQA_CSV_DIR")
    if not folder:
        pytest.skip("CLOTHO_AQA_CSV_DIR (the official clotho_aqa_{train,val,test}.csv) not set")
    official = read_questions({split: Path(folder) / f"clotho_aqa_{split}.csv" for split in ("train", "val", "test")})
    assert single_word_vocabulary(official, "train") == lines
