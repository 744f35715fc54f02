"""``clotho-aqa evaluate``: score a model's answers on Clotho-AQA the way the paper reports them.

The scoring is :data:`clotho_aqa.scoring.SPEC` (``overall`` under the configuration's own labelling);
this module adds how the rows of any configuration become questions.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.cli import EvaluateCommand
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.predictions import Prediction
from builder_utils.evaluation.spec import Question
from clotho_aqa.answers import normalize_answer
from clotho_aqa.scoring import SPEC, TYPES, aqa_question

__all__ = ["SPEC", "TYPES", "aqa_question", "evaluate", "evaluate_demo", "main", "read_questions",
           "write_evaluation"]

COLUMNS = ("question_id", "question", "answers", "answer", "label", "answer_type", "annotator")


def read_questions(dataset, config: str) -> list[Question]:
    """The questions of a split of any Clotho-AQA config (rows per annotator answer grouped by ``question_id``).

    Example::

        read_questions(load_exported("hub", "questions")["test"], "questions")[0].kind   # -> 'yes_no'
    """
    from clotho_aqa.config import registered  # the dataset is read: datasets is imported already

    columns = dataset.column_names
    rows = registered(config)
    fixed_type = rows.answer_types[0] if rows is not None and len(rows.answer_types) == 1 else None
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
        raise EvaluationError(f"config {config!r} has no answer_type column and is no configuration of one answer type")
    return [aqa_question(qid, e["question"], [normalize_answer(a) for a in e["answers"]], e["type"])
            for qid, e in grouped.items()]


def evaluate(data, config: str = "questions", split: str = "test",
             predictions: str | os.PathLike | Mapping[str, Prediction] | None = None, **options) -> dict:
    """Score ``predictions`` on Clotho-AQA questions: the report that ``clotho-aqa evaluate`` writes to ``report.json``.

    ``data``: where the questions are (an export folder, a release data_dir, a Hub repository id) or the
    rows themselves: a ``datasets.Dataset`` or ``IterableDataset`` of ``config``'s columns (a loaded split,
    a filtered one), or a ``DatasetDict`` (then ``split`` picks the split). ``config`` names the rows'
    configuration: its labelling is the headline. ``predictions``: ``{question_id: model output}`` or a
    CSV / JSONL file; None scores the baselines only (majority and question-only prior, learnt from the
    ``train`` split, or from ``train=`` a Dataset when ``data`` is one split). Other ``options``: ``seed``,
    ``resamples``, ``cache_dir``, ``ignore_extra_ids``, ``train_split``. The report holds ``overall``,
    ``by_labelling``, ``by_category``, ``baselines`` and ``notes``.

    Example::

        import clotho_aqa
        from datasets import load_dataset
        test = load_dataset("my-name/clotho-aqa", "yes_no_majority", split="test")
        clotho_aqa.evaluate(test, "yes_no_majority", predictions={qid: "yes" for qid in test["question_id"]})
        clotho_aqa.evaluate("my-name/clotho-aqa", "questions", predictions="preds.csv")["by_labelling"]
    """
    from clotho_aqa import ClothoAQA

    return engine.evaluate_dataset(SPEC, read_questions, ClothoAQA, COLUMNS, data, config, split, predictions,
                                   **options)


#: Write a report of :func:`evaluate` into a folder (report.json, report.md, charts), through the ownership record.
write_evaluation = engine.report_writer(SPEC, 'evaluate("hub", "questions", predictions="preds.csv")')


def evaluate_demo(hub: str | os.PathLike, out: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
                  stream=None) -> dict:
    """The demo's last step: the baselines on the ``questions`` test split, the report in ``out``.

    Example::

        evaluate_demo("demo_output/clotho_aqa/hub", "demo_output/clotho_aqa/evaluation")
    """
    return engine.write_demo(SPEC, evaluate(hub, "questions", "test", cache_dir=cache_dir), out, stream)


def _builder_config() -> type:
    from clotho_aqa.config import ClothoAQAConfig

    return ClothoAQAConfig


COMMAND = EvaluateCommand("clotho-aqa evaluate", "clotho_aqa", __doc__.split("\n\n")[0], "questions", evaluate, SPEC,
                          builder_config=_builder_config)
#: ``clotho-aqa evaluate``'s options on a parser, and its entry point (exit status 2 for bad input).
add_arguments, main = COMMAND.add_arguments, COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
