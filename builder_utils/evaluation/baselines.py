"""Baselines that need no model: answer frequencies counted on the train split.

- :func:`majority_answer`: the most frequent train answer, for every question;
- :func:`answer_prior` + :func:`back_off`: a question-only prior, the most frequent train answer
  among questions that share a key (a template, a category, the question's leading words),
  backing off to coarser keys and finally to the majority answer for keys never seen in train.

Ties go to the answer that sorts first, so a baseline never depends on row order.

Example:
    >>> majority_answer(["2", "3", "3", "2", "1"])
    '2'
    >>> by_template = answer_prior([("a", "1"), ("a", "1"), ("b", "4")])
    >>> back_off([(by_template, "c")], default="2"), back_off([(by_template, "a")], default="2")
    ('2', '1')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

__all__ = ["answer_prior", "answer_ranking", "back_off", "majority_answer", "ranked_answers"]


def _ranked(counts: Counter) -> list[str]:
    return [answer for answer, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def _top(counts: Counter) -> str:
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0]


def majority_answer(answers: Iterable[str]) -> str | None:
    """The most frequent answer (ties: the first in sort order); None for no answers.

    Example:
        >>> majority_answer(["no", "yes", "yes"])
        'yes'
    """
    counts = Counter(answers)
    return _top(counts) if counts else None


def answer_prior(pairs: Iterable[tuple[Hashable, str]]) -> dict[Hashable, str]:
    """``(key, answer)`` pairs -> the most frequent answer per key.

    Example:
        >>> answer_prior([("how many", "two"), ("how many", "two"), ("how many", "one"), ("what", "rain")])
        {'how many': 'two', 'what': 'rain'}
    """
    counts: dict[Hashable, Counter] = {}
    for key, answer in pairs:
        counts.setdefault(key, Counter())[answer] += 1
    return {key: _top(c) for key, c in counts.items()}


def back_off(lookups: Sequence[tuple[Mapping[Hashable, Any], Hashable]], default: Any) -> Any:
    """The answer of the first ``(table, key)`` whose key is in its table, else ``default``.

    Example:
        >>> back_off([({"t1": "3"}, "t9"), ({"insertion": "5"}, "insertion")], default="2")
        '5'
    """
    for table, key in lookups:
        if key in table:
            return table[key]
    return default


def ranked_answers(answers: Iterable[str], k: int) -> list[str]:
    """The ``k`` most frequent answers, most frequent first (ties in sort order): a ranked
    prediction for top-k accuracy.

    Example:
        >>> ranked_answers(["rain", "water", "rain", "birds"], 2)
        ['rain', 'birds']
    """
    return _ranked(Counter(answers))[:k]


def answer_ranking(pairs: Iterable[tuple[Hashable, str]], k: int) -> dict[Hashable, list[str]]:
    """``(key, answer)`` pairs -> the ``k`` most frequent answers per key (a ranked prior).

    Example:
        >>> answer_ranking([("how many", "two"), ("how many", "one"), ("how many", "two")], 5)
        {'how many': ['two', 'one']}
    """
    counts: dict[Hashable, Counter] = {}
    for key, answer in pairs:
        counts.setdefault(key, Counter())[answer] += 1
    return {key: _ranked(c)[:k] for key, c in counts.items()}
