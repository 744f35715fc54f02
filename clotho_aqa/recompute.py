"""The recomputed 60/20/20 split: one rule for ``clotho-aqa splits`` and ``split_strategy="recomputed"``.

The split is a property of the release's QA tables alone: every clip the tables name takes
part in the search, whether or not its WAV is present. A build with ``skip_missing_audio=True``
drops the questions of missing clips *after* the split is chosen, so the clips that remain are
in the same split as in ``clotho-aqa splits``' file.

Example::

    assignment, result = recompute_release_splits(find_release_files("release")["csv"], seed=0)
    assignment["river_mouth3.wav"]    # -> "train"
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from clotho_aqa.release import SPLIT_CSVS, Question, file_answer_sets, read_questions


def recompute_splits(questions: list[Question], seed: int = 0, candidates: int = 2000, keep: int = 50,
                     progress: bool = False):
    """Assign clips to train/validation/test by the stratified 60/20/20 search of :mod:`builder_utils.splits`.

    Labels are each clip's set of answer words (yes/no included), as in the paper. Returns
    ``(clip name -> split name, search result)``.

    Example:
        >>> qs = [Question(f"{c}.wav", 0, "Q?", (w, w, w), ("yes",) * 3, "train", 2) for c, w in zip("abcdefghij", "xyxyxyxyxy")]
        >>> assignment, result = recompute_splits(qs, seed=0, candidates=20, keep=4)
        >>> sorted(set(assignment.values()))
        ['test', 'train', 'validation']
    """
    from builder_utils.splits import search_split  # imported late: only this strategy needs it

    file_names, vocabulary, labels = file_answer_sets(questions)
    result = search_split(labels, ratios=(0.6, 0.2, 0.2), candidates=candidates, keep=keep, seed=seed,
                          progress=progress, label_names=vocabulary)
    names = list(SPLIT_CSVS)
    assignment = {name: names[int(fold)] for name, fold in zip(file_names, result.folds)}
    return assignment, result


def recompute_release_splits(csv_paths: Mapping[str, str | os.PathLike], seed: int = 0, candidates: int = 2000,
                             keep: int = 50, progress: bool = False):
    """:func:`recompute_splits` over every clip of a release's QA tables (split name -> CSV path).

    Example::

        assignment, result = recompute_release_splits(find_release_files("release")["csv"])
    """
    return recompute_splits(read_questions(csv_paths), seed=seed, candidates=candidates, keep=keep, progress=progress)
