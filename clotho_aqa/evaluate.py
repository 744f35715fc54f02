"""``clotho-aqa evaluate``: score a model's answers on Clotho-AQA the way the paper reports them.

One prediction per question (``question_id`` = ``<file_name>#<question index>``), scored under
every labelling in use:

- yes/no questions, the paper's binary accuracy: ``unfiltered`` (each of the 3 annotator answers
  is a target), ``unanimous`` (questions whose 3 annotators agree) and ``majority`` (the
  majority vote);
- single-word questions: top-1 accuracy over every annotator answer (``unfiltered``, the
  authors' multiclass setting) and over the majority answer (``majority``, >= 2 of 3 agree),
  plus top-5 when predictions are ranked lists.

- either type: ``any_of_3``, right when the answer is any annotator's (NVIDIA/audio-flamingo#6).

``overall`` is the configuration's own labelling (``report["labelling"]`` names it):
``yes_no_majority`` the majority vote, ``yes_no_unanimous`` the unanimous questions,
``questions``, ``all`` and the other unfiltered configs every annotator answer; ``by_category``
splits it by question type. A predictions file made for a larger configuration (every question)
scores with ``ignore_extra_ids``. Yes/no answers are extracted with
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
from pathlib import Path

from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES
from builder_utils.evaluation.cli import add_evaluate_arguments, evaluate_main, run_evaluation
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.predictions import Prediction
from builder_utils.evaluation.report import report_systems
from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Labelling, Question, ScoringSpec, Section
from clotho_aqa.answers import normalize_answer

__all__ = ["CONFIG_LABELLING", "RULES", "SPEC", "aqa_question", "evaluate", "headline", "labelling", "main",
           "read_questions", "render_markdown", "write_evaluation"]

COLUMNS = ("question_id", "question", "answers", "answer", "label", "answer_type", "annotator")
TYPES = ("yes_no", "single_word")
TOP_K = 5
EXTRACTION = ("yes/no: the first yes/no word of the answer span; single word: the span normalised like the "
              "builder's answers (clotho_aqa.answers.normalize_answer), punctuation and a leading article removed, "
              "else its first known answer word, a digit read as its number word; ranked lists item by item")
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
    labellings=tuple(labelling(name, kind) for kind in TYPES for name in RULES),
    headline=headline,
    sections=(Section("by_category", "answer_type", "question type", order=TYPES.index),),
    charts=(ChartSpec(CHART_FILES[0], "Accuracy by labelling (single-word: top-1)", "by_labelling", "labelling"),
            ChartSpec(CHART_FILES[1], "Accuracy by question type", "by_category", "question type")),
    baselines=(Baseline("majority", top_k=TOP_K, within_kind=True),
               Baseline("question_prior", ("leading_words", "first_word"), top_k=TOP_K, within_kind=True)),
    extraction_note=EXTRACTION,
)


def aqa_question(question_id: str, question: str, answers: Sequence[str], answer_type: str) -> Question:
    """One Clotho-AQA question as the spec scores it: its annotator answers, its type, and the
    question-only prior's keys (its first two words, and the first).

    Example:
        >>> aqa_question("q", "How many birds sing?", ["two"] * 3, "single_word").keys["leading_words"]
        'how many'
    """
    words = re.findall(r"[a-z']+", question.lower())
    keys = {"answer_type": answer_type, "leading_words": " ".join(words[:2]), "first_word": " ".join(words[:1])}
    return Question(question_id, tuple(answers), answer_type, keys)


def read_questions(dataset, config: str) -> list[Question]:
    """The questions of a split of any Clotho-AQA config, with their annotator answers.

    Configs with one row per annotator answer (``all``, ``yes_no_unfiltered``, ``single_word``)
    are grouped back into questions by ``question_id``.

    Example::

        read_questions(load_exported("hub", "questions")["test"], "questions")[0].kind
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
    return [aqa_question(qid, e["question"], [normalize_answer(a) for a in e["answers"]], e["type"])
            for qid, e in grouped.items()]


def evaluate(
    data: str | os.PathLike,
    config: str = "questions",
    split: str = "test",
    predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
    train_split: str = "train",
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    cache_dir: str | os.PathLike | None = None,
    ignore_extra_ids: bool = False,
    builder_kwargs: dict | None = None,
) -> dict:
    """Score ``predictions`` (a file or a ``{question_id: prediction}`` dict; None: baselines
    only) on ``split`` of ``config`` in ``data``; return the report (what ``report.json`` holds).
    ``ignore_extra_ids``: predictions for questions outside ``config`` are left out and counted.

    Example::

        evaluate("my-name/clotho-aqa", "yes_no_majority", predictions="preds.csv", ignore_extra_ids=True)["overall"]
    """
    from clotho_aqa import ClothoAQA

    return engine.evaluate_dataset(SPEC, read_questions, ClothoAQA, COLUMNS, data, config, split, predictions,
                                   train_split, seed, resamples, cache_dir, ignore_extra_ids,
                                   builder_kwargs=builder_kwargs)


def render_markdown(report: Mapping) -> str:
    """``report.md``: overall (named by its labelling), every labelling (with top-5), per type.

    Example::

        print(render_markdown(evaluate("hub")))
    """
    return engine.render_markdown(SPEC, report)


def write_evaluation(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the charts into ``out``.

    Example::

        write_evaluation(evaluate("hub"), "eval")
    """
    return engine.write_evaluation(SPEC, report, out, overwrite)


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
    print(engine.labelling_table(SPEC, report_systems(report)), file=stream)
    return report


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``clotho-aqa evaluate`` on ``parser``; ``args.run(args)`` evaluates.

    Example:
        >>> p = add_arguments(argparse.ArgumentParser())
        >>> p.parse_args(["--data", "hub", "--out", "o"]).config
        'questions'
    """
    add_evaluate_arguments(parser, default_config="questions")
    from builder_utils.clevr.options import add_builder_flags
    from clotho_aqa.config import ClothoAQAConfig  # here: the module stays light for reward functions

    add_builder_flags(parser, ClothoAQAConfig, "builder options (when --data is a data_dir)")
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
    from builder_utils.clevr.options import builder_kwargs_from_args
    from clotho_aqa.config import ClothoAQAConfig

    args.builder_kwargs = builder_kwargs_from_args(args, ClothoAQAConfig)
    return run_evaluation(args, evaluate, write_evaluation, CHART_FILES, extra=["builder_kwargs"])


def main(argv: Sequence[str] | None = None, prog: str = "clotho-aqa evaluate") -> int:
    """``clotho-aqa evaluate`` entry point; returns the exit status (2 for bad input).

    Example:
        >>> main(["--data", "/nonexistent/folder", "--out", "/tmp/eval"])
        2
    """
    return evaluate_main(argv, prog, __doc__.split("\n\n")[0], add_arguments, package="clotho_aqa")


if __name__ == "__main__":
    sys.exit(main())
