"""The options of the Clotho-AQA builder, declared once and importable without ``datasets``, so that
``clotho-aqa splits`` (no dataset built) starts in a tenth of a second.
"""

from __future__ import annotations

from dataclasses import dataclass

from builder_utils.options import MAX_SEED, Choice, Flag, Integer, option
from builder_utils.splits.settings import ANNEAL_ROUNDS

SPLIT_STRATEGIES = ("official", "recomputed")
# The maxima: 50 times the paper's 2,000 candidates (each candidate is one split of the ~2,000
# clips, searched one at a time, so memory does not grow with them), and 1,000 times the default
# rounds of the local search: generous, and a run that still ends.
MAX_CANDIDATES = 100_000
MAX_REFINE_ROUNDS = 10**6
# A synthetic release: 50 times Clotho's 2,000 clips; a clip is made in memory, and 600 s at
# 44.1 kHz is 100 MB (Clotho's clips are 15 to 30 s).
MAX_FILES = 100_000
MAX_DURATION = 600.0
#: The fields that decide the rows (they key the cache).
CONTENT_FIELDS = ("name", "split_strategy", "seed", "candidates", "keep", "refine_rounds", "skip_missing_audio")


def duration_seconds(value) -> float:
    """A clip's duration in seconds, ``0 < value <= MAX_DURATION`` (an argparse ``type`` too).

    >>> duration_seconds("0.5"), duration_seconds(2)
    (0.5, 2.0)
    >>> duration_seconds("1e9")
    Traceback (most recent call last):
    ...
    ValueError: duration must be a number of seconds in (0, 600], got '1e9'
    """
    try:
        seconds = float(value) if not isinstance(value, bool) else None
    except (TypeError, ValueError):
        seconds = None
    if seconds is None or not 0 < seconds <= MAX_DURATION:
        raise ValueError(f"duration must be a number of seconds in (0, {MAX_DURATION:g}], got {value!r}")
    return seconds


@dataclass
class ClothoAQAOptions:
    """The options of the Clotho-AQA builder (each one's help says what it does).

    Search defaults 1 / 1 / ``ANNEAL_ROUNDS``, not the paper's 2,000 / 50 / 0: a lower label error in a fifth
    of the time (README, "Options and checks").

    Example:
        >>> ClothoAQAOptions(split_strategy="recomputed", seed=3).seed
        3
    """

    # Each option declared once (builder_utils.options.option): default, check and help;
    # `export`, `demo` and `evaluate` take each as a --NAME flag (builder_utils.hub.cli).
    split_strategy: str = option("official", Choice(SPLIT_STRATEGIES), group=None, builder=True,
                                 help="official: the release's split; recomputed: the stratified 60/20/20 search")
    seed: int = option(0, Integer(0, maximum=MAX_SEED), group=None, builder=True,
                       help="seed of the recomputed split's search")
    candidates: int = option(1, Integer(1, maximum=MAX_CANDIDATES), group=None, builder=True,
                             help="recomputed split: 60/40 candidate splits (the paper: 2000)")
    keep: int = option(1, Integer(1, maximum=MAX_CANDIDATES), group=None, builder=True,
                       help="recomputed split: best candidates split again 50/50 (the paper: 50)")
    refine_rounds: int = option(ANNEAL_ROUNDS, Integer(0, maximum=MAX_REFINE_ROUNDS), group=None, builder=True,
                                help="recomputed split: rounds of local search after the paper's search (0: none)")
    skip_missing_audio: bool = option(False, Flag(), group=None, builder=True,
                                      help="drop the questions of clips whose WAV is missing, with a warning")
