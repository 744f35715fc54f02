"""The one ``evaluate``: a :class:`~builder_utils.evaluation.spec.ScoringSpec` and questions in, the report out.

Each prediction is read once, then scored under every labelling. Summaries count ``questions``
and targets (``total``) apart.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES, Scored, score, summarize
from builder_utils.evaluation.data import EvaluationError, given_splits, is_in_memory, load_splits
from builder_utils.evaluation.predictions import Prediction, given_predictions
from builder_utils.evaluation.report import (Chart, breakdown_table, chart_rows, markdown_table, overall_table, percent,
                                             report_systems, write_report)
from builder_utils.evaluation.spec import Question, ScoringSpec

__all__ = ["charts", "evaluate_dataset", "labelling_table", "render_markdown", "report_writer", "score_report",
           "system_result", "write_demo", "write_evaluation"]


def _summary(items: Sequence[tuple[Question, Scored]], seed: int, resamples: int, top_k: int | None = None) -> dict:
    summary = summarize([s for _, s in items], seed, resamples, top_k)
    return summary | {"questions": len({q.question_id for q, _ in items})}


def _groups(items: Sequence[tuple[Question, Scored]], key: str, order: Callable | None, seed: int,
            resamples: int) -> dict[str, dict]:
    grouped: dict[Hashable, list[tuple[Question, Scored]]] = {}
    for q, s in items:
        value = q.keys[key]
        for group in value if isinstance(value, tuple) else (value,):
            grouped.setdefault(group, []).append((q, s))
    return {str(k): _summary(grouped[k], seed, resamples) for k in sorted(grouped, key=order)}


def system_result(spec: ScoringSpec, questions: Sequence[Question], predictions: Mapping[str, Prediction],
                  config: str = "", vocabulary=None, seed: int = 0, resamples: int = DEFAULT_RESAMPLES) -> dict:
    """One system's ``overall`` (under ``spec.headline(config)``), sections and ``by_labelling``.

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
        return [(q, score(answers.get(q.question_id), target)) for q in questions for target in labelling.targets(q)]

    headline = spec.headline(config)
    items = scored(headline)
    result = {"overall": {**_summary(items, seed, resamples), "labelling": headline.name}}
    for section in spec.sections:
        result[section.name] = _groups(items, section.key, section.order, seed, resamples)
    if spec.labellings:
        result["by_labelling"] = {labelling.name: _summary(scored(labelling), seed, resamples, labelling.top_k)
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


def score_report(spec: ScoringSpec, questions: Sequence[Question], train: Sequence[Question],
                 predictions: Mapping[str, Prediction] | None, source: str | None = None, header: Mapping | None = None,
                 config: str = "", oracle: Mapping[str, str | None] | None = None, notes: Sequence[str] = (),
                 seed: int = 0, resamples: int = DEFAULT_RESAMPLES, ignore_extra_ids: bool = False,
                 where: str = "the evaluated questions") -> dict:
    """The report of ``predictions`` (None: baselines only) on ``questions``, baselines learnt from ``train``.

    A prediction for another question is an error, unless ``ignore_extra_ids`` (then counted).

    Example:
        >>> from builder_utils.evaluation.spec import Extraction, ScoringSpec, Section
        >>> spec = ScoringSpec("t", "T", {"integer": Extraction("integer")}, sections=(Section("by_category", "category"),))
        >>> qs = [Question("a", ("3",), "integer", {"category": "x"}), Question("b", ("1",), "integer", {"category": "y"})]
        >>> r = score_report(spec, qs, [], {"a": "three", "b": "2", "z": "4"}, ignore_extra_ids=True)
        >>> r["overall"]["accuracy"], r["by_category"]["y"]["accuracy"], r["ignored_ids"]
        (0.5, 0.0, 1)
    """
    notes = list(notes)

    def result(predictions: Mapping[str, Prediction]) -> dict:
        # No vocabulary from the data: the spec's own is the one the rewards and lmms-eval read with.
        return system_result(spec, questions, predictions, config, None, seed, resamples)

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
        known = {q.question_id for q in questions}
        unknown = [qid for qid in predictions if qid not in known]
        if unknown and not ignore_extra_ids:  # a wrong --split or --config would score as all-missing
            shown = ", ".join(repr(u) for u in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
            raise EvaluationError(f"{source or 'predictions'}: {len(unknown)} question_id(s) are not in {where} "
                                  f"({shown}); wrong --split or --config? (--ignore_extra_ids scores a file made for "
                                  "a larger configuration, leaving those out)")
        if ignore_extra_ids:
            report["ignored_ids"] = len(unknown)
        systems["model"] = result(predictions)
        report.update(systems["model"])
    baselines = {b.name: result(b.predictions(train, questions)) for b in spec.baselines} if train else {}
    if spec.baselines and not train:
        notes.append("no train questions: the majority and prior baselines are left out")
    if oracle is not None:
        if len(oracle) < len(questions):
            notes.append(f"oracle: {len(questions) - len(oracle)} question(s) without a scene or program "
                         "(counted as missing)")
        baselines["oracle"] = result(oracle)
    report["baselines"] = baselines
    if any(s.generalisation for s in spec.sections):
        report["generalisation"] = _generalisation(spec, train, systems | baselines)
    report["notes"] = notes
    return report


def evaluate_dataset(spec: ScoringSpec, read: Callable[..., list[Question]], builder_class: type,
                     columns: Sequence[str], data, config: str, split: str = "test", predictions=None,
                     train_split: str = "train", seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
                     cache_dir: str | os.PathLike | None = None, ignore_extra_ids: bool = False,
                     oracle: Callable[[Sequence[Question]], Mapping[str, str | None]] | None = None,
                     notes: Sequence[str] = (), builder_kwargs: dict | None = None, train=None) -> dict:
    """:func:`score_report` on ``split`` of ``config`` in ``data``, questions read by ``read(dataset, config)``.

    ``data``: a path or Hub repository id (:func:`~builder_utils.evaluation.data.load_splits`), or data in
    memory (:func:`~builder_utils.evaluation.data.given_splits`): a ``DatasetDict`` (its ``split`` and
    ``train_split``), or one ``Dataset`` / ``IterableDataset``, the questions themselves, with the baselines'
    training questions in ``train`` (a Dataset; None: no majority or prior baselines).

    Example::

        evaluate_dataset(SPEC, read_questions, ClevrMath, COLUMNS, "hub", "general", predictions="p.jsonl")
    """
    predictions, source = given_predictions(predictions)  # a bad file fails before any data is loaded
    if is_in_memory(data):
        splits = given_splits(data, split, columns)
        if train is not None:
            splits[train_split] = given_splits(train, train_split, columns)[train_split]
        where = f"the given {type(data).__name__}"
    else:
        splits = load_splits(data, config, builder_class, columns, cache_dir, builder_kwargs)
        where = os.fspath(data)
    if split not in splits:
        raise EvaluationError(f"{where}: config {config!r} has no split {split!r}; it has: {', '.join(splits)}")
    questions = read(splits[split], config)
    train_questions = read(splits[train_split], config) if train_split in splits else []
    header = {"data": where, "config": config, "split": split, "train_split": train_split}
    return score_report(spec, questions, train_questions, predictions, source, header, config,
                        None if oracle is None else oracle(questions), notes, seed, resamples, ignore_extra_ids,
                        f"split {split!r} of config {config!r}")


def labelling_table(spec: ScoringSpec, systems: Mapping[str, Mapping]) -> str:
    """One row per labelling of the spec: questions, targets, each system's accuracy (top-k in brackets).

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
        for group, row in report["generalisation"][section.name].items():
            rows.append([section.label.format(group), row["train_questions"], row["questions"],
                         *(percent(row["accuracy"].get(n)) for n in names)])
    return markdown_table(["questions", "train questions", "test questions", *names], rows)


def render_markdown(spec: ScoringSpec, report: Mapping) -> str:
    """``report.md``: what was evaluated, then the overall, generalisation, labelling and section tables.

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
    """Write ``report.json``, ``report.md`` and the spec's charts into ``out``.

    Example::

        write_evaluation(SPEC, evaluate("hub", "general"), "eval")
    """
    return write_report(out, report, render_markdown(spec, report), charts(spec, report), overwrite=overwrite)


def report_writer(spec: ScoringSpec, example: str):
    """:func:`write_evaluation` bound to one dataset's ``spec``: the ``write_evaluation`` each package exports.

    ``example`` is the call of that package's ``evaluate`` shown in the docstring.

    Example::

        write_evaluation = report_writer(SPEC, 'evaluate("hub", "general", predictions="preds.csv")')
        write_evaluation(report, "eval/general")
    """
    def bound(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
        return write_evaluation(spec, report, out, overwrite)

    bound.__name__ = bound.__qualname__ = "write_evaluation"
    bound.__doc__ = f"""Write a report of ``evaluate`` into the folder ``out``: ``report.json``, ``report.md`` (the tables)
    and the accuracy charts (PNG), through the ownership record; returns the paths written. A file there
    that this function did not write is refused unless ``overwrite``.

    Example::

        write_evaluation({example}, "eval")
    """
    return bound


def write_demo(spec: ScoringSpec, report: Mapping, out: str | os.PathLike, stream=None) -> Mapping:
    """The demo's last step: write a baselines-only ``report`` into ``out``, print its table; returns it.

    Example::

        write_demo(SPEC, evaluate("demo_output/clevr_math/hub", "general"), "evaluation/general")
    """
    write_evaluation(spec, report, out)  # a re-run replaces our unchanged report, never an edited one
    systems = report_systems(report)
    print(f"\nbaselines on {report['config']}/{report['split']} ({report['num_questions']} questions), "
          f"report in {out}:", file=stream)
    print(labelling_table(spec, systems) if spec.labellings else overall_table(systems), file=stream)
    return report
