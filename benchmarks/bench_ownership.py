"""Overhead of the ownership record (issue 20): hashing and committing the files a command writes.

Run: .venv/bin/python benchmarks/bench_ownership.py [--files 70000] [--size 4096]
Writes ``--files`` small files into a staging folder (the synthetic world's 70,000 PNGs by
count; not rendered, which would take hours here) and times the record's part alone: the
sha256 of every file, the pending record, the moves into place and the final record. Compare
with the time the command spends making those files (``bench_synth.py``: seconds per image).
"""
import argparse
import tempfile
import time
from pathlib import Path

from builder_utils.ownership import OutputFolder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=70_000)
    parser.add_argument("--size", type=int, default=4096)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        with OutputFolder(Path(root) / "world", "bench") as out:
            staging = out.staging()
            (staging / "images").mkdir()
            payload = bytes(range(256)) * (args.size // 256)
            started = time.perf_counter()
            for k in range(args.files):
                (staging / "images" / f"CLEVR_train_{k:06d}.png").write_bytes(payload)
            write_seconds = time.perf_counter() - started
            files = {f"images/CLEVR_train_{k:06d}.png": None for k in range(args.files)}
            started = time.perf_counter()
            out.commit(staging, files)
            commit_seconds = time.perf_counter() - started
    print(f"{args.files:,} files of {args.size:,} bytes: writing {write_seconds:.1f} s, "
          f"record (hash + pending record + moves + record) {commit_seconds:.1f} s, "
          f"{commit_seconds / args.files * 1e3:.3f} ms per file")


if __name__ == "__main__":
    main()
