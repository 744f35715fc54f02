"""Questions per second of `generate-questions` in one process, with `--num_workers 2` and on a
2-worker Dask LocalCluster, on synthetic scenes; plus the scheduler's overhead per task.

    .venv/bin/python benchmarks/bench_distributed.py            # 5,000 scenes, a few minutes

Each run is the whole command (load and validate the scene file, generate, write the JSON
file), timed on the wall clock, and every output is checked to be byte-identical to the
one-process file. Two running clusters are timed, each started outside the timed run (start-up
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

    rows = []
    one = run("one")
    rows.append(("1 process", *one))
    rows.append((f"--num_workers {args.workers}", *run("pool", "--num_workers", str(args.workers))))

    def on_cluster(label: str, cluster) -> float:
        with Client(cluster) as client:
            client.run(lambda: __import__("builder_utils.clevr.generate"))  # workers import our code once
            rows.append((f"{label}, {args.workers} workers (running)", *run(label.split(",")[0].replace(" ", "_"), "--dask", cluster.scheduler_address)))
            n = 400
            tic = time.perf_counter()
            assert list(ordered_map(_noop, [(k,) for k in range(n)], client=client)) == list(range(n))
            return (time.perf_counter() - tic) / n

    overhead = {}
    for label, start in (("LocalCluster, Dask defaults",
                          lambda: LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                               dashboard_address=None)),
                         ("local_cluster", lambda: local_cluster(args.workers))):
        tic = time.perf_counter()
        cluster = start()
        startup = time.perf_counter() - tic
        try:
            overhead[label] = on_cluster(label, cluster)
        finally:
            cluster.close()
    rows.append((f"--dask local, {args.workers} workers (incl. start-up)",
                 *run("dask_local", "--dask", "local", "--num_workers", str(args.workers))))

    print("\n| mode | wall s | questions | questions/s | speed-up | identical |\n|---|---:|---:|---:|---:|---|")
    for name, took, count, digest in rows:
        print(f"| {name} | {took:.1f} | {count:,} | {count / took:,.0f} | {one[0] / took:.2f}x | "
              f"{'yes' if digest == one[2] else 'NO'} |")
    print(f"\nlocal_cluster start-up: {startup:.1f} s; scheduler overhead per task (no-op round trip, "
          f"{args.workers} workers): " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in overhead.items()))
    print(f"load average at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
