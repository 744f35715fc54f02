"""The Clotho-AQA paper's two-stage split search over iterative stratification.

Stage 1: ``candidates`` train-vs-rest splits, the ``keep`` best kept; stage 2 splits each rest
over the remaining ratios; ranked by the constraint, then allocation error, then candidate number.
``SeedSequence(seed).spawn(2)`` gives one root per stage and candidate i uses child i of each, so
its splits do not depend on how many candidates there are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from tqdm.auto import tqdm

from .allocation import _deviations, _label_names, constraint_violations, fold_label_counts
from .labels import LabelMatrix, as_label_matrix, normalise_ratios
from .refine import label_error, label_error_floor, refine_split
from .stratify import seed_sequence, stratify_batch

__all__ = ["SplitSearchResult", "search_split", "stage_seeds", "default_split_names", "LABEL_ERROR_MEASURE"]

LABEL_ERROR_MEASURE = (
    "label error: for every answer, how far its clip counts in train/validation/test are from 60/20/20 of "
    "its clips, as a share of its clips (sum over the splits of |count - target| / clips), summed over the "
    "answers; 0 is perfect, and label_error_floor is the least any split can reach under the constraint"
)

# Candidates per lockstep batch: large enough to amortise numpy's per-call cost, small enough
# that the per-candidate state stays in cache on Clotho-sized inputs and in memory on big ones.
_BATCH = 256
_BATCH_BYTES = 64 * 2**20


def _batch_size(matrix: LabelMatrix, n_folds: int) -> int:
    per_candidate = matrix.num_samples * (8 * n_folds + 32) + (matrix.num_labels + 1) * (8 * n_folds + 16)
    return max(1, min(_BATCH, _BATCH_BYTES // per_candidate))


def default_split_names(n_folds: int) -> tuple[str, ...]:
    """Names of the folds in reports: train/validation/test for three folds.

    Example:
        >>> default_split_names(2)
        ('train', 'test')
    """
    if n_folds == 3:
        return ("train", "validation", "test")
    if n_folds == 2:
        return ("train", "test")
    return ("train",) + tuple(f"fold{i}" for i in range(1, n_folds))


def stage_seeds(seed, candidates: int) -> tuple[list, list]:
    """Per-candidate SeedSequences of the first and the second stage.

    Example:
        >>> first, second = stage_seeds(0, 3)
        >>> len(first), len(second)
        (3, 3)
    """
    first_root, second_root = seed_sequence(seed).spawn(2)
    return first_root.spawn(candidates), second_root.spawn(candidates)


@dataclass
class SplitSearchResult:
    """The chosen split of :func:`search_split` and what it took to find it.

    ``violations`` names every label breaking the constraint (empty when it holds).
    """

    folds: np.ndarray
    error: float
    label_deviation: float
    size_deviation: float
    violations: list
    ratios: tuple[float, ...]
    seed: int | None
    candidates: int
    keep: int
    chosen_candidate: int
    first_stage: dict
    second_stage: dict
    split_names: tuple[str, ...]
    label_names: list = field(repr=False)
    label_counts: np.ndarray = field(repr=False)
    label_error: float = 0.0
    label_error_floor: float = 0.0
    refined: dict | None = None

    def report(self) -> dict:
        """A JSON-able summary: sizes, error, both stages, constraint check, per-label counts.

        Example:
            >>> result = search_split([[0], [0], [0, 1], [1], [1]], candidates=4, keep=2, progress=False)
            >>> sorted(result.report())[:4]
            ['allocation_error', 'candidates', 'chosen_candidate', 'constraint']
        """
        names = self.split_names
        sizes = np.bincount(self.folds, minlength=len(names))
        present = self.label_counts > 0
        totals = self.label_counts.sum(axis=1)
        labels = []
        for label in np.flatnonzero(totals):
            row = {"label": self.label_names[label], "total": int(totals[label])}
            row.update({name: int(self.label_counts[label, f]) for f, name in enumerate(names)})
            labels.append(row)
        return {
            "ratios": dict(zip(names, (round(r, 6) for r in self.ratios))),
            "seed": self.seed,
            "candidates": self.candidates,
            "keep": self.keep,
            "chosen_candidate": self.chosen_candidate,
            "metric": "label_deviation + size_deviation (L1 distances of label and fold shares from the ratios)",
            "allocation_error": round(self.error, 6),
            "label_error_measure": LABEL_ERROR_MEASURE,
            "label_error": round(self.label_error, 6),
            "label_error_floor": round(self.label_error_floor, 6),
            "refine": self.refined,
            "label_deviation": round(self.label_deviation, 6),
            "size_deviation": round(self.size_deviation, 6),
            "sizes": {name: int(sizes[f]) for f, name in enumerate(names)},
            "unique_labels": {name: int(present[:, f].sum()) for f, name in enumerate(names)},
            "first_stage": self.first_stage,
            "second_stage": self.second_stage,
            "constraint": {
                "rule": f"every label with at least 2 samples is in {names[0]} and in "
                + " or ".join(names[1:]),
                "labels_checked": int((totals >= 2).sum()),
                "satisfied": not self.violations,
                "violations": list(self.violations),
            },
            "labels": labels,
        }


def search_split(
    labels,
    ratios=(0.6, 0.2, 0.2),
    candidates: int = 2000,
    keep: int = 50,
    seed=0,
    progress: bool = True,
    label_names=None,
    num_labels: int | None = None,
    refine_rounds: int = 0,
) -> SplitSearchResult:
    """Find a train/validation/test split by the paper's two-stage stratified search.

    Violations are reported in ``result.violations``, never dropped silently. ``refine_rounds``
    > 0 then runs :func:`~builder_utils.splits.refine.refine_split`, its draws from a third child
    of the seed, so stages 1 and 2 are unchanged.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> labels = [rng.choice(12, size=3, replace=False) for _ in range(60)]
        >>> result = search_split(labels, candidates=20, keep=5, seed=1, progress=False)
        >>> np.bincount(result.folds).tolist(), result.violations
        ([36, 12, 12], [])
    """
    matrix = as_label_matrix(labels, num_labels)
    names = _label_names(matrix, label_names)
    ratios = normalise_ratios(ratios)
    if not isinstance(candidates, (int, np.integer)) or candidates < 1:
        raise ValueError(f"candidates: expected a positive int, got {candidates!r}")
    if not isinstance(keep, (int, np.integer)) or not 1 <= keep:
        raise ValueError(f"keep: expected a positive int, got {keep!r}")
    if matrix.num_samples < len(ratios):
        raise ValueError(f"labels: {matrix.num_samples} samples cannot fill {len(ratios)} folds")
    candidates = int(candidates)
    keep = min(int(keep), candidates)
    first_seeds, second_seeds = stage_seeds(seed, candidates)
    first_ratios = np.array([ratios[0], ratios[1:].sum()])
    rest_ratios = ratios[1:]
    bar = tqdm(total=candidates + keep, desc="split search", unit="split", disable=not progress)
    try:
        first_error = np.empty(candidates)
        first_bad = np.empty(candidates, dtype=np.int64)
        step = _batch_size(matrix, len(ratios))
        for start in range(0, candidates, step):
            stop = min(start + step, candidates)
            folds = stratify_batch(matrix, first_ratios, first_seeds[start:stop])
            counts, sizes = fold_label_counts(matrix, folds, 2)
            label_dev, size_dev = _deviations(counts, sizes, first_ratios)
            first_error[start:stop] = label_dev + size_dev
            first_bad[start:stop] = constraint_violations(counts).sum(axis=1)
            bar.update(stop - start)
        kept = np.lexsort((np.arange(candidates), first_error, first_bad))[:keep]

        final_error = np.empty(keep)
        final_bad = np.empty(keep, dtype=np.int64)
        best = None
        for start in range(0, keep, step):
            ids = kept[start : start + step]
            # Only scores were kept from stage 1; the kept splits are cheaper to redo than to store.
            final = stratify_batch(matrix, first_ratios, [first_seeds[i] for i in ids])
            if len(rest_ratios) > 1:
                rest = final == 1
                second = stratify_batch(matrix, rest_ratios, [second_seeds[i] for i in ids], active=rest)
                final[rest] = 1 + second[rest]
            counts, sizes = fold_label_counts(matrix, final, len(ratios))
            label_dev, size_dev = _deviations(counts, sizes, ratios)
            final_error[start : start + len(ids)] = label_dev + size_dev
            final_bad[start : start + len(ids)] = constraint_violations(counts).sum(axis=1)
            for row, candidate in enumerate(ids):
                rank = (final_bad[start + row], final_error[start + row], candidate)
                if best is None or rank < best[0]:
                    best = (rank, final[row].astype(np.int64), counts[row], label_dev[row], size_dev[row])
            bar.update(len(ids))
    finally:
        bar.close()

    (bad, error, chosen), folds, label_counts, label_dev, size_dev = best
    refined = None
    if refine_rounds:
        start_error = label_error(matrix, folds, ratios)
        refined = refine_split(matrix, folds, ratios, rounds=refine_rounds, seed=_child(seed_sequence(seed), 2))
        folds = refined.folds
        label_counts = fold_label_counts(matrix, folds[None], len(ratios))[0][0]
        label_dev, size_dev = (float(v[0]) for v in _deviations(label_counts[None], np.bincount(folds, minlength=len(ratios))[None], ratios))
        error = label_dev + size_dev
        refined = {"rounds": int(refine_rounds), "label_error_before": round(start_error, 6),
                   "moves": refined.moves, "swaps": refined.swaps}
    violating = np.flatnonzero(constraint_violations(label_counts[None])[0])
    return SplitSearchResult(
        folds=folds,
        error=float(error),
        label_deviation=float(label_dev),
        size_deviation=float(size_dev),
        violations=[names[i] for i in violating],
        ratios=tuple(float(r) for r in ratios),
        seed=int(seed) if not isinstance(seed, np.random.SeedSequence) else None,
        candidates=candidates,
        keep=keep,
        chosen_candidate=int(chosen),
        first_stage=_stage_stats(first_error, first_bad, kept),
        second_stage=_stage_stats(final_error, final_bad, np.arange(keep)),
        split_names=default_split_names(len(ratios)),
        label_names=names,
        label_counts=label_counts,
        label_error=float(_per_label_sum(label_counts, ratios)),
        label_error_floor=label_error_floor(matrix, ratios),
        refined=refined,
    )


def _child(root: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    # Child ``index`` of ``root`` as spawn() would make it, without advancing root's spawn counter.
    return np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, index), pool_size=root.pool_size)


def _per_label_sum(label_counts: np.ndarray, ratios: np.ndarray) -> float:
    totals = label_counts.sum(axis=1)
    present = totals > 0
    return float((np.abs(label_counts[present] - ratios * totals[present, None]).sum(axis=1) / totals[present]).sum())


def _stage_stats(errors: np.ndarray, violating_labels: np.ndarray, kept: np.ndarray) -> dict:
    return {
        "splits": int(len(errors)),
        "meeting_constraint": int((violating_labels == 0).sum()),
        "error_min": round(float(errors.min()), 6),
        "error_median": round(float(np.median(errors)), 6),
        "error_max": round(float(errors.max()), 6),
        "kept": int(len(kept)),
        "kept_error_max": round(float(errors[kept].max()), 6),
    }
