"""The size of an export before it is written: rows and projected bytes per configuration and layout.

Projected: Arrow bytes of the non-media columns plus every media file a row embeds. The Parquet
is usually a little smaller (text compresses; PNG/WAV bytes are stored as they are).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import datasets
import pyarrow as pa

from builder_utils.hub.layout import HubLayout

logger = logging.getLogger(__name__)

#: Above this multiple of the media files' bytes, an inline export warns.
INLINE_WARNING_FACTOR = 3.0


@dataclass
class PlannedConfig:
    """One configuration: rows and projected bytes in each layout (None: not in that layout)."""

    name: str
    rows: int
    inline: int | None
    shared: int | None


@dataclass
class ExportPlan:
    """The rows and projected bytes of every configuration of one export."""

    layout: str
    configs: list[PlannedConfig] = field(default_factory=list)
    media_files: int = 0
    media_bytes: int = 0
    #: Whether a question configuration is planned: only those move their media out when shared
    #: (conversations keep theirs; prompts' readers need it inline), so only then does inline warn.
    shareable: bool = True

    def total(self, layout: str) -> int:
        return sum(getattr(c, layout) or 0 for c in self.configs)

    @property
    def inline_factor(self) -> float:
        """Inline bytes divided by the bytes of the media files (each counted once)."""
        return self.total("inline") / self.media_bytes if self.media_bytes else 0.0

    def warning(self) -> str | None:
        """The warning an inline export gives when it stores the media more than 3x over.

        Example:
            >>> plan = ExportPlan("inline", [PlannedConfig("all", 10, 4_000, 500)], media_files=2, media_bytes=1_000)
            >>> plan.warning().split(";")[0]
            'inline would write 4.0 kB, 4.0x the 1.0 kB of the 2 media files'
        """
        if (self.layout != "inline" or not self.shareable or not self.media_bytes
                or self.inline_factor <= INLINE_WARNING_FACTOR):
            return None
        return (
            f"inline would write {_size(self.total('inline'))}, {self.inline_factor:.1f}x the "
            f"{_size(self.media_bytes)} of the {self.media_files:,} media files; every row embeds its own "
            f"copy: --media shared stores each file once ({_size(self.total('shared'))})"
        )

    def table(self) -> str:
        """The plan as a fixed-width table, the chosen layout marked with ``*``.

        Example:
            >>> print(ExportPlan("shared", [PlannedConfig("images", 4, None, 2_000_000)], 4, 2_000_000).table())
            configuration     rows        inline     shared*
            images               4             -      2.0 MB
            total                              -      2.0 MB
            media files: 4, 2.0 MB; projected: Arrow bytes of the columns + media files embedded
        """
        marks = {name: name + ("*" if name == self.layout else "") for name in ("inline", "shared")}
        width = max([len("configuration"), *(len(c.name) for c in self.configs)])
        lines = [f"{'configuration':<{width}} {'rows':>8} {marks['inline']:>13} {marks['shared']:>11}"]
        for c in self.configs:
            lines.append(f"{c.name:<{width}} {c.rows:>8,} {_cell(c.inline):>13} {_cell(c.shared):>11}")
        inline = self.total("inline") if any(c.inline is not None for c in self.configs) else None
        shared = self.total("shared") if any(c.shared is not None for c in self.configs) else None
        lines.append(f"{'total':<{width}} {'':>8} {_cell(inline):>13} {_cell(shared):>11}")
        lines.append(
            f"media files: {self.media_files:,}, {_size(self.media_bytes)}; "
            "projected: Arrow bytes of the columns + media files embedded"
        )
        return "\n".join(lines)


def _size(nbytes: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{nbytes} B"


def _cell(nbytes: int | None) -> str:
    return "-" if nbytes is None else _size(nbytes)


def file_sizes(rows: datasets.Dataset, column: str, sizes: dict[str, int]) -> list[int]:
    """The size of each row's media file (or stored bytes), cached by path; missing: 0 (writing reports it).

    Example:
        >>> file_sizes(datasets.Dataset.from_dict({"m": [{"bytes": b"abc", "path": None}]}), "m", {})
        [3]
    """
    storage = rows.data.column(column)
    if rows._indices is not None:
        storage = storage.take(rows._indices.column(0))
    return _sizes(storage.to_pylist(), sizes)


def _sizes(values: Sequence[dict | None], sizes: dict[str, int]) -> list[int]:
    found = []
    for value in values:
        if value is None:
            found.append(0)
        elif value.get("bytes") is not None:
            found.append(len(value["bytes"]))
        else:
            path = value.get("path")
            if path not in sizes:
                try:
                    sizes[path] = os.path.getsize(path)
                except (OSError, TypeError):
                    sizes[path] = 0
            found.append(sizes[path])
    return found


def _column_bytes(rows: datasets.Dataset, skip: Sequence[str]) -> int:
    table = rows.data.table
    total = sum(table.column(c).nbytes for c in table.column_names if c not in skip)
    if rows._indices is not None and table.num_rows:
        total = total * len(rows) // table.num_rows
    return total


def _media_key(value: dict) -> str:
    """What makes two media values one file: its path, else its bytes (rows made in memory)."""
    return value.get("path") or hashlib.sha256(value.get("bytes") or b"").hexdigest()


def _listed_media(splits: Mapping[str, datasets.Dataset], column: str | None, sizes: dict[str, int],
                  distinct: dict[str, int]) -> tuple[int, int]:
    """(other columns' bytes, media bytes) of a configuration with a media list (files, or samples:
    their Arrow bytes) or a media column; each file or clip also counted once in ``distinct``."""
    text = files = 0
    for ds in splits.values():
        text += _column_bytes(ds, [column])
        if column is None:  # a layout without media
            continue
        stored = ds.data.column(column)
        single = pa.types.is_struct(stored.type)  # one file a row (a trainer's `image` column)
        if single or pa.types.is_struct(stored.type.value_type):
            values = stored.to_pylist() if single else stored.combine_chunks().flatten().to_pylist()
            per_value = _sizes(values, sizes)
            files += sum(per_value)
            distinct.update((_media_key(value), size) for value, size in zip(values, per_value) if value is not None)
        else:
            files += stored.nbytes
            clips = stored.combine_chunks().flatten()  # one 1-D sample array per clip: a clip in 6 rows is one
            for clip in (clips[i].values for i in range(len(clips)) if clips[i].is_valid):
                samples = clip.to_numpy(zero_copy_only=False)
                distinct[hashlib.sha256(memoryview(samples)).hexdigest()] = clip.nbytes
    return text, files


def plan_export(
    questions: Mapping[str, Mapping[str, datasets.Dataset]],
    layout: HubLayout | None,
    chosen: str,
    media: Mapping[str, datasets.Dataset] | None = None,
    derived: Sequence[tuple[str, Mapping[str, datasets.Dataset], str | None, bool]] = (),
) -> ExportPlan:
    """Rows and projected bytes of the question, media and ``derived`` configurations.

    ``derived``: ``(config, splits, media list column, names_files)``; one that names its files
    holds its media inline only, the others in both layouts.

    Example:
        >>> from builder_utils.hub.media import media_rows
        >>> image = {"bytes": b"x" * 1000, "path": "a.png"}
        >>> rows = datasets.Dataset.from_dict({"image_filename": ["a.png"] * 3, "image": [image] * 3},
        ...                                   features=datasets.Features({"image_filename": datasets.Value("string"),
        ...                                                               "image": datasets.Image()}))
        >>> layout = HubLayout("image", "image_filename", "images")
        >>> plan = plan_export({"general": {"train": rows}}, layout, "inline", media=media_rows({"general": {"train": rows}}, layout))
        >>> [(c.name, c.rows) for c in plan.configs], plan.media_bytes, plan.inline_factor > 3
        ([('general', 3), ('images', 1)], 1000, True)
    """
    plan = ExportPlan(chosen)
    sizes: dict[str, int] = {}
    media_column = layout.media_column if layout else None
    moved = layout.media_columns if layout else ()
    distinct: dict[str, int] = {}
    for name, splits in questions.items():
        rows = sum(len(ds) for ds in splits.values())
        inline = shared = 0
        for ds in splits.values():
            known = ds.features  # a deep copy per access: read it once
            columns = [c for c, f in known.items() if isinstance(f, (datasets.Image, datasets.Audio))]
            embedded = 0
            for column in columns:
                storage = ds.data.column(column)
                if ds._indices is not None:
                    storage = storage.take(ds._indices.column(0))
                values = storage.to_pylist()
                per_row = _sizes(values, sizes)
                embedded += sum(per_row)
                if column == media_column:
                    for value, size in zip(values, per_row):
                        if value is not None:
                            distinct[_media_key(value)] = size
            inline += _column_bytes(ds, columns) + embedded
            shared += _column_bytes(ds, moved)
        plan.configs.append(PlannedConfig(name, rows, inline, shared if layout else None))
    if media:
        rows = sum(len(ds) for ds in media.values())
        total = sum(_column_bytes(ds, [media_column]) + sum(file_sizes(ds, media_column, sizes)) for ds in media.values())
        plan.configs.append(PlannedConfig(layout.media_config, rows, None, total))
    for name, splits, column, names_files in derived:
        text, files = _listed_media(splits, column, sizes, distinct)
        rows = sum(len(ds) for ds in splits.values())
        plan.configs.append(PlannedConfig(name, rows, text + files, text if names_files else text + files))
    plan.media_files = len(distinct)
    plan.media_bytes = sum(distinct.values())
    plan.shareable = bool(questions)
    return plan
