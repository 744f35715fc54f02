"""Scoring extracted answers against gold answers: accuracy, top-k, counts, bootstrap intervals.

Missing and unparseable predictions count as wrong, and are counted. A bootstrap resample's
number of correct 0/1 items is exactly Binomial(n, k/n), so that is drawn (no n x resamples matrix).

Example:
    >>> items = [score(["3"], "3"), score(["4"], "3"), score([], "3"), score(None, "3")]
    >>> s = summarize(items, seed=0)
    >>> s["accuracy"], s["correct"], s["total"], s["unparseable"], s["missing"]
    (0.25, 1, 4, 1, 1)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from builder_utils.options import MAX_SEED, Instance, Integer, Number

__all__ = ["DEFAULT_RESAMPLES", "Scored", "bootstrap_interval", "score", "summarize"]

DEFAULT_RESAMPLES = 1000
# One float per resample is drawn at once: 10**6 is 8 MB and a thousand times the default.
MAX_RESAMPLES = 10**6


@dataclass(frozen=True)
class Scored:
    """One scored item: the gold answer's ``rank`` (None: absent); ``status`` answered, unparseable or missing."""

    rank: int | None
    status: str

    @property
    def correct(self) -> bool:
        """Top-1 correct: ``score(["yes"], "yes").correct`` is True."""
        return self.rank == 1

    def correct_at(self, k: int) -> bool:
        """The gold answer is among the first ``k`` answers.

        Example:
            >>> score(["rain", "water"], "water").correct_at(5)
            True
        """
        return self.rank is not None and self.rank <= k


# made once: score runs per question and per completion (the rewards)
_ANSWERS = Instance(list, tuple, optional=True)
_GOLD = Instance(str, set, frozenset, list, tuple)


def score(answers: Sequence[str] | None, gold: str | Collection[str]) -> Scored:
    """Score extracted ``answers`` (``[]``: unparseable, None: missing) against ``gold``, one answer or a set.

    Example:
        >>> score(["4", "3"], "3"), score(["water"], {"rain", "water"}).correct
        (Scored(rank=2, status='answered'), True)
    """
    _ANSWERS("answers", answers)
    _GOLD("gold", gold)
    if answers is None:
        return Scored(None, "missing")
    if not answers:
        return Scored(None, "unparseable")
    golds = {gold} if isinstance(gold, str) else gold
    return Scored(next((i + 1 for i, a in enumerate(answers) if a in golds), None), "answered")


def bootstrap_interval(correct: int, total: int, seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
                       level: float = 0.95) -> list[float] | None:
    """Percentile bootstrap interval of an accuracy ``correct / total`` (None when total is 0).

    Example:
        >>> bootstrap_interval(70, 100, seed=0), bootstrap_interval(5, 5, seed=0)
        ([0.61, 0.79], [1.0, 1.0])
    """
    Integer(1, maximum=MAX_RESAMPLES)("resamples", resamples)
    Integer(0, maximum=MAX_SEED)("seed", seed)
    Integer(0)("total", total)
    Integer(0, maximum=total)("correct", correct)
    if not 0 < Number()("level", level) < 1:
        raise ValueError(f"level must be a number between 0 and 1 (exclusive), got {level!r}")
    if total <= 0:
        return None
    draws = np.random.default_rng(seed).binomial(total, correct / total, size=resamples) / total
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return [round(float(low), 6), round(float(high), 6)]


def summarize(items: Sequence[Scored], seed: int = 0, resamples: int = DEFAULT_RESAMPLES,
              top_k: int | None = None) -> dict:
    """Accuracy, counts and the bootstrap interval of ``items``; with ``top_k``, ``top_<k>`` too.

    Example:
        >>> summarize([score(["a", "b"], "b"), score(["b"], "b")], top_k=5)["top_5"]
        1.0
    """
    Instance(list, tuple)("items", items)
    for k, item in enumerate(items):
        Instance(Scored)(f"items[{k}]", item)
    Integer(1, optional=True)("top_k", top_k)
    total = len(items)
    correct = sum(item.correct for item in items)
    out = {
        "accuracy": correct / total if total else None,
        "correct": correct,
        "total": total,
        "unparseable": sum(item.status == "unparseable" for item in items),
        "missing": sum(item.status == "missing" for item in items),
        "ci95": bootstrap_interval(correct, total, seed, resamples),
    }
    if top_k is not None:
        hits = sum(item.correct_at(top_k) for item in items)
        out[f"top_{top_k}"] = hits / total if total else None
        out[f"top_{top_k}_correct"] = hits
        out[f"top_{top_k}_ci95"] = bootstrap_interval(hits, total, seed, resamples)
    return out
