"""How far a split is from its target ratios: the allocation error and the per-label table.

The formula and the constraint: builder_utils/splits/README.md. Every label weighs the same,
whatever its frequency, because rare answers are the ones a split most easily starves.
"""

from __future__ import annotations

import numpy as np

from .labels import LabelMatrix, as_label_matrix, normalise_ratios

__all__ = [
    "allocation_error",
    "allocation_table",
    "fold_label_counts",
    "batch_allocation_errors",
    "constraint_violations",
]


def _check_folds(matrix: LabelMatrix, folds, n_folds: int) -> np.ndarray:
    folds = np.asarray(folds)
    if folds.ndim != 1 or len(folds) != matrix.num_samples:
        raise ValueError(f"folds: expected one fold index per sample ({matrix.num_samples}), got shape {folds.shape}")
    if folds.size and not np.issubdtype(folds.dtype, np.integer):
        raise TypeError(f"folds: fold indices must be integers, got dtype {folds.dtype}")
    bad = np.flatnonzero((folds < 0) | (folds >= n_folds))
    if len(bad):
        raise ValueError(
            f"folds: sample {int(bad[0])} has fold {int(folds[bad[0]])}, outside 0..{n_folds - 1} "
            f"(there are {n_folds} ratios)"
        )
    return folds.astype(np.int64)


def fold_label_counts(matrix: LabelMatrix, folds: np.ndarray, n_folds: int) -> tuple[np.ndarray, np.ndarray]:
    """Samples per (split, label, fold) and per (split, fold); fold -1: a sample left out.

    Example:
        >>> m = as_label_matrix([[0], [0, 1]])
        >>> labels, sizes = fold_label_counts(m, np.array([[0, 1]]), 2)
        >>> labels[0].tolist(), sizes[0].tolist()
        ([[1, 1], [0, 1]], [1, 1])
    """
    folds = np.atleast_2d(np.asarray(folds, dtype=np.int64))
    n_splits = len(folds)
    width = matrix.num_labels + 1
    split, samp = np.nonzero(folds >= 0)
    fold = folds[split, samp]
    slots = ((split[:, None] * width + matrix.padded[samp]) * n_folds + fold[:, None]).ravel()
    labels = np.bincount(slots, minlength=n_splits * width * n_folds).reshape(n_splits, width, n_folds)
    sizes = np.bincount(split * n_folds + fold, minlength=n_splits * n_folds).reshape(n_splits, n_folds)
    return labels[:, : matrix.num_labels], sizes


def _deviations(label_counts: np.ndarray, sizes: np.ndarray, ratios: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Label and size deviation per split, from the counts of :func:`fold_label_counts`."""
    totals = label_counts.sum(axis=2)
    present = totals > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        shares = label_counts / totals[..., None]
    per_label = np.where(present, np.abs(shares - ratios).sum(axis=2), 0.0)
    n_present = present.sum(axis=1)
    label_dev = np.divide(per_label.sum(axis=1), n_present, out=np.zeros(len(sizes)), where=n_present > 0)
    n = sizes.sum(axis=1, keepdims=True)
    size_dev = np.abs(np.divide(sizes, n, out=np.zeros(sizes.shape), where=n > 0) - ratios).sum(axis=1)
    return label_dev, size_dev


def batch_allocation_errors(matrix: LabelMatrix, folds: np.ndarray, ratios) -> tuple[np.ndarray, np.ndarray]:
    """Label deviation and size deviation of each row of ``folds`` (samples with fold -1 left out).

    Example:
        >>> m = as_label_matrix([[0], [0]])
        >>> label_dev, size_dev = batch_allocation_errors(m, np.array([[0, 1], [0, 0]]), (0.5, 0.5))
        >>> label_dev.tolist(), size_dev.tolist()
        ([0.0, 1.0], [0.0, 1.0])
    """
    ratios = normalise_ratios(ratios)
    label_counts, sizes = fold_label_counts(matrix, folds, len(ratios))
    return _deviations(label_counts, sizes, ratios)


def allocation_error(labels, folds, ratios, num_labels: int | None = None) -> float:
    """The allocation error of a split (see the module docstring); 0 is perfect.

    Example:
        >>> allocation_error([[0], [0], [1], [1]], [0, 0, 1, 1], (0.5, 0.5))
        1.0
    """
    matrix = as_label_matrix(labels, num_labels)
    ratios = normalise_ratios(ratios)
    folds = _check_folds(matrix, folds, len(ratios))
    label_dev, size_dev = batch_allocation_errors(matrix, folds[None, :], ratios)
    return float(label_dev[0] + size_dev[0])


def allocation_table(labels, folds, ratios, label_names=None, num_labels: int | None = None) -> list[dict]:
    """One JSON-able row per label with at least one sample: counts per fold, targets, deviation.

    ``deviation`` is the label's term of the allocation error.

    Example:
        >>> allocation_table([[0], [0, 1]], [0, 1], (0.5, 0.5), label_names=["yes", "rain"])[1]
        {'label': 'rain', 'total': 1, 'counts': [0, 1], 'targets': [0.5, 0.5], 'deviation': 1.0}
    """
    matrix = as_label_matrix(labels, num_labels)
    names = _label_names(matrix, label_names)
    ratios = normalise_ratios(ratios)
    folds = _check_folds(matrix, folds, len(ratios))
    counts = fold_label_counts(matrix, folds[None, :], len(ratios))[0][0]
    rows = []
    for label in np.flatnonzero(matrix.counts):
        total = int(matrix.counts[label])
        rows.append(
            {
                "label": names[label],
                "total": total,
                "counts": counts[label].tolist(),
                "targets": [round(float(r * total), 6) for r in ratios],
                "deviation": round(float(np.abs(counts[label] / total - ratios).sum()), 6),
            }
        )
    return rows


def constraint_violations(label_counts: np.ndarray) -> np.ndarray:
    """Bool mask of labels breaking the search constraint, per split.

    A label with at least two samples violates when fold 0 has none of them or all of them.

    Example:
        >>> constraint_violations(np.array([[[2, 0], [1, 1], [1, 0]]])).tolist()
        [[True, False, False]]
    """
    totals = label_counts.sum(axis=2)
    first = label_counts[:, :, 0]
    return (totals >= 2) & ((first == 0) | (first == totals))


def _label_names(matrix: LabelMatrix, label_names) -> list:
    if label_names is None:
        return list(range(matrix.num_labels))
    names = list(label_names)
    if len(names) != matrix.num_labels:
        raise ValueError(f"label_names: {len(names)} names for {matrix.num_labels} labels")
    return names
