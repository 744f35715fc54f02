"""The one ``evaluate``: a :class:`~builder_utils.evaluation.spec.ScoringSpec` and questions in,
the report out (``report.json``, ``report.md``, PNG charts).

A *system* is the model (its predictions) or a baseline. Each is scored the same way:
every question's prediction is read once (the spec's extraction for its kind), then scored
against the targets of the headline labelling (``overall`` and every section), and of each of
the spec's labellings (``by_labelling``). Every summary counts ``questions`` and targets
(``total``) apart: under the unfiltered labelling a question has one target per annotator.

Example:
    >>> from builder_utils.evaluation.spec import Extraction, Question, ScoringSpec, Section
    >>> spec = ScoringSpec("toy", "Toy", {"integer": Extraction("integer")}, sections=(Section("by_category", "category"),))
    >>> qs = [Question("a", ("3",), "integer", {"category": "x"}), Question("b", ("1",), "integer", {"category": "y"})]
    >>> r = score_report(spec, qs, [], {"a": "three", "b": "2"}, header={"data": "toy"})
    >>> r["overall"]["accuracy"], r["by_category"]["y"]["accuracy"]
    (0.5, 0.0)
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES, Scored, score, summarize
from builder_utils.evaluation.data import load_splits, require_known_ids, require_split
from builder_utils.evaluation.predictions import Prediction, given_predictions
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
from builder_utils.evaluation.spec import Question, ScoringSpec

__all__ = ["charts", "evaluate_dataset", "labelling_table", "render_markdown", "score_report", "system_result",
           "write_evaluation"]


def _summary(items: Sequence[tuple[str, Scored]], seed: int, resamples: int, top_k: int | None = None) -> dict:
    out = summarize([s for _, s in items], seed, resamples, top_k)
    out["questions"] = len({qid for qid, _ in items})
    return out


def _groups(items: Sequence[tuple[Question, Scored]], key: str, order: Callable | None, seed: int,
            resamples: int) -> dict[str, dict]:
    grouped: dict[Hashable, list[tuple[str, Scored]]] = {}
    for q, s in items:
        value = q.keys[key]
        for group in value if isinstance(value, tuple) else (value,):
            grouped.setdefault(group, []).append((q.question_id, s))
    keys = sorted(grouped, key=order) if order is not None else sorted(grouped)
    return {str(k): _summary(grouped[k], seed, resamples) for k in keys}


def system_result(spec: ScoringSpec, questions: Sequence[Question], predictions: Mapping[str, Prediction],
                  config: str = "", vocabulary=None, seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> dict:
    """``overall`` (under ``spec.headline(config)``, whose name it carries as ``labelling``),
    one entry per section and, when the spec has labellings, ``by_labelling``, of one system.

    Example:
        >>> from builder_utils.evaluation.spec import Extraction, Labelling, ScoringSpec
        >>> spec = ScoringSpec("t", "T", {"yes_no": Extraction("yes_no")}, labellings=(Labelling("m", "majority"),))
        >>> r = system_result(spec, [Question("a", ("yes", "yes", "no"), "yes_no")], {"a": "Yes."})
        >>> r["overall"]["correct"], r["overall"]["total"], r["overall"]["questions"], r["by_labelling"]["m"]["accuracy"]
        (2, 3, 1, 1.0)
    """
    answers = {q.question_id: spec.answers(q, predictions[q.question_id], vocabulary)
               for q in questions if q.question_id in predictions}

    def scored(labelling) -> list[tuple[Question, Scored]]:
        return [(q, score(answers.get(q.question_id), target)) for q in questions if labelling.applies(q.kind)
                for target in labelling.targets(q.answers)]

    headline = spec.headline(config)
    items = scored(headline)
    result = {"overall": {**_summary([(q.question_id, s) for q, s in items], seed, resamples),
                          "labelling": headline.name}}
    for section in spec.sections:
        result[section.name] = _groups(items, section.key, section.order, seed, resamples)
    if spec.labellings:
        result["by_labelling"] = {
            labelling.name: _summary([(q.question_id, s) for q, s in scored(labelling)], seed, resamples,
                                     labelling.top_k)
            for labelling in spec.labellings}
    return result


def _generalisation(spec: ScoringSpec, train: Sequence[Question], systems: Mapping[str, Mapping]) -> dict:
    out: dict = {}
    for section in (s for s in spec.sections if s.generalisation):
        counts = Counter(str(q.keys[section.key]) for q in train)
        rows: dict = {}
        for name, result in systems.items():
            for group, summary in result[section.name].items():
                row = rows.setdefault(group, {"train_questions": counts.get(group, 0),
                                              "questions": summary["total"], "accuracy": {}})
                row["accuracy"][name] = summary["accuracy"]
        out[section.name] = rows
    return out


def score_report(
    spec: ScoringSpec,
    questions: Sequence[Question],
    train: Sequence[Question],
    predictions: Mapping[str, Prediction] | None,
    source: str | None = None,
    header: Mapping | None = None,
    config: str = "",
    oracle: Mapping[str, str | None] | None = None,
    notes: Sequence[str] = (),
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    ignore_extra_ids: bool = False,
    where: str = "the evaluated questions",
) -> dict:
    """The report of ``predictions`` (None: baselines only) on ``questions``: ``header`` first
    (what was evaluated), the model's sections, ``baselines`` (learnt from ``train``, plus the
    ``oracle`` answers when given), ``generalisation`` when the spec has such sections, and
    ``notes``. A prediction for a question not in ``questions`` is an error naming
    ``--ignore_extra_ids``; with ``ignore_extra_ids`` it is left out and counted.

    Example:
        >>> from builder_utils.evaluation.spec import Extraction, ScoringSpec
        >>> spec = ScoringSpec("t", "T", {"integer": Extraction("integer")})
        >>> score_report(spec, [Question("a", ("1",), "integer")], [], {"a": "1", "z": "2"},
        ...              ignore_extra_ids=True)["ignored_ids"]
        1
    """
    notes = list(notes)
    vocabulary = {a for q in [*train, *questions] if spec.extractions[q.kind].answer_vocabulary for a in q.answers}
    report: dict = {"dataset": spec.dataset, **(header or {}), "predictions": source,
                    "num_questions": len(questions), "extraction": spec.extraction_note}
    if len(spec.extractions) > 1:
        report["num_questions_by_type"] = {kind: sum(q.kind == kind for q in questions) for kind in spec.extractions}
    if spec.labellings:
        headline = spec.headline(config)
        report["labelling"] = {"name": headline.name, "description": headline.description}
    report |= {"seed": seed, "bootstrap_resamples": resamples}
    systems: dict[str, dict] = {}
    if predictions is not None:
        ignored = require_known_ids(predictions, {q.question_id for q in questions}, source, where, ignore_extra_ids)
        if ignore_extra_ids:
            report["ignored_ids"] = ignored
        systems["model"] = system_result(spec, questions, predictions, config, vocabulary, seed, resamples)
        report.update(systems["model"])
    baselines = {}
    if train:
        for baseline in spec.baselines:
            baselines[baseline.name] = system_result(spec, questions, baseline.predictions(train, questions), config,
                                                     vocabulary, seed, resamples)
    elif spec.baselines:
        notes.append("no train questions: the majority and prior baselines are left out")
    if oracle is not None:
        if len(oracle) < len(questions):
            notes.append(f"oracle: {len(questions) - len(oracle)} question(s) without a scene or program "
                         "(counted as missing)")
        baselines["oracle"] = system_result(spec, questions, oracle, config, vocabulary, seed, resamples)
    report["baselines"] = baselines
    if any(s.generalisation for s in spec.sections):
        report["generalisation"] = _generalisation(spec, train, systems | baselines)
    report["notes"] = notes
    return report


def evaluate_dataset(
    spec: ScoringSpec,
    read: Callable[..., list[Question]],
    builder_class: type,
    columns: Sequence[str],
    data: str | os.PathLike,
    config: str,
    split: str = "test",
    predictions=None,
    train_split: str = "train",
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
    cache_dir: str | os.PathLike | None = None,
    ignore_extra_ids: bool = False,
    oracle: Callable[[Sequence[Question]], Mapping[str, str | None]] | None = None,
    notes: Sequence[str] = (),
) -> dict:
    """:func:`score_report` on ``split`` of ``config`` in ``data`` (an export, a Hub repository
    or a ``data_dir``; see :func:`~builder_utils.evaluation.data.load_splits`), the questions
    read from each split by ``read(dataset, config)``, the baselines learnt on ``train_split``.

    Example::

        evaluate_dataset(SPEC, read_questions, ClevrMath, COLUMNS, "hub", "general", predictions="p.jsonl")
    """
    predictions, source = given_predictions(predictions)  # a bad file fails before any data is loaded
    splits = load_splits(data, config, builder_class, columns, cache_dir)
    questions = read(require_split(splits, split, data, config), config)
    train = read(splits[train_split], config) if train_split in splits else []
    header = {"data": os.fspath(data), "config": config, "split": split, "train_split": train_split}
    return score_report(spec, questions, train, predictions, source, header, config,
                        None if oracle is None else oracle(questions), notes, seed, resamples, ignore_extra_ids,
                        f"split {split!r} of config {config!r}")


def labelling_table(spec: ScoringSpec, systems: Mapping[str, Mapping]) -> str:
    """One row per labelling of the spec: its questions and targets, each system's accuracy
    (with top-k in brackets where the labelling has it).

    Example::

        print(labelling_table(SPEC, report_systems(report)))
    """
    rows = []
    for labelling in spec.labellings:
        summaries = [result["by_labelling"][labelling.name] for result in systems.values()]
        cells = [percent(s["accuracy"]) + (f" ({percent(s[f'top_{labelling.top_k}'])})" if labelling.top_k else "")
                 for s in summaries]
        first = summaries[0] if summaries else {"questions": 0, "total": 0}
        rows.append([labelling.name, first["questions"], first["total"], *cells])
    return markdown_table(["labelling", "questions", "targets", *systems], rows)


def _generalisation_table(spec: ScoringSpec, report: Mapping, names: Sequence[str]) -> str:
    rows = []
    for section in (s for s in spec.sections if s.generalisation):
        label = "{} operation(s)" if section.key == "num_operations" else "{}"
        for group, row in report["generalisation"][section.name].items():
            rows.append([label.format(group), row["train_questions"], row["questions"],
                         *(percent(row["accuracy"].get(n)) for n in names)])
    return markdown_table(["questions", "train questions", "test questions", *names], rows)


def render_markdown(spec: ScoringSpec, report: Mapping) -> str:
    """``report.md``: what was evaluated, the overall table (named by its labelling), the
    generalisation and labelling tables when the spec has them, one table per section, notes.

    Example::

        print(render_markdown(SPEC, evaluate("hub", "multihop")))
    """
    systems = report_systems(report)
    what = f"config `{report['config']}`, split `{report['split']}`" if "config" in report else f"`{report['data']}`"
    counts = report.get("num_questions_by_type")
    by_type = f" ({', '.join(f'{n} {k}' for k, n in counts.items())})" if counts else ""
    ignored = f" {report['ignored_ids']} prediction(s) for other questions ignored." if report.get("ignored_ids") else ""
    lines = [
        f"# {spec.title} evaluation: {what}", "",
        f"Data `{report['data']}`, {report['num_questions']} questions{by_type}; predictions "
        f"`{report['predictions'] or '(none: baselines only)'}`.{ignored} Answer extraction: {report['extraction']}. "
        f"Unparseable and missing predictions count as wrong. 95% intervals: percentile bootstrap, "
        f"{report['bootstrap_resamples']} resamples, seed {report['seed']}. Baselines learn from "
        f"`{report.get('train_split')}`.", "",
    ]
    labelling = report.get("labelling")
    heading = f"## Overall (labelling `{labelling['name']}`: {labelling['description']})" if labelling else "## Overall"
    lines += [heading, "", overall_table(systems), ""]
    if "generalisation" in report:
        lines += ["## Generalisation", "", "Accuracy by number of operations and single-hop versus multihop; "
                  "`train questions` 0 means zero-shot.", "", _generalisation_table(spec, report, list(systems)), ""]
    if spec.labellings and systems:
        lines += ["## By labelling", "", "yes/no: the paper's binary accuracy; single-word: top-1 (top-5 in brackets).",
                  "", labelling_table(spec, systems), ""]
    for section in (s for s in spec.sections if s.table):
        lines += [f"## By {section.header}", "", breakdown_table(section.header, systems, section.name), ""]
    if report.get("notes"):
        lines += ["## Notes", ""] + [f"- {note}" for note in report["notes"]] + [""]
    return "\n".join(lines)


def charts(spec: ScoringSpec, report: Mapping) -> list[Chart]:
    """The spec's PNG charts of ``report``, every system as bars.

    Example::

        [c.filename for c in charts(SPEC, report)]
        # -> ['accuracy_by_category.png', 'accuracy_by_num_operations.png']
    """
    systems = report_systems(report)
    subtitle = (f"{spec.title} {report['config']} / {report['split']}, {report['num_questions']} questions"
                if "config" in report else None)
    return [Chart(c.filename, c.title, chart_rows(systems, c.section), list(systems), subtitle=subtitle,
                  value_label=c.value_label) for c in spec.charts]


def write_evaluation(spec: ScoringSpec, report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md`` and the spec's charts into ``out`` (through
    :func:`~builder_utils.evaluation.report.write_report`, the one function that writes).

    Example::

        write_evaluation(SPEC, evaluate("hub", "general"), "eval")
    """
    return write_report(out, report, render_markdown(spec, report), charts(spec, report), overwrite=overwrite)

