"""Scoring model answers: predictions in, answers extracted, accuracy with intervals, reports out.

Dataset-agnostic parts only; which columns, categories and baselines a dataset has lives in its
own ``evaluate`` module (``clevr_math.evaluate``, ``clotho_aqa.evaluate``,
``builder_utils.clevr.evaluate`` for the classic CLEVR families).

Example:
    >>> from builder_utils.evaluation import extract, score, summarize
    >>> items = [score([extract("Answer: 3", "integer")], "3"), score([extract("four", "integer")], "3")]
    >>> summarize(items)["accuracy"]
    0.5
"""

from builder_utils.lazy import lazy_exports

# Imported on first use (builder_utils/lazy.py): ``extract``, ``accuracy`` and ``spec`` need no
# ``datasets`` (the lmms-eval tasks and rewards import them alone); ``data`` does.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(["Scored", "bootstrap_interval", "score", "summarize", "summarize_groups"],
                    "builder_utils.evaluation.accuracy"),
    **dict.fromkeys(["answer_prior", "back_off", "majority_answer"], "builder_utils.evaluation.baselines"),
    **dict.fromkeys(["EvaluationError", "load_splits"], "builder_utils.evaluation.data"),
    **dict.fromkeys(["answer_span", "extract", "extract_integer", "extract_ranked", "extract_word", "extract_yes_no"],
                    "builder_utils.evaluation.extract"),
    **dict.fromkeys(["PredictionsError", "read_predictions"], "builder_utils.evaluation.predictions"),
})
