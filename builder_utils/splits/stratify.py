"""Multilabel iterative stratification (Sechidis, Tsoumakas and Vlahavas, 2011), vectorised.

Repeatedly, the label with the fewest (at least one) unassigned samples hands them, shuffled, to
the fold that still wants most of that label (ties: most samples overall, then at random).

Fast enough for a 2,000-candidate search because a label's block is placed in one sort (handing
m samples one by one is taking the m largest of ``want[f] - k``), and candidates run in lockstep,
one row of state each (a row reads only its own state and draws, so the batch does not matter).
Wanted counts are integers (millionths) so that equal ratios tie exactly, not by float accident.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .labels import LabelMatrix, as_label_matrix, normalise_ratios

__all__ = ["iterative_stratification", "stratify_batch", "seed_sequence"]

_SCALE = 1_000_000
_INACTIVE = np.iinfo(np.int64).max // 2
_NOISE = 2**16
_KEY_LIMIT = 2**62


def seed_sequence(seed) -> np.random.SeedSequence:
    """Turn an int seed (or an existing SeedSequence) into a SeedSequence.

    Example:
        >>> seed_sequence(0).entropy
        0
    """
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: expected a non-negative int or a numpy SeedSequence, got {seed!r}")
    return np.random.SeedSequence(int(seed))


def integer_weights(ratios: np.ndarray) -> np.ndarray:
    """Fold ratios in integer units; equal ratios get equal weights.

    Example:
        >>> integer_weights(np.array([0.6, 0.4])).tolist()
        [600000, 400000]
    """
    return np.maximum(1, np.rint(ratios * _SCALE)).astype(np.int64)


def iterative_stratification(labels, ratios=(0.5, 0.5), seed=0, num_labels: int | None = None) -> np.ndarray:
    """Split samples into folds with label proportions close to ``ratios``.

    Returns the fold index of every sample. As in the ``iterative-stratification`` package, the
    wanted fold sizes only break ties, so sizes land near, not on, the ratios.

    Example:
        >>> folds = iterative_stratification([[0], [0], [1], [1], [0, 1]], ratios=(0.6, 0.4), seed=0)
        >>> folds.shape, sorted(set(folds.tolist()))
        ((5,), [0, 1])
    """
    matrix = as_label_matrix(labels, num_labels)
    folds = stratify_batch(matrix, ratios, [seed_sequence(seed)])
    return folds[0].astype(np.int64)


@dataclass
class _Batch:
    """Per-candidate state of a lockstep run; row c belongs to candidate c only."""

    sample_rank: np.ndarray  # (C, n) processing order of samples within a block
    fold_noise: np.ndarray  # (C, n, F) last-resort tie break between folds, ints below _NOISE
    want_label: np.ndarray  # (C, L+1, F) wanted samples of each label per fold, integer units
    want_size: np.ndarray  # (C, F) wanted samples per fold, integer units
    key: np.ndarray  # (C, L+1) remaining * (L+1) + random rank; _INACTIVE when nothing remains
    unassigned: np.ndarray  # (C, n) active samples without a fold yet
    folds: np.ndarray  # (C, n) fold per sample, -1 while unassigned or outside the subset
    unit: int


def stratify_batch(matrix: LabelMatrix, ratios, seeds, active: np.ndarray | None = None) -> np.ndarray:
    """Run iterative stratification for several seeds at once; one row of folds per seed.

    ``active`` (a bool row per seed) restricts each run to a subset (others: fold -1); row c
    equals ``iterative_stratification`` with ``seeds[c]`` whatever the other rows are.

    Example:
        >>> m = as_label_matrix([[0], [0], [1], [1]])
        >>> stratify_batch(m, (0.5, 0.5), [np.random.SeedSequence(s) for s in (1, 2)]).shape
        (2, 4)
    """
    ratios = normalise_ratios(ratios)
    weights = integer_weights(ratios)
    seeds = list(seeds)
    n = matrix.num_samples
    if active is None:
        active = np.ones((len(seeds), n), dtype=bool)
    active = np.asarray(active, dtype=bool)
    if active.shape != (len(seeds), n):
        raise ValueError(f"active: expected shape {(len(seeds), n)}, got {active.shape}")
    if not seeds:
        return np.zeros((0, n), dtype=np.int8)
    batch = _start(matrix, weights, seeds, active)
    _place_label_blocks(matrix, batch)
    leftover_cand, leftover_samp = np.nonzero(batch.unassigned)
    if len(leftover_cand):
        # Samples with no label: only the wanted fold sizes decide, so they stand in for the pull.
        _place(matrix, batch, leftover_cand, leftover_samp, batch.want_size[leftover_cand])
    return batch.folds.astype(np.int8 if len(weights) < 128 else np.int64)


def _start(matrix: LabelMatrix, weights: np.ndarray, seeds, active: np.ndarray) -> _Batch:
    n, num_labels, n_folds = matrix.num_samples, matrix.num_labels, len(weights)
    sample_rank = np.empty((len(seeds), n), dtype=np.int64)
    label_rank = np.empty((len(seeds), num_labels + 1), dtype=np.int64)
    fold_noise = np.empty((len(seeds), n, n_folds), dtype=np.int64)
    for row, seed in enumerate(seeds):
        rng = np.random.default_rng(seed)
        sample_rank[row] = rng.permutation(n)
        label_rank[row, :num_labels] = rng.permutation(num_labels)
        fold_noise[row] = rng.integers(0, _NOISE, (n, n_folds))
    label_rank[:, num_labels] = 0
    width = num_labels + 1
    if active.all():
        counts = np.broadcast_to(np.append(matrix.counts, 0), (len(seeds), width)).copy()
    else:
        cand, samp = np.nonzero(active)
        slots = (cand[:, None] * width + matrix.padded[samp]).ravel()
        counts = np.bincount(slots, minlength=len(seeds) * width).reshape(len(seeds), width)
        counts[:, num_labels] = 0
    key = counts * width + label_rank
    key[counts == 0] = _INACTIVE
    return _Batch(
        sample_rank=sample_rank,
        fold_noise=fold_noise,
        want_label=counts[:, :, None] * weights,
        want_size=active.sum(axis=1)[:, None] * weights,
        key=key,
        unassigned=active.copy(),
        folds=np.full((len(seeds), n), -1, dtype=np.int64),
        unit=int(weights.sum()),
    )


def _place_label_blocks(matrix: LabelMatrix, batch: _Batch) -> None:
    rows = np.arange(len(batch.key))
    while True:
        chosen = batch.key.argmin(axis=1)
        live = batch.key[rows, chosen] < _INACTIVE // 2
        if not live.any():
            return
        cand = np.flatnonzero(live)
        label = chosen[cand]
        starts = matrix.label_ptr[label]
        lengths = matrix.label_ptr[label + 1] - starts
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        samp = matrix.label_rows[np.repeat(starts, lengths) + offsets]
        cand = np.repeat(cand, lengths)
        label = np.repeat(label, lengths)
        todo = batch.unassigned[cand, samp]
        cand, samp, label = cand[todo], samp[todo], label[todo]
        _place(matrix, batch, cand, samp, batch.want_label[cand, label])


def _place(matrix: LabelMatrix, batch: _Batch, cand, samp, label_pull) -> None:
    """Assign one block of samples per candidate, as the one-by-one greedy would.

    ``label_pull[j, f]``: how many samples of the block's label fold f still wants.
    """
    n_folds = label_pull.shape[1]
    if len(cand) == 0:
        return
    order = np.argsort(cand * matrix.num_samples + batch.sample_rank[cand, samp], kind="stable")
    cand, samp, label_pull = cand[order], samp[order], label_pull[order]
    first = np.flatnonzero(np.r_[True, cand[1:] != cand[:-1]])
    group = np.repeat(np.arange(len(first)), np.diff(np.r_[first, len(cand)]))
    step = np.arange(len(cand)) - first[group]
    # Option (j, f) is "the step-th sample this fold receives": what it still wants then.
    taken = step[:, None] * batch.unit
    by_label = label_pull - taken
    by_size = batch.want_size[cand] - taken
    noise = batch.fold_noise[cand, samp]
    ranking = _rank_options(np.repeat(group, n_folds), by_label.ravel(), by_size.ravel(), noise.ravel())
    fold = ranking[n_folds * first[group] + step] % n_folds

    batch.folds[cand, samp] = fold
    batch.unassigned[cand, samp] = False
    width = matrix.num_labels + 1
    slots = cand[:, None] * width + matrix.padded[samp]
    np.subtract.at(batch.want_label.reshape(-1), (slots * n_folds + fold[:, None]).ravel(), batch.unit)
    np.subtract.at(batch.want_size.reshape(-1), cand * n_folds + fold, batch.unit)
    key = batch.key.reshape(-1)
    slots = slots.ravel()
    np.subtract.at(key, slots, width)
    key[slots[key[slots] < width]] = _INACTIVE


def _rank_options(group, by_label, by_size, noise) -> np.ndarray:
    """Order of options by group, then most wanted by label, by size, then noise.

    Two stable argsorts over packed keys are several times faster than a four-key lexsort (kept
    for ranges that would not fit).
    """
    label_span = int(by_label.max()) - int(by_label.min()) + 1
    size_span = int(by_size.max()) - int(by_size.min()) + 1
    groups = int(group[-1]) + 1
    if groups * label_span >= _KEY_LIMIT or size_span * _NOISE >= _KEY_LIMIT:
        return np.lexsort((noise, -by_size, -by_label, group))
    low = (by_size.max() - by_size) * _NOISE + noise
    high = group * label_span + (by_label.max() - by_label)
    first = np.argsort(low, kind="stable")
    return first[np.argsort(high[first], kind="stable")]
