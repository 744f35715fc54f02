"""Writing an evaluation: ``report.json``, ``report.md`` (Markdown tables) and PNG charts.

A *system* (the model or a baseline) is ``{"overall": summary, "by_category": {group: summary}, ...}``,
summaries from :func:`builder_utils.evaluation.accuracy.summarize`. The files are staged and
moved into place together, so a complete ``report.json`` means a complete evaluation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from builder_utils.charts import bar_chart
from builder_utils.evaluation.data import EvaluationError
from builder_utils.ownership import OutputFolder, OwnershipError

__all__ = ["Chart", "accuracy_chart", "breakdown_table", "check_outputs", "markdown_table", "overall_table", "percent",
           "report_systems", "write_report"]

REPORT_JSON = "report.json"
REPORT_MD = "report.md"
COMMAND = "evaluate"


@dataclass
class Chart:
    """One PNG to draw: file name, title, ``[(row label, {system: accuracy})]``, systems in order."""

    filename: str
    title: str
    rows: list[tuple[str, dict[str, float | None]]]
    systems: list[str]
    subtitle: str | None = None
    value_label: str | None = None


def report_systems(report: Mapping) -> dict[str, Mapping]:
    """The systems of a report, in table order: ``model`` (the top level, if scored), then the baselines.

    Example:
        >>> list(report_systems({"overall": {}, "baselines": {"majority": {}}}))
        ['model', 'majority']
    """
    systems = {"model": report} if "overall" in report else {}
    return systems | dict(report.get("baselines", {}))


def percent(value: float | None) -> str:
    """``0.7`` -> ``'70.0%'``; None -> ``'–'``.

    Example:
        >>> percent(2 / 3), percent(None)
        ('66.7%', '–')
    """
    return "–" if value is None else f"{value * 100:.1f}%"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub Markdown table.

    Example:
        >>> print(markdown_table(["a", "b"], [[1, "x|y"]]))
        | a | b |
        |---|---|
        | 1 | x\\|y |
    """
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _interval(summary: Mapping) -> str:
    ci = summary.get("ci95")
    return "–" if not ci else f"{ci[0] * 100:.1f}-{ci[1] * 100:.1f}"


def overall_table(systems: Mapping[str, Mapping]) -> str:
    """One row per system: accuracy, interval, counts (questions too where targets differ), failures.

    Example:
        >>> from builder_utils.evaluation.accuracy import score, summarize
        >>> print(overall_table({"model": {"overall": summarize([score(["3"], "3"), score(["2"], "3")])}}))
        | system | accuracy | 95% CI | correct / total | unparseable | missing |
        |---|---|---|---|---|---|
        | model | 50.0% | 0.0-100.0 | 1 / 2 | 0 | 0 |
    """
    summaries = {name: result["overall"] for name, result in systems.items() if result.get("overall") is not None}
    targets = any(s.get("questions", s["total"]) != s["total"] for s in summaries.values())
    rows = [[name, percent(s["accuracy"]), _interval(s), f"{s['correct']} / {s['total']}",
             *([s["questions"]] if targets else []), s["unparseable"], s["missing"]] for name, s in summaries.items()]
    counts = ["correct / targets", "questions"] if targets else ["correct / total"]
    return markdown_table(["system", "accuracy", "95% CI", *counts, "unparseable", "missing"], rows)


def _groups(systems: Mapping[str, Mapping], section: str) -> dict[str, Mapping]:
    """Each group of ``section`` in the systems' order, with the first summary of it."""
    groups: dict[str, Mapping] = {}
    for result in systems.values():
        for group, summary in (result.get(section) or {}).items():
            groups.setdefault(group, summary)
    return groups


def breakdown_table(group_header: str, systems: Mapping[str, Mapping], section: str) -> str:
    """One row per group of ``section``: questions (and targets where they differ), an accuracy per system.

    Example:
        >>> from builder_utils.evaluation.accuracy import score, summarize
        >>> s = {"model": {"by_category": {"insertion": summarize([score(["1"], "1")])}}}
        >>> print(breakdown_table("category", s, "by_category"))
        | category | questions | model |
        |---|---|---|
        | insertion | 1 | 100.0% |
    """
    groups = {g: (s.get("questions", s["total"]), s["total"]) for g, s in _groups(systems, section).items()}
    names = [name for name, result in systems.items() if result.get(section) is not None]
    targets = any(q != t for q, t in groups.values())
    rows = [[group, questions, *([total] if targets else []),
             *(percent((systems[n][section].get(group) or {}).get("accuracy")) for n in names)]
            for group, (questions, total) in groups.items()]
    return markdown_table([group_header, "questions", *(["targets"] if targets else []), *names], rows)


def chart_rows(systems: Mapping[str, Mapping], section: str) -> list[tuple[str, dict]]:
    """``[(group, {system: accuracy})]`` of one section, for :class:`Chart`.

    Example:
        >>> chart_rows({"model": {"by_x": {"a": {"accuracy": 0.5}}}}, "by_x")
        [('a', {'model': 0.5})]
    """
    return [(g, {n: ((r.get(section) or {}).get(g) or {}).get("accuracy") for n, r in systems.items()})
            for g in _groups(systems, section)]


def accuracy_chart(path: str | os.PathLike, title: str, rows: Sequence[tuple[str, Mapping[str, float | None]]],
                   systems: Sequence[str], *, subtitle: str | None = None, value_label: str | None = None) -> str:
    """Draw ``[(label, {system: accuracy or None})]`` as grouped bars on the whole 0-100 % scale.

    Through :func:`builder_utils.charts.bar_chart`, as the cards' charts: same look, same bytes.

    Example:
        >>> accuracy_chart("/tmp/acc.png", "Accuracy by category", [("insertion", {"model": 0.7})], ["model"])
        '/tmp/acc.png'
    """
    percents = [(label, {system: None if value is None else value * 100 for system, value in values.items()})
                for label, values in rows]
    return bar_chart(path, title, percents, systems, stacked=False, subtitle=subtitle, value_label=value_label,
                     axis_label="accuracy", ticks=range(0, 101, 20), number_format="{:.0f}%")


def check_outputs(out: OutputFolder, chart_names: Sequence[str]) -> OutputFolder:
    """Refuse, before any work, a report file in ``out`` that is not ours (unless ``overwrite``); returns ``out``.

    Example:
        >>> import tempfile
        >>> with OutputFolder.open(tempfile.mkdtemp(), command=COMMAND) as out:
        ...     check_outputs(out, ["a.png"]) is out
        True
    """
    for name in [*chart_names, REPORT_MD, REPORT_JSON]:
        try:
            out.check(name)
        except OwnershipError as exc:
            raise EvaluationError(str(exc)) from None
    return out


def write_report(
    out: str | os.PathLike | OutputFolder, report: Mapping, markdown: str, charts: Sequence[Chart] = (),
    overwrite: bool = False,
) -> list[Path]:
    """Write the report's files into ``out`` (a path, or an open :class:`OutputFolder`); return the paths.

    Example:
        >>> import tempfile
        >>> [p.name for p in write_report(tempfile.mkdtemp(), {"overall": None}, "# Report\\n")]
        ['report.md', 'report.json']
    """
    names = [chart.filename for chart in charts] + [REPORT_MD, REPORT_JSON]
    if not isinstance(out, OutputFolder):
        try:
            with OutputFolder.open(Path(out).expanduser(), command=COMMAND, overwrite=overwrite) as folder:
                return write_report(folder, report, markdown, charts)
        except OwnershipError as exc:
            raise EvaluationError(str(exc)) from None
    check_outputs(out, [chart.filename for chart in charts])
    text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    for chart in charts:
        accuracy_chart(out.stage / chart.filename, chart.title, chart.rows, chart.systems,
                       subtitle=chart.subtitle, value_label=chart.value_label)
    (out.stage / REPORT_MD).write_text(markdown if markdown.endswith("\n") else markdown + "\n", encoding="utf-8")
    (out.stage / REPORT_JSON).write_text(text, encoding="utf-8")
    out.add(names)
    return [out.root / name for name in names]
