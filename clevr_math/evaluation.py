"""``clevr-math evaluate``: score a model's answers on CLEVR-Math the way the paper reports them.

The scoring is :data:`clevr_math.scoring.SPEC`; this module adds how rows become questions and the
``oracle`` baseline (each program run on its scene graph; expected 100 %) when the scenes are given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from builder_utils.clevr.evaluate import Program, oracle_answers
from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.cli import EvaluateCommand
from builder_utils.evaluation.data import data_kind, is_in_memory
from builder_utils.evaluation.predictions import Prediction
from builder_utils.evaluation.spec import Question
from clevr_math.scoring import SPEC, math_question

__all__ = ["SPEC", "evaluate", "evaluate_demo", "main", "math_question", "read_questions", "write_evaluation"]

COLUMNS = ("question_id", "label", "category", "template", "template_index", "num_operations", "program",
           "image_filename")


def read_questions(dataset, config: str = "") -> list[Question]:
    """The rows of a CLEVR-Math split (a ``datasets.Dataset``: a configuration's or the stream's) as questions.

    Example::

        read_questions(load_exported("hub", "general")["test"])[0].keys["template"]   # -> 'adversarial[1]'
    """
    names = dataset.features["category"].names
    has_program = "program" in dataset.column_names
    # The stream's rows (problems(), stream()) name the template file only: no template_index column.
    indexed = "template_index" in dataset.column_names
    return [math_question(row["question_id"], str(row["label"]), names[row["category"]],
                          f"{row['template']}[{row['template_index']}]" if indexed else row["template"],
                          int(row["num_operations"]),
                          Program(row["program"] if has_program else None, row.get("image_filename")))
            for row in dataset]


def evaluate(data, config: str = "general", split: str = "test",
             predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
             scenes: str | os.PathLike | None = None, **options) -> dict:
    """Score ``predictions`` on CLEVR-Math questions: the report that ``clevr-math evaluate`` writes to ``report.json``.

    ``data``: where the questions are (an export folder, a ``CLEVR_v1.0`` data_dir, a Hub repository id) or
    the questions themselves: a ``datasets.Dataset`` or ``IterableDataset`` (a loaded split, a filtered one,
    :func:`clevr_math.problems`, a finite :func:`clevr_math.stream`), or a ``DatasetDict`` (then ``split``
    picks the split). ``predictions``: ``{question_id: model output}`` or a CSV / JSONL file; None scores
    the baselines only (majority and priors, learnt from the ``train`` split, or from ``train=`` a
    Dataset when ``data`` is one split; the program oracle when ``scenes`` names the scene graphs, or when
    ``data`` is a data_dir). Other ``options``: ``seed``, ``resamples``, ``cache_dir``,
    ``ignore_extra_ids``, ``train_split``. The report holds ``overall`` (accuracy, 95 % interval),
    ``by_category``, ``by_template``, ``by_num_operations``, ``baselines`` and ``notes``.

    Example::

        import clevr_math
        test = clevr_math.problems(size=100, seed=0)
        report = clevr_math.evaluate(test, predictions={qid: "3" for qid in test["question_id"]})
        report["overall"]["accuracy"], report["by_category"]["insertion"]["accuracy"]
        clevr_math.evaluate("my-name/clevr-math", "multihop", predictions="preds.csv")["by_num_operations"]
    """
    from clevr_math.clevr_math import ClevrMath

    if (scenes is None and not is_in_memory(data) and Path(data).expanduser().is_dir()
            and data_kind(data) == "data_dir"):
        scenes = data
    notes = [] if scenes is not None else [
        "oracle left out: pass --scenes (a CLEVR_v1.0 folder) to run the programs on the scene graphs"]
    return engine.evaluate_dataset(SPEC, read_questions, ClevrMath, COLUMNS, data, config, split, predictions,
                                   oracle=None if scenes is None else (lambda qs: oracle_answers(qs, scenes)),
                                   notes=notes, **options)


#: Write a report of :func:`evaluate` into a folder (report.json, report.md, charts), through the ownership record.
write_evaluation = engine.report_writer(SPEC, 'evaluate("hub", "multihop", predictions="preds.csv")')


def evaluate_demo(hub: str | os.PathLike, scenes: str | os.PathLike, out: str | os.PathLike,
                  configs: Sequence[str] = ("general", "multihop"), cache_dir: str | os.PathLike | None = None,
                  stream=None) -> dict[str, dict]:
    """The demo's last step: the baselines and the oracle on each config's test split, reports in ``out/<config>``.

    Example::

        evaluate_demo("demo_output/clevr_math/hub", "demo_output/clevr_math/CLEVR_v1.0", "evaluation")
    """
    return {config: engine.write_demo(SPEC, evaluate(hub, config, "test", scenes=scenes, cache_dir=cache_dir),
                                      Path(out) / config, stream)
            for config in configs}


def _builder_config() -> type:
    from clevr_math.config import ClevrMathConfig

    return ClevrMathConfig


COMMAND = EvaluateCommand("clevr-math evaluate", "clevr_math", __doc__.split("\n\n")[0], "general", evaluate, SPEC,
                          (("--scenes", "CLEVR_v1.0 folder or scene file for the program oracle "
                                        "(default: --data when it is a data_dir)"),),
                          builder_config=_builder_config)
#: ``clevr-math evaluate``'s options on a parser, and its entry point (exit status 2 for bad input).
add_arguments, main = COMMAND.add_arguments, COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
