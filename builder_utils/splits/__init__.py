"""Multilabel stratified splits: iterative stratification, allocation error, two-stage search.

Example:
    >>> from builder_utils.splits import iterative_stratification, allocation_error
    >>> labels = [[0], [0], [0, 1], [1], [1], [2], [2]]
    >>> folds = iterative_stratification(labels, ratios=(0.6, 0.4), seed=0)
    >>> round(allocation_error(labels, folds, (0.6, 0.4)), 3) < 1
    True
"""

from .allocation import allocation_error, allocation_table, batch_allocation_errors, constraint_violations
from .labels import LabelMatrix, as_label_matrix, normalise_ratios
from .refine import RefineResult, label_error, label_error_floor, refine_split, target_sizes
from .search import SplitSearchResult, search_split, stage_seeds
from .stratify import iterative_stratification, stratify_batch

__all__ = [
    "LabelMatrix",
    "RefineResult",
    "SplitSearchResult",
    "allocation_error",
    "allocation_table",
    "as_label_matrix",
    "batch_allocation_errors",
    "constraint_violations",
    "iterative_stratification",
    "label_error",
    "label_error_floor",
    "normalise_ratios",
    "refine_split",
    "search_split",
    "stage_seeds",
    "stratify_batch",
    "target_sizes",
]
