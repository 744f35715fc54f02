"""Questions per second of `generate-questions` in one process, with `--num_workers 2` and on a
2-worker Dask LocalCluster, on synthetic scenes; plus the scheduler's overhead per task.

    .venv/bin/python benchmarks/bench_distributed.py              # 5,000 scenes, about 3 minutes
    .venv/bin/python benchmarks/bench_distributed.py --repeats 3  # medians of 3 rounds, about 8 minutes

Each run is the whole command (load and validate the scene file, generate, write the JSON
file), timed on the wall clock, and every output is checked to be byte-identical to the
one-process file (all rounds). Two running clusters are timed, each started outside the timed run (start-up
is reported on its own): a LocalCluster with Dask's default settings, as a user's running
cluster may be, and `local_cluster` (the one `--dask local` starts, with lighter housekeeping,
see `LOCAL_CLUSTER_CONFIG`). `--dask local` is timed end to end as well. Scheduler overhead: the round
trip of 400 no-op tasks through the same ordered submission the generator uses, per task.
Needs the [dask] extra.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def _noop(k: int) -> int:
    return k


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1, help="rounds of every mode (medians are reported)")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from builder_utils.clevr.distributed import local_cluster, ordered_map
    from builder_utils.clevr.generate_questions import main as generate
    from builder_utils.clevr.synth import generate_scenes

    work = Path(tempfile.mkdtemp(prefix="bench_distributed-"))
    scene_path = work / "CLEVR_train_scenes.json"
    scene_path.write_text(json.dumps({"info": {"split": "train"},
                                      "scenes": generate_scenes(args.scenes, seed=0, split="train")}))
    print(f"{args.scenes} synthetic scenes; nproc {os.cpu_count()}; load average at start {os.getloadavg()}")

    def run(name: str, *extra: str) -> tuple[float, int, str]:
        out = work / f"{name}.json"
        tic = time.perf_counter()
        status = generate(["--input_scene_file", str(scene_path), "--output_questions_file", str(out), *extra])
        took = time.perf_counter() - tic
        assert status == 0, status
        count = len(json.loads(out.read_text())["questions"])
        return took, count, _digest(out)

    def on_cluster(label: str, start) -> tuple[tuple[float, int, str], float, float]:
        tic = time.perf_counter()
        cluster = start()
        startup = time.perf_counter() - tic
        try:
            with Client(cluster) as client:
                client.run(lambda: __import__("builder_utils.clevr.generate"))  # workers import our code once
                result = run(label.split(",")[0].replace(" ", "_"), "--dask", cluster.scheduler_address)
                n = 400
                tic = time.perf_counter()
                assert list(ordered_map(_noop, [(k,) for k in range(n)], client=client)) == list(range(n))
                return result, (time.perf_counter() - tic) / n, startup
        finally:
            cluster.close()

    defaults = "LocalCluster, Dask defaults"
    modes = ["1 process", f"--num_workers {args.workers}", f"{defaults}, {args.workers} workers (running)",
             f"local_cluster, {args.workers} workers (running)", f"--dask local, {args.workers} workers (incl. start-up)"]
    # Round-robin repeats, medians: this shared machine's speed drifts by 20% over minutes.
    seen: dict[str, list] = {mode: [] for mode in modes}
    overhead: dict[str, list[float]] = {defaults: [], "local_cluster": []}
    startup: list[float] = []
    for _ in range(args.repeats):
        seen[modes[0]].append(run("one"))
        seen[modes[1]].append(run("pool", "--num_workers", str(args.workers)))
        result, cost, _ = on_cluster(defaults, lambda: LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                                                    processes=True, dashboard_address=None))
        seen[modes[2]].append(result)
        overhead[defaults].append(cost)
        result, cost, took = on_cluster("local_cluster", lambda: local_cluster(args.workers))
        seen[modes[3]].append(result)
        overhead["local_cluster"].append(cost)
        startup.append(took)
        seen[modes[4]].append(run("dask_local", "--dask", "local", "--num_workers", str(args.workers)))
    rows = [(mode, statistics.median(r[0] for r in results), results[0][1], results[0][2],
             [r[0] for r in results]) for mode, results in seen.items()]
    one = rows[0]
    assert all(r[1] == one[2] and r[2] == one[3] for results in seen.values() for r in results)
    print(f"\n| mode | wall s (median of {args.repeats}) | each run | questions | questions/s | speed-up | identical |"
          "\n|---|---:|---|---:|---:|---:|---|")
    for name, took, count, digest, each in rows:
        print(f"| {name} | {took:.1f} | {' / '.join(f'{t:.1f}' for t in each)} | {count:,} | {count / took:,.0f} "
              f"| {one[1] / took:.2f}x | {'yes' if digest == one[3] else 'NO'} |")
    print(f"\nlocal_cluster start-up: {statistics.median(startup):.1f} s; scheduler overhead per task (no-op round "
          f"trip, {args.workers} workers): "
          + ", ".join(f"{k} {statistics.median(v) * 1000:.1f} ms" for k, v in overhead.items()))
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
