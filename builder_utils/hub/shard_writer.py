"""Write one Parquet shard, media embedded, the bytes ``Dataset.to_parquet`` would write.

Not ``embed_table_storage``: it copies each file through a Python ``bytes`` and writes through a
Python file object, most of an export's time at full size. Here Image/Audio files are read with
``readinto`` into one Arrow buffer (other media: the library's ``embed_array_storage``), the next
batch is read and the file hashed in a second thread while pyarrow encodes (all release the GIL),
and pyarrow writes by path with ``datasets``' options. The tests compare the bytes with the
library's. Memory: two batches (about 100 media files each), not the shard.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from builder_utils.datasets_adapter import (DEFAULT_CDC_OPTIONS, embed_array_storage, get_parquet_column_options,
                                            is_local_path, require_storage_embed)
from builder_utils.media_check import verify_unchanged

__all__ = ["ShardWritten", "WriteStopped", "embed_media", "write_parquet_shard"]

# One batch's files go in one Arrow binary buffer, whose offsets are 32-bit.
_MAX_BATCH_BYTES = 2**31 - 1
_HASH_CHUNK = 1 << 22


class WriteStopped(Exception):
    """The ``stop`` event was set while the shard was being written (the file is incomplete)."""


@dataclass(frozen=True)
class ShardWritten:
    """What :func:`write_parquet_shard` wrote: rows, Parquet and embedded Arrow bytes, sha256."""

    rows: int
    parquet_bytes: int
    arrow_bytes: int
    sha256: str


class _AppendHasher:
    """The sha256 of a file that is only ever appended to, taken a piece at a time."""

    def __init__(self, path: str):
        self.path, self.done, self.digest = path, 0, hashlib.sha256()

    def catch_up(self) -> None:
        size = os.path.getsize(self.path)
        with open(self.path, "rb") as fh:
            fh.seek(self.done)
            while self.done < size:
                chunk = fh.read(min(_HASH_CHUNK, size - self.done))
                if not chunk:
                    break
                self.digest.update(chunk)
                self.done += len(chunk)


def _read_into(paths: list[str | None]) -> tuple[np.ndarray, bytearray]:
    """Offsets and one buffer holding the files (an empty entry for ``None``)."""
    sizes = [0 if path is None else os.path.getsize(path) for path in paths]
    offsets = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if offsets[-1] > _MAX_BATCH_BYTES:
        raise ValueError(f"{offsets[-1]:,} bytes of media in one batch of {len(paths)} rows: over 2 GiB")
    data = bytearray(int(offsets[-1]))
    view = memoryview(data)
    for path, start, stop in zip(paths, offsets[:-1].tolist(), offsets[1:].tolist()):
        if path is None:
            continue
        with open(path, "rb", buffering=0) as fh:
            st = os.fstat(fh.fileno())
            if st.st_size != stop - start:
                raise OSError(errno.EIO, "its size changed while the export read it", path)
            done = 0
            while done < stop - start:
                got = fh.readinto(view[start + done:stop])
                if not got:
                    raise OSError(errno.EIO, "it shrank while being read", path)
                done += got
        # the bytes embedded, not the file's stat: a file replaced by one of the same size
        # with its modification time set back is caught here
        verify_unchanged(path, view[start:stop])
    return offsets.astype(np.int32), data


def _embed_files(storage: pa.StructArray, feature) -> pa.Array:
    """A ``{bytes, path}`` column with each local file's bytes read in, path reduced to its name."""
    stored = storage.field("bytes")
    paths = storage.field("path").to_pylist()
    valid = storage.is_valid().to_pylist()
    empty = stored.is_null().to_pylist()
    wanted = [path if ok and none and path is not None else None for ok, none, path in zip(valid, empty, paths)]
    # Mixed rows (some bytes stored) and remote paths are rare: the library handles them.
    if any(p is not None and not is_local_path(p) for p in wanted) or (
        any(wanted) and stored.null_count < len(stored)
    ):
        return embed_array_storage(storage, feature)
    if any(wanted):
        offsets, data = _read_into(wanted)
        mask = np.array([path is None for path in wanted])
        stored = pa.Array.from_buffers(pa.binary(), len(wanted), [
            pa.array(~mask).buffers()[1] if mask.any() else None, pa.py_buffer(offsets), pa.py_buffer(data)
        ], null_count=int(mask.sum()))
    names = pa.array([os.path.basename(p) if p is not None and is_local_path(p) else p for p in paths], pa.string())
    embedded = pa.StructArray.from_arrays([stored, names], ["bytes", "path"], mask=storage.is_null())
    return embedded.cast(feature.pa_type) if embedded.type != feature.pa_type else embedded


def embed_media(array: pa.Array, feature) -> pa.Array:
    """``array`` (the storage of ``feature``) with its local media files embedded, as ``embed_array_storage`` gives it.

    Example:
        >>> import tempfile
        >>> png = os.path.join(tempfile.mkdtemp(), "a.png")
        >>> _ = open(png, "wb").write(b"not really a png")
        >>> storage = pa.array([{"bytes": None, "path": png}], datasets.Image().pa_type)
        >>> embed_media(storage, datasets.Image()).to_pylist()
        [{'bytes': b'not really a png', 'path': 'a.png'}]
    """
    if isinstance(feature, (datasets.Image, datasets.Audio)) and pa.types.is_struct(array.type):
        return _embed_files(array, feature)
    inner = getattr(feature, "feature", None)
    if inner is not None and isinstance(array, (pa.ListArray, pa.LargeListArray)) and not isinstance(inner, dict):
        # The slice's own values only: ``array.values`` is the whole child of a sliced list.
        offsets = array.offsets
        first, last = offsets[0].as_py(), offsets[-1].as_py()
        values = embed_media(array.values.slice(first, last - first), inner)
        rebuilt = type(array).from_arrays(pc.subtract(offsets, first), values,
                                          mask=array.is_null() if array.null_count else None)
        return rebuilt.cast(array.type) if rebuilt.type != array.type else rebuilt
    return embed_array_storage(array, feature)


def _embedded_batch(table: pa.Table, features: datasets.Features,
                    transform: Callable[[pa.Table], pa.Table] | None) -> pa.Table:
    for position, (name, feature) in enumerate(features.items()):
        if require_storage_embed(feature):
            column = embed_media(table.column(name).combine_chunks(), feature)
            table = table.set_column(position, table.schema.field(name), column)
    return transform(table) if transform is not None else table


def _writer_options(features: datasets.Features, schema: pa.Schema) -> tuple[dict, object]:
    # datasets' own choices, where this datasets has them (5.x); older releases wrote defaults.
    if get_parquet_column_options is None:
        return {}, False
    options = dict(get_parquet_column_options(features, schema))
    options.update(use_content_defined_chunking=DEFAULT_CDC_OPTIONS, write_page_index=True)
    return options, DEFAULT_CDC_OPTIONS


def write_parquet_shard(
    table: pa.Table,
    features: datasets.Features,
    path: str | os.PathLike,
    batch_size: int,
    *,
    embed: bool = True,
    transform: Callable[[pa.Table], pa.Table] | None = None,
    stop: threading.Event | None = None,
) -> ShardWritten:
    """Write ``table`` to the Parquet file ``path``, ``batch_size`` rows per row group, media embedded.

    ``transform`` maps each embedded batch (to FLAC). A set ``stop`` ends it between two batches
    (:class:`WriteStopped`; the caller removes the file).

    Example:
        >>> import tempfile
        >>> features = datasets.Features({"q": datasets.Value("string")})
        >>> out = os.path.join(tempfile.mkdtemp(), "train-00000-of-00001.parquet")
        >>> write_parquet_shard(pa.table({"q": ["a", "b", "c"]}), features, out, 2).rows
        3
        >>> pq.ParquetFile(out).metadata.num_row_groups
        2
    """
    schema = features.arrow_schema
    options, cdc = _writer_options(features, schema)
    starts = range(0, len(table), max(1, batch_size))

    def batch(start: int) -> pa.Table:
        rows = table.slice(start, batch_size)
        rows = _embedded_batch(rows, features, transform) if embed else rows
        return rows if rows.schema == schema else rows.cast(schema)

    arrow_bytes = 0
    path = os.fspath(path)
    # One helper thread, so its jobs run in order: read batch k+1, hash what batch k-1 wrote, ...
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="shard-reader") as helper:
        writer = pq.ParquetWriter(path, schema=schema, **options)
        hasher = _AppendHasher(path)
        pending = []
        try:
            upcoming = helper.submit(batch, starts[0]) if starts else None
            for index in range(len(starts)):
                current = upcoming.result()
                upcoming = helper.submit(batch, starts[index + 1]) if index + 1 < len(starts) else None
                if stop is not None and stop.is_set():
                    raise WriteStopped(path)
                writer.write_table(current)
                arrow_bytes += current.nbytes
                pending = [job for job in pending if not job.done()] + [helper.submit(hasher.catch_up)]
            if cdc is not False:
                writer.add_key_value_metadata({"content_defined_chunking": json.dumps(cdc)})
        except BaseException:
            for job in [upcoming, *pending]:
                if job is not None:
                    job.cancel()
            raise
        finally:
            writer.close()
        for job in pending:
            job.result()  # an OSError of the hashing surfaces here
    hasher.catch_up()  # the footer, written by close()
    return ShardWritten(rows=len(table), parquet_bytes=os.path.getsize(path), arrow_bytes=arrow_bytes,
                        sha256=hasher.digest.hexdigest())
