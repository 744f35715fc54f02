"""The recomputed 60/20/20 split: one rule for ``clotho-aqa splits`` and ``split_strategy="recomputed"``.

Every clip the QA tables name takes part, WAV or not: ``skip_missing_audio`` drops clips *after* the
split, so the others stay where ``clotho-aqa splits`` puts them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from clotho_aqa.options import ClothoAQAOptions
from clotho_aqa.release import SPLIT_CSVS, Question, file_answer_sets, read_questions

# The defaults are the builder config's, declared once there.
_CANDIDATES, _KEEP, _ROUNDS = ClothoAQAOptions.candidates, ClothoAQAOptions.keep, ClothoAQAOptions.refine_rounds


def recompute_splits(questions: list[Question], seed: int = 0, candidates: int = _CANDIDATES, keep: int = _KEEP,
                     progress: bool = False, refine_rounds: int = _ROUNDS):
    """Assign clips to train/validation/test by the stratified 60/20/20 search of :mod:`builder_utils.splits`.

    Labels are each clip's set of answer words, as in the paper. Returns ``(clip -> split, search result)``.

    Example:
        >>> qs = [Question(f"{c}.wav", 0, "Q?", (w, w, w), ("yes",) * 3, "train", 2) for c, w in zip("abcdefghij", "xyxyxyxyxy")]
        >>> assignment, result = recompute_splits(qs, seed=0, candidates=20, keep=4)
        >>> sorted(set(assignment.values()))
        ['test', 'train', 'validation']
    """
    from builder_utils.splits import search_split  # imported late: only this strategy needs it

    file_names, vocabulary, labels = file_answer_sets(questions)
    result = search_split(labels, ratios=(0.6, 0.2, 0.2), candidates=candidates, keep=keep, seed=seed,
                          progress=progress, label_names=vocabulary, refine_rounds=refine_rounds)
    names = list(SPLIT_CSVS)
    assignment = {name: names[int(fold)] for name, fold in zip(file_names, result.folds)}
    return assignment, result


def recompute_release_splits(csv_paths: Mapping[str, str | os.PathLike], seed: int = 0,
                             candidates: int = _CANDIDATES, keep: int = _KEEP, progress: bool = False,
                             refine_rounds: int = _ROUNDS):
    """:func:`recompute_splits` over every clip of a release's QA tables (split name -> CSV path).

    Example::

        assignment, result = recompute_release_splits(find_release_files("release")["csv"])
    """
    return recompute_splits(read_questions(csv_paths), seed=seed, candidates=candidates, keep=keep, progress=progress,
                            refine_rounds=refine_rounds)


def official_label_error(questions: list[Question]) -> float:
    """The label error (:func:`builder_utils.splits.refine.label_error`) of the tables' own split.

    Example:
        >>> qs = [Question(f"{c}.wav", 0, "Q?", ("x",) * 3, ("yes",) * 3, s, 2) for c, s in zip("abcde", ["train"] * 3 + ["validation", "test"])]
        >>> round(official_label_error(qs), 6)
        0.0
    """
    from builder_utils.splits.refine import label_error

    file_names, vocabulary, labels = file_answer_sets(questions)
    split_of = {q.file_name: q.split for q in questions}
    order = list(SPLIT_CSVS)
    folds = [order.index(split_of[name]) for name in file_names]
    return label_error(labels, folds, (0.6, 0.2, 0.2), num_labels=len(vocabulary))
