"""Scoring answers to classic CLEVR questions: accuracy per question family and coarse type.

The kind of answer follows the gold answer; attribute words count with CLEVR's synonyms. The
report's parts: ``builder_utils/evaluation/README.md``.

Example:
    >>> answer_kind("metal")
    'material'
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from builder_utils.command import CommandParser, run_parsed
from builder_utils.evaluation import evaluate as engine
from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES
from builder_utils.evaluation.cli import RESAMPLES
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.predictions import Prediction, given_predictions
from builder_utils.evaluation.report import COMMAND as REPORT_COMMAND
from builder_utils.evaluation.report import check_outputs, overall_table, report_systems
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder
from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Question, ScoringSpec, Section
from builder_utils.json_input import load_json
from builder_utils.options import MAX_SEED, Integer

__all__ = ["Program", "answer_kind", "attribute_synonyms", "clevr_spec", "evaluate_questions", "oracle_answers",
           "read_clevr_questions"]

ATTRIBUTES = {"color": "Color", "shape": "Shape", "size": "Size", "material": "Material"}


@lru_cache(maxsize=None)
def _attribute_values() -> dict[str, tuple[str, ...]]:
    from builder_utils.clevr.metadata import default_metadata

    return {kind: tuple(default_metadata().values(type_name)) for kind, type_name in ATTRIBUTES.items()}


@lru_cache(maxsize=None)
def attribute_synonyms(kind: str) -> tuple[frozenset[str], dict[str, str]]:
    """The values of one attribute and the map of their synonyms (``synonyms.json``) to the value.

    Example:
        >>> values, synonyms = attribute_synonyms("shape")
        >>> sorted(values), synonyms["ball"]
        (['cube', 'cylinder', 'sphere'], 'sphere')
    """
    values = _attribute_values()[kind]
    table = load_json(Path(__file__).with_name("synonyms.json"), what="synonyms file")
    return frozenset(values), {word: value for value in values for word in table.get(value, [value])}


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
    return next((kind for kind, values in _attribute_values().items() if answer in values), "word")


@lru_cache(maxsize=None)
def clevr_spec() -> ScoringSpec:
    """How classic CLEVR answers are scored: by gold answer kind, per family and coarse type.

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
        charts=(ChartSpec("Accuracy by question family", "by_family", "family"),
                ChartSpec("Accuracy by question type", "by_question_type", "type")),
        baselines=(Baseline("majority"), Baseline("family_prior", ("template", "family"))),
        extraction_note="by the gold answer's kind: yes/no, integer, or the attribute's words with CLEVR's synonyms",
    )


@dataclass(frozen=True)
class Program:
    """What the oracle runs for a question (its ``extra``): the program on its image's scene.

    Example:
        >>> Program([{"function": "scene"}], "CLEVR_val_000000.png").image_filename
        'CLEVR_val_000000.png'
    """

    program: Sequence | None
    image_filename: str | None


def read_clevr_questions(path: str | os.PathLike) -> list[Question]:
    """The questions of a CLEVR question file (``{"questions": [...]}``).

    Example::

        read_clevr_questions("questions.json")[0].keys["family"]
        # -> 'zero_hop'
    """
    from builder_utils.clevr.question_types import COARSE_TYPES, program_coarse_types

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
        answer = "yes" if q["answer"] is True else "no" if q["answer"] is False else str(q["answer"])
        types = program_coarse_types([node.get("function", node.get("type")) or "" for node in q["program"]])
        keys = {"family": family, "template": f"{family}[{index}]",
                "question_type": tuple(t for t in COARSE_TYPES if t in types)}
        out.append(Question(str(q["question_index"]), (answer,), answer_kind(answer), keys,
                            Program(list(q["program"]), q.get("image_filename"))))
    return out


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
    """Each question's program answer on its scene (None: no answer); no scene, no entry (missing).

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
    found = {scene["image_filename"]: scene for file in named or files for scene in load_scenes(file)
             if scene["image_filename"] in needed}
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


def evaluate_questions(questions_file: str | os.PathLike,
                       predictions: str | os.PathLike | Mapping[str, Prediction] | None = None,
                       train_questions: str | os.PathLike | None = None, scenes: str | os.PathLike | None = None,
                       seed: int = 0, resamples: int = DEFAULT_RESAMPLES, ignore_extra_ids: bool = False) -> dict:
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


def main(argv: Sequence[str] | None = None, prog: str = "python -m builder_utils.clevr.evaluate") -> int:
    """Command-line entry point; returns the exit status (2 for bad input).

    Example:
        >>> main(["--questions", "/nonexistent.json", "--out", "/tmp/eval"])
        2
    """
    parser = CommandParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", required=True, help="CLEVR question file (generate-questions output)")
    parser.add_argument("--predictions", help="JSONL, CSV or Parquet: question_id (= question_index), prediction")
    parser.add_argument("--out", required=True, help="folder for report.json, report.md and the charts")
    parser.add_argument("--train_questions", help="question file the majority and prior baselines count on")
    parser.add_argument("--scenes", help="scene file of the questions' images, for the program oracle")
    parser.add_argument("--seed", type=Integer(0, maximum=MAX_SEED).parse, default=0)
    parser.add_argument("--bootstrap", type=RESAMPLES.parse, default=DEFAULT_RESAMPLES)
    parser.add_argument("--ignore_extra_ids", action="store_true", help="leave out predictions for other questions")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)

    def run(args: argparse.Namespace) -> int:
        inputs = {"--questions": args.questions, "--predictions": args.predictions,
                  "--train_questions": args.train_questions, "--scenes": args.scenes}
        with OutputFolder.open(args.out, command=REPORT_COMMAND, inputs=inputs, overwrite=args.overwrite) as folder:
            check_outputs(folder, [chart.filename for chart in clevr_spec().charts])
            report = evaluate_questions(args.questions, args.predictions, args.train_questions, args.scenes,
                                        args.seed, args.bootstrap, args.ignore_extra_ids)
            engine.write_evaluation(clevr_spec(), report, folder)
        print(overall_table(report_systems(report)))
        return 0

    parser.set_defaults(run=run)
    return run_parsed(prog, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
