"""Scoring model answers: predictions in, answers extracted, accuracy with intervals, reports out (README.md).

Example:
    >>> from builder_utils.evaluation import extract_ranked, score, summarize
    >>> items = [score(extract_ranked("Answer: 3", "integer"), "3"), score(extract_ranked("four", "integer"), "3")]
    >>> summarize(items)["accuracy"]
    0.5
"""

from builder_utils.lazy import lazy_exports

# Imported on first use (builder_utils/lazy.py): ``extract``, ``accuracy`` and ``spec`` need no
# ``datasets`` (the lmms-eval task utilities and reward functions import them alone); ``data``
# loads exports and does.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(["Scored", "bootstrap_interval", "score", "summarize"], "builder_utils.evaluation.accuracy"),
    **dict.fromkeys(["EvaluationError", "load_splits"], "builder_utils.evaluation.data"),
    # (not ``extract``: the name of the submodule)
    **dict.fromkeys(["answer_span", "extract_integer", "extract_ranked", "extract_word", "extract_yes_no"],
                    "builder_utils.evaluation.extract"),
    **dict.fromkeys(["PredictionsError", "read_predictions"], "builder_utils.evaluation.predictions"),
    **dict.fromkeys(["Baseline", "Extraction", "Labelling", "Question", "ScoringSpec", "Section"],
                    "builder_utils.evaluation.spec"),
})
