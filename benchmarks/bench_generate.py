"""Speed and output statistics of the question generator (``generate-questions``).

    .venv/bin/python benchmarks/bench_generate.py \\
        --scenes ../shared/data/clevr/CLEVR_val_scenes_100.json --stats benchmarks/generate_stats.md

1. Single process, default flags, ``clevr`` set: questions per second over the scene file
   (best and median of ``--repeats`` runs; wall clock and process CPU time, since other jobs
   may share the machine), plus the ``clevr_math`` and ``clevr_math_chains`` sets.
2. The whole command (load, generate, write) on the same file.
3. Scaling with ``--num_workers``: the scene file repeated to ``--scaled`` scenes (renumbered),
   1 and 2 workers; also checks that both runs write the same bytes.
4. With ``--stats FILE``: per template, the answer distribution of the single-process run on
   the given scenes (a Markdown table), and per family totals.
5. With ``--relations`` (or ``--only-relations``, without the timings): for the ``clevr``
   templates with a relation whose answer is a count or an exist, the share of 0 / "no" over
   ``--relation-seeds`` seeds (a) in balanced runs and (b) among the first acceptable
   instantiation of the search on every scene with balancing off, and the options tried.

Without ``--scenes`` the synthetic CLEVR world makes 100 scenes, so the script runs offline.

6. With ``--only-synthetic N`` (no other run): the generator alone (``QuestionGenerator``) on N
   synthetic scenes with the stream's settings (the 13 ``clevr_math`` templates, 4 per image,
   ``max_answer`` 10 with bounded intermediate counts, windows of 16 scenes), and chains of 6,
   7 and 8 operations (``clevr_math_long_chains``, alternating) on the first N/4 scenes: best
   process-CPU questions/s of ``--repeats`` runs. ``--compare DIR`` runs the same mode in the
   checkout DIR (e.g. ``main`` in a ``git worktree``) round-robin, for a ratio on a shared
   machine.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from builder_utils.clevr import load_scenes
from builder_utils.clevr.engine import SearchStats, search
from builder_utils.clevr.executor import SceneIndex, answer_text
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator, scene_seed
from builder_utils.clevr.choices import SceneData
from builder_utils.clevr.generate_questions import main as generate_questions


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def single_process(scenes, templates: str, repeats: int, **extra) -> tuple[list, dict]:
    runs = []
    questions = []
    for _ in range(repeats):
        generator = QuestionGenerator(GeneratorOptions(templates=templates, **extra))
        questions, wall, cpu = timed(lambda: list(generator.generate(scenes)))
        runs.append((wall, cpu, generator))
    n = len(questions)
    walls = sorted(n / w for w, _, _ in runs)
    cpus = sorted(n / c for _, c, _ in runs)
    generator = runs[-1][2]
    states = sum(s.states for s in generator.stats)
    return questions, {
        "questions": n,
        "best_wall_qps": walls[-1],
        "median_wall_qps": statistics.median(walls),
        "best_cpu_qps": cpus[-1],
        "median_cpu_qps": statistics.median(cpus),
        "states": states,
        "budget_exhausted": sum(s.budget_exhausted for s in generator.stats),
        "templates_used": len({(q["template_filename"], q["template_index"]) for q in questions}),
        "templates": len(generator.templates),
    }


def write_scaled(source: dict, count: int, folder: str) -> str:
    base = source["scenes"]
    scenes = []
    for i in range(count):
        scene = dict(base[i % len(base)])
        scene["image_index"] = i
        scene["image_filename"] = f"CLEVR_{scene.get('split', 'val')}_{i:06d}.png"
        scenes.append(scene)
    path = os.path.join(folder, f"scenes_{count}.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"info": source.get("info", {}), "scenes": scenes}, fh)
    return path


def cli_run(scene_path: str, out: str, workers: int) -> tuple[float, float]:
    """Run the command in-process; return wall seconds and the CPU seconds of this process
    and its worker processes (so that CPU / wall shows how many cores the run really got)."""
    argv = ["--input_scene_file", scene_path, "--output_questions_file", out, "--num_workers", str(workers)]
    before = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    stderr, sys.stderr = sys.stderr, open(os.devnull, "w")
    try:
        status, wall, _ = timed(lambda: generate_questions(argv))
    finally:
        sys.stderr.close()
        sys.stderr = stderr
    if status != 0:
        raise SystemExit(f"generate-questions failed on {scene_path}")
    after = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(a.ru_utime + a.ru_stime - b.ru_utime - b.ru_stime for a, b in zip(after, before))
    return wall, cpu


def stats_markdown(questions: list[dict], generator_templates, source: str) -> str:
    by_template: dict[tuple, collections.Counter] = collections.defaultdict(collections.Counter)
    for q in questions:
        by_template[(q["template_filename"], q["template_index"])][q["answer"]] += 1
    lines = [
        "# Generated questions: answers per template",
        "",
        f"Produced by `benchmarks/bench_generate.py` from `{source}` with default flags "
        "(`clevr` set, seed 0, 10 templates per image).",
        "",
        "| template | questions | answers (count) |",
        "|---|---|---|",
    ]
    families: dict[str, int] = collections.Counter()
    for t in generator_templates:
        counts = by_template.get((t.family, t.index), collections.Counter())
        families[t.family] += sum(counts.values())
        answers = ", ".join(f"{a} {c}" for a, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"| {t.key} | {sum(counts.values())} | {answers} |")
    lines += ["", "| family | questions |", "|---|---|"]
    lines += [f"| {f} | {n} |" for f, n in sorted(families.items())]
    return "\n".join(lines) + "\n"


def relation_templates(generator: QuestionGenerator) -> list[int]:
    """Positions of the templates with a relation whose final node is a count or an exist."""
    chosen = []
    for t, template in enumerate(generator.templates):
        types = [n.type for n in template.nodes]
        if any("relate" in x for x in types) and types[-1].endswith(("count", "exist")):
            chosen.append(t)
    return chosen


def relation_balance(scenes, seeds: int) -> list[str]:
    """Share of 0 / "no" per count/exist template with relations, over seeds 0..seeds-1:
    with balancing (default flags) and without it (the first acceptable instantiation of the
    search per scene and seed, default budget)."""
    generator = QuestionGenerator(GeneratorOptions())
    chosen = relation_templates(generator)
    keys = {(generator.templates[t].family, generator.templates[t].index): t for t in chosen}
    balanced = {t: [0, 0] for t in chosen}
    for seed in range(seeds):
        for q in QuestionGenerator(GeneratorOptions(seed=seed)).generate(scenes):
            t = keys.get((q["template_filename"], q["template_index"]))
            if t is not None:
                balanced[t][0] += 1
                balanced[t][1] += q["answer"] in ("0", "no")
    relations = generator.metadata.values("Relation")
    indexes = [SceneIndex(scene, metadata=generator.metadata) for scene in scenes]
    lines = [f"| template | balanced: questions | balanced: 0/no | unbalanced: found | unbalanced: 0/no "
             f"| unbalanced: options tried |", "|---|---:|---:|---:|---:|---:|"]
    totals = [0, 0, 0, 0]
    for t in chosen:
        plan = generator.plans[t]
        found = zero = states = 0
        for seed in range(seeds):
            for scene, index in zip(scenes, indexes):
                rng = random.Random(scene_seed(seed, scene["image_index"]) + t)
                stats = SearchStats()
                result = search(plan, SceneData(index, relations), rng, lambda answer: True,
                                budget=generator.options.search_budget, stats=stats)
                states += stats.states
                if result:
                    found += 1
                    zero += answer_text(result[0].answer) in ("0", "no")
        n, z = balanced[t]
        totals = [totals[0] + n, totals[1] + z, totals[2] + found, totals[3] + zero]
        lines.append(f"| {generator.templates[t].key} | {n} | {_share(z, n)} | {found} | {_share(zero, found)} "
                     f"| {states:,} |")
    lines.append(f"| all | {totals[0]} | {_share(totals[1], totals[0])} | {totals[2]} "
                 f"| {_share(totals[3], totals[2])} | |")
    return lines


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


SYNTHETIC_CASES = (("13 templates", None, 1), ("chains of 6", "chain_6", 4), ("chains of 7", "chain_7", 4),
                   ("chains of 8", "chain_8", 4))


def synthetic_rates(num_scenes: int) -> dict[str, tuple[int, float]]:
    """``{case: (questions, CPU questions/s)}`` of one generator run per case of
    :data:`SYNTHETIC_CASES` on ``num_scenes`` synthetic scenes (fewer for chains)."""
    from builder_utils.clevr.synth import generate_scenes

    scenes = generate_scenes(num_scenes, seed=0, split="train")
    rates = {}
    for label, family, share in SYNTHETIC_CASES:
        options = GeneratorOptions(
            templates="clevr_math" if family is None else "clevr_math_long_chains",
            question_types=None if family is None else (family,), templates_per_image=4, max_answer=10,
            bound_intermediate_counts=True, reset_counts_every=16)
        generator = QuestionGenerator(options)
        questions, _, cpu = timed(lambda: list(generator.generate(scenes, 0, num_scenes // share)))
        rates[label] = (len(questions), len(questions) / cpu)
    return rates


def synthetic_comparison(num_scenes: int, repeats: int, compare: str | None) -> None:
    trees = {"this checkout": Path(__file__).resolve().parent.parent}
    if compare:
        trees["--compare"] = Path(compare).resolve()
    best: dict[tuple[str, str], tuple[int, float]] = {}
    for _ in range(repeats):
        for label, tree in trees.items():
            done = subprocess.run(
                [sys.executable, __file__, "--synthetic-once", str(num_scenes)], check=True, capture_output=True,
                text=True, env={**os.environ, "PYTHONPATH": str(tree)})
            for case, (count, rate) in json.loads(done.stdout).items():
                if (label, case) not in best or rate > best[(label, case)][1]:
                    best[(label, case)] = (count, rate)
    print(f"generator alone, {num_scenes} synthetic scenes, best of {repeats}, load average {os.getloadavg()[0]:.2f}")
    print("| case | questions | " + " | ".join(f"{label} q/s" for label in trees) + (" | ratio |" if compare else " |"))
    print("|---|---:|" + "---:|" * (len(trees) + bool(compare)))
    for case, _, _ in SYNTHETIC_CASES:
        rates = [best[(label, case)][1] for label in trees]
        ratio = f" {rates[0] / rates[1]:.2f}x |" if compare else ""
        print(f"| {case} | {best[('this checkout', case)][0]:,} | " + " | ".join(f"{r:,.0f}" for r in rates)
              + " |" + ratio)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", help="scene file (default: 100 synthetic scenes)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scaled", type=int, default=1000, help="scenes for the worker-scaling run")
    parser.add_argument("--stats", help="write per-template answer distributions (Markdown) here")
    parser.add_argument("--relations", action="store_true",
                        help="print the 0/no share of count/exist templates with relations")
    parser.add_argument("--relation-seeds", type=int, default=5, help="seeds for --relations (5)")
    parser.add_argument("--only-relations", action="store_true", help="skip the timing runs (implies --relations)")
    parser.add_argument("--only-synthetic", type=int, metavar="N", help="only the generator on N synthetic scenes")
    parser.add_argument("--compare", help="with --only-synthetic: another checkout, run the same way")
    parser.add_argument("--synthetic-once", type=int, help=argparse.SUPPRESS)  # one run, JSON out
    args = parser.parse_args(argv)
    if args.synthetic_once:
        print(json.dumps(synthetic_rates(args.synthetic_once)))
        return
    if args.only_synthetic:
        synthetic_comparison(args.only_synthetic, args.repeats, args.compare)
        return

    with tempfile.TemporaryDirectory() as folder:
        if args.scenes:
            scene_path = args.scenes
        else:
            from builder_utils.clevr.synth import generate_scenes

            scene_path = os.path.join(folder, "synthetic.json")
            with open(scene_path, "w", encoding="utf-8") as fh:
                json.dump({"info": {"split": "val"}, "scenes": generate_scenes(100, seed=0, split="val")}, fh)
        scenes = load_scenes(scene_path)
        print(f"scenes: {scene_path} ({len(scenes)})")

        if args.only_relations:
            print("\n".join(relation_balance(scenes, args.relation_seeds)))
            return

        results = {}
        for name, extra in (("clevr", {}), ("clevr_math", {"max_answer": 10}), ("clevr_math_chains", {"max_answer": 10})):
            questions, figures = single_process(scenes, name, args.repeats, **extra)
            results[name] = figures
            print(f"{name}: {json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in figures.items()})}")
            if name == "clevr":
                clevr_questions = questions
                per_image = collections.Counter(q["image_index"] for q in questions)
                print(f"  questions per image: min {min(per_image.values())}, max {max(per_image.values())}; "
                      f"families: {len({q['template_filename'] for q in questions})}")

        out = os.path.join(folder, "q.json")
        walls = [cli_run(scene_path, out, 1)[0] for _ in range(3)]
        print(f"command, 1 worker, {len(scenes)} scenes: best {min(walls):.2f} s wall "
              f"({results['clevr']['questions'] / min(walls):.0f} questions/s end to end)")

        with open(scene_path, encoding="utf-8") as fh:
            source = json.load(fh)
        scaled = write_scaled(source, args.scaled, folder)
        timings = {}
        outputs = {}
        print(f"load average before scaling runs: {os.getloadavg()[0]:.2f}")
        for workers in (1, 2):
            target = os.path.join(folder, f"scaled_{workers}.json")
            timings[workers] = min(cli_run(scaled, target, workers) for _ in range(args.repeats))
            outputs[workers] = Path(target).read_bytes()
        count = len(json.loads(outputs[1])["questions"])
        for workers, (wall, cpu) in timings.items():
            print(f"scaling, {args.scaled} scenes, {count} questions, {workers} worker(s): {wall:.2f} s wall "
                  f"({count / wall:.0f} q/s), {cpu:.2f} s CPU, cores used {cpu / wall:.2f}")
        print(f"speed-up {timings[1][0] / timings[2][0]:.2f}x; identical output: {outputs[1] == outputs[2]}")

        if args.relations:
            print("\n".join(relation_balance(scenes, args.relation_seeds)))

        if args.stats:
            generator = QuestionGenerator(GeneratorOptions())
            Path(args.stats).write_text(stats_markdown(clevr_questions, generator.templates, os.path.basename(scene_path)),
                                        encoding="utf-8")
            print(f"answer distributions written to {args.stats}")


if __name__ == "__main__":
    main()
