"""Cost of `clevr-math counting-sets` with Pillow worlds: CPU seconds and disk per counting problem.

Run: .venv/bin/python benchmarks/bench_counting_sets.py [--problems 2000 6000]
Each size writes a training set of that many problems (and one-problem ValA / ValB sets) into a
fresh folder: the CoGenT-A world (scene graphs, Pillow renders), the counting questions, the
evaluator's check and both layouts. CPU time (process_time) of the whole command, so that a busy
machine inflates it less; peak RSS of the process so far; bytes on disk.
"""
import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from clevr_math.counting_sets import main as counting_main


def _bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, nargs="+", default=[2000, 6000])
    args = parser.parse_args()
    print("| problems | CPU s | ms per problem | world MB | r1v + easyr1 MB | peak RSS MiB |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.problems:
        out = Path(tempfile.mkdtemp())
        start = time.process_time()
        assert counting_main(["--out", str(out), "--sizes", f"{n},1,1", "--quiet"]) == 0
        cpu = time.process_time() - start
        world = _bytes(out / "worlds" / "train") / 1e6
        rows = sum((out / "sets" / layout / "train.parquet").stat().st_size for layout in ("r1v", "easyr1")) / 1e6
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"| {n} | {cpu:.1f} | {1000 * cpu / n:.2f} | {world:.0f} | {rows:.0f} | {rss:.0f} |")
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
