"""Benchmark of builder_utils.splits on the real Clotho-AQA tables.

Reads the three official QA CSVs (labels of a file = the set of answer words over its rows,
yes/no included; the official split = the CSV the file is in) and reports:

* the recomputed split with the builder's defaults (one two-stage split, then the local search of
  builder_utils.splits.refine) timed, run twice with the same seed, and the paper's search alone
  (2,000 candidates, 50 kept);
* the label error (sum over answers of |count in split - target share x count| / count) of the
  official split, the paper's search and ours, next to the floor no split can pass;
* the official split and ours side by side: sizes, unique answers, allocation error, constraint;
* one 60/40 split by the `iterative-stratification` package vs one of ours, and the average
  first-stage allocation error of both over a few seeds.

Usage:
    python benchmarks/bench_splits.py --data_dir ../shared/data/clotho_aqa [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from builder_utils.atomic import write_atomic
from builder_utils.splits import (
    allocation_error,
    as_label_matrix,
    batch_allocation_errors,
    constraint_violations,
    iterative_stratification,
    label_error,
    label_error_floor,
    search_split,
    stratify_batch,
)
from clotho_aqa.config import ClothoAQAConfig
from builder_utils.splits.allocation import fold_label_counts

SPLITS = ("train", "val", "test")
NAMES = ("train", "validation", "test")
RATIOS = (0.6, 0.2, 0.2)


def read_tables(data_dir: Path) -> tuple[list[str], list[str], list[set[int]], np.ndarray]:
    answers: dict[str, set[str]] = {}
    official: dict[str, int] = {}
    for fold, split in enumerate(SPLITS):
        path = data_dir / f"clotho_aqa_{split}.csv"
        with open(path, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                answers.setdefault(row["file_name"], set()).add(row["answer"])
                official[row["file_name"]] = fold
    files = sorted(answers)
    vocabulary = sorted(set().union(*answers.values()))
    index = {word: i for i, word in enumerate(vocabulary)}
    labels = [{index[word] for word in answers[name]} for name in files]
    return files, vocabulary, labels, np.array([official[name] for name in files])


def describe(matrix, folds: np.ndarray, ratios=RATIOS) -> dict:
    counts, sizes = fold_label_counts(matrix, folds[None, :], len(ratios))
    label_dev, size_dev = batch_allocation_errors(matrix, folds[None, :], ratios)
    return {
        "sizes": sizes[0].tolist(),
        "unique_answers": (counts[0] > 0).sum(axis=0).tolist(),
        "label_deviation": float(label_dev[0]),
        "size_deviation": float(size_dev[0]),
        "allocation_error": float(label_dev[0] + size_dev[0]),
        "violations": int(constraint_violations(counts)[0].sum()),
    }


def package_split(matrix: np.ndarray, seed: int) -> np.ndarray:
    from iterstrat.ml_stratifiers import MultilabelStratifiedShuffleSplit

    splitter = MultilabelStratifiedShuffleSplit(n_splits=1, test_size=0.4, random_state=seed)
    _, test = next(splitter.split(np.zeros(len(matrix)), matrix))
    folds = np.zeros(len(matrix), dtype=int)
    folds[test] = 1
    return folds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/clotho_aqa")
    parser.add_argument("--candidates", type=int, default=ClothoAQAConfig.candidates)
    parser.add_argument("--keep", type=int, default=ClothoAQAConfig.keep)
    parser.add_argument("--refine_rounds", type=int, default=ClothoAQAConfig.refine_rounds)
    parser.add_argument("--paper_candidates", type=int, default=2000, help="the paper's search alone (0: skip it)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--package_seeds", type=int, default=10, help="package splits to time and score")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    files, vocabulary, labels, official = read_tables(args.data_dir)
    matrix = as_label_matrix(labels, num_labels=len(vocabulary))
    dense = matrix.dense()
    print(f"{len(files)} files x {len(vocabulary)} answers, {int(dense.sum())} file-answer pairs")

    print(f"load average (1 min) before the search: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    runs = []
    for _ in range(2):
        start, cpu = time.perf_counter(), time.process_time()
        result = search_split(labels, RATIOS, args.candidates, args.keep, args.seed, progress=False,
                              label_names=vocabulary, refine_rounds=args.refine_rounds)
        runs.append((time.perf_counter() - start, result, time.process_time() - cpu))
    paper = None
    if args.paper_candidates:
        start, cpu = time.perf_counter(), time.process_time()
        paper = search_split(labels, RATIOS, args.paper_candidates, 50, args.seed, progress=False)
        paper_seconds = (time.perf_counter() - start, time.process_time() - cpu)
    same = bool((runs[0][1].folds == runs[1][1].folds).all())
    result = runs[0][1]
    ours, theirs = describe(matrix, result.folds), describe(matrix, official)

    start = time.perf_counter()
    iterative_stratification(matrix, (0.6, 0.4), seed=args.seed)
    our_single = time.perf_counter() - start
    start = time.perf_counter()
    batch = stratify_batch(matrix, (0.6, 0.4), np.random.SeedSequence(args.seed).spawn(256))
    our_batched = (time.perf_counter() - start) / 256
    package_times, package_errors = [], []
    for seed in range(args.package_seeds):
        start = time.perf_counter()
        folds = package_split(dense, seed)
        package_times.append(time.perf_counter() - start)
        package_errors.append(allocation_error(matrix, folds, (0.6, 0.4)))
    our_errors = [allocation_error(matrix, row.astype(int), (0.6, 0.4)) for row in batch]

    floor = label_error_floor(matrix, RATIOS)
    label_errors = {"floor": round(floor, 2), "official": round(label_error(matrix, official, RATIOS), 2),
                    "ours": round(result.label_error, 2)}
    if paper is not None:
        label_errors["paper_search"] = round(paper.label_error, 2)
    figures = {
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "label_error": label_errors,
        "search": {"candidates": args.candidates, "keep": args.keep, "refine_rounds": args.refine_rounds, "seed": args.seed,
                   "seconds": [round(run[0], 2) for run in runs],
                   "cpu_seconds": [round(run[2], 2) for run in runs], "same_split_twice": same,
                   "chosen_candidate": result.chosen_candidate, "violations": result.violations},
        "official": theirs,
        "ours": ours,
        "one_60_40_split": {
            "package_seconds_mean": round(float(np.mean(package_times)), 3),
            "ours_single_seconds": round(our_single, 3),
            "ours_batched_seconds_per_split": round(our_batched, 4),
            "package_error_mean": round(float(np.mean(package_errors)), 4),
            "package_splits": len(package_errors),
            "ours_error_mean": round(float(np.mean(our_errors)), 4),
            "ours_splits": len(our_errors),
        },
    }

    print(f"\nlabel error (sum over answers of |count - target| / count): ours {label_errors['ours']}, "
          f"official {label_errors['official']}"
          + (f", the paper's search alone ({args.paper_candidates}/50) {label_errors['paper_search']}"
             f" in {paper_seconds[0]:.1f} s wall ({paper_seconds[1]:.1f} s CPU)" if paper is not None else "")
          + f"; floor {label_errors['floor']}")
    print(f"\nsearch {args.candidates}/{args.keep} + {args.refine_rounds} refine rounds, seed {args.seed}: "
          f"{runs[0][0]:.1f} s and {runs[1][0]:.1f} s wall ({runs[0][2]:.1f} s and {runs[1][2]:.1f} s CPU); "
          f"same split both times: {same}")
    print("\n| | official | ours |\n|---|---|---|")
    for name, key in (("files train / validation / test", "sizes"), ("unique answers", "unique_answers")):
        print(f"| {name} | {' / '.join(map(str, theirs[key]))} | {' / '.join(map(str, ours[key]))} |")
    for key in ("allocation_error", "label_deviation", "size_deviation"):
        print(f"| {key.replace('_', ' ')} | {theirs[key]:.4f} | {ours[key]:.4f} |")
    print(f"| labels violating the constraint | {theirs['violations']} | {ours['violations']} |")
    one = figures["one_60_40_split"]
    print(f"\none 60/40 split: package {one['package_seconds_mean']:.3f} s (mean of {len(package_times)}), "
          f"ours {one['ours_single_seconds']:.3f} s alone, {one['ours_batched_seconds_per_split'] * 1000:.1f} ms "
          "each in a batch of 256")
    print(f"mean 60/40 allocation error: package {one['package_error_mean']:.4f} ({len(package_errors)} seeds), "
          f"ours {one['ours_error_mean']:.4f} ({len(our_errors)} seeds)")
    if args.json:
        write_atomic(args.json, json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
