"""Statistics of exported configurations, read back from their Parquet shards.

From the files to upload, not the builder: the card and the download cannot drift apart, and an
earlier run's configurations are described from their own files. Values are counted as stored,
so every key of the card is a value users can filter on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import datasets
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

NO_LABEL = "(no label)"
MISSING = "(none)"


@dataclass
class Distribution:
    """How often each value of one column occurs, per split: ``[(value, {split: count})]`` in display order.

    ClassLabel names in label order, integers ascending, other answers most frequent first, other
    groups by name (numbers inside compared as numbers).
    """

    column: str
    values: list[tuple[str, dict[str, int]]]

    def top(self, limit: int) -> list[tuple[str, dict[str, int]]]:
        """The first ``limit`` values, the rest summed into one ``(k other values)`` row.

        Example:
            >>> Distribution("x", [("a", {"train": 2}), ("b", {"train": 1}), ("c", {"train": 1})]).top(1)
            [('a', {'train': 2}), ('(2 other values)', {'train': 2})]
        """
        if len(self.values) <= limit:
            return list(self.values)
        rest: dict[str, int] = {}
        for _, counts in self.values[limit:]:
            for split, count in counts.items():
                rest[split] = rest.get(split, 0) + count
        return list(self.values[:limit]) + [(f"({len(self.values) - limit} other values)", rest)]


@dataclass
class ConfigStats:
    """Rows per split, features and distributions of one exported configuration."""

    name: str
    rows: dict[str, int]
    features: datasets.Features
    answers: Distribution | None = None
    groups: list[Distribution] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    @property
    def distributions(self) -> list[Distribution]:
        """The answer distribution (if any) then the group distributions, as the card shows them."""
        return [d for d in [self.answers, *self.groups] if d is not None]


def card_columns(builder_cls) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(answer columns, group columns)`` a builder declares for its card; the first answer column present wins.

    Example:
        >>> card_columns(type("Builder", (), {"CARD_ANSWER_COLUMNS": ("label",), "CARD_GROUP_COLUMNS": ("category",)}))
        (('label',), ('category',))
    """
    return tuple(getattr(builder_cls, "CARD_ANSWER_COLUMNS", ())), tuple(getattr(builder_cls, "CARD_GROUP_COLUMNS", ()))


def _counts(values: pa.ChunkedArray) -> dict:
    counted = pc.value_counts(values)
    return dict(zip(counted.field("values").to_pylist(), counted.field("counts").to_pylist()))


def _natural(value) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(value))]


def _distribution(column: str, feature, per_split: Mapping[str, dict], by_count: bool) -> Distribution:
    totals: dict = {}
    for counts in per_split.values():
        for value, count in counts.items():
            totals[value] = totals.get(value, 0) + count
    if isinstance(feature, datasets.ClassLabel):
        order = sorted(totals, key=lambda v: (v is None or v < 0, -1 if v is None else v))
        name = lambda v: MISSING if v is None else NO_LABEL if v < 0 else feature.int2str(v)  # noqa: E731
    else:
        if all(isinstance(v, int) for v in totals if v is not None):
            order = sorted(totals, key=lambda v: (v is None, v if v is not None else 0))
        elif by_count:
            order = sorted(totals, key=lambda v: (-totals[v], v is None, str(v)))
        else:
            order = sorted(totals, key=lambda v: (v is None, _natural(v)))
        name = lambda v: MISSING if v is None else str(v)  # noqa: E731
    values = [(name(v), {split: counts[v] for split, counts in per_split.items() if v in counts}) for v in order]
    return Distribution(column, values)


def config_statistics(
    name: str,
    split_files: Mapping[str, Sequence[str | os.PathLike]],
    answer_columns: Sequence[str] = (),
    group_columns: Sequence[str] = (),
) -> ConfigStats:
    """Count rows and the answer / group distributions of one configuration's Parquet files (needed columns only).

    Example::

        stats = config_statistics("general", {"train": ["out/general/train-00000-of-00001.parquet"]})
        stats.rows, stats.answers.values[0]
        # -> ({'train': 40}, ('0', {'train': 5}))
    """
    features = None
    rows: dict[str, int] = {}
    for split, files in split_files.items():
        rows[split] = 0
        for path in files:
            parquet = pq.ParquetFile(path)
            rows[split] += parquet.metadata.num_rows
            if features is None:
                features = datasets.Features.from_arrow_schema(parquet.schema_arrow)
    if features is None:
        raise ValueError(f"configuration {name!r} has no Parquet files")
    answer = next((c for c in answer_columns if c in features), None)
    groups = [c for c in group_columns if c in features and c != answer]
    wanted = [c for c in [answer, *groups] if c is not None]
    per_column: dict[str, dict[str, dict]] = {column: {} for column in [answer, *groups] if column}
    for split, files in split_files.items():
        for path in files:
            table = pq.read_table(path, columns=wanted)
            for column in per_column:
                split_counts = per_column[column].setdefault(split, {})
                for value, count in _counts(table.column(column)).items():
                    split_counts[value] = split_counts.get(value, 0) + count
    distributions = {c: _distribution(c, features[c], per_column[c], by_count=c == answer) for c in per_column}
    return ConfigStats(
        name=name,
        rows=rows,
        features=features,
        answers=distributions.get(answer) if answer else None,
        groups=[distributions[c] for c in groups],
    )
