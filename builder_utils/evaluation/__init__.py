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

from builder_utils.evaluation.accuracy import Scored, bootstrap_interval, score, summarize, summarize_groups
from builder_utils.evaluation.baselines import answer_prior, back_off, majority_answer
from builder_utils.evaluation.data import EvaluationError, load_splits
from builder_utils.evaluation.extract import (
    answer_span,
    extract,
    extract_integer,
    extract_ranked,
    extract_word,
    extract_yes_no,
)
from builder_utils.evaluation.predictions import PredictionsError, read_predictions

__all__ = [
    "EvaluationError",
    "PredictionsError",
    "Scored",
    "answer_prior",
    "answer_span",
    "back_off",
    "bootstrap_interval",
    "extract",
    "extract_integer",
    "extract_ranked",
    "extract_word",
    "extract_yes_no",
    "load_splits",
    "majority_answer",
    "read_predictions",
    "score",
    "summarize",
    "summarize_groups",
]
