"""Normalising multilabel inputs and split ratios.

One internal form, :class:`LabelMatrix`, built once and reused for every candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["LabelMatrix", "as_label_matrix", "normalise_ratios"]


@dataclass(frozen=True)
class LabelMatrix:
    """A binary sample-by-label matrix in the two sparse layouts the stratifier needs.

    ``padded[s]``: sample s's labels, filled with ``num_labels`` (for per-sample updates);
    ``label_rows[label_ptr[l]:label_ptr[l + 1]]``: label l's samples (for per-label blocks),
    ``label_ptr`` one entry longer so the filler label has an empty slice.

    Example:
        >>> m = as_label_matrix([[0, 2], [2], []])
        >>> m.num_samples, m.num_labels, m.counts.tolist()
        (3, 3, [1, 0, 2])
    """

    num_samples: int
    num_labels: int
    padded: np.ndarray
    label_ptr: np.ndarray
    label_rows: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_pairs(cls, rows: np.ndarray, cols: np.ndarray, num_samples: int, num_labels: int) -> "LabelMatrix":
        """Build from unique (sample, label) pairs sorted by sample then label.

        Example:
            >>> LabelMatrix.from_pairs(np.array([0, 1]), np.array([1, 0]), 2, 2).padded.tolist()
            [[1], [0]]
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        per_sample = np.bincount(rows, minlength=num_samples)
        width = max(1, int(per_sample.max(initial=0)))
        padded = np.full((num_samples, width), num_labels, dtype=np.int64)
        first = np.cumsum(per_sample) - per_sample
        padded[rows, np.arange(len(rows)) - first[rows]] = cols
        by_label = np.argsort(cols, kind="stable")
        counts = np.bincount(cols, minlength=num_labels)
        label_ptr = np.zeros(num_labels + 2, dtype=np.int64)
        np.cumsum(counts, out=label_ptr[1 : num_labels + 1])
        label_ptr[-1] = label_ptr[-2]
        return cls(num_samples, num_labels, padded, label_ptr, rows[by_label], counts)

    def dense(self) -> np.ndarray:
        """The matrix as a dense bool array (samples x labels).

        Example:
            >>> as_label_matrix([[1], [0, 1]]).dense().astype(int).tolist()
            [[0, 1], [1, 1]]
        """
        out = np.zeros((self.num_samples, self.num_labels + 1), dtype=bool)
        out[np.arange(self.num_samples)[:, None], self.padded] = True
        return out[:, : self.num_labels]


def as_label_matrix(labels, num_labels: int | None = None) -> LabelMatrix:
    """Normalise a dense or sparse multilabel input to a :class:`LabelMatrix`.

    A 2-D numpy array is the dense 0/1 form; any other sequence (a list of lists too) holds each
    sample's label indices. ``num_labels`` widens the sparse form to labels no sample carries.

    Example:
        >>> import numpy as np
        >>> dense = np.array([[1, 0, 1], [0, 0, 1]])
        >>> as_label_matrix(dense).padded.tolist() == as_label_matrix([[0, 2], [2]]).padded.tolist()
        True
    """
    if isinstance(labels, LabelMatrix):
        if num_labels is not None and num_labels != labels.num_labels:
            raise ValueError(f"labels: {labels.num_labels} labels, but num_labels={num_labels}")
        return labels
    if isinstance(labels, np.ndarray) and labels.ndim == 2:
        return _from_dense(labels, num_labels)
    if isinstance(labels, np.ndarray) and labels.dtype != object:
        raise ValueError(
            f"labels: a numpy array must be a 2-D samples x labels matrix, got shape {labels.shape}; "
            "pass per-sample label-index lists as a Python list"
        )
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence | np.ndarray):
        raise TypeError(
            "labels: expected a 2-D 0/1 numpy array or a sequence of per-sample label-index "
            f"lists, got {type(labels).__name__}"
        )
    return _from_sparse(labels, num_labels)


def _from_dense(matrix: np.ndarray, num_labels: int | None) -> LabelMatrix:
    if num_labels is not None and num_labels != matrix.shape[1]:
        raise ValueError(f"labels: the matrix has {matrix.shape[1]} columns, but num_labels={num_labels}")
    if matrix.dtype != bool:
        if not np.issubdtype(matrix.dtype, np.number):
            raise TypeError(f"labels: the matrix must be bool or numeric 0/1, got dtype {matrix.dtype}")
        bad = np.argwhere((matrix != 0) & (matrix != 1))
        if len(bad):
            row, col = (int(v) for v in bad[0])
            raise ValueError(
                f"labels: the matrix must hold only 0/1 values; found {matrix[row, col].item()!r} "
                f"at row {row}, column {col}"
            )
    rows, cols = np.nonzero(matrix)
    return LabelMatrix.from_pairs(rows, cols, matrix.shape[0], matrix.shape[1])


def _from_sparse(rows_in, num_labels: int | None) -> LabelMatrix:
    arrays = []
    for sample, row in enumerate(rows_in):
        if isinstance(row, (str, bytes)):
            raise TypeError(f"labels: sample {sample} is a string; give label indices (ints), not names")
        values = np.asarray(row if isinstance(row, np.ndarray) else list(row))
        if values.size == 0:
            arrays.append(np.zeros(0, dtype=np.int64))
            continue
        if values.ndim != 1:
            raise ValueError(f"labels: sample {sample} must be a flat list of label indices, got shape {values.shape}")
        if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
            raise TypeError(
                f"labels: sample {sample} holds {values.dtype} values; label indices must be integers"
            )
        if values.min() < 0:
            raise ValueError(f"labels: sample {sample} has a negative label index {int(values.min())}")
        if num_labels is not None and values.max() >= num_labels:
            raise ValueError(
                f"labels: sample {sample} has label index {int(values.max())}, but num_labels={num_labels}"
            )
        arrays.append(np.unique(values.astype(np.int64)))
    lengths = np.array([len(a) for a in arrays], dtype=np.int64)
    cols = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    if num_labels is None:
        num_labels = int(cols.max()) + 1 if len(cols) else 0
    rows = np.repeat(np.arange(len(arrays), dtype=np.int64), lengths)
    return LabelMatrix.from_pairs(rows, cols, len(arrays), num_labels)


def normalise_ratios(ratios) -> np.ndarray:
    """Validate fold ratios and scale them to sum to 1.

    Example:
        >>> normalise_ratios((3, 1)).tolist()
        [0.75, 0.25]
    """
    values = np.asarray(ratios, dtype=float)
    if values.ndim != 1 or len(values) < 2:
        raise ValueError(f"ratios: need at least two fold ratios, got {ratios!r}")
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ValueError(f"ratios: every fold ratio must be a positive number, got {ratios!r}")
    return values / values.sum()
