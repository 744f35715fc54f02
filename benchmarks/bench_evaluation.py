"""The model-free baselines on the real Clotho-AQA test questions, and the scorer's speed.

Reads the official QA tables (default ``../shared/data/clotho_aqa``; no audio needed: the
evaluation only uses questions and answers), learns ``majority`` and ``question_prior`` from
train, and scores them on test under every labelling, as ``clotho-aqa evaluate`` does. Then
times answer extraction and scoring on free-text predictions, and checks the CLEVR-Math program
oracle on questions generated from real CLEVR val scenes (``../shared/data/clevr``).

    .venv/bin/python benchmarks/bench_evaluation.py [--csv_dir DIR] [--scenes FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

from builder_utils.evaluation.extract import extract_integer, extract_yes_no
from builder_utils.evaluation.report import markdown_table, percent
from clotho_aqa.evaluate import LABELLINGS, AQAQuestion, baseline_answers, system_result
from clotho_aqa.release import SPLIT_CSVS, read_questions

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def clotho_baselines(csv_dir: Path) -> None:
    csvs = {split: csv_dir / name for split, name in SPLIT_CSVS.items()}
    questions = read_questions(csvs)
    by_split = {split: [AQAQuestion(q.question_id, q.question, q.answers, q.answer_type)
                        for q in questions if q.split == split] for split in csvs}
    train, test = by_split["train"], by_split["test"]
    vocabulary = {a for qs in (train, test) for q in qs if q.answer_type == "single_word" for a in q.answers}
    started = time.perf_counter()
    baselines = baseline_answers(train, test)
    results = {name: system_result(test, answers, vocabulary) for name, answers in baselines.items()}
    elapsed = time.perf_counter() - started
    rows = []
    for labelling in LABELLINGS:
        cells = []
        for result in results.values():
            s = result["by_labelling"][labelling]
            cells.append(percent(s["accuracy"]) + (f" ({percent(s['top_5'])})" if "top_5" in s else ""))
        rows.append([labelling, results["majority"]["by_labelling"][labelling]["total"], *cells])
    print(f"Clotho-AQA official test split: {len(test)} questions, baselines from {len(train)} train questions")
    print(markdown_table(["labelling", "targets", *results], rows))
    print(f"baselines learnt and scored (2 systems x every labelling, with bootstrap) in {elapsed:.2f} s")


def extraction_speed(count: int = 100_000) -> None:
    texts = ["Step 1: There are 8 objects.\nStep 2: Removing 3 gives 8 - 3 = 5.\nAnswer: 5.",
             "There are three cubes left.", "\\boxed{7}", "Yes, there is a dog barking.", "no"] * (count // 5)
    started = time.perf_counter()
    for text in texts:
        extract_integer(text)
        extract_yes_no(text)
    elapsed = time.perf_counter() - started
    print(f"extraction: {len(texts):,} texts x (integer + yes/no) in {elapsed:.2f} s "
          f"({len(texts) / elapsed:,.0f} texts/s)")


def clevr_math_oracle(scenes: Path) -> None:
    from builder_utils.clevr import load_scenes
    from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
    from builder_utils.evaluation.accuracy import score
    from clevr_math.evaluate import MathQuestion, oracle_answers

    generator = QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=0, max_answer=10))
    questions = [MathQuestion(f"q{i}", q["answer"], q["category"], f"{q['template_filename']}[{q['template_index']}]",
                              q["num_operations"], q["program"], q["image_filename"])
                 for i, q in enumerate(generator.generate(load_scenes(scenes)))]
    started = time.perf_counter()
    oracle = oracle_answers(questions, scenes)
    correct = sum(score([oracle[q.question_id]] if oracle.get(q.question_id) else [], q.answer).correct
                  for q in questions)
    print(f"CLEVR-Math oracle on {len(questions)} questions from {scenes.name}: {correct}/{len(questions)} "
          f"({time.perf_counter() - started:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv_dir", type=Path, default=SHARED / "clotho_aqa")
    parser.add_argument("--scenes", type=Path, default=SHARED / "clevr" / "CLEVR_val_scenes_100.json")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, nproc {os.cpu_count()}, "
          f"load average {os.getloadavg()[0]:.2f}")
    clotho_baselines(args.csv_dir)
    extraction_speed()
    clevr_math_oracle(args.scenes)


if __name__ == "__main__":
    main()
