"""``clotho-aqa evaluate``: score a model's answers on Clotho-AQA the way the paper reports them.

One prediction per question (``question_id`` = ``<file_name>#<question index>``), scored under
every labelling in use:

- yes/no questions, the paper's binary accuracy: ``unfiltered`` (each of the 3 annotator answers
  is a target), ``unanimous`` (questions whose 3 annotators agree) and ``majority`` (the
  majority vote);
- single-word questions: top-1 accuracy over every annotator answer (``unfiltered``, the
  authors' multiclass setting) and over the majority answer (``majority``, >= 2 of 3 agree),
  plus top-5 when predictions are ranked lists.

``overall`` is the unfiltered accuracy over every annotator answer of both question types;
``by_category`` splits it by question type. Yes/no answers are extracted with
:func:`builder_utils.evaluation.extract.extract_yes_no`, single words with
:func:`~builder_utils.evaluation.extract.extract_word` and :func:`clotho_aqa.answers.normalize_answer`
(the builder's own spelling rule), against the train and evaluated answers as vocabulary; a
digit answers a number word (``2`` -> ``two``).

Baselines, scored like a model, learnt from every train annotator answer of the same question
type: ``majority`` (the 5 most frequent answers, ranked) and ``question_prior`` (the most
frequent answers of train questions with the same two leading words, backing off to the
first word, then to the majority). The paper found question-only models as good as
multimodal ones, so compare with ``question_prior``.

Example::

    report = evaluate("demo_output/clotho_aqa/hub", "questions", predictions="preds.jsonl")
    report["by_labelling"]["yes_no/majority"]["accuracy"]
    # -> 0.7
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES, Scored, score, summarize, summarize_groups
from builder_utils.evaluation.baselines import answer_ranking, back_off, ranked_answers
from builder_utils.evaluation.cli import add_evaluate_arguments, evaluate_main, run_evaluation
from builder_utils.evaluation.data import EvaluationError, load_splits, require_known_ids, require_split
from builder_utils.evaluation.extract import NUMBER_WORDS, extract_ranked
from builder_utils.evaluation.predictions import Prediction, given_predictions
from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Labelling, ScoringSpec, Section
from builder_utils.evaluation.report import (
    Chart,
    breakdown_table,
    chart_rows,
    markdown_table,
    overall_table,
    percent,
    report_systems,
    write_report,
)
from clotho_aqa.answers import normalize_answer

__all__ = ["AQAQuestion", "evaluate", "main", "read_questions", "render_markdown", "write_evaluation"]

COLUMNS = ("question_id", "question", "answers", "answer", "label", "answer_type", "annotator")
TYPES = ("yes_no", "single_word")
LABELLINGS = ("yes_no/unfiltered", "yes_no/unanimous", "yes_no/majority", "single_word/unfiltered",
              "single_word/majority")
TOP_K = 5
# "2" answers "how many ...?" as well as "two" does: digits map to the release's number words.
DIGIT_WORDS = {str(value): word for word, value in NUMBER_WORDS.items() if word != "none"}
EXTRACTION = ("yes/no: the first yes/no word of the answer span; single word: the span normalised like the "
              "builder's answers (clotho_aqa.answers.normalize_answer), punctuation and a leading article removed, "
              "else its first known answer word; ranked lists item by item")

CHART_FILES = ("accuracy_by_labelling.png", "accuracy_by_category.png")

#: The labellings by their short name (the rewards' ``labelling=``): rule and description.
RULES = {
    "unfiltered": ("each", "every annotator answer is a target"),
    "unanimous": ("unanimous", "questions whose 3 annotators agree"),
    "majority": ("majority", "the majority vote (>= 2 of 3 agree)"),
    "any_of_3": ("any", "right if it matches any annotator's answer"),
}
#: Each configuration's own labelling: the headline (``overall``) of its report.
CONFIG_LABELLING = {"all": "unfiltered", "questions": "unfiltered", "yes_no_unfiltered": "unfiltered",
                    "yes_no_unanimous": "unanimous", "yes_no_majority": "majority", "single_word": "unfiltered",
                    "single_word_majority": "majority"}


def labelling(name: str, kind: str | None = None) -> Labelling:
    """The labelling ``name`` (a key of :data:`RULES`), over one question type or both.

    Example:
        >>> labelling("any_of_3", "single_word")
        Labelling(name='single_word/any_of_3', rule='any', kinds=('single_word',), top_k=5, description="right if it matches any annotator's answer")
    """
    if name not in RULES:
        raise ValueError(f"unknown labelling {name!r}; valid: {', '.join(RULES)}")
    rule, description = RULES[name]
    if kind is None:
        return Labelling(name, rule, description=description)
    return Labelling(f"{kind}/{name}", rule, (kind,), TOP_K if kind == "single_word" else None, description)


def headline(config: str) -> Labelling:
    """The labelling of ``overall`` for ``config``: its own (majority for ``yes_no_majority`` ...).

    Example:
        >>> headline("yes_no_majority").name, headline("questions").name
        ('majority', 'unfiltered')
    """
    name = CONFIG_LABELLING.get(config, "unfiltered")
    fixed = next((kind for kind in TYPES if config.startswith(kind)), None)
    rule, description = RULES[name]
    return Labelling(name, rule, None if fixed is None else (fixed,), description=description)


#: How Clotho-AQA is scored: yes/no and single-word extraction (the builder's spelling rule,
#: digits as number words, top-5 of ranked lists), every labelling, breakdown by question type,
#: majority and question-only prior baselines per question type.
SPEC = ScoringSpec(
    dataset="clotho_aqa",
    title="Clotho-AQA",
    extractions={"yes_no": Extraction("yes_no"),
                 "single_word": Extraction("word", normalize=normalize_answer, answer_vocabulary=True,
                                           digit_words=True, top_k=TOP_K)},
    labellings=tuple(labelling(name, kind) for kind in TYPES for name in RULES
                     if not (kind == "single_word" and name == "unanimous")),
    headline=headline,
    sections=(Section("by_category", "answer_type", "question type", order=TYPES.index),),
    charts=(ChartSpec(CHART_FILES[0], "Accuracy by labelling (single-word: top-1)", "by_labelling", "labelling"),
            ChartSpec(CHART_FILES[1], "Accuracy by question type", "by_category", "question type")),
    baselines=(Baseline("majority", top_k=TOP_K, within_kind=True),
               Baseline("question_prior", ("leading_words", "first_word"), top_k=TOP_K, within_kind=True)),
    extraction_note=EXTRACTION,
)


@dataclass(frozen=True)
class AQAQuestion:
    """What the scorer needs of one Clotho-AQA question: its annotator answers and type."""

    question_id: str
    question: str
    answers: tuple[str, ...]
    answer_type: str

    @property
    def majority(self) -> str | None:
        """The answer of at least 2 of the 3 annotators, else None.

        Example:
            >>> AQAQuestion("q", "Is it raining?", ("yes", "no", "yes"), "yes_no").majority
            'yes'
        """
        for answer in self.answers:
            if self.answers.count(answer) * 2 > len(self.answers):
                return answer
        return None

    @property
    def unanimous(self) -> bool:
        """Every annotator gave the same answer.

        Example:
            >>> AQAQuestion("q", "Is it raining?", ("no", "no", "no"), "yes_no").unanimous
            True
        """
        return len(set(self.answers)) == 1

    @property
    def leading_words(self) -> str:
        """The question's first two words, lower case: the question-only prior's key.

        Example:
            >>> AQAQuestion("q", "How many birds sing?", ("two",) * 3, "single_word").leading_words
            'how many'
        """
        return " ".join(re.findall(r"[a-z']+", self.question.lower())[:2])


def read_questions(dataset, config: str) -> list[AQAQuestion]:
    """The questions of a split of any Clotho-AQA config, with their annotator answers.

    Configs with one row per annotator answer (``all``, ``yes_no_unfiltered``, ``single_word``)
    are grouped back into questions by ``question_id``.

    Example::

        read_questions(load_exported("hub", "questions")["test"], "questions")[0].answer_type
        # -> 'yes_no'
    """
    columns = dataset.column_names
    fixed_type = next((kind for kind in TYPES if config.startswith(kind)), None)
    label_names = dataset.features["label"].names if "label" in columns else None
    grouped: dict[str, dict] = {}
    for row in dataset:
        entry = grouped.setdefault(row["question_id"], {"question": row["question"], "answers": [],
                                                        "type": row.get("answer_type") or fixed_type})
        if "answers" in columns:
            entry["answers"] = list(row["answers"])
        elif "answer" in columns:
            entry["answers"].append(row["answer"])
        elif label_names is not None and row["label"] >= 0:
            entry["answers"].append(label_names[row["label"]])
    if not grouped:
        return []
    if any(entry["type"] is None for entry in grouped.values()):
        raise EvaluationError(f"config {config!r} has no answer_type column and is not a yes_no/single_word config")
    return [AQAQuestion(qid, e["question"], tuple(normalize_answer(a) for a in e["answers"]), e["type"])
            for qid, e in grouped.items()]


def _vocabulary(*question_lists: Sequence[AQAQuestion]) -> set[str]:
    return {a for questions in question_lists for q in questions if q.answer_type == "single_word" for a in q.answers}


def extract_answers(question: AQAQuestion, prediction: Prediction, vocabulary: set[str]) -> list[str]:
    """The prediction's answers in rank order (yes/no questions: at most one).

    Example:
        >>> q = AQAQuestion("q", "How many birds?", ("two", "two", "three"), "single_word")
        >>> extract_answers(q, ["2", "The birds.", "three"], {"two", "three", "birds"})
        ['two', 'birds', 'three']
    """
    if question.answer_type == "yes_no":
        return extract_ranked(prediction, "yes_no")
    synonyms = {digit: word for digit, word in DIGIT_WORDS.items() if word in vocabulary}
    return extract_ranked(prediction, "word", vocabulary, synonyms, normalize_answer, limit=TOP_K)


def system_result(questions: Sequence[AQAQuestion], predictions: Mapping[str, Prediction], vocabulary: set[str],
                  seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> dict:
    """``overall``, ``by_category`` (question type) and ``by_labelling`` of one system.

    Example:
        >>> qs = [AQAQuestion("a", "Is it wet?", ("yes", "yes", "no"), "yes_no")]
        >>> r = system_result(qs, {"a": "Yes."}, set())
        >>> r["overall"]["correct"], r["overall"]["total"], r["by_labelling"]["yes_no/majority"]["accuracy"]
        (2, 3, 1.0)
    """
    unfiltered: list[tuple[str, Scored]] = []
    labelled: list[tuple[str, Scored]] = []
    for q in questions:
        answers = extract_answers(q, predictions[q.question_id], vocabulary) if q.question_id in predictions else None
        for gold in q.answers:
            unfiltered.append((q.answer_type, score(answers, gold)))
        labelled += [(f"{q.answer_type}/unfiltered", score(answers, gold)) for gold in q.answers]
        if q.answer_type == "yes_no" and q.unanimous:
            labelled.append(("yes_no/unanimous", score(answers, q.answers[0])))
        if q.majority is not None:
            labelled.append((f"{q.answer_type}/majority", score(answers, q.majority)))
    by_labelling = {}
    for labelling in LABELLINGS:
        items = [s for name, s in labelled if name == labelling]
        top_k = TOP_K if labelling.startswith("single_word") else None
        by_labelling[labelling] = summarize(items, seed, resamples, top_k=top_k)
    return {
        "overall": summarize([s for _, s in unfiltered], seed, resamples),
        "by_category": summarize_groups(unfiltered, seed, resamples, order=TYPES.index),
        "by_labelling": by_labelling,
    }


def baseline_answers(train: Sequence[AQAQuestion], questions: Sequence[AQAQuestion]) -> dict[str, dict[str, list[str]]]:
    """Ranked predictions of ``majority`` and ``question_prior`` (leading words), per question type.

    Example:
        >>> train = [AQAQuestion("t1", "Is it raining?", ("yes", "yes", "no"), "yes_no"),
        ...          AQAQuestion("t2", "Is there a dog?", ("no", "no", "no"), "yes_no")]
        >>> b = baseline_answers(train, [AQAQuestion("q", "Is it windy?", ("no",) * 3, "yes_no")])
        >>> b["majority"]["q"], b["question_prior"]["q"]
        (['no', 'yes'], ['yes', 'no'])
    """
    out: dict[str, dict[str, list[str]]] = {"majority": {}, "question_prior": {}}
    for kind in TYPES:
        rows = [(q, a) for q in train if q.answer_type == kind for a in q.answers]
        majority = ranked_answers((a for _, a in rows), TOP_K)
        by_two = answer_ranking(((q.leading_words, a) for q, a in rows), TOP_K)
        by_one = answer_ranking(((q.leading_words.split(" ")[0], a) for q, a in rows), TOP_K)
        for q in questions:
            if q.answer_type != kind:
                continue
            out["majority"][q.question_id] = majority
            first = q.leading_words.split(" ")[0]
            out["question_prior"][q.question_id] = back_off([(by_two, q.leading_words), (by_one, first)], majority)
    return out


def evaluate(
    data: str | os.PathLike,
    config: str = "questions",
    split: str = "test",
    predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
    train_split: str = "train",
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    cache_dir: str | os.PathLike | None = None,
) -> dict:
    """Score ``predictions`` (a file or a ``{question_id: prediction}`` dict; None: baselines
    only) on ``split`` of ``config`` in ``data``; return the report (what ``report.json`` holds).

    Example::

        evaluate("my-name/clotho-aqa", predictions="preds.csv")["by_labelling"]
    """
    from clotho_aqa import ClothoAQA

    predictions, source = given_predictions(predictions)
    splits = load_splits(data, config, ClothoAQA, COLUMNS, cache_dir)
    questions = read_questions(require_split(splits, split, data, config), config)
    train = read_questions(splits[train_split], config) if train_split in splits else []
    vocabulary = _vocabulary(train, questions)
    notes: list[str] = []
    if not train:
        notes.append(f"no {train_split!r} split: the baselines are left out")
    report: dict = {
        "dataset": "clotho_aqa",
        "data": os.fspath(data),
        "config": config,
        "split": split,
        "train_split": train_split,
        "predictions": source,
        "num_questions": len(questions),
        "num_questions_by_type": {kind: sum(q.answer_type == kind for q in questions) for kind in TYPES},
        "extraction": EXTRACTION,
        "seed": seed,
        "bootstrap_resamples": resamples,
    }
    if predictions is not None:
        require_known_ids(predictions, {q.question_id for q in questions}, source, split, config)
        report.update(system_result(questions, predictions, vocabulary, seed, resamples))
    baselines = {}
    if train:
        for name, answers in baseline_answers(train, questions).items():
            baselines[name] = system_result(questions, answers, vocabulary, seed, resamples)
    report["baselines"] = baselines
    report["notes"] = notes
    return report


def labelling_table(report: Mapping) -> str:
    """The paper's labellings, one row each, one column per system (single-word: top-1, top-5).

    Example::

        print(labelling_table(evaluate("hub")))
    """
    systems = report_systems(report)
    rows = []
    for labelling in LABELLINGS:
        cells = []
        for summary in (result["by_labelling"][labelling] for result in systems.values()):
            cell = percent(summary["accuracy"])
            if f"top_{TOP_K}" in summary:
                cell += f" ({percent(summary[f'top_{TOP_K}'])})"
            cells.append(cell)
        targets = next((r["by_labelling"][labelling]["total"] for r in systems.values()), 0)
        rows.append([labelling, targets, *cells])
    return markdown_table(["labelling", "targets", *systems], rows)


def render_markdown(report: Mapping) -> str:
    """``report.md``: overall, per question type, and the paper's labellings (with top-5).

    Example::

        print(render_markdown(evaluate("hub")))
    """
    systems = report_systems(report)
    counts = report["num_questions_by_type"]
    lines = [
        f"# Clotho-AQA evaluation: config `{report['config']}`, split `{report['split']}`",
        "",
        f"Data `{report['data']}`, {report['num_questions']} questions ({counts['yes_no']} yes/no, "
        f"{counts['single_word']} single-word); predictions `{report['predictions'] or '(none: baselines only)'}`. "
        f"Answer extraction: {report['extraction']}. Unparseable and missing predictions count as wrong. "
        f"95% intervals: percentile bootstrap, {report['bootstrap_resamples']} resamples, seed {report['seed']}. "
        f"Baselines learn from the `{report['train_split']}` split.",
        "",
        "## Overall (every annotator answer is a target)",
        "",
        overall_table(systems),
        "",
        "## By labelling",
        "",
        "yes/no: the paper's binary accuracy; single-word: top-1 (top-5 in brackets).",
        "",
    ]
    lines += [labelling_table(report), ""]
    lines += ["## By question type (unfiltered)", "", breakdown_table("question type", systems, "by_category"), ""]
    if report.get("notes"):
        lines += ["## Notes", ""] + [f"- {note}" for note in report["notes"]] + [""]
    return "\n".join(lines)


def charts(report: Mapping) -> list[Chart]:
    """Accuracy by labelling and by question type, every system.

    Example::

        [c.filename for c in charts(report)]
        # -> ['accuracy_by_labelling.png', 'accuracy_by_category.png']
    """
    systems = report_systems(report)
    subtitle = f"Clotho-AQA {report['config']} / {report['split']}, {report['num_questions']} questions"
    return [
        Chart(CHART_FILES[0], "Accuracy by labelling (single-word: top-1)",
              chart_rows(systems, "by_labelling"), list(systems), subtitle=subtitle, value_label="labelling"),
        Chart(CHART_FILES[1], "Accuracy by question type (unfiltered)",
              chart_rows(systems, "by_category"), list(systems), subtitle=subtitle, value_label="question type"),
    ]


def write_evaluation(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the charts into ``out``.

    Example::

        write_evaluation(evaluate("hub"), "eval")
    """
    return write_report(out, report, render_markdown(report), charts(report), overwrite=overwrite)


def evaluate_demo(hub: str | os.PathLike, out: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
                  stream=None) -> dict:
    """The demo's last step: the baselines on the test split of the demo export's ``questions``
    config, the report in ``out``, the labelling table printed.

    Example::

        evaluate_demo("demo_output/clotho_aqa/hub", "demo_output/clotho_aqa/evaluation")
    """
    stream = stream or sys.stdout
    report = evaluate(hub, "questions", "test", cache_dir=cache_dir)
    write_evaluation(report, out, overwrite=True)
    print(f"\nbaselines on questions/test ({report['num_questions']} questions), report in {out}:", file=stream)
    print(labelling_table(report), file=stream)
    return report


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``clotho-aqa evaluate`` on ``parser``; ``args.run(args)`` evaluates.

    Example:
        >>> p = add_arguments(argparse.ArgumentParser())
        >>> p.parse_args(["--data", "hub", "--out", "o"]).config
        'questions'
    """
    add_evaluate_arguments(parser, default_config="questions")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Evaluate, write the report, print the overall table.

    Example::

        parser = argparse.ArgumentParser()
        add_arguments(parser)
        run(parser.parse_args(["--data", "hub/clotho_aqa", "--out", "eval"]))
        # -> 0
    """
    return run_evaluation(args, evaluate, write_evaluation, CHART_FILES)


def main(argv: Sequence[str] | None = None, prog: str = "clotho-aqa evaluate") -> int:
    """``clotho-aqa evaluate`` entry point; returns the exit status (2 for bad input).

    Example:
        >>> main(["--data", "/nonexistent/folder", "--out", "/tmp/eval"])
        2
    """
    return evaluate_main(argv, prog, __doc__.split("\n\n")[0], add_arguments, package="clotho_aqa")


if __name__ == "__main__":
    sys.exit(main())
