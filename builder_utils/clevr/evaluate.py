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

from builder_utils.command import run_parsed
from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES
from builder_utils.evaluation.cli import positive_int
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.predictions import Prediction, given_predictions
from builder_utils.evaluation.report import check_outputs, overall_table, report_systems
from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Question, ScoringSpec, Section
from builder_utils.json_input import load_json

__all__ = ["Program", "answer_kind", "attribute_synonyms", "clevr_spec", "coarse_question_types", "evaluate_questions",
           "oracle_answers", "read_clevr_questions"]

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


@lru_cache(maxsize=None)
def clevr_spec() -> ScoringSpec:
    """How classic CLEVR answers are scored: the kind follows the gold answer (yes/no, integer,
    an attribute's words with CLEVR's synonyms); breakdowns by family and coarse question type;
    majority and family prior baselines.

    Example:
        >>> sorted(clevr_spec().extractions)
        ['color', 'integer', 'material', 'shape', 'size', 'word', 'yes_no']
    """
    words = {kind: Extraction("word", *attribute_synonyms(kind)) for kind in ATTRIBUTES}
    return ScoringSpec(
        dataset="clevr",
        title="CLEVR",
        extractions={"yes_no": Extraction("yes_no"), "integer": Extraction("integer"), **words,
                     "word": Extraction("word")},
        sections=(Section("by_family", "family"), Section("by_question_type", "question_type")),
        charts=(ChartSpec(CHART_FILES[0], "Accuracy by question family", "by_family", "family"),
                ChartSpec(CHART_FILES[1], "Accuracy by question type", "by_question_type", "type")),
        baselines=(Baseline("majority"), Baseline("family_prior", ("template", "family"))),
        extraction_note="by the gold answer's kind: yes/no, integer, or the attribute's words with CLEVR's synonyms",
    )


def read_clevr_questions(path: str | os.PathLike) -> list[Question]:
    """The questions of a CLEVR question file (``{"questions": [...]}``).

    Example::

        read_clevr_questions("questions.json")[0].keys["family"]
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
        keys = {"family": family, "template": f"{family}[{index}]",
                "question_type": tuple(coarse_question_types(q["program"]))}
        out.append(Question(str(q["question_index"]), (answer,), answer_kind(answer), keys,
                            Program(list(q["program"]), q.get("image_filename"))))
    return out


@dataclass(frozen=True)
class Program:
    """What the oracle runs for a question (a :class:`Question`'s ``extra``): its program (the
    released form) on the scene of its image.

    Example:
        >>> Program([{"function": "scene"}], "CLEVR_val_000000.png").image_filename
        'CLEVR_val_000000.png'
    """

    program: Sequence | None
    image_filename: str | None


def _scene_files(scenes: str | os.PathLike) -> list[Path]:
    path = Path(scenes).expanduser()
    if path.is_file():
        return [path]
    folder = path / "scenes" if (path / "scenes").is_dir() else path
    files = sorted(folder.glob("CLEVR_*_scenes.json"))
    if not files:
        raise EvaluationError(f"{scenes}: no CLEVR_<split>_scenes.json (looked in {folder}); --scenes takes a "
                              "CLEVR_v1.0 folder or a scene file")
    return files


def oracle_answers(questions: Sequence[Question], scenes: str | os.PathLike) -> dict[str, str | None]:
    """Each question's program run on its scene graph (:func:`builder_utils.clevr.answer`):
    the answer, or None when the program has no answer there. Questions whose image has no
    scene in ``scenes`` get no entry (they count as missing).

    Example::

        oracle_answers(read_clevr_questions("q.json"), "CLEVR_v1.0")
        # -> {'test_000000_0': '1', ...}
    """
    from builder_utils.clevr import InvalidProgram, answer, load_scenes

    needed = {q.extra.image_filename for q in questions}
    files = _scene_files(scenes)
    # Only the scene files of the splits the images name (the 70,000-scene train file is slow to
    # read); all of them when the names say nothing (CLEVR-Math's own test images).
    named = [f for f in files if any(n and n.startswith(f.name.replace("_scenes.json", "_")) for n in needed)]
    found: dict[str, dict] = {}
    for file in named or files:
        for scene in load_scenes(file):
            if scene["image_filename"] in needed:
                found[scene["image_filename"]] = scene
    out: dict[str, str | None] = {}
    for q in questions:
        scene = found.get(q.extra.image_filename)
        if scene is None or q.extra.program is None:
            continue
        try:
            out[q.question_id] = answer(q.extra.program, scene)
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
    ignore_extra_ids: bool = False,
) -> dict:
    """The report of ``predictions`` (and of the baselines the inputs allow) on a question file.

    Example::

        evaluate_questions("val_q.json", "preds.jsonl", "train_q.json")["by_family"]
    """
    predictions, source = given_predictions(predictions)
    questions = read_clevr_questions(questions_file)
    train = read_clevr_questions(train_questions) if train_questions is not None else []
    header = {"questions": os.fspath(questions_file), "data": os.fspath(questions_file),
              "train_split": None if train_questions is None else os.fspath(train_questions)}
    return engine.score_report(clevr_spec(), questions, train, predictions, source, header,
                               oracle=None if scenes is None else oracle_answers(questions, scenes), seed=seed,
                               resamples=resamples, ignore_extra_ids=ignore_extra_ids,
                               where=f"the question_index values of {questions_file}")


def write_evaluation(report: Mapping, out: str | os.PathLike, overwrite: bool = False) -> list[Path]:
    """Write ``report.json``, ``report.md``, ``accuracy_by_family.png`` and ``accuracy_by_question_type.png``.

    Example::

        write_evaluation(evaluate_questions("q.json", "p.jsonl"), "eval")
    """
    return engine.write_evaluation(clevr_spec(), report, out, overwrite)


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
    parser.add_argument("--ignore_extra_ids", action="store_true", help="leave out predictions for other questions")
    parser.add_argument("--overwrite", action="store_true")

    def run(args: argparse.Namespace) -> int:
        check_outputs(args.out, CHART_FILES, args.overwrite)
        report = evaluate_questions(args.questions, args.predictions, args.train_questions, args.scenes,
                                    args.seed, args.bootstrap, args.ignore_extra_ids)
        write_evaluation(report, args.out, overwrite=args.overwrite)
        print(overall_table(report_systems(report)))
        return 0

    parser.set_defaults(run=run)
    return run_parsed(prog, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
