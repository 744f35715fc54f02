"""Scoring answers to classic CLEVR questions: accuracy per question family and coarse type.

Input: a question file as ``generate-questions`` writes it (or a released CLEVR question file:
``question_index``, ``program``, ``answer``, ``template_filename`` or ``question_family_index``)
and predictions keyed by ``question_index`` (as text). The kind of answer follows the gold
answer: ``yes``/``no`` -> yes/no extraction, digits -> integer extraction, an attribute value ->
that attribute's words with CLEVR's synonyms (``ball`` -> ``sphere``, ``shiny`` -> ``metal``).

Reported: ``overall``; ``by_family`` (the template file: ``zero_hop``, ``compare_integer`` ...);
``by_question_type``, the coarse types of ``--question_types`` read off each program (count,
exist, query, attribute_compare, integer_compare, relation, logical_and, logical_or; a question
can have several). Baselines: ``majority`` and ``family_prior`` (most frequent answer per
template, then per family) from ``--train_questions``; ``oracle`` (the program run on the
scene) with ``--scenes``.

    python -m builder_utils.clevr.evaluate --questions q.json --predictions p.jsonl --out eval \\
        --train_questions train_q.json --scenes CLEVR_val_scenes.json

Example:
    >>> answer_kind("metal"), coarse_question_types([{"function": "scene"}, {"function": "count"}])
    ('material', ['count'])
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES, Scored, score, summarize, summarize_groups
from builder_utils.evaluation.baselines import answer_prior, back_off, majority_answer
from builder_utils.command import run_parsed
from builder_utils.evaluation.cli import positive_int
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.extract import extract_ranked
from builder_utils.evaluation.predictions import Prediction, read_predictions
from builder_utils.json_input import load_json
from builder_utils.evaluation.report import (
    Chart,
    breakdown_table,
    chart_rows,
    check_outputs,
    overall_table,
    report_systems,
    write_report,
)

__all__ = ["ClevrQuestion", "answer_kind", "attribute_synonyms", "coarse_question_types", "evaluate_questions",
           "read_clevr_questions"]

ATTRIBUTES = {"color": "Color", "shape": "Shape", "size": "Size", "material": "Material"}
CHART_FILES = ("accuracy_by_family.png", "accuracy_by_question_type.png")
_SYNONYMS_FILE = Path(__file__).with_name("synonyms.json")
_INTEGER_COMPARE = {"equal_integer", "less_than", "greater_than"}
_ATTRIBUTE_COMPARE = {"equal_size", "equal_color", "equal_material", "equal_shape"}


@lru_cache(maxsize=None)
def _attribute_values() -> dict[str, tuple[str, ...]]:
    from builder_utils.clevr.metadata import default_metadata

    metadata = default_metadata()
    return {kind: tuple(metadata.values(type_name)) for kind, type_name in ATTRIBUTES.items()}


@lru_cache(maxsize=None)
def attribute_synonyms(kind: str) -> tuple[frozenset[str], dict[str, str]]:
    """The values of one attribute (``color``, ``shape``, ``size``, ``material``) and the map of
    their synonyms (from the generator's ``synonyms.json``) to the value.

    Example:
        >>> values, synonyms = attribute_synonyms("shape")
        >>> sorted(values), synonyms["ball"], synonyms["block"]
        (['cube', 'cylinder', 'sphere'], 'sphere', 'cube')
    """
    values = _attribute_values()[kind]
    table = load_json(_SYNONYMS_FILE, what="synonyms file")
    synonyms = {word: value for value in values for word in table.get(value, [value])}
    return frozenset(values), synonyms


def answer_kind(answer: str) -> str:
    """``yes_no``, ``integer``, an attribute name, or ``word`` (anything else).

    Example:
        >>> [answer_kind(a) for a in ("no", "7", "cyan", "thing")]
        ['yes_no', 'integer', 'color', 'word']
    """
    if answer in ("yes", "no"):
        return "yes_no"
    if answer.lstrip("-").isdigit():
        return "integer"
    for kind, values in _attribute_values().items():
        if answer in values:
            return kind
    return "word"


def coarse_question_types(program: Sequence[Mapping]) -> list[str]:
    """The coarse types of a released-form program (``function`` or ``type`` per node).

    Example:
        >>> coarse_question_types([{"function": "scene"}, {"function": "relate"}, {"function": "query_color"}])
        ['query', 'relation']
    """
    names = [node.get("function", node.get("type")) for node in program]
    final = names[-1] if names else ""
    found = []
    if final == "count":
        found.append("count")
    elif final == "exist":
        found.append("exist")
    elif final.startswith("query_"):
        found.append("query")
    elif final in _ATTRIBUTE_COMPARE:
        found.append("attribute_compare")
    elif final in _INTEGER_COMPARE:
        found.append("integer_compare")
    if any(name == "relate" for name in names):
        found.append("relation")
    if "intersect" in names:
        found.append("logical_and")
    if "union" in names:
        found.append("logical_or")
    return found


@dataclass(frozen=True)
class ClevrQuestion:
    """What the scorer needs of one CLEVR question."""

    question_id: str
    answer: str
    family: str
    template: str
    types: tuple[str, ...]
    program: tuple
    image_filename: str | None


def read_clevr_questions(path: str | os.PathLike) -> list[ClevrQuestion]:
    """The questions of a CLEVR question file (``{"questions": [...]}``).

    Example::

        read_clevr_questions("questions.json")[0].family
        # -> 'zero_hop'
    """
    path = Path(path)
    doc = load_json(path, what="CLEVR question file", error=EvaluationError)
    items = doc.get("questions") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise EvaluationError(f"{path}: expected an object with a 'questions' list")
    out = []
    for position, q in enumerate(items):
        missing = [k for k in ("question_index", "answer", "program") if k not in q]
        if missing:
            raise EvaluationError(f"{path}: question {position}: missing {', '.join(missing)}")
        stem = q.get("template_filename")
        family = Path(stem).stem if stem else f"family_{q.get('question_family_index')}"
        index = q.get("template_index", q.get("question_family_index"))
        answer = q["answer"]
        answer = "yes" if answer is True else "no" if answer is False else str(answer)
        out.append(ClevrQuestion(str(q["question_index"]), answer, family, f"{family}[{index}]",
                                 tuple(coarse_question_types(q["program"])), tuple(q["program"]),
                                 q.get("image_filename")))
    return out


def extract_answer(question: ClevrQuestion, prediction: Prediction) -> list[str]:
    """The prediction's answer, extracted by the kind of the gold answer.

    Example:
        >>> q = ClevrQuestion("0", "sphere", "query_shape", "t[0]", ("query",), (), None)
        >>> extract_answer(q, "It is a big ball.")
        ['sphere']
    """
    kind = answer_kind(question.answer)
    if kind in ATTRIBUTES:
        vocabulary, synonyms = attribute_synonyms(kind)
        return extract_ranked(prediction, "word", vocabulary, synonyms, limit=1)
    return extract_ranked(prediction, kind, limit=1)


def _score(questions: Sequence[ClevrQuestion], predictions: Mapping[str, Prediction]) -> list[Scored]:
    return [score(extract_answer(q, predictions[q.question_id]) if q.question_id in predictions else None, q.answer)
            for q in questions]


def system_result(questions: Sequence[ClevrQuestion], scored: Sequence[Scored], seed: int = 0,
                  resamples: int = DEFAULT_RESAMPLES) -> dict:
    """``overall``, ``by_family``, ``by_question_type`` of one system.

    Example:
        >>> q = ClevrQuestion("0", "2", "zero_hop", "zero_hop[0]", ("count",), (), None)
        >>> system_result([q], [score(["2"], "2")])["by_question_type"]["count"]["accuracy"]
        1.0
    """
    pairs = list(zip(questions, scored))
    return {
        "overall": summarize(scored, seed, resamples),
        "by_family": summarize_groups(((q.family, s) for q, s in pairs), seed, resamples),
        "by_question_type": summarize_groups(((t, s) for q, s in pairs for t in q.types), seed, resamples),
    }


def _oracle(questions: Sequence[ClevrQuestion], scenes: str | os.PathLike) -> dict[str, str | None]:
    from builder_utils.clevr import InvalidProgram, answer, load_scenes

    by_name = {}
    needed = {q.image_filename for q in questions}
    for scene in load_scenes(scenes):
        if scene["image_filename"] in needed:
            by_name[scene["image_filename"]] = scene
    out: dict[str, str | None] = {}
    for q in questions:
        if q.image_filename in by_name:
            try:
                out[q.question_id] = answer(list(q.program), by_name[q.image_filename])
            except InvalidProgram:
                out[q.question_id] = None
    return out


def evaluate_questions(
    questions_file: str | os.PathLike,
    predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
    train_questions: str | os.PathLike | None = None,
    scenes: str | os.PathLike | None = None,
    seed: int = 0,
    resamples: int = DEFAULT_RESAMPLES,
) -> dict:
    """The report of ``predictions`` (and of the baselines the inputs allow) on a question file.

    Example::

        evaluate_questions("val_q.json", "preds.jsonl", "train_q.json")["by_family"]
    """
    questions = read_clevr_questions(questions_file)
    source = None if predictions is None or isinstance(predictions, Mapping) else os.fspath(predictions)
    report: dict = {"dataset": "clevr", "questions": os.fspath(questions_file), "num_questions": len(questions),
                    "predictions": source, "seed": seed, "bootstrap_resamples": resamples}
    if predictions is not None:
        if not isinstance(predictions, Mapping):
            predictions = read_predictions(predictions)
        known = {q.question_id for q in questions}
        unknown = [qid for qid in predictions if qid not in known]
        if unknown:
            raise EvaluationError(f"{report['predictions'] or 'predictions'}: {len(unknown)} question_id(s) are not "
                                  f"question_index values of {questions_file} (e.g. {unknown[0]!r})")
        report.update(system_result(questions, _score(questions, predictions), seed, resamples))
    baselines = {}
    if train_questions is not None:
        train = read_clevr_questions(train_questions)
        majority = majority_answer(q.answer for q in train)
        by_family = answer_prior((q.family, q.answer) for q in train)
        by_template = answer_prior((q.template, q.answer) for q in train)
        for name, answers in (
            ("majority", {q.question_id: majority for q in questions}),
            ("family_prior", {q.question_id: back_off([(by_template, q.template), (by_family, q.family)], majority)
                              for q in questions}),
        ):
            baselines[name] = system_result(questions, _score(questions, answers), seed, resamples)
    if scenes is not None:
        baselines["oracle"] = system_result(questions, _score(questions, _oracle(questions, scenes)), seed, resamples)
    report["baselines"] = baselines
    return report


def render_markdown(report: Mapping) -> str:
    """``report.md`` of a CLEVR evaluation.

    Example::

        print(render_markdown(evaluate_questions("q.json", train_questions="t.json")))
    """
    systems = report_systems(report)
    return "\n".join([
        f"# CLEVR evaluation: `{report['questions']}`", "",
        f"{report['num_questions']} questions; predictions `{report['predictions'] or '(none: baselines only)'}`. "
        "Unparseable and missing predictions count as wrong.", "",
        "## Overall", "", overall_table(systems), "",
        "## By family", "", breakdown_table("family", systems, "by_family"), "",
        "## By question type", "", breakdown_table("question type", systems, "by_question_type"), "",
    ])


def write_evaluation(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md``, ``accuracy_by_family.png`` and ``accuracy_by_question_type.png``.

    Example::

        write_evaluation(evaluate_questions("q.json", "p.jsonl"), "eval")
    """
    systems = report_systems(report)
    charts = [Chart(CHART_FILES[0], "Accuracy by question family", chart_rows(systems, "by_family"),
                    list(systems), value_label="family"),
              Chart(CHART_FILES[1], "Accuracy by question type",
                    chart_rows(systems, "by_question_type"), list(systems), value_label="type")]
    return write_report(out, report, render_markdown(report), charts, overwrite=overwrite)


def main(argv: Sequence[str] | None = None, prog: str = "python -m builder_utils.clevr.evaluate") -> int:
    """Command-line entry point; returns the exit status (2 for bad input).

    Example:
        >>> main(["--questions", "/nonexistent.json", "--out", "/tmp/eval"])
        2
    """
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", required=True, help="CLEVR question file (generate-questions output)")
    parser.add_argument("--predictions", help="JSONL, CSV or Parquet: question_id (= question_index), prediction")
    parser.add_argument("--out", required=True, help="folder for report.json, report.md and the charts")
    parser.add_argument("--train_questions", help="question file the majority and prior baselines count on")
    parser.add_argument("--scenes", help="scene file of the questions' images, for the program oracle")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bootstrap", type=positive_int, default=DEFAULT_RESAMPLES)
    parser.add_argument("--overwrite", action="store_true")

    def run(args: argparse.Namespace) -> int:
        check_outputs(args.out, CHART_FILES, args.overwrite)
        report = evaluate_questions(args.questions, args.predictions, args.train_questions, args.scenes,
                                    args.seed, args.bootstrap)
        write_evaluation(report, args.out, overwrite=args.overwrite)
        print(overall_table(report_systems(report)))
        return 0

    parser.set_defaults(run=run)
    return run_parsed(prog, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
