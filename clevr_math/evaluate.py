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
import logging
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES, Scored, score, summarize, summarize_groups
from builder_utils.evaluation.baselines import answer_prior, back_off, majority_answer
from builder_utils.evaluation.cli import add_evaluate_arguments, evaluate_main, run_evaluation
from builder_utils.evaluation.data import EvaluationError, data_kind, load_splits, require_known_ids, require_split
from builder_utils.evaluation.extract import extract_ranked
from builder_utils.evaluation.predictions import Prediction, given_predictions
from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, ScoringSpec, Section
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

logger = logging.getLogger("clevr_math")

__all__ = ["MathQuestion", "evaluate", "evaluate_demo", "main", "oracle_answers", "read_questions", "render_markdown",
           "write_evaluation"]

COLUMNS = ("question_id", "label", "category", "template", "template_index", "num_operations", "program",
           "image_filename")
MULTIHOP = "multihop"
SECTIONS = ("by_category", "by_template", "by_num_operations", "by_hop")
EXTRACTION = ("integer: the last number (digits before number words) of the answer span: the last \\boxed{}, "
              "<answer></answer> or {}, else the text after the last 'Answer:'/'answer is', else the whole text")

CHART_FILES = ("accuracy_by_category.png", "accuracy_by_num_operations.png")


def _category_order(name: str) -> tuple:
    from clevr_math.config import CATEGORIES

    return (CATEGORIES.index(name) if name in CATEGORIES else len(CATEGORIES), name)


#: How CLEVR-Math is scored: integer answers; breakdowns by category (the paper's order),
#: template, number of operations and hop; majority and question-only prior baselines.
SPEC = ScoringSpec(
    dataset="clevr_math",
    title="CLEVR-Math",
    extractions={"integer": Extraction("integer")},
    sections=(
        Section("by_category", "category", order=_category_order),
        Section("by_template", "template"),
        Section("by_num_operations", "num_operations", "operations", table=False),
        Section("by_hop", "hop", order=lambda hop: hop == MULTIHOP, table=False),
    ),
    charts=(
        ChartSpec(CHART_FILES[0], "Accuracy by category", "by_category", "category"),
        ChartSpec(CHART_FILES[1], "Accuracy by number of operations", "by_num_operations", "operations"),
    ),
    baselines=(Baseline("majority"), Baseline("category_prior", ("category",)),
               Baseline("template_prior", ("template", "category"))),
    extraction_note=EXTRACTION,
)


@dataclass(frozen=True)
class MathQuestion:
    """What the scorer needs of one CLEVR-Math row."""

    question_id: str
    answer: str
    category: str
    template: str
    num_operations: int
    program: list | None = None
    image_filename: str | None = None

    @property
    def hop(self) -> str:
        """``"multihop"`` for the multihop category, else ``"single-hop"``.

        Example:
            >>> MathQuestion("q", "3", "insertion", "addition[0]", 1).hop
            'single-hop'
        """
        return MULTIHOP if self.category == MULTIHOP else "single-hop"


def read_questions(dataset) -> list[MathQuestion]:
    """The rows of a CLEVR-Math split (a ``datasets.Dataset``) as :class:`MathQuestion`.

    Example::

        read_questions(load_exported("hub", "general")["test"])[0].template
        # -> 'adversarial[1]'
    """
    names = dataset.features["category"].names
    has_program = "program" in dataset.column_names
    out = []
    for row in dataset:
        out.append(MathQuestion(
            question_id=row["question_id"],
            answer=str(row["label"]),
            category=names[row["category"]],
            template=f"{row['template']}[{row['template_index']}]",
            num_operations=int(row["num_operations"]),
            program=row["program"] if has_program else None,
            image_filename=row.get("image_filename"),
        ))
    return out


def system_result(questions: Sequence[MathQuestion], scored: Sequence[Scored], seed: int = 0,
                  resamples: int = DEFAULT_RESAMPLES) -> dict:
    """``overall``, ``by_category``, ``by_template``, ``by_num_operations``, ``by_hop`` of one system.

    Example:
        >>> qs = [MathQuestion("a", "3", "insertion", "addition[0]", 1), MathQuestion("b", "1", "multihop", "m[0]", 2)]
        >>> r = system_result(qs, [score(["3"], "3"), score(["2"], "1")])
        >>> r["overall"]["accuracy"], r["by_hop"]["multihop"]["accuracy"]
        (0.5, 0.0)
    """
    pairs = list(zip(questions, scored))
    return {
        "overall": summarize(scored, seed, resamples),
        "by_category": summarize_groups(((q.category, s) for q, s in pairs), seed, resamples,
                                        order=_category_order),
        "by_template": summarize_groups(((q.template, s) for q, s in pairs), seed, resamples),
        "by_num_operations": summarize_groups(((q.num_operations, s) for q, s in pairs), seed, resamples),
        "by_hop": summarize_groups(((q.hop, s) for q, s in pairs), seed, resamples,
                                   order=lambda hop: hop == MULTIHOP),
    }


def score_answers(questions: Sequence[MathQuestion], predictions: Mapping[str, Prediction]) -> list[Scored]:
    """Extract an integer from each question's prediction and score it (absent id: missing).

    Example:
        >>> score_answers([MathQuestion("a", "3", "insertion", "addition[0]", 1)], {"a": "There are three."})
        [Scored(rank=1, status='answered')]
    """
    return [
        score(extract_ranked(predictions[q.question_id], "integer") if q.question_id in predictions else None, q.answer)
        for q in questions
    ]


def baseline_answers(train: Sequence[MathQuestion], questions: Sequence[MathQuestion]) -> dict[str, dict[str, str]]:
    """Predictions of the model-free baselines, learnt from ``train``: ``majority``,
    ``category_prior`` and ``template_prior``.

    Example:
        >>> train = [MathQuestion("t1", "2", "insertion", "addition[0]", 1),
        ...          MathQuestion("t2", "5", "insertion", "addition[1]", 1),
        ...          MathQuestion("t3", "5", "insertion", "addition[1]", 1),
        ...          MathQuestion("t4", "2", "adversarial", "adversarial[0]", 1)]
        >>> b = baseline_answers(train, [MathQuestion("q", "5", "insertion", "addition[0]", 1)])
        >>> b["majority"]["q"], b["category_prior"]["q"], b["template_prior"]["q"]
        ('2', '5', '2')
    """
    majority = majority_answer(q.answer for q in train)
    by_category = answer_prior((q.category, q.answer) for q in train)
    by_template = answer_prior((q.template, q.answer) for q in train)
    return {
        "majority": {q.question_id: majority for q in questions},
        "category_prior": {q.question_id: back_off([(by_category, q.category)], majority) for q in questions},
        "template_prior": {
            q.question_id: back_off([(by_template, q.template), (by_category, q.category)], majority) for q in questions
        },
    }


def _scene_files(scenes: str | os.PathLike) -> list[Path]:
    path = Path(scenes).expanduser()
    if path.is_file():
        return [path]
    folder = path / "scenes" if (path / "scenes").is_dir() else path
    files = sorted(folder.glob("CLEVR_*_scenes.json"))
    if not files:
        raise EvaluationError(f"{scenes}: no CLEVR_<split>_scenes.json (looked in {folder}); --scenes takes a "
                              "CLEVR_v1.0 folder or a scene file")
    return files


def oracle_answers(questions: Sequence[MathQuestion], scenes: str | os.PathLike) -> dict[str, str | None]:
    """Each question's program run on its scene graph (:func:`builder_utils.clevr.answer`):
    the answer, or None when the program has no answer there. Questions whose image has no
    scene in ``scenes`` get no entry (they count as missing).

    Example::

        oracle_answers(read_questions(ds), "demo_output/clevr_math/CLEVR_v1.0")
        # -> {'test_000000_0': '1', ...}
    """
    from builder_utils.clevr import InvalidProgram, answer, load_scenes

    needed = {q.image_filename for q in questions}
    files = _scene_files(scenes)
    # Only the scene files of the splits the images name (the 70,000-scene train file is slow to
    # read); all of them when the names say nothing (CLEVR-Math's own test images).
    named = [f for f in files if any(n and n.startswith(f.name.replace("_scenes.json", "_")) for n in needed)]
    found: dict[str, dict] = {}
    for file in named or files:
        for scene in load_scenes(file):
            if scene["image_filename"] in needed:
                found[scene["image_filename"]] = scene
    out: dict[str, str | None] = {}
    for q in questions:
        scene = found.get(q.image_filename)
        if scene is None or q.program is None:
            continue
        try:
            out[q.question_id] = answer(q.program, scene)
        except InvalidProgram:
            out[q.question_id] = None
    return out


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
) -> dict:
    """Score ``predictions`` (a file, or a ``{question_id: prediction}`` dict; None: baselines
    only) on ``split`` of ``config`` in ``data``; return the report (what ``report.json`` holds).

    Example::

        evaluate("my-name/clevr-math", "multihop", predictions="preds.csv")["by_num_operations"]
    """
    from clevr_math.clevr_math import ClevrMath

    predictions, source = given_predictions(predictions)
    splits = load_splits(data, config, ClevrMath, COLUMNS, cache_dir)
    questions = read_questions(require_split(splits, split, data, config))
    notes: list[str] = []
    train = read_questions(splits[train_split]) if train_split in splits else []
    if not train:
        notes.append(f"no {train_split!r} split: the majority and prior baselines are left out")
    if scenes is None and data_kind(data) == "data_dir":
        scenes = data
    systems: dict[str, dict] = {}
    report: dict = {
        "dataset": "clevr_math",
        "data": os.fspath(data),
        "config": config,
        "split": split,
        "train_split": train_split,
        "predictions": source,
        "num_questions": len(questions),
        "extraction": EXTRACTION,
        "seed": seed,
        "bootstrap_resamples": resamples,
    }
    if predictions is not None:
        require_known_ids(predictions, {q.question_id for q in questions}, source, split, config)
        model = system_result(questions, score_answers(questions, predictions), seed, resamples)
        report.update(model)
        systems["model"] = model
    baselines: dict[str, dict] = {}
    if train:
        for name, answers in baseline_answers(train, questions).items():
            baselines[name] = system_result(questions, score_answers(questions, answers), seed, resamples)
    if scenes is not None:
        oracle = oracle_answers(questions, scenes)
        if len(oracle) < len(questions):
            notes.append(f"oracle: {len(questions) - len(oracle)} question(s) without a scene or program "
                         "(counted as missing)")
        baselines["oracle"] = system_result(questions, score_answers(questions, oracle), seed, resamples)
    else:
        notes.append("oracle left out: pass --scenes (a CLEVR_v1.0 folder) to run the programs on the scene graphs")
    systems.update(baselines)
    report["baselines"] = baselines
    report["generalisation"] = generalisation(train, systems)
    report["notes"] = notes
    return report


def generalisation(train: Sequence[MathQuestion], systems: Mapping[str, Mapping]) -> dict:
    """Accuracy of every system by number of operations and by single-hop/multihop, with the
    number of train questions of each kind (0: the test questions of that row are zero-shot).

    Example:
        >>> g = generalisation([], {"m": {"by_num_operations": {"2": {"accuracy": 0.5, "total": 4}}, "by_hop": {}}})
        >>> g["by_num_operations"]["2"]
        {'train_questions': 0, 'questions': 4, 'accuracy': {'m': 0.5}}
    """
    train_counts = {
        "by_num_operations": Counter(str(q.num_operations) for q in train),
        "by_hop": Counter(q.hop for q in train),
    }
    out: dict = {}
    for section in ("by_num_operations", "by_hop"):
        rows: dict = {}
        for name, result in systems.items():
            for group, summary in result[section].items():
                row = rows.setdefault(group, {"train_questions": train_counts[section].get(group, 0),
                                              "questions": summary["total"], "accuracy": {}})
                row["accuracy"][name] = summary["accuracy"]
        out[section] = rows
    return out


def render_markdown(report: Mapping) -> str:
    """``report.md``: the overall table, the generalisation table and the breakdowns.

    Example::

        print(render_markdown(evaluate("hub", "multihop")))
    """
    systems = report_systems(report)
    names = list(systems)
    lines = [
        f"# CLEVR-Math evaluation: config `{report['config']}`, split `{report['split']}`",
        "",
        f"Data `{report['data']}`, {report['num_questions']} questions; predictions "
        f"`{report['predictions'] or '(none: baselines only)'}`. Answer extraction: {report['extraction']}. "
        f"Unparseable and missing predictions count as wrong. 95% intervals: percentile bootstrap, "
        f"{report['bootstrap_resamples']} resamples, seed {report['seed']}. Baselines learn from the "
        f"`{report['train_split']}` split.",
        "",
        "## Overall",
        "",
        overall_table(systems),
        "",
        "## Generalisation",
        "",
        "Accuracy by number of operations and single-hop versus multihop; `train questions` 0 means zero-shot.",
        "",
    ]
    gen = report["generalisation"]
    rows = []
    for section, label in (("by_num_operations", "{} operation(s)"), ("by_hop", "{}")):
        for group, row in gen[section].items():
            rows.append([label.format(group), row["train_questions"], row["questions"],
                         *(percent(row["accuracy"].get(n)) for n in names)])
    lines += [markdown_table(["questions", "train questions", "test questions", *names], rows), ""]
    for section, header in (("by_category", "category"), ("by_template", "template")):
        lines += [f"## By {header}", "", breakdown_table(header, systems, section), ""]
    if report.get("notes"):
        lines += ["## Notes", ""] + [f"- {note}" for note in report["notes"]] + [""]
    return "\n".join(lines)


def charts(report: Mapping) -> list[Chart]:
    """The PNG charts: accuracy by category and by number of operations, every system.

    Example::

        [c.filename for c in charts(report)]
        # -> ['accuracy_by_category.png', 'accuracy_by_num_operations.png']
    """
    systems = report_systems(report)
    subtitle = f"CLEVR-Math {report['config']} / {report['split']}, {report['num_questions']} questions"
    return [
        Chart(CHART_FILES[0], "Accuracy by category", chart_rows(systems, "by_category"), list(systems),
              subtitle=subtitle, value_label="category"),
        Chart(CHART_FILES[1], "Accuracy by number of operations",
              chart_rows(systems, "by_num_operations"), list(systems), subtitle=subtitle, value_label="operations"),
    ]


def write_evaluation(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the charts into ``out``.

    Example::

        write_evaluation(evaluate("hub", "general"), "eval")
    """
    return write_report(out, report, render_markdown(report), charts(report), overwrite=overwrite)


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
    return run_evaluation(args, evaluate, write_evaluation, CHART_FILES, extra=["scenes"])


def main(argv: Sequence[str] | None = None, prog: str = "clevr-math evaluate") -> int:
    """``clevr-math evaluate`` entry point; returns the exit status (2 for bad input).

    Example:
        >>> main(["--data", "/nonexistent/folder", "--out", "/tmp/eval"])
        2
    """
    return evaluate_main(argv, prog, __doc__.split("\n\n")[0], add_arguments, package="clevr_math")


if __name__ == "__main__":
    sys.exit(main())
