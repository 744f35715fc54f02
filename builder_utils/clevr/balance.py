"""Answer balancing and the windows over which its counts live.

Per template, an answer is refused while its count exceeds 1.1 times the second most common
answer's count, or 5 times max(median count, 5), as in the reference generator. Counts reset
at *absolute* multiples of ``reset_counts_every``: a run from a window boundary sees the
counts of a whole-file run.

>>> b = AnswerBalancer((True, False))
>>> b.allows(True); b.add(True); b.allows(True), b.allows(False)
True
(False, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["AnswerBalancer", "balancing_windows"]


class AnswerBalancer:
    """Answer counts of one template within one window (``domain``: answers counted from the start).

    >>> b = AnswerBalancer(range(3))
    >>> for answer in (0, 1, 0): b.add(answer)
    >>> b.allows(0), b.allows(2)
    (False, True)
    """

    __slots__ = ("counts", "_refused", "_limit")

    def __init__(self, domain: Iterable[Any]):
        self.counts: dict[Any, int] = dict.fromkeys(domain, 0)
        self._refused: frozenset = frozenset()
        # A lower bound of the current refusal limit (0: none known). Counts only grow, so the
        # limit never falls: an answer whose new count stays within a known limit, while
        # nothing is refused, leaves nothing refused, and most additions skip the sort.
        self._limit = 0.0

    def allows(self, answer: Any) -> bool:
        """Whether one more question with this answer keeps the distribution balanced."""
        return answer not in self._refused

    def add(self, answer: Any) -> None:
        """Count an accepted answer."""
        count = self.counts[answer] = self.counts.get(answer, 0) + 1
        if self._refused or count > self._limit:
            self._refused = self._compute_refused()

    def _compute_refused(self) -> frozenset:
        ordered = sorted(self.counts.values())
        if len(ordered) < 2:
            self._limit = 0.0
            return frozenset()
        second = ordered[-2]
        median = max(ordered[len(ordered) // 2], 5)
        # c > 1.1 * second or c > 5 * median, as one bound; usually not even the top count
        # exceeds it, and nothing needs scanning.
        limit = self._limit = min(1.1 * second, 5.0 * median)
        if ordered[-1] <= limit:
            return frozenset()
        return frozenset([a for a, c in self.counts.items() if c > limit])


def balancing_windows(num_scenes: int, reset_counts_every: int, start: int = 0) -> list[tuple[int, int]]:
    """The ``[start, stop)`` ranges over which counts accumulate (``reset_counts_every`` 0: one window).

    >>> balancing_windows(600, 250)
    [(0, 250), (250, 500), (500, 600)]
    >>> balancing_windows(600, 250, start=100)
    [(100, 250), (250, 500), (500, 600)]
    >>> balancing_windows(3, 0)
    [(0, 3)]
    """
    if num_scenes < 0 or reset_counts_every < 0:
        raise ValueError("num_scenes and reset_counts_every must not be negative")
    if num_scenes <= start:
        return []
    if reset_counts_every == 0:
        return [(start, num_scenes)]
    first_cut = (start // reset_counts_every + 1) * reset_counts_every
    cuts = [start, *range(first_cut, num_scenes, reset_counts_every), num_scenes]
    return list(zip(cuts[:-1], cuts[1:]))
