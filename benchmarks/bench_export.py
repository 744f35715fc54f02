"""Hub export per layout: bytes written per byte of source media, and time next to a plain copy.

Run: .venv/bin/python benchmarks/bench_export.py [--scenes 2000] [--clips 200] [--duration 20]
     .venv/bin/python benchmarks/bench_export.py --datasets clotho_aqa --clips 1800   # Clotho-AQA's real size

Sources: a synthetic CLEVR world (--scenes train + --scenes/4 val scenes, rendered PNGs) and a
synthetic Clotho-AQA release (--clips WAVs of --duration s, 44.1 kHz 16-bit mono like the real
15-30 s clips). Each configuration is built once (warm builder cache); then, per layout, one
export is timed, median of 3 (wall clock: shards, embedding, Parquet, statistics, plots, card):

- ``inline``: the question configuration with every row embedding its file (CLEVR-Math
  ``general``; Clotho-AQA ``questions`` is only projected by ``--plan``: 6 copies of every clip);
- ``shared``: the question configuration without media + the media configuration (each file once);
- ``conversations``: one row per file, its questions as turns;
- ``shared flac`` (Clotho-AQA): the shared layout with ``--audio_format flac``;
- ``conversations_multihop`` (CLEVR-Math): the same, following ``multihop``;
- ``prompts`` (and ``prompts_multihop``), shared: the RL prompt rows (key only) + the media
  configuration; "text" is then the prompt configuration's own Parquet; inline ``prompts``
  (every row embedding its file) is projected by ``--plan``.

``copy`` is ``shutil.copyfile`` of each source media file once, median of 3 (the I/O floor). "text" is the
Parquet of the question configuration in the shared layout (the questions without media).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import datasets


def _bytes(folder: Path, configs: list[str]) -> int:
    return sum(p.stat().st_size for c in configs for p in (folder / c).glob("*.parquet"))


def _copy(paths: list[Path], target: Path) -> float:
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    start = time.perf_counter()
    for index, path in enumerate(paths):
        shutil.copyfile(path, target / f"{index:06d}{path.suffix}")
    seconds = time.perf_counter() - start
    shutil.rmtree(target)
    return seconds


REPEATS = 3


def _export(builder_cls, template, data_dir, out, configs, cache, **options) -> tuple[float, object]:
    """Median of REPEATS exports into a fresh folder (the last one is kept): the machine is shared."""
    from builder_utils.hub import export_builder

    times = []
    for _ in range(1 if options.get("plan_only") else REPEATS):
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        result = export_builder(builder_cls, out, card_template=template, data_dir=data_dir, configs=configs,
                                cache_dir=cache, progress=False, **options)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def bench(name, builder_cls, template, data_dir: Path, config: str, media: list[Path], work: Path,
          inline_written: bool, flac: bool, variants: tuple[str, ...] = ()) -> list[dict]:
    from builder_utils.hub.layout import layout_of

    layout = layout_of(builder_cls)
    cache = work / f"cache_{name}"
    source_bytes = sum(p.stat().st_size for p in media)
    # warm the builder cache (and the page cache of the sources) once
    _export(builder_cls, template, data_dir, work / "warm", [config, "conversations", *variants], cache, plan_only=True)
    copy = statistics.median(_copy(media, work / "copy") for _ in range(REPEATS))
    rows = []
    shared_out = work / f"{name}_shared"
    seconds, result = _export(builder_cls, template, data_dir, shared_out, [config], cache, media="shared")
    text = _bytes(shared_out, [config])
    planned = {c.name: c for c in result.plan.configs}
    rows.append(("shared", f"`{config}` + `{layout.media_config}`", _bytes(shared_out, [config, layout.media_config]),
                 seconds))
    if flac:
        out = work / f"{name}_flac"
        seconds, _ = _export(builder_cls, template, data_dir, out, [config], cache, media="shared", audio_format="flac")
        rows.append(("shared, flac", f"`{config}` + `{layout.media_config}`", _bytes(out, [config, layout.media_config]),
                     seconds))
        shutil.rmtree(out)
    shutil.rmtree(shared_out)
    out = work / f"{name}_conversations"
    seconds, _ = _export(builder_cls, template, data_dir, out, ["conversations"], cache)
    rows.append(("conversations", "`conversations`", _bytes(out, ["conversations"]), seconds))
    shutil.rmtree(out)
    texts = {}
    for variant in ("conversations_multihop",) if "multihop" in variants else ():
        out = work / f"{name}_{variant}"
        seconds, _ = _export(builder_cls, template, data_dir, out, [variant], cache)
        rows.append((variant, f"`{variant}`", _bytes(out, [variant]), seconds))
        shutil.rmtree(out)
    for prompts in ["prompts", *(f"prompts_{v}" for v in variants)]:
        out = work / f"{name}_{prompts}"
        seconds, result = _export(builder_cls, template, data_dir, out, [prompts], cache, media="shared")
        texts[len(rows)] = _bytes(out, [prompts])
        rows.append((f"{prompts}, shared", f"`{prompts}` + `{layout.media_config}`",
                     _bytes(out, [prompts, layout.media_config]), seconds))
        shutil.rmtree(out)
        if prompts == "prompts":
            projected = {c.name: c for c in result.plan.configs}[prompts].inline
            texts[len(rows)] = texts[len(rows) - 1]
            rows.append(("prompts, inline (projected by `--plan`)", "`prompts`", projected, None))
    if inline_written:
        out = work / f"{name}_inline"
        seconds, _ = _export(builder_cls, template, data_dir, out, [config], cache)
        rows.insert(0, ("inline", f"`{config}`", _bytes(out, [config]), seconds))
        shutil.rmtree(out)
        texts = {k + 1: v for k, v in texts.items()}
    else:
        rows.insert(0, ("inline (projected)", f"`{config}`", planned[config].inline, None))
        texts = {k + 1: v for k, v in texts.items()}
    return [
        {"dataset": name, "layout": layout_name, "configs": configs, "files": len(media), "media": source_bytes,
         "text": texts.get(k, text), "bytes": written, "seconds": seconds, "copy": copy}
        for k, (layout_name, configs, written, seconds) in enumerate(rows)
    ]


def main() -> None:
    global REPEATS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=2000, help="synthetic CLEVR train scenes (+1/4 val)")
    parser.add_argument("--clips", type=int, default=200, help="synthetic Clotho-AQA clips")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per clip")
    parser.add_argument("--work", default=None, help="scratch folder (default: a temporary one, removed)")
    parser.add_argument("--datasets", default="clevr_math,clotho_aqa", help="which of clevr_math,clotho_aqa to run")
    parser.add_argument("--repeats", type=int, default=REPEATS, help="exports timed per layout (median)")
    args = parser.parse_args()
    REPEATS = args.repeats

    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math import ClevrMath
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    datasets.disable_progress_bars()
    work = Path(args.work or tempfile.mkdtemp(prefix="bench_export_"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
        wanted = args.datasets.split(",")
        rows = []
        if "clevr_math" in wanted:
            clevr = write_clevr_folder(work / "CLEVR_v1.0", {"train": args.scenes, "val": args.scenes // 4}, seed=0,
                                       progress=False, num_proc=2)
            rows += bench("CLEVR-Math", ClevrMath, "clevr_math", clevr, "general",
                          sorted((clevr / "images").rglob("*.png")), work, inline_written=True, flac=False,
                          variants=("multihop",))
        if "clotho_aqa" in wanted:
            release = write_synthetic_release(work / "clotho", num_files=args.clips, seed=0, duration=args.duration,
                                              overwrite=True).root
            rows += bench("Clotho-AQA", ClothoAQA, "clotho_aqa", release, "questions",
                          sorted((release / "audio_files").glob("*.wav")), work, inline_written=False, flac=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the end, "
          f"CPython {platform.python_version()}, datasets {datasets.__version__}; "
          f"run {time.perf_counter() - started:.0f} s")
    print("| dataset | layout (configs) | media files (MB) | Parquet (MB) | / media | / (media + text) "
          "| export | plain copy of the media |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        exported = f"{r['seconds']:.2f} s ({r['seconds'] / r['copy']:.1f}x)" if r["seconds"] is not None else "-"
        print(f"| {r['dataset']} | {r['layout']} ({r['configs']}) | {r['files']:,} ({r['media'] / 1e6:,.1f}) "
              f"| {r['bytes'] / 1e6:,.1f} | {r['bytes'] / r['media']:.2f}x | {r['bytes'] / (r['media'] + r['text']):.2f}x "
              f"| {exported} | {r['copy']:.2f} s |")
    for r in [r for k, r in enumerate(rows) if r["dataset"] not in {q["dataset"] for q in rows[:k]}]:
        print(f"{r['dataset']}: question text (shared question config) {r['text'] / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
