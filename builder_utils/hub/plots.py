"""The dataset cards' distribution charts (:func:`builder_utils.charts.bar_chart`), stacked by split."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from builder_utils import charts
from builder_utils.charts import axis_ticks

__all__ = ["SPLIT_COLOURS", "axis_ticks", "bar_chart"]

# One colour per split in order of appearance.
SPLIT_COLOURS = charts.COLOURS


def bar_chart(
    path: str | os.PathLike,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, int]]],
    splits: Sequence[str],
    *,
    subtitle: str | None = None,
    value_label: str | None = None,
    count_label: str = "rows",
) -> str:
    """Draw ``[(label, {split: count})]`` as bars stacked by split, write the PNG atomically; return its path.

    Example:
        >>> bar_chart("/tmp/answers.png", "Rows per answer", [("0", {"train": 3, "test": 1})], ["train", "test"],
        ...           value_label="label")
        '/tmp/answers.png'
    """
    axis_label = f"{count_label} (stacked by split)" if len(splits) > 1 else count_label
    return charts.bar_chart(path, title, rows, splits, subtitle=subtitle, value_label=value_label,
                            axis_label=axis_label)
