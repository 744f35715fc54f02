"""What one Clotho-AQA row is in a configuration (features, rows, labels), so the builder only reads and writes."""

from __future__ import annotations

import logging
from typing import Any, Iterable

import datasets

from builder_utils.builder import list_of
from clotho_aqa.config import ANSWER, ClothoAQAConfig, Rows, registered
from clotho_aqa.release import SAMPLING_RATE, ClipMetadata, Question

logger = logging.getLogger(__name__)

# Each split becomes shards of this many clips so that num_proc has something to share out.
FILES_PER_SHARD = 256


def label_names(rows: Rows, vocabulary: Iterable[str] = ()) -> list[str]:
    """The classes of a config's ``label``: yes/no, or ``vocabulary`` (the train single-word answers).

    Example:
        >>> label_names(registered("yes_no_majority"), ["rain"]), label_names(registered("single_word"), ["rain"])
        (['yes', 'no'], ['rain'])
    """
    return list(vocabulary if rows.classes is None else rows.classes)


def config_features(rows: Rows, with_metadata: bool, vocabulary: Iterable[str] = ()) -> datasets.Features:
    """The features of a config with these rows; ``vocabulary`` names the single-word classes.

    Example:
        >>> list(config_features(registered("yes_no_majority"), with_metadata=False)["label"].names)
        ['yes', 'no']
    """
    string = datasets.Value("string")
    strings = list_of(string)
    columns: dict[str, Any] = {
        "file_name": string,
        "audio": datasets.Audio(sampling_rate=SAMPLING_RATE),
        "question_id": string,
        "question": string,
    }
    if rows.labelled:
        columns["label"] = datasets.ClassLabel(names=label_names(rows, vocabulary))
    if rows.unit == ANSWER:
        if rows.classes is None:  # a yes/no label is the answer; a word outside the classes is label -1
            columns["answer"] = string
        columns |= {"confidence": string, "annotator": datasets.Value("int8")}
    else:
        columns |= {"answers": strings, "confidences": strings}
        if not rows.labelled:
            columns |= {"majority_answer": string, "unanimous": datasets.Value("bool")}
    if len(rows.answer_types) > 1:
        columns["answer_type"] = string
    if with_metadata:
        columns |= {
            "keywords": strings,
            "sound_link": string,
            "license": string,
            "manufacturer": string,
            "start_end_samples": list_of(datasets.Value("int64")),
        }
    return datasets.Features(columns)


def config_rows(rows: Rows, question: Question, label_of: dict[str, int]) -> list[dict[str, Any]]:
    """The config-specific columns of the rows one question contributes (possibly none); label -1 outside ``label_of``.

    Example:
        >>> q = Question("a.wav", 0, "Any rain?", ("yes", "no", "yes"), ("yes", "yes", "maybe"), "train", 2)
        >>> config_rows(registered("yes_no_majority"), q, {"yes": 0, "no": 1})[0]["label"]
        0
    """
    if not rows.keeps(question):
        return []
    if rows.unit == ANSWER:
        out = [{"answer": a, "confidence": c, "annotator": k}
               for k, (a, c) in enumerate(zip(question.answers, question.confidences))]
        if rows.labelled:
            out = [row | {"label": label_of.get(row["answer"], -1)} for row in out]
        if rows.classes is not None:  # the label is the answer (no column of its own)
            for row in out:
                del row["answer"]
    else:
        lists = {"answers": list(question.answers), "confidences": list(question.confidences)}
        if rows.labelled:
            out = [lists | {"label": label_of.get(question.majority_answer, -1)}]
        else:
            out = [lists | {"majority_answer": question.majority_answer, "unanimous": question.unanimous}]
    if len(rows.answer_types) > 1:
        out = [row | {"answer_type": question.answer_type} for row in out]
    return out


def metadata_columns(meta: ClipMetadata | None) -> dict[str, Any]:
    """The metadata columns of a clip's rows (empty for a clip without a metadata row).

    Example:
        >>> metadata_columns(None)["keywords"]
        []
    """
    if meta is None:
        return {"keywords": [], "sound_link": None, "license": None, "manufacturer": None, "start_end_samples": None}
    return {
        "keywords": list(meta.keywords),
        "sound_link": meta.sound_link,
        "license": meta.license,
        "manufacturer": meta.manufacturer,
        "start_end_samples": None if meta.start_end_samples is None else list(meta.start_end_samples),
    }


def single_word_vocabulary(questions: Iterable[Question], split: str = "train") -> list[str]:
    """Sorted distinct answers to the single-word questions of one split (828 for the official train).

    Example:
        >>> q = Question("a.wav", 0, "What?", ("rain", "water", "rain"), ("yes",) * 3, "train", 2)
        >>> single_word_vocabulary([q])
        ['rain', 'water']
    """
    return sorted({a for q in questions if q.split == split and q.answer_type == "single_word" for a in q.answers})


def shards(questions: list[Question], files_per_shard: int = FILES_PER_SHARD) -> list[list[Question]]:
    """Consecutive runs of the questions of at most ``files_per_shard`` clips (one clip is never cut).

    Example:
        >>> qs = [Question(f"{c}.wav", 0, "Q?", ("yes",) * 3, ("yes",) * 3, "train", 2) for c in "aab"]
        >>> [len(s) for s in shards(qs, files_per_shard=1)]
        [2, 1]
    """
    runs: list[list[Question]] = []
    files_in_run: set[str] = set()
    for q in questions:
        if q.file_name not in files_in_run and len(files_in_run) >= files_per_shard:
            files_in_run = set()
        if not files_in_run:
            runs.append([])
        files_in_run.add(q.file_name)
        runs[-1].append(q)
    return runs


def warn_unlabelled(config: ClothoAQAConfig, split: str, questions: list[Question], label_of: dict[str, int]) -> None:
    """Log how many single-word answers of a split are outside the train vocabulary (label -1)."""
    rows = config.rows
    if not rows.labelled or rows.classes is not None:
        return
    unknown = sorted({a for q in questions if q.answer_type in rows.answer_types for a in q.answers} - set(label_of))
    if unknown:
        logger.warning(
            "%s: %d single-word answer(s) of the %s split never occur in train and get label -1, e.g. %r",
            config.name, len(unknown), split, unknown[:5],
        )
