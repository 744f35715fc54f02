"""``clevr-math evaluate``: score a model's answers on CLEVR-Math the way the paper reports them.

The scoring is :data:`clevr_math.scoring.SPEC`; this module adds how rows become questions and the
``oracle`` baseline (each program run on its scene graph; expected 100 %) when the scenes are given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

from builder_utils.clevr.evaluate import Program, oracle_answers
from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.cli import EvaluateCommand
from builder_utils.evaluation.data import data_kind
from builder_utils.evaluation.predictions import Prediction
from builder_utils.evaluation.spec import Question
from clevr_math.scoring import SPEC, math_question

__all__ = ["SPEC", "evaluate", "evaluate_demo", "main", "math_question", "read_questions", "write_evaluation"]

COLUMNS = ("question_id", "label", "category", "template", "template_index", "num_operations", "program",
           "image_filename")


def read_questions(dataset, config: str = "") -> list[Question]:
    """The rows of a CLEVR-Math split (a ``datasets.Dataset``) as questions.

    Example::

        read_questions(load_exported("hub", "general")["test"])[0].keys["template"]   # -> 'adversarial[1]'
    """
    names = dataset.features["category"].names
    has_program = "program" in dataset.column_names
    return [math_question(row["question_id"], str(row["label"]), names[row["category"]],
                          f"{row['template']}[{row['template_index']}]", int(row["num_operations"]),
                          Program(row["program"] if has_program else None, row.get("image_filename")))
            for row in dataset]


def evaluate(data: str | os.PathLike, config: str = "general", split: str = "test",
             predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
             scenes: str | os.PathLike | None = None, **options) -> dict:
    """The report (``report.json``) of ``predictions`` (None: baselines only) on ``split`` of ``config``;
    ``options``: those of :func:`~builder_utils.evaluation.evaluate.evaluate_dataset`.

    Example::

        evaluate("my-name/clevr-math", "multihop", predictions="preds.csv")["by_num_operations"]
    """
    from clevr_math.clevr_math import ClevrMath

    if scenes is None and Path(data).expanduser().is_dir() and data_kind(data) == "data_dir":
        scenes = data
    notes = [] if scenes is not None else [
        "oracle left out: pass --scenes (a CLEVR_v1.0 folder) to run the programs on the scene graphs"]
    return engine.evaluate_dataset(SPEC, read_questions, ClevrMath, COLUMNS, data, config, split, predictions,
                                   oracle=None if scenes is None else (lambda qs: oracle_answers(qs, scenes)),
                                   notes=notes, **options)


#: ``write_evaluation(report, out, overwrite=False)``: ``report.json``, ``report.md`` and the charts.
write_evaluation = partial(engine.write_evaluation, SPEC)


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
