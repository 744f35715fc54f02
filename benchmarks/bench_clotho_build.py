"""Build every Clotho-AQA config from the real QA tables and report rows, classes and time.

The official CSVs (default ``../shared/data/clotho_aqa``) are copied into a temporary
release with a short silent WAV per referenced clip (the one clip the zip spells
differently is written with the zip's spelling, so name resolution is exercised), then
each config is built from scratch with a fresh cache.

    .venv/bin/python benchmarks/bench_clotho_build.py [--csv_dir DIR] [--num_proc N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile

import datasets
from clotho_aqa import CONFIG_NAMES, ClothoAQA
from clotho_aqa.release import AUDIO_DIR, SAMPLING_RATE, SPLIT_CSVS, read_questions

DEFAULT_CSV_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "clotho_aqa"
# The official zip's spelling of the one clip whose train-CSV name differs.
ZIP_SPELLINGS = {"souffle_me_tallique.wav": "souffle_me.tallique.wav"}


def make_release(csv_dir: Path, root: Path, seconds: float = 0.05) -> int:
    """Copy the QA tables into ``root`` and write a silent WAV per clip; return the clip count."""
    (root / AUDIO_DIR).mkdir(parents=True)
    for name in SPLIT_CSVS.values():
        shutil.copyfile(csv_dir / name, root / name)
    questions = read_questions({s: root / n for s, n in SPLIT_CSVS.items()})
    clips = list(dict.fromkeys(q.file_name for q in questions))
    silence = np.zeros(int(SAMPLING_RATE * seconds), dtype=np.int16)
    for clip in clips:
        soundfile.write(root / AUDIO_DIR / ZIP_SPELLINGS.get(clip, clip), silence, SAMPLING_RATE, subtype="PCM_16", format="WAV")
    return len(clips)


def agreement(dsets) -> dict:
    """Per split and answer type: questions, unanimous, exactly 2 of 3 agree, no majority."""
    out = {}
    for split, ds in dsets.items():
        table = ds.select_columns(["answer_type", "unanimous", "majority_answer"]).to_dict()
        counts = {}
        for kind, unanimous, majority in zip(table["answer_type"], table["unanimous"], table["majority_answer"]):
            c = counts.setdefault(kind, {"questions": 0, "unanimous": 0, "two_of_three": 0, "no_majority": 0})
            c["questions"] += 1
            c["unanimous" if unanimous else "two_of_three" if majority is not None else "no_majority"] += 1
        out[split] = counts
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv_dir", type=Path, default=DEFAULT_CSV_DIR)
    parser.add_argument("--num_proc", type=int, default=None)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument(
        "--recomputed", action="store_true", help="also build 'all' with split_strategy='recomputed' (paper settings)"
    )
    args = parser.parse_args(argv)
    if not all((args.csv_dir / n).is_file() for n in SPLIT_CSVS.values()):
        parser.error(f"{args.csv_dir} lacks the official QA CSVs {list(SPLIT_CSVS.values())}")
    datasets.disable_progress_bars()
    figures: dict = {"configs": {}}
    with tempfile.TemporaryDirectory(prefix="bench_clotho_") as tmp:
        root = Path(tmp) / "release"
        start = time.perf_counter()
        figures["clips"] = make_release(args.csv_dir, root)
        figures["make_release_s"] = round(time.perf_counter() - start, 2)
        total = 0.0
        for name in CONFIG_NAMES:
            start = time.perf_counter()
            builder = ClothoAQA(config_name=name, data_dir=str(root), cache_dir=str(Path(tmp) / f"cache_{name}"))
            builder.download_and_prepare(num_proc=args.num_proc)
            elapsed = time.perf_counter() - start
            total += elapsed
            dsets = builder.as_dataset()
            entry = {"rows": {split: len(ds) for split, ds in dsets.items()}, "build_s": round(elapsed, 2)}
            label = builder.info.features.get("label")
            if label is not None:
                entry["classes"] = label.num_classes
            figures["configs"][name] = entry
            print(f"{name:22s} {entry['rows']}  classes={entry.get('classes', '-')}  {elapsed:.2f} s", flush=True)
            if name == "questions":
                figures["agreement"] = agreement(dsets)
        figures["total_build_s"] = round(total, 2)
        print("agreement per split (questions):", json.dumps(figures["agreement"]))
        if args.recomputed:
            start = time.perf_counter()
            builder = ClothoAQA(
                config_name="all", data_dir=str(root), cache_dir=str(Path(tmp) / "cache_recomputed"),
                split_strategy="recomputed", seed=0, candidates=2000, keep=50,
            )
            builder.download_and_prepare(num_proc=args.num_proc)
            elapsed = time.perf_counter() - start
            rows = {split: len(ds) for split, ds in builder.as_dataset().items()}
            figures["recomputed_all"] = {"rows": rows, "build_s": round(elapsed, 2)}
            print(f"all (recomputed, 2000/50, seed 0) {rows}  {elapsed:.2f} s")
    figures["machine"] = {
        "python": platform.python_version(),
        "datasets": datasets.__version__,
        "cpus": __import__("os").cpu_count(),
        "torch_imported": "torch" in sys.modules,
    }
    print(f"total build time for the {len(CONFIG_NAMES)} configs: {total:.2f} s; torch imported: {'torch' in sys.modules}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
