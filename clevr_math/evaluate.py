"""``clevr-math evaluate``: score a model's answers on CLEVR-Math the way the paper reports them.

Accuracy overall and per category, template (``subtraction[5]``: file and index) and number of
operations, each with a bootstrap 95 % interval, and the generalisation table (accuracy by
number of operations and single-hop versus multihop, next to how many train questions of each
kind there are: 0 means zero-shot). Answers are integers, extracted from free text by
:func:`builder_utils.evaluation.extract.extract_integer` (the last number of the answer span).

Baselines, scored like a model: ``majority`` (the most frequent train answer),
``category_prior`` and ``template_prior`` (the most frequent train answer of the question's
category / template, backing off to the category and then to the majority answer), and
``oracle``, which runs each question's program on its scene graph (expected: 100 %) when the
scenes are available (``--data`` is a CLEVR_v1.0 ``data_dir``, or ``--scenes``).

Example::

    report = evaluate("demo_output/clevr_math/hub", "multihop", predictions="preds.jsonl",
                      scenes="demo_output/clevr_math/CLEVR_v1.0")
    report["overall"]["accuracy"], report["baselines"]["oracle"]["overall"]["accuracy"]
    # -> (0.625, 1.0)
    write_evaluation(report, "eval_out")
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from builder_utils.clevr.evaluate import Program, oracle_answers
from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES
from builder_utils.evaluation.cli import add_evaluate_arguments, evaluate_main, run_evaluation
from builder_utils.evaluation.data import data_kind
from builder_utils.evaluation.predictions import Prediction
from builder_utils.evaluation.report import overall_table, report_systems
from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Question, ScoringSpec, Section

__all__ = ["SPEC", "evaluate", "evaluate_demo", "main", "math_question", "read_questions", "render_markdown",
           "write_evaluation"]

COLUMNS = ("question_id", "label", "category", "template", "template_index", "num_operations", "program",
           "image_filename")
MULTIHOP = "multihop"
EXTRACTION = ("integer: the last number (digits before number words) of the answer span: the last \\boxed{}, "
              "<answer></answer> or {}, else the text after the last 'Answer:'/'answer is', else the whole text")
CHART_FILES = ("accuracy_by_category.png", "accuracy_by_num_operations.png")


def _category_order(name: str) -> tuple:
    from clevr_math.config import CATEGORIES

    return (CATEGORIES.index(name) if name in CATEGORIES else len(CATEGORIES), name)


#: How CLEVR-Math is scored: integer answers; breakdowns by category (the paper's order),
#: template, number of operations and hop (these two also the generalisation table); majority
#: and question-only prior baselines.
SPEC = ScoringSpec(
    dataset="clevr_math",
    title="CLEVR-Math",
    extractions={"integer": Extraction("integer")},
    sections=(
        Section("by_category", "category", order=_category_order),
        Section("by_template", "template"),
        Section("by_num_operations", "num_operations", "operations", table=False, generalisation=True),
        Section("by_hop", "hop", order=lambda hop: hop == MULTIHOP, table=False, generalisation=True),
    ),
    charts=(
        ChartSpec(CHART_FILES[0], "Accuracy by category", "by_category", "category"),
        ChartSpec(CHART_FILES[1], "Accuracy by number of operations", "by_num_operations", "operations"),
    ),
    baselines=(Baseline("majority"), Baseline("category_prior", ("category",)),
               Baseline("template_prior", ("template", "category"))),
    extraction_note=EXTRACTION,
)


def math_question(question_id: str, answer: str, category: str, template: str, num_operations: int,
                  program: list | None = None, image_filename: str | None = None) -> Question:
    """One CLEVR-Math question as the spec scores it.

    Example:
        >>> math_question("q", "3", "multihop", "m[0]", 2).keys["hop"]
        'multihop'
    """
    keys = {"category": category, "template": template, "num_operations": num_operations,
            "hop": MULTIHOP if category == MULTIHOP else "single-hop"}
    return Question(question_id, (answer,), "integer", keys, Program(program, image_filename))


def read_questions(dataset, config: str = "") -> list[Question]:
    """The rows of a CLEVR-Math split (a ``datasets.Dataset``) as questions.

    Example::

        read_questions(load_exported("hub", "general")["test"])[0].keys["template"]
        # -> 'adversarial[1]'
    """
    names = dataset.features["category"].names
    has_program = "program" in dataset.column_names
    return [math_question(row["question_id"], str(row["label"]), names[row["category"]],
                          f"{row['template']}[{row['template_index']}]", int(row["num_operations"]),
                          row["program"] if has_program else None, row.get("image_filename"))
            for row in dataset]


def evaluate(
    data: str | os.PathLike,
    config: str = "general",
    split: str = "test",
    predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
    scenes: str | os.PathLike | None = None,
    train_split: str = "train",
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    cache_dir: str | os.PathLike | None = None,
    ignore_extra_ids: bool = False,
    builder_kwargs: dict | None = None,
) -> dict:
    """Score ``predictions`` (a file, or a ``{question_id: prediction}`` dict; None: baselines
    only) on ``split`` of ``config`` in ``data``; return the report (what ``report.json`` holds).

    Example::

        evaluate("my-name/clevr-math", "multihop", predictions="preds.csv")["by_num_operations"]
    """
    from clevr_math.clevr_math import ClevrMath

    if scenes is None and Path(data).expanduser().is_dir() and data_kind(data) == "data_dir":
        scenes = data
    notes = [] if scenes is not None else [
        "oracle left out: pass --scenes (a CLEVR_v1.0 folder) to run the programs on the scene graphs"]
    return engine.evaluate_dataset(SPEC, read_questions, ClevrMath, COLUMNS, data, config, split, predictions,
                                   train_split, seed, resamples, cache_dir, ignore_extra_ids,
                                   None if scenes is None else (lambda qs: oracle_answers(qs, scenes)), notes,
                                   builder_kwargs)


def render_markdown(report: Mapping) -> str:
    """``report.md``: the overall table, the generalisation table and the breakdowns.

    Example::

        print(render_markdown(evaluate("hub", "multihop")))
    """
    return engine.render_markdown(SPEC, report)


def write_evaluation(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the charts into ``out``.

    Example::

        write_evaluation(evaluate("hub", "general"), "eval")
    """
    return engine.write_evaluation(SPEC, report, out, overwrite)


def evaluate_demo(hub: str | os.PathLike, scenes: str | os.PathLike, out: str | os.PathLike,
                  configs: Sequence[str] = ("general", "multihop"), cache_dir: str | os.PathLike | None = None,
                  stream=None) -> dict[str, dict]:
    """The demo's last step: the baselines (and the oracle) on each config's test split of the
    demo export, reports in ``out/<config>``, the overall tables printed.

    Example::

        evaluate_demo("demo_output/clevr_math/hub", "demo_output/clevr_math/CLEVR_v1.0",
                      "demo_output/clevr_math/evaluation")
    """
    stream = stream or sys.stdout
    reports = {}
    for config in configs:
        report = evaluate(hub, config, "test", scenes=scenes, cache_dir=cache_dir)
        write_evaluation(report, Path(out) / config, overwrite=True)
        print(f"\nbaselines on {config}/test ({report['num_questions']} questions), report in {Path(out) / config}:",
              file=stream)
        print(overall_table(report_systems(report)), file=stream)
        reports[config] = report
    return reports


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``clevr-math evaluate`` on ``parser``; ``args.run(args)`` evaluates.

    Example:
        >>> p = add_arguments(argparse.ArgumentParser())
        >>> p.parse_args(["--data", "hub", "--out", "o", "--scenes", "CLEVR_v1.0"]).scenes
        'CLEVR_v1.0'
    """
    add_evaluate_arguments(parser, default_config="general")
    parser.add_argument("--scenes", help="CLEVR_v1.0 folder or scene file for the program oracle "
                                         "(default: --data when it is a data_dir)")
    from builder_utils.clevr.options import add_builder_flags
    from clevr_math.config import ClevrMathConfig  # here: the module stays light for reward functions

    add_builder_flags(parser, ClevrMathConfig, "builder options (when --data is a data_dir)")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Evaluate, write the report, print the overall table.

    Example::

        parser = argparse.ArgumentParser()
        add_arguments(parser)
        run(parser.parse_args(["--data", "hub/clevr_math", "--out", "eval"]))
        # -> 0
    """
    from builder_utils.clevr.options import builder_kwargs_from_args
    from clevr_math.config import ClevrMathConfig

    args.builder_kwargs = builder_kwargs_from_args(args, ClevrMathConfig)
    return run_evaluation(args, evaluate, write_evaluation, CHART_FILES, extra=["scenes", "builder_kwargs"])


def main(argv: Sequence[str] | None = None, prog: str = "clevr-math evaluate") -> int:
    """``clevr-math evaluate`` entry point; returns the exit status (2 for bad input).

    Example:
        >>> main(["--data", "/nonexistent/folder", "--out", "/tmp/eval"])
        2
    """
    return evaluate_main(argv, prog, __doc__.split("\n\n")[0], add_arguments, package="clevr_math")


if __name__ == "__main__":
    sys.exit(main())
