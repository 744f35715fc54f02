"""CLEVR-Math's question categories, in a module of their own so that scorers and the lmms-eval
tasks can name a row's ``category`` without importing the builder.

Example:
    >>> CATEGORIES.index("multihop")
    5
"""

# The paper's six question categories, then ours, in a fixed order: the ClassLabel ids depend on it.
CATEGORIES: tuple[str, ...] = (
    "remove_group",
    "remove_subset",
    "insertion",
    "count_backwards",
    "adversarial",
    "multihop",
    # Beyond the paper: questions over the change between a world and the world after one operation
    # (the `changes` configuration); last, so that the paper's ids never move.
    "changes",
)

#: The categories of questions that ask about operations: the paper's six (a stream's problems;
#: `changes` questions come from the builder's `changes` configuration).
OPERATION_CATEGORIES: tuple[str, ...] = CATEGORIES[:6]
