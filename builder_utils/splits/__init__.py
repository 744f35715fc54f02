"""Multilabel stratified splits: iterative stratification, allocation error, two-stage search (README.md)."""

from builder_utils.lazy import lazy_exports

# Imported on first use (builder_utils/lazy.py): a command that only reads a default of the
# search (``clotho-aqa splits --help``) does not pay for numpy.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(["allocation_error", "allocation_table", "batch_allocation_errors", "constraint_violations"],
                    "builder_utils.splits.allocation"),
    **dict.fromkeys(["LabelMatrix", "as_label_matrix", "normalise_ratios"], "builder_utils.splits.labels"),
    **dict.fromkeys(["RefineResult", "label_error", "label_error_floor", "refine_split", "target_sizes"],
                    "builder_utils.splits.refine"),
    **dict.fromkeys(["SplitSearchResult", "search_split", "stage_seeds"], "builder_utils.splits.search"),
    **dict.fromkeys(["iterative_stratification", "stratify_batch"], "builder_utils.splits.stratify"),
})
