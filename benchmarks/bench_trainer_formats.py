"""The R1-family trainer layouts: Parquet bytes and export time of each, next to the inline ``general``.

Run: .venv/bin/python benchmarks/bench_trainer_formats.py [--scenes 400] [--clips 40] [--repeats 3]

Sources: a synthetic CLEVR world (--scenes train + --scenes/4 val scenes, rendered PNGs) and a
synthetic Clotho-AQA release (--clips WAVs of 20 s). Each configuration is built once (warm
builder cache); then each layout is exported alone into a fresh folder, median of --repeats (wall
clock: rows, shards, embedding, Parquet, statistics, plots, card).
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import datasets

CLEVR_LAYOUTS = ["general", "r1v", "easyr1", "swift", "vlm_r1", "reason_rft", "reason_rft_cot", "lmm_r1"]
CLOTHO_LAYOUTS = ["questions", "swift", "swift_choices", "r1_aqa"]


def _export(builder_cls, template: str, data_dir: Path, out: Path, config: str, cache: Path, repeats: int):
    from builder_utils.hub import export_builder

    times = []
    for _ in range(repeats):
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        export_builder(builder_cls, out, card_template=template, data_dir=data_dir, configs=[config],
                       cache_dir=cache, progress=False)
        times.append(time.perf_counter() - start)
    size = sum(p.stat().st_size for p in (out / config).glob("*.parquet"))
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=400, help="synthetic CLEVR train scenes (+1/4 val)")
    parser.add_argument("--clips", type=int, default=40, help="synthetic Clotho-AQA clips")
    parser.add_argument("--repeats", type=int, default=3, help="exports timed per layout (median)")
    args = parser.parse_args()
    datasets.disable_progress_bars()

    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math import ClevrMath
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    work = Path(tempfile.mkdtemp(prefix="bench_trainer_formats_"))
    try:
        clevr = write_clevr_folder(work / "CLEVR_v1.0", {"train": args.scenes, "val": max(1, args.scenes // 4)},
                                   seed=0, splits=("train", "val"), progress=False)
        release = write_synthetic_release(work / "release", num_files=args.clips, seed=0, duration=20.0).root
        print(f"# {platform.node()}: {platform.python_version()}, datasets {datasets.__version__}")
        print("| dataset | layout | rows | Parquet (MB) | / general or questions | export (s) |")
        print("|---|---|---|---|---|---|")
        for name, builder_cls, template, source, layouts in (
                ("CLEVR-Math", ClevrMath, "clevr_math", clevr, CLEVR_LAYOUTS),
                ("Clotho-AQA", ClothoAQA, "clotho_aqa", release, CLOTHO_LAYOUTS)):
            base = None
            for layout in layouts:
                out = work / f"out_{layout}"
                seconds, size = _export(builder_cls, template, source, out, layout, work / "cache", args.repeats)
                rows = sum(pq_rows(p) for p in (out / layout).glob("*.parquet"))
                base = base or size
                print(f"| {name} | `{layout}` | {rows:,} | {size / 1e6:,.1f} | {size / base:.2f}x | {seconds:.2f} |")
                shutil.rmtree(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def pq_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows


if __name__ == "__main__":
    main()
