"""Accuracy charts: one group of horizontal bars per row (category, number of operations ...),
one bar per system (the model and each baseline).

They are drawn by :func:`builder_utils.charts.bar_chart`, as the dataset cards' charts are, so
both kinds of figure look alike and the same numbers give the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from builder_utils.charts import bar_chart

__all__ = ["accuracy_chart"]

_TICKS = range(0, 101, 20)  # percent: the whole scale, so that charts compare at a glance


def accuracy_chart(
    path: str | os.PathLike,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, float | None]]],
    systems: Sequence[str],
    *,
    subtitle: str | None = None,
    value_label: str | None = None,
) -> str:
    """Draw ``rows`` = ``[(label, {system: accuracy in 0..1 or None})]`` as grouped bars, one
    colour per system in ``systems`` order, and write the PNG atomically. Returns the path.

    Example:
        >>> accuracy_chart("/tmp/acc.png", "Accuracy by category",
        ...                [("insertion", {"model": 0.7, "majority": 0.2})], ["model", "majority"])
        '/tmp/acc.png'
    """
    percents = [(label, {system: None if value is None else value * 100 for system, value in values.items()})
                for label, values in rows]
    return bar_chart(path, title, percents, systems, stacked=False, subtitle=subtitle, value_label=value_label,
                     axis_label="accuracy", ticks=_TICKS, number_format="{:.0f}%")
