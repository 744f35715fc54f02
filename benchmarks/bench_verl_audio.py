"""Clotho-AQA ``prompts`` for verl: the inline export with each clip as samples at 16 kHz.

Run: .venv/bin/python benchmarks/bench_verl_audio.py [--clips 40] [--duration 20]

A synthetic release (--clips WAVs of --duration s, 44.1 kHz 16-bit mono like the real clips) is
built once (warm builder cache); then ``prompts`` is exported inline (clips decoded and resampled
to ``--prompt_audio_rate`` 16,000 by ``Dataset.map`` into a memory-mapped file) and, for
comparison, shared (key only + ``clips``). Reported per export: CPU time of this process
(user + system: the export's threads), the peak resident memory of the process so far, and the
Parquet bytes written next to the WAV bytes.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _parquet_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


def run(clips: int, duration: float) -> None:
    """Build the release in a temporary folder, export ``prompts`` both ways, print one line each."""
    import datasets

    from builder_utils.hub import export_builder
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    datasets.disable_progress_bars()
    work = Path(tempfile.mkdtemp(prefix="bench_verl_audio_"))
    try:
        release = write_synthetic_release(work / "clotho", num_files=clips, seed=0, duration=duration, overwrite=True)
        wav = sum(p.stat().st_size for p in (release.root / "audio_files").glob("*.wav"))
        options = dict(card_template="clotho_aqa", data_dir=release.root, cache_dir=work / "cache", progress=False)
        export_builder(ClothoAQA, work / "warm", configs=["questions"], media="shared", **options)
        print(f"{clips} clips of {duration:g} s, WAV {wav / 2**20:,.1f} MiB")
        for media in ("inline", "shared"):
            out = work / media
            cpu, wall = _cpu(), time.perf_counter()
            result = export_builder(ClothoAQA, out, configs=["prompts"], media=media, **options)
            cpu, wall = _cpu() - cpu, time.perf_counter() - wall
            rows = sum(s.rows for s in result.configs["prompts"].values())
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
            print(f"prompts {media}: {rows} rows, Parquet {_parquet_bytes(out) / 2**20:,.1f} MiB "
                  f"({_parquet_bytes(out) / wav:.2f}x the WAVs), CPU {cpu:.1f} s, wall {wall:.1f} s, "
                  f"peak RSS so far {peak:,.0f} MiB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--clips", type=int, default=40)
    cli.add_argument("--duration", type=float, default=20.0, help="seconds per clip")
    run(**vars(cli.parse_args()))
