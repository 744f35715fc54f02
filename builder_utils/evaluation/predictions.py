"""Reading a model's predictions: JSONL, CSV or Parquet rows of ``question_id`` and ``prediction``.

Formats: README.md (this package). Numbers are read as their text; an empty or null prediction
is kept (scored unparseable); a bad row is a :class:`PredictionsError` naming the file and line.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Union

from builder_utils.json_input import loads_json, shown_path
from builder_utils.media_check import DECODED_FLOOR, MAX_DECODED_RATIO
from builder_utils.wait_points import wait_point

__all__ = ["FORMATS", "Prediction", "PredictionsError", "given_predictions", "read_predictions"]

Prediction = Union[str, list, None]
COLUMNS = ("question_id", "prediction")
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


class PredictionsError(ValueError):
    """A predictions file that cannot be read; the message names the file and the line or row."""


def _value(raw: Any, where: str) -> Prediction:
    if raw is None or isinstance(raw, str):
        return raw
    if isinstance(raw, bool):
        raise PredictionsError(f"{where}: prediction is a boolean ({raw}); write it as text (\"yes\"/\"no\")")
    if isinstance(raw, (int, float)):
        return str(raw)
    if isinstance(raw, (list, tuple)):
        if not all(isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in raw):
            raise PredictionsError(f"{where}: a ranked prediction must be a list of strings")
        return [str(item) for item in raw]
    raise PredictionsError(f"{where}: prediction must be text or a list of answers, not {type(raw).__name__}")


def _jsonl_rows(path: Path) -> Iterator[tuple[Any, Any, str]]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{shown_path(path)}: line {number}"
            row = loads_json(line.rstrip("\r\n"), where=shown_path(path), first_line=number, error=PredictionsError)
            if not isinstance(row, dict) or any(c not in row for c in COLUMNS):
                raise PredictionsError(f"{where}: expected an object with keys {', '.join(COLUMNS)}")
            yield row["question_id"], row["prediction"], where


def _csv_rows(path: Path) -> Iterator[tuple[Any, Any, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise PredictionsError(
                f"{path}: line 1: missing column(s) {', '.join(missing)} (header: {reader.fieldnames})")
        for row in reader:
            where = f"{path}: line {reader.line_num}"
            raw = row["prediction"]
            if raw is not None and raw.lstrip().startswith("["):
                try:
                    parsed = loads_json(raw, where=where, error=PredictionsError)
                except PredictionsError:
                    parsed = raw  # free text that happens to start with "["
                raw = parsed if isinstance(parsed, list) else raw
            yield row["question_id"], raw, where


def _parquet_rows(path: Path) -> Iterator[tuple[Any, Any, str]]:
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise PredictionsError(f"{path}: not a readable Parquet file ({exc})") from None
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise PredictionsError(f"{path}: missing column(s) {', '.join(missing)} (columns: {names})")
    limit = _decoded_limit(path)
    # 1. what the pages decode to, from the footer: a compressed page is refused before it is read
    stored = sum(group.column(i).total_uncompressed_size for group in map(parquet.metadata.row_group,
                 range(parquet.metadata.num_row_groups)) for i in range(group.num_columns)
                 if group.column(i).path_in_schema.split(".")[0] in COLUMNS)
    # 2. read with every text column kept dictionary-encoded (a dictionary page holds each value
    # once), then the size the rows expand to: one 20 MB value referenced by 400 rows is 8 GB
    texts = [column.path for column in parquet.schema if column.physical_type == "BYTE_ARRAY"
             and column.path.split(".")[0] in COLUMNS]
    try:
        if stored <= limit:
            table = pq.read_table(path, columns=list(COLUMNS), read_dictionary=texts)
            stored = sum(_decoded_bytes(table.column(name)) for name in COLUMNS)
    except Exception as exc:  # a corrupt page, a truncated file
        raise PredictionsError(f"{path}: not a readable Parquet file ({exc})") from None
    if stored > limit:
        raise PredictionsError(f"{path}: its rows decode to {stored:,} bytes, more than {limit:,} ({MAX_DECODED_RATIO}x "
                               "the file's size); refused before decoding (a decompression bomb?)")
    ids, values = table.column("question_id").to_pylist(), table.column("prediction").to_pylist()
    for index, (qid, raw) in enumerate(zip(ids, values)):
        yield qid, raw, f"{path}: row {index}"


def _decoded_limit(path: Path) -> int:
    """The most bytes a predictions file may decode to: :data:`MAX_DECODED_RATIO` times its size (a floor for small files)."""
    return max(MAX_DECODED_RATIO * path.stat().st_size, DECODED_FLOOR)


def _decoded_bytes(column) -> int:
    """The bytes a (chunked) Arrow column holds once its dictionaries are expanded, without expanding them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    total = 0
    for array in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        if pa.types.is_dictionary(array.type):
            values = array.dictionary
            if pa.types.is_string(values.type) or pa.types.is_binary(values.type) or \
                    pa.types.is_large_string(values.type) or pa.types.is_large_binary(values.type):
                total += pc.sum(pc.binary_length(values).take(array.indices)).as_py() or 0
            else:
                total += values.nbytes // max(len(values), 1) * len(array)
        elif isinstance(array, (pa.ListArray, pa.LargeListArray, pa.FixedSizeListArray)):
            total += _decoded_bytes(array.flatten())
        else:
            total += array.nbytes
    return total


def read_predictions(path: str | os.PathLike) -> dict[str, Prediction]:
    """``question_id`` -> prediction (text, ranked list, or None), in file order; the format by extension.

    Example:
        >>> import tempfile; path = Path(tempfile.mkdtemp()) / "p.jsonl"
        >>> _ = path.write_text('{"question_id": "q1", "prediction": "Answer: 3"}\\n', encoding="utf-8")
        >>> read_predictions(path)
        {'q1': 'Answer: 3'}
    """
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise PredictionsError(f"{path}: unknown predictions format {path.suffix!r}; use .jsonl, .csv or .parquet")
    if not path.is_file():
        raise PredictionsError(f"{path}: no such predictions file")
    out: dict[str, Prediction] = {}
    first_at: dict[str, str] = {}
    try:
        for qid, raw, where in {"jsonl": _jsonl_rows, "csv": _csv_rows, "parquet": _parquet_rows}[kind](path):
            if qid is None or (isinstance(qid, str) and not qid.strip()):
                raise PredictionsError(f"{where}: empty question_id")
            if isinstance(qid, bool) or not isinstance(qid, (str, int)):
                raise PredictionsError(f"{where}: question_id must be text, not {type(qid).__name__}")
            qid = str(qid)
            if qid in out:
                raise PredictionsError(f"{where}: question_id {qid!r} again (first at {first_at[qid]})")
            out[qid] = _value(raw, where)
            wait_point("predictions-row")
            first_at[qid] = where.rsplit(": ", 1)[-1]
    except UnicodeDecodeError as exc:
        raise PredictionsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:  # a field over the csv module's limit, a NUL byte
        raise PredictionsError(f"{path}: not readable CSV ({exc})") from None
    return out


def given_predictions(predictions: str | os.PathLike | Mapping[str, Prediction] | None,
                      ) -> tuple[Mapping[str, Prediction] | None, str | None]:
    """``(predictions, file name or None)`` of a file (read now: fails before any data loads), dict or None.

    Example:
        >>> given_predictions({"q1": "3"})
        ({'q1': '3'}, None)
    """
    if predictions is None or isinstance(predictions, Mapping):
        return predictions, None
    return read_predictions(predictions), os.fspath(predictions)
