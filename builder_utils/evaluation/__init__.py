"""Scoring model answers: predictions in, answers extracted, accuracy with intervals, reports out.

A dataset's scoring is a :class:`ScoringSpec` (its ``evaluate`` module's ``SPEC``:
``clevr_math.evaluate``, ``clotho_aqa.evaluate``, ``builder_utils.clevr.evaluate`` for the
classic CLEVR families); :mod:`builder_utils.evaluation.evaluate` is the one implementation of
``evaluate`` over a spec, :mod:`builder_utils.evaluation.rewards` the training rewards' parts.

Example:
    >>> from builder_utils.evaluation import extract, score, summarize
    >>> items = [score([extract("Answer: 3", "integer")], "3"), score([extract("four", "integer")], "3")]
    >>> summarize(items)["accuracy"]
    0.5
"""

from builder_utils.evaluation.accuracy import Scored, bootstrap_interval, score, summarize
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
from builder_utils.evaluation.spec import Baseline, Extraction, Labelling, Question, ScoringSpec, Section

__all__ = [
    "Baseline",
    "EvaluationError",
    "Extraction",
    "Labelling",
    "PredictionsError",
    "Question",
    "Scored",
    "ScoringSpec",
    "Section",
    "answer_span",
    "bootstrap_interval",
    "extract",
    "extract_integer",
    "extract_ranked",
    "extract_word",
    "extract_yes_no",
    "load_splits",
    "read_predictions",
    "score",
    "summarize",
]
