"""Byte-for-byte comparison of ``generate-questions`` between this checkout and another one.

    .venv/bin/python benchmarks/compare_generate.py --base /tmp/gen-base \\
        [--scenes ../shared/data/clevr/CLEVR_val_scenes_100.json] [--synthetic 3000]

For a speed-up that must not change a single question: every template set, a few seeds and
flag combinations run through the real console script (one process per run) with ``PYTHONPATH``
set to this checkout and to ``--base`` (e.g. ``git worktree add --detach /tmp/gen-base main``),
and the two JSON files must be identical bytes. ``--scenes`` runs the matrix on a real scene
file; ``--synthetic N`` adds one run per template set on N synthetic scenes (made by
:mod:`builder_utils.clevr.synth`, so the script also works offline). Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.executable).parent
TEMPLATE_SETS = ("clevr", "clevr_math", "clevr_math_chains", "clevr_math_long_chains")
SEEDS = (0, 1, 7)
# Flag sets that reach different code paths: answer bounds and post prompts (text), several
# instances per template and small balancing windows (acceptance order), small budgets.
FLAGS = {
    "default": [],
    "bounded": ["--add_post_prompt", "--max_answer", "5", "--bound_intermediate_counts"],
    "instances": ["--instances_per_template", "2", "--templates_per_image", "3", "--reset_counts_every", "16"],
    "budget": ["--search_budget", "150", "--templates_per_image", "20"],
}


def run(tree: Path, scenes: Path, out: Path, args: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    argv = [str(BIN / "generate-questions"), "--input_scene_file", str(scenes), "--output_questions_file",
            str(out), "--overwrite", "--quiet", *args]
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {' '.join(args)}: status {done.returncode}: {done.stderr[-500:]}")


def synthetic_file(count: int, folder: Path) -> Path:
    from builder_utils.clevr.synth import generate_scenes

    path = folder / f"synthetic_{count}.json"
    path.write_text(json.dumps({"info": {"split": "val"}, "scenes": generate_scenes(count, seed=0, split="val")}))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, required=True, help="the checkout to compare with")
    parser.add_argument("--scenes", type=Path, default=None, help="a real scene file: the full matrix")
    parser.add_argument("--synthetic", type=int, default=0, help="synthetic scenes: one run per template set")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    work = Path(tempfile.mkdtemp(prefix="compare_generate-"))
    runs: list[tuple[str, Path, list[str]]] = []
    if args.scenes is not None:
        for templates in TEMPLATE_SETS:
            for seed in SEEDS:
                for flag_name, flags in FLAGS.items():
                    runs.append((f"{args.scenes.name} {templates} seed {seed} {flag_name}", args.scenes,
                                 ["--templates", templates, "--seed", str(seed), *flags]))
    if args.synthetic:
        synthetic = synthetic_file(args.synthetic, work)
        for templates in TEMPLATE_SETS:
            runs.append((f"{args.synthetic} synthetic {templates} seed 3", synthetic,
                         ["--templates", templates, "--seed", "3"]))
    different = 0
    for label, scenes, flags in runs:
        new, old = work / "new.json", work / "old.json"
        run(here, scenes, new, flags)
        run(args.base.resolve(), scenes, old, flags)
        same = filecmp.cmp(new, old, shallow=False)
        questions = len(json.loads(new.read_text())["questions"])
        different += not same
        print(f"{'identical' if same else 'DIFFERENT'}: {label} ({questions} questions)", flush=True)
    print(f"{len(runs) - different} of {len(runs)} runs identical")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
