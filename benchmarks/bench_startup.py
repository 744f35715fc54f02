"""Whole-process start-up and `generate-questions --templates clevr_math` (issue 24, start-up tax).

    .venv/bin/python benchmarks/bench_startup.py --scenes ../shared/data/clevr/CLEVR_val_scenes_100.json \\
        [--repeats 7] [--compare ../main]

Each command runs as a real process (the console scripts of this environment), ``--repeats``
times round-robin; the table gives the best and median wall time and the median CPU time of
the process (user + system, children included: less distorted than wall time on a shared
machine), and the number of modules it imported (``-X importtime``: counted, not timed).
The 200- and 500-scene files are the real scenes repeated, renumbered (new ``image_index`` and
file names). With ``--compare DIR`` the same commands run on the checkout DIR too (another
branch, e.g. ``main``), in the same session, so the ratio does not depend on the load.

Each checkout's packages are byte-compiled first (``compileall``), as an installed package is:
with ``PYTHONDONTWRITEBYTECODE`` set (as in this project's sandbox) and a stale or missing
``__pycache__``, every run would compile the project's modules again (~90 ms of the import).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
PACKAGES = ("builder_utils", "clevr_math", "clotho_aqa")
HEAVY = ("datasets", "pyarrow", "PIL", "numpy", "pandas", "huggingface_hub", "distributed")


def scaled(source: Path, count: int, folder: Path) -> Path:
    """``source``'s scenes repeated to ``count``, each with its own image index and file name."""
    document = json.loads(source.read_text())
    base = document["scenes"]
    scenes = []
    for k in range(count):
        scene = dict(base[k % len(base)], image_index=k, image_filename=f"CLEVR_val_{k:06d}.png")
        scenes.append(scene)
    path = folder / f"CLEVR_val_scenes_{count}.json"
    path.write_text(json.dumps({"info": document["info"], "scenes": scenes}))
    return path


def run_once(argv: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    tic = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - tic
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv}: status {done.returncode}: {done.stderr[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules(argv: list[str], env: dict) -> tuple[int, list[str]]:
    done = subprocess.run(argv, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    names = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    names = [n for n in names if n != "imported package"]
    return len(names), [h for h in HEAVY if h in {n.split(".")[0] for n in names}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=Path, required=True, help="the 100 real val scenes")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--compare", type=Path, default=None, help="another checkout, run the same way")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_startup-"))
    files = {100: args.scenes, 200: scaled(args.scenes, 200, work), 500: scaled(args.scenes, 500, work)}
    commands = {"python -c pass": [sys.executable, "-c", "pass"]}
    for name in ("clevr-math", "clotho-aqa", "generate-questions"):
        commands[f"{name} --help"] = [str(BIN / name), "--help"]
    for count, path in files.items():
        commands[f"generate-questions --templates clevr_math, {count} scenes"] = [
            str(BIN / "generate-questions"), "--templates", "clevr_math", "--input_scene_file", str(path),
            "--output_questions_file", str(work / f"q{count}.json")]
    trees = {"this checkout": Path(__file__).resolve().parent.parent}
    if args.compare is not None:
        trees["--compare"] = args.compare.resolve()
    envs = {label: {**os.environ, "PYTHONPATH": str(tree), "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
            for label, tree in trees.items()}
    for tree in trees.values():
        packages = [str(tree / name) for name in PACKAGES if (tree / name).is_dir()]
        subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], check=True, stdout=subprocess.DEVNULL)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.repeats):
        for label, env in envs.items():
            for name, argv in commands.items():
                times.setdefault((label, name), []).append(run_once(argv, env))
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print()
    print("| command | checkout | best / median wall s | median CPU s | modules | heavy modules imported |")
    print("|---|---|---:|---:|---:|---|")
    for name, argv in commands.items():
        for label, env in envs.items():
            runs = times[(label, name)]
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            count, heavy = modules(argv, env)
            print(f"| `{name}` | {label} | {min(walls):.2f} / {statistics.median(walls):.2f} | "
                  f"{statistics.median(cpus):.2f} | {count} | {', '.join(heavy) or 'none'} |")


if __name__ == "__main__":
    main()
