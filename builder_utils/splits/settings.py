"""The local search's defaults, without numpy: a command's ``--help`` shows them without paying
for the search (:mod:`builder_utils.splits.refine` uses them).

Example:
    >>> from builder_utils.splits.settings import ANNEAL_ROUNDS
    >>> ANNEAL_ROUNDS
    800
"""

__all__ = ["ANNEAL_ROUNDS", "PROPOSALS", "TEMPERATURES"]

# Annealing defaults, tuned on Clotho-AQA (1,991 clips x 830 answers): 800 rounds keep the whole
# search under 2 s with a label error under 227 (600 rounds reach 227.05 in 1.7 s, 1,000 rounds
# 225.3 in 2.1 s; BENCHMARKS.md, "Stratified split search").
ANNEAL_ROUNDS = 800
PROPOSALS = 1000
TEMPERATURES = (0.3, 0.002)
