"""CLEVR-Math question generation: speed next to the nine CLEVR families, correctness, and the
statistics of the generated set (the figures of the paper's Figure 3 and vocabulary).

    .venv/bin/python benchmarks/bench_clevr_math.py                        # print the figures
    .venv/bin/python benchmarks/bench_clevr_math.py --stats-out docs/clevr_math_stats.md
    .venv/bin/python benchmarks/bench_clevr_math.py --scenes PATH --seed 1 --repeats 5

Every run is in-process through the library API (``QuestionGenerator``), best wall time of
``--repeats`` runs, template loading excluded (it happens once per process). Every generated
answer is re-executed with ``builder_utils.clevr.answer``, and every CLEVR-Math question is
checked against the independent oracle of ``tests/test_clevr_math_templates.py`` (parameters read
back from the text, answer counted on the scene objects) before anything is reported.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import os
import platform
import re
import statistics
import sys
import time
from pathlib import Path

from builder_utils.atomic import write_atomic
from builder_utils.clevr import answer, chain_templates, load_scenes
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator

DEFAULT_SCENES = Path(__file__).resolve().parents[2] / "shared" / "data" / "clevr" / "CLEVR_val_scenes_100.json"
CATEGORY_ORDER = ("remove_group", "remove_subset", "insertion", "count_backwards", "adversarial", "multihop")
RUNS = (
    # label, template set, max_answer
    ("clevr (nine CLEVR families)", "clevr", None),
    ("clevr_math (13 templates)", "clevr_math", 10),
    ("clevr_math_chains, max_answer 10", "clevr_math_chains", 10),
    ("clevr_math_chains, no answer cap", "clevr_math_chains", None),
)
_WORD = re.compile(r"[a-z]+|\d+")


def timed_run(scenes, templates: str, max_answer: int | None, seed: int, repeats: int):
    """Best wall and CPU times over ``repeats`` generations, and the questions of the last one.

    CPU time is reported too because the machine is shared: wall time grows with other load.
    """
    options = GeneratorOptions(templates=templates, seed=seed, max_answer=max_answer)
    best_wall, best_cpu, questions = float("inf"), float("inf"), []
    for _ in range(repeats):
        generator = QuestionGenerator(options)  # fresh balancing state, as in a new run
        wall, cpu = time.perf_counter(), time.process_time()
        questions = list(generator.generate(scenes))
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, questions


def verify(questions, scenes) -> int:
    """Number of questions whose program, re-executed, does not give the stored answer."""
    by_index = {s["image_index"]: s for s in scenes}
    return sum(answer(q["program"], by_index[q["image_index"]]) != q["answer"] for q in questions)


def load_oracle():
    """The oracle of the test suite, loaded by path (a site-packages ``tests`` package can
    shadow the repository's ``tests`` folder)."""
    path = Path(__file__).resolve().parents[1] / "tests" / "test_clevr_math_templates.py"
    spec = importlib.util.spec_from_file_location("clevr_math_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def oracle_failures(questions, scenes, template_set: str) -> int:
    """Questions the independent oracle disagrees with (answer, moved amounts or counts)."""
    oracle_checks = load_oracle()
    by_index = {s["image_index"]: s for s in scenes}
    folder = oracle_checks.TEMPLATE_ROOT / template_set
    readers = {key: oracle_checks.TextReader(t) for key, t in oracle_checks._load_templates(folder).items()}
    orders = [(s, f) for s in ("remove", "add") for f in ("remove_all", "remove_some")]
    failures = 0
    for q in questions:
        key = (q["template_filename"], q["template_index"])
        objects = by_index[q["image_index"]]["objects"]
        try:
            params = readers[key].read(q["question"])
            if template_set == "clevr_math":
                expected, amounts, states = oracle_checks.oracle(*key, params, objects)
            else:
                ops = chain_templates.operation_sequence(int(key[0].split("_")[1]), *orders[key[1]])
                expected, states, amounts = oracle_checks.chain_oracle(ops, params, objects)
            ok = str(expected) == q["answer"] and list(q["intermediate_counts"]) == states
            failures += not (ok and all(a >= 1 for a in amounts))
        except AssertionError:
            failures += 1
    return failures


def words(question: str) -> list[str]:
    return _WORD.findall(question.lower())


def histogram(counter: collections.Counter, keys) -> str:
    total = sum(counter.values()) or 1
    rows = ["| value | questions | share |", "|---|---:|---:|"]
    for key in keys:
        rows.append(f"| {key} | {counter.get(key, 0)} | {100 * counter.get(key, 0) / total:.1f} % |")
    return "\n".join(rows)


def set_statistics(questions, title: str) -> str:
    """Markdown statistics of one generated set."""
    answers = collections.Counter(int(q["answer"]) for q in questions)
    categories = collections.Counter(q["category"] for q in questions)
    templates = collections.Counter((q["template_filename"], q["template_index"], q["category"]) for q in questions)
    lengths = [len(words(q["question"])) for q in questions]
    vocabulary = collections.Counter(w for q in questions for w in words(q["question"]))
    word_vocab = sorted(w for w in vocabulary if not w.isdigit())
    by_category = collections.defaultdict(list)
    for q, n in zip(questions, lengths):
        by_category[q["category"]].append(n)
    operations = collections.Counter(q["num_operations"] for q in questions)

    out = [f"### {title}", "", f"{len(questions)} questions on {len({q['image_index'] for q in questions})} images.", ""]
    out += ["**Answers**", "", histogram(answers, range(min(answers), max(answers) + 1)), ""]
    out += ["**Categories**", "", histogram(categories, [c for c in CATEGORY_ORDER if c in categories]
                                            + sorted(set(categories) - set(CATEGORY_ORDER))), ""]
    out += ["**Templates**", "", "| template | category | questions |", "|---|---|---:|"]
    for (family, index, category), n in sorted(templates.items()):
        out.append(f"| {family}:{index} | {category} | {n} |")
    out += ["", "**Question length (words; a number counts as one word)**", ""]
    length_hist = collections.Counter(lengths)
    out += [histogram(length_hist, range(min(lengths), max(lengths) + 1)), ""]
    out += ["| category | mean length | most common length |", "|---|---:|---:|"]
    for category in [c for c in CATEGORY_ORDER if c in by_category] + sorted(set(by_category) - set(CATEGORY_ORDER)):
        values = by_category[category]
        out.append(f"| {category} | {statistics.mean(values):.1f} | {statistics.mode(values)} |")
    out += ["", f"**Operations per question** (arithmetic nodes, the engine's `num_operations`): "
            + ", ".join(f"{k}: {v}" for k, v in sorted(operations.items())), ""]
    out += ["**One example per category** (the first generated)", ""]
    shown = set()
    for q in questions:
        if q["category"] not in shown:
            shown.add(q["category"])
            out.append(f"- {q['category']}: \"{q['question']}\" -> {q['answer']} "
                       f"(intermediate_counts {q['intermediate_counts']})")
    out.append("")
    out += [f"**Vocabulary**: {len(word_vocab)} distinct words, plus "
            f"{len(vocabulary) - len(word_vocab)} distinct numerals.", "", "`" + " ".join(word_vocab) + "`", ""]
    return "\n".join(out)


def comparison(questions) -> str:
    """Our set against the paper's reported figures, in one short table."""
    lengths = [len(words(q["question"])) for q in questions]
    multihop = [n for q, n in zip(questions, lengths) if q["category"] == "multihop"]
    single = [n for q, n in zip(questions, lengths) if q["category"] != "multihop"]
    vocabulary = {w for q in questions for w in words(q["question"]) if not w.isdigit()}
    answers = [int(q["answer"]) for q in questions]
    return "\n".join([
        "| figure | paper | clevr_math here |",
        "|---|---|---|",
        f"| vocabulary (words, numerals excluded) | about 50 | {len(vocabulary)} |",
        f"| most common length, single-operation questions | 8-9 | {statistics.mode(single)} "
        f"(median {statistics.median(single):g}) |",
        f"| most common length, multihop | 13 | {statistics.mode(multihop)} "
        f"(median {statistics.median(multihop):g}) |",
        f"| answers | 0-10 | {min(answers)}-{max(answers)} |",
        "",
        "Our texts are longer and use more words on purpose: the verbs vary over the paper's "
        "synonyms (remove / subtract / take away / withdraw, add / introduce / insert) in several "
        "tenses, a subset removal reads `<X> of the <C> <S>s` (a choice from a group of two or more), "
        "and the multihop variants join the two removals with \"Then\" / \"Now\" / \"and\".",
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", default=str(DEFAULT_SCENES), help="CLEVR scene file")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per set (best is reported)")
    parser.add_argument("--stats-out", help="write the statistics document (Markdown) here")
    args = parser.parse_args(argv)

    scenes = list(load_scenes(args.scenes))
    machine = f"{platform.machine()}, {os.cpu_count()} cores, CPython {platform.python_version()}"
    print(f"{len(scenes)} scenes from {args.scenes}; seed {args.seed}; best of {args.repeats}; {machine}")
    print("| template set | questions | wall s | CPU s | questions/s (CPU) | scenes/s (CPU) | wrong answers "
          "| oracle disagrees |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    generated = {}
    for label, templates, max_answer in RUNS:
        wall, seconds, questions = timed_run(scenes, templates, max_answer, args.seed, args.repeats)
        wrong = verify(questions, scenes)
        disagree = oracle_failures(questions, scenes, templates) if templates != "clevr" else "-"
        generated[label] = questions
        print(f"| {label} | {len(questions)} | {wall:.2f} | {seconds:.2f} | {len(questions) / seconds:.0f} "
              f"| {len(scenes) / seconds:.0f} | {wrong} | {disagree} |")
        if wrong or disagree not in (0, "-"):
            print(f"ERROR: {label}: {wrong} answers disagree with their re-executed program, "
                  f"{disagree} with the oracle", file=sys.stderr)
            return 1

    math_set = generated["clevr_math (13 templates)"]
    chains = generated["clevr_math_chains, max_answer 10"]
    print()
    print(set_statistics(math_set, "clevr_math"))
    if args.stats_out:
        today = datetime.date.today().isoformat()
        command = "python benchmarks/bench_clevr_math.py " + " ".join(argv if argv is not None else sys.argv[1:])
        doc = "\n".join([
            "# CLEVR-Math: statistics of the generated questions",
            "",
            f"Made by `{command.strip()}` on {today} ({machine}), from {len(scenes)} scenes of "
            f"`{Path(args.scenes).name}`, seed {args.seed}, `max_answer` 10. "
            "Regenerate with the same command; the output is deterministic for a given seed.",
            "",
            "The paper (CLEVR-Math, Figure 3) reports about 50 words of vocabulary, questions mostly "
            "8-9 words long with a second peak at 13 for multihop, and answers 0-10.",
            "",
            comparison(math_set),
            "",
            set_statistics(math_set, "clevr_math (the 13 templates)"),
            set_statistics(chains, "clevr_math_chains (k = 2..5 operations, max_answer 10)"),
        ])
        write_atomic(Path(args.stats_out), doc)
        print(f"wrote {args.stats_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
