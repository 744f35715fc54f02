"""Where one media shard's time goes: embedding, Parquet encoding, hashing, against a plain copy.

Run: .venv/bin/python benchmarks/bench_shard_writer.py [--clips 120] [--duration 20]

A synthetic Clotho-AQA release of --clips WAVs (20 s, 44.1 kHz 16-bit mono by default: 120 of
them are the 212 MB train shard of the 200-clip export benchmark). Each step is timed 3
times, wall / CPU seconds:

- ``write_parquet_shard``: the whole shard writer (embedding and hashing in its second thread);
- the library's way: ``embed_table_storage`` then ``Dataset.to_parquet``;
- its parts alone: embedding (``embed_media``), pyarrow encoding with datasets' options
  (content-defined chunking, page index), without chunking, and sha256 of the file;
- ``shutil.copyfile`` of the clips.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
from datasets.table import InMemoryTable, embed_table_storage


def _timed(label: str, step, repeats: int = 3) -> None:
    runs = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), os.times()
        step()
        after = os.times()
        runs.append((time.perf_counter() - wall, after.user + after.system - cpu.user - cpu.system))
    print(f"| {label} | " + " / ".join(f"{w:.2f} ({c:.2f})" for w, c in runs) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=120)
    parser.add_argument("--duration", type=float, default=20.0)
    args = parser.parse_args()

    from builder_utils.hub.shard_writer import _writer_options, embed_media, write_parquet_shard
    from clotho_aqa.synth import write_synthetic_release

    datasets.disable_progress_bars()
    work = Path(tempfile.mkdtemp(prefix="bench_shard_writer-"))
    try:
        release = write_synthetic_release(work / "release", num_files=args.clips, seed=0, duration=args.duration,
                                          overwrite=True).root
        files = sorted(str(p) for p in (release / "audio_files").glob("*.wav"))
        features = datasets.Features({"file_name": datasets.Value("string"), "audio": datasets.Audio()})
        schema = features.arrow_schema
        table = pa.table({"file_name": [os.path.basename(f) for f in files],
                          "audio": pa.array([{"bytes": None, "path": f} for f in files], schema.field("audio").type)},
                         schema=schema)
        rows = datasets.Dataset(InMemoryTable(table), info=datasets.DatasetInfo(features=features))
        size = sum(os.path.getsize(f) for f in files)
        out = str(work / "shard.parquet")
        embedded = pa.table({"file_name": table.column(0),
                             "audio": embed_media(table.column(1).combine_chunks(), datasets.Audio())}, schema=schema)
        options, _ = _writer_options(features, schema)

        def encode(**override):
            writer = pq.ParquetWriter(out, schema=schema, **{**options, **override})
            for start in range(0, len(embedded), 100):
                writer.write_table(embedded.slice(start, 100))
            writer.close()

        def copy():
            for index, path in enumerate(files):
                shutil.copyfile(path, work / f"copy-{index}.wav")

        print(f"{len(files)} clips, {size / 1e6:.1f} MB; nproc {os.cpu_count()}; load average {os.getloadavg()}")
        print("| step | wall s (CPU s), 3 runs |\n|---|---|")
        _timed("`write_parquet_shard` (the whole writer)", lambda: write_parquet_shard(table, features, out, 100))
        _timed("library: `embed_table_storage` + `to_parquet`", lambda: rows.with_format("arrow").map(
            embed_table_storage, batched=True, keep_in_memory=True).to_parquet(out, batch_size=100))
        _timed("part: embedding (`embed_media`)", lambda: embed_media(table.column(1).combine_chunks(), datasets.Audio()))
        _timed("part: pyarrow encoding, datasets' options", encode)
        _timed("part: pyarrow encoding, no content-defined chunking", lambda: encode(use_content_defined_chunking=False))
        def sha256():
            with open(out, "rb") as fh:
                return hashlib.file_digest(fh, "sha256")

        _timed("part: sha256 of the file", sha256)
        _timed("plain copy of the clips", copy)
        print(f"load average at the end {os.getloadavg()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
