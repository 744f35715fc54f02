"""Scoring model answers: predictions in, answers extracted, accuracy with intervals, reports out.

A dataset's scoring is a :class:`ScoringSpec` (its ``evaluate`` module's ``SPEC``:
``clevr_math.evaluate``, ``clotho_aqa.evaluate``, ``builder_utils.clevr.evaluate`` for the
classic CLEVR families); :mod:`builder_utils.evaluation.evaluate` is the one implementation of
``evaluate`` over a spec, :mod:`builder_utils.evaluation.rewards` the training rewards' parts.

Example:
    >>> from builder_utils.evaluation import extract_ranked, score, summarize
    >>> items = [score(extract_ranked("Answer: 3", "integer"), "3"), score(extract_ranked("four", "integer"), "3")]
    >>> summarize(items)["accuracy"]
    0.5
"""

import sys

from builder_utils.lazy import lazy_exports

# Imported on first use: ``extract``, ``accuracy`` and ``spec`` need no ``datasets`` (the lmms-eval
# task utilities and reward functions import them alone); ``data`` loads exports and does.
_EXPORTS = {
    **dict.fromkeys(["Scored", "bootstrap_interval", "score", "summarize"], "builder_utils.evaluation.accuracy"),
    **dict.fromkeys(["EvaluationError", "load_splits"], "builder_utils.evaluation.data"),
    # (not ``extract``: the name of the submodule)
    **dict.fromkeys(["answer_span", "extract_integer", "extract_ranked", "extract_word", "extract_yes_no"],
                    "builder_utils.evaluation.extract"),
    **dict.fromkeys(["PredictionsError", "read_predictions"], "builder_utils.evaluation.predictions"),
    **dict.fromkeys(["Baseline", "Extraction", "Labelling", "Question", "ScoringSpec", "Section"],
                    "builder_utils.evaluation.spec"),
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(sys.modules[__name__], _EXPORTS)
