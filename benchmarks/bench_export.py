"""Export throughput (MB/s of Parquet written, media embedded) next to plain copies of the same bytes.

Run: .venv/bin/python benchmarks/bench_export.py [--scenes 400] [--clips 40] [--duration 20] [--repeats 3]
     [--max_shard_size 32MB]

For each dataset the script makes a synthetic source (a CLEVR_v1.0 folder of rendered PNGs; a
Clotho-AQA release of 44.1 kHz mono WAVs of --duration seconds, like the real 15-30 s clips),
builds one configuration once (the builder cache is reused, so only the export is timed) and
times, best of --repeats:

- ``export``: ``export_builder`` (shards, media embedded, statistics, plots, card, renames);
- ``save_to_disk``: ``DatasetDict.save_to_disk`` of the same built dataset (the library's own
  embedding writer, the reference);
- ``copy parquet``: ``shutil.copyfile`` of the exported Parquet files (the same bytes, plain I/O);
- ``copy sources``: copying each distinct source file once (what the rows reference);
- embedding alone, on the largest split: ``push_to_hub``'s
  ``map(embed_table_storage, keep_in_memory=True)`` against ``builder_utils.hub.export.embed_shard``
  (each followed by ``to_parquet``).

``--profile`` prints where the time of one more export goes (cProfile, top functions).

Wall-clock seconds; every rate is Parquet megabytes (10^6) written by the export divided by the
seconds of that operation, so the rows compare directly.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import datasets


def _best(action, repeats: int) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        timings.append(time.perf_counter() - start)
    return min(timings)


def _files(folder: Path, suffix: str) -> list[Path]:
    return sorted(p for p in folder.rglob(f"*{suffix}") if p.is_file())


def _copy_all(paths: list[Path], target: Path) -> None:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for index, path in enumerate(paths):
        shutil.copyfile(path, target / f"{index:06d}{path.suffix}")


def bench(name: str, builder_cls, template: str, data_dir: Path, config: str, media: list[Path],
          work: Path, repeats: int, max_shard_size: str) -> dict:
    from builder_utils.hub import export_builder

    cache = work / f"cache_{name}"
    builder = builder_cls(config_name=config, data_dir=str(data_dir), cache_dir=str(cache))
    builder.download_and_prepare()
    built = builder.as_dataset()
    out = work / f"out_{name}"

    def export():
        shutil.rmtree(out, ignore_errors=True)
        export_builder(builder_cls, out, card_template=template, data_dir=data_dir, configs=[config],
                       cache_dir=cache, max_shard_size=max_shard_size, progress=False)

    export_seconds = _best(export, repeats)
    parquet = _files(out, ".parquet")
    parquet_bytes = sum(p.stat().st_size for p in parquet)
    saved = work / f"saved_{name}"

    def save():
        shutil.rmtree(saved, ignore_errors=True)
        built.save_to_disk(str(saved))

    save_seconds = _best(save, repeats)
    copy_parquet = _best(lambda: _copy_all(parquet, work / f"copy_{name}"), repeats)
    embed_map, embed_direct = _embedding(built, work / f"embed_{name}.parquet", repeats)
    copy_sources = _best(lambda: _copy_all(media, work / f"src_{name}"), repeats)
    rows = sum(len(ds) for ds in built.values())
    return {
        "name": name, "config": config, "rows": rows, "files": len(media),
        "source_mb": sum(p.stat().st_size for p in media) / 1e6, "parquet_mb": parquet_bytes / 1e6,
        "shards": len(parquet), "export": export_seconds, "save_to_disk": save_seconds,
        "copy_parquet": copy_parquet, "copy_sources": copy_sources,
        "embed_map": embed_map, "embed_direct": embed_direct, "export_once": export,
    }


def _embedding(built, target: Path, repeats: int) -> tuple[float, float]:
    from datasets.table import embed_table_storage

    from builder_utils.hub.export import _media_columns, _writer_batch_size, embed_shard, media_bytes

    split = max(built.values(), key=len)
    batch = _writer_batch_size(split, split.data.nbytes + media_bytes(split, _media_columns(split.features), "bench"))

    def library():
        embedded = split.with_format("arrow").map(embed_table_storage, batched=True, batch_size=batch,
                                                  keep_in_memory=True)
        embedded.to_parquet(str(target), batch_size=batch)

    def ours():
        embed_shard(split, batch).to_parquet(str(target), batch_size=batch)

    return _best(library, repeats), _best(ours, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=400, help="synthetic CLEVR scenes per split")
    parser.add_argument("--clips", type=int, default=40, help="synthetic Clotho-AQA clips")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per clip")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max_shard_size", default="32MB", help="small enough for several shards per split")
    parser.add_argument("--profile", action="store_true", help="profile one more Clotho-AQA export")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one, removed)")
    args = parser.parse_args()

    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math import ClevrMath
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    datasets.disable_progress_bars()
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_export_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        clevr = write_clevr_folder(work / "CLEVR_v1.0", {"train": args.scenes, "val": args.scenes // 4}, seed=0,
                                   progress=False)
        release = write_synthetic_release(work / "clotho", num_files=args.clips, seed=0, duration=args.duration,
                                          overwrite=True).root
        results = [
            bench("CLEVR-Math", ClevrMath, "clevr_math", clevr, "general", _files(clevr / "images", ".png"),
                  work, args.repeats, args.max_shard_size),
            bench("Clotho-AQA", ClothoAQA, "clotho_aqa", release, "questions",
                  _files(release / "audio_files", ".wav"), work, args.repeats, args.max_shard_size),
        ]
        if args.profile:
            import cProfile
            import pstats

            profiler = cProfile.Profile()
            profiler.runcall(results[1]["export_once"])
            pstats.Stats(profiler).sort_stats("tottime").print_stats(8)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    print(f"machine: {os.cpu_count()} cores, CPython {platform.python_version()}, datasets {datasets.__version__}")
    print("| dataset / config | rows | source files (MB) | Parquet (MB, shards) | export "
          "| save_to_disk | copy of the Parquet bytes | copy of the source files |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        mb = r["parquet_mb"]

        def cell(seconds: float) -> str:
            return f"{seconds:.2f} s = {mb / seconds:,.0f} MB/s"

        print(
            f"| {r['name']} `{r['config']}` | {r['rows']:,} | {r['files']:,} ({r['source_mb']:,.1f}) "
            f"| {mb:,.1f} ({r['shards']}) | {cell(r['export'])} | {cell(r['save_to_disk'])} "
            f"| {cell(r['copy_parquet'])} | {r['copy_sources']:.2f} s ({r['source_mb'] / r['copy_sources']:,.0f} MB/s of sources) |"
        )
    for r in results:
        print(f"{r['name']}: embedding + to_parquet of the largest split: library map {r['embed_map']:.2f} s, "
              f"embed_shard {r['embed_direct']:.2f} s")


if __name__ == "__main__":
    main()
