"""End-to-end build time and peak memory of the CLEVR-Math ``general`` config.

For each scene count, a synthetic CLEVR_v1.0 folder is written once (``train`` with N scenes,
``val`` with a small fixed count; scene graphs are real synthetic scenes, images are a few
rendered PNGs hard-linked under every file name, since the builder stores image paths and never
decodes them). Then, for each ``num_proc``, a fresh process builds ``general`` from scratch
(``ClevrMath(...).download_and_prepare(num_proc=N)`` into an empty cache) while this process
samples the resident memory of that process and all its workers every 0.25 s.

    python benchmarks/bench_build.py                          # 5,000 and 70,000 scenes, num_proc 1 and 2
    python benchmarks/bench_build.py --scenes 5000 --num_proc 2 --json out.json

Reported: wall time of ``download_and_prepare`` (scene loading, image checks, generation,
Arrow writing), its CPU time (process and workers), questions written, questions per second,
the peak of the summed RSS of the builder process tree (the figure that must stay under 4 GB;
it counts a page the forked workers share with the parent once per process), the peak of its
summed PSS (each shared page counted once in all: the memory the tree holds) and the machine's
1-minute load average around the run (other jobs inflate wall times).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import threading
import time

PROTOTYPES = 4


def make_world(root: str, train_scenes: int, val_scenes: int, seed: int = 0) -> float:
    """Write the synthetic folder (scenes, plus hard-linked images); return seconds taken."""
    from builder_utils.clevr import load_scenes
    from builder_utils.clevr.synth import render_scene, write_clevr_folder

    started = time.perf_counter()
    tmp = root + ".partial"
    shutil.rmtree(tmp, ignore_errors=True)
    write_clevr_folder(tmp, {"train": train_scenes, "val": val_scenes}, seed, render=False, progress=False,
                       num_proc=os.cpu_count() or 1)
    for split in ("train", "val"):
        images = os.path.join(tmp, "images", split)
        os.makedirs(images, exist_ok=True)
        scenes = load_scenes(os.path.join(tmp, "scenes", f"CLEVR_{split}_scenes.json"))
        prototypes = []
        for k in range(min(PROTOTYPES, len(scenes))):
            path = os.path.join(tmp, f"prototype_{split}_{k}.png")
            render_scene(scenes[k], path)
            prototypes.append(path)
        for position, scene in enumerate(scenes):
            os.link(prototypes[position % len(prototypes)], os.path.join(images, scene["image_filename"]))
    shutil.rmtree(root, ignore_errors=True)
    os.rename(tmp, root)
    return time.perf_counter() - started


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(name))
    return tree


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def _pss_bytes(pid: int) -> int:
    """Proportional set size: each resident page divided among the processes that share it."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("Pss:"))
    except (OSError, StopIteration):
        return 0


def tree_rss(pid: int) -> tuple[int, int]:
    """Summed resident memory (RSS) and summed proportional memory (PSS) of ``pid`` and all its
    descendants, in bytes. The workers are forked: a page they share with the parent counts once
    per process in the RSS sum, once in all in the PSS sum (the memory the tree really holds)."""
    tree = _children()
    rss = pss = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        rss += _rss_bytes(current)
        pss += _pss_bytes(current)
        stack.extend(tree.get(current, []))
    return rss, pss


def run_build(data_dir: str, cache_dir: str, num_proc: int) -> dict:
    """Build in a child process; return its report plus the sampled peak tree RSS."""
    shutil.rmtree(cache_dir, ignore_errors=True)
    command = [sys.executable, os.path.abspath(__file__), "--child", data_dir, cache_dir, str(num_proc)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    peak = peak_pss = 0
    done = threading.Event()

    def sample():
        nonlocal peak, peak_pss
        while not done.is_set():
            rss, pss = tree_rss(child.pid)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            done.wait(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = child.communicate()
    done.set()
    sampler.join()
    if child.returncode != 0:
        raise SystemExit(f"build failed (num_proc={num_proc}, data_dir={data_dir})")
    report = json.loads(out.strip().splitlines()[-1])
    report["peak_tree_rss_mb"] = round(peak / 2**20, 1)
    report["peak_tree_pss_mb"] = round(peak_pss / 2**20, 1)
    shutil.rmtree(cache_dir, ignore_errors=True)
    return report


def child(data_dir: str, cache_dir: str, num_proc: int) -> None:
    import datasets

    from clevr_math import ClevrMath

    datasets.disable_progress_bars()
    started = time.perf_counter()
    builder = ClevrMath(config_name="general", data_dir=data_dir, cache_dir=cache_dir)
    builder.download_and_prepare(num_proc=num_proc)
    seconds = time.perf_counter() - started
    rows = {split: info.num_examples for split, info in builder.info.splits.items()}
    # CPU time of this process and its (finished) workers: less sensitive than wall time to
    # other jobs sharing the machine.
    cpu = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for field in ("ru_utime", "ru_stime"))
    # A digest of the rows (after timing), to show that every num_proc builds the same dataset.
    digest = hashlib.sha256()
    for split, ds in sorted(builder.as_dataset().items()):
        for batch in ds.select_columns(["question_id", "question", "label"]).iter(batch_size=10000):
            digest.update(json.dumps([split, batch]).encode())
    print(json.dumps({"build_s": round(seconds, 1), "cpu_s": round(cpu, 1), "rows": rows,
                      "rows_sha256": digest.hexdigest()[:16]}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, nargs="+", default=[5000, 70000], help="train scene counts")
    parser.add_argument("--val_scenes", type=int, default=100, help="validation scenes (default 100)")
    parser.add_argument("--num_proc", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--workdir", default="/tmp/clevr_math_bench", help="scratch folder (kept for reruns)")
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("--child", nargs=3, metavar=("DATA_DIR", "CACHE_DIR", "NUM_PROC"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0

    import datasets

    os.makedirs(args.workdir, exist_ok=True)
    print(f"# {platform.python_implementation()} {platform.python_version()}, datasets {datasets.__version__}, "
          f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}", flush=True)
    print("| train scenes | num_proc | build s (wall) | CPU s | questions | questions/s | peak RSS (tree) MB "
          "| peak PSS (tree) MB | load avg | rows sha256 |", flush=True)
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|", flush=True)
    results = []
    for scenes in args.scenes:
        world = os.path.join(args.workdir, f"clevr_{scenes}", "CLEVR_v1.0")
        marker = os.path.join(world, "scenes", "CLEVR_train_scenes.json")
        world_s = 0.0 if os.path.exists(marker) else make_world(world, scenes, args.val_scenes)
        for num_proc in args.num_proc:
            load_before = os.getloadavg()[0]
            report = run_build(world, os.path.join(args.workdir, "cache"), num_proc)
            report["load_avg"] = round((load_before + os.getloadavg()[0]) / 2, 1)
            questions = sum(report["rows"].values())
            result = {"train_scenes": scenes, "val_scenes": args.val_scenes, "num_proc": num_proc,
                      "world_s": round(world_s, 1), "questions": questions, **report}
            results.append(result)
            print(f"| {scenes:,} | {num_proc} | {report['build_s']:.1f} | {report['cpu_s']:.1f} | {questions:,} | "
                  f"{questions / report['build_s']:,.0f} | {report['peak_tree_rss_mb']:,.0f} | "
                  f"{report['peak_tree_pss_mb']:,.0f} | {report['load_avg']} "
                  f"| `{report['rows_sha256']}` |",
                  flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
