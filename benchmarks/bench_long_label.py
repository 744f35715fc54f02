"""Time `clotho-aqa export --config single_word` of a synthetic release where one answer is very long.

Issue 37, cause 13: the card's answer chart shortens each label to its column; a 5,000-character
answer made that minutes of work when the label was shortened one character at a time. The
release is the synthetic one (``--num_files`` clips), one single-word answer replaced by
``--length`` characters; the export runs in this process with a fresh cache.

    .venv/bin/python benchmarks/bench_long_label.py [--length 5000] [--num_files 10]
"""

from __future__ import annotations

import argparse
import csv
import platform
import tempfile
import time
from pathlib import Path

from builder_utils.hub import export_builder
from clotho_aqa import ClothoAQA
from clotho_aqa.synth import write_synthetic_release


def long_answer_release(root: Path, num_files: int, length: int) -> Path:
    """A synthetic release whose first answer that is not yes/no is ``length`` characters long."""
    release = write_synthetic_release(root / "release", num_files=num_files, seed=0).root
    table = release / "clotho_aqa_train.csv"
    with open(table, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    index = next(i for i, row in enumerate(rows[1:], 1) if row[2].lower() not in ("yes", "no"))
    for row in rows[1:]:  # the question's three annotators give the same long answer
        if row[:2] == rows[index][:2]:
            row[2] = ("a very long answer " * (length // 19 + 1))[:length]
    with open(table, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=5000, help="characters of the long answer (default 5000)")
    parser.add_argument("--num_files", type=int, default=10, help="clips of the synthetic release (default 10)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        release = long_answer_release(Path(scratch), args.num_files, args.length)
        started = time.perf_counter()
        export_builder(ClothoAQA, Path(scratch) / "hub", card_template="clotho_aqa", data_dir=release,
                       configs=["single_word"], cache_dir=Path(scratch) / "cache", progress=False)
        took = time.perf_counter() - started
    print(f"export --config single_word, one answer of {args.length:,} characters: {took:.1f} s "
          f"({platform.python_version()}, {args.num_files} clips)")


if __name__ == "__main__":
    main()
