"""Build time, memory and access time of clevr_math.problems (fixed-size, in-memory problem sets).

Run: .venv/bin/python benchmarks/bench_problem_sets.py [--size 2000]

Synthetic worlds, the default difficulty: the set's build rate (problems per CPU second of this
process, process_time, so that other jobs on a shared machine distort it less), its Arrow bytes
per problem, the peak RSS of the process, and the CPU time of ``ds[i]`` (the image decoded to PIL).
"""

import argparse
import resource
import time

from clevr_math import problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2000)
    args = parser.parse_args()
    problems(size=4, seed=1)  # templates loaded, caches warm
    start = time.process_time()
    ds = problems(size=args.size, seed=0)
    seconds = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    positions = range(0, len(ds), 7)
    start = time.process_time()
    for i in positions:
        ds[i]["images"][0].load()
    access = (time.process_time() - start) / len(positions)
    print(f"problems(size={args.size}): {seconds:.1f} CPU s, {args.size / seconds:,.0f} problems per CPU second, "
          f"{ds.data.nbytes / len(ds) / 1e3:.1f} kB per problem in memory, peak RSS {peak:,.0f} MB; "
          f"ds[i] with its image decoded: {access * 1e3:.2f} ms CPU")


if __name__ == "__main__":
    main()
