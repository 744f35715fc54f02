"""CLEVR-Math's question categories, in a module of their own so that scorers and the lmms-eval
tasks can name a row's ``category`` without importing the builder.

Example:
    >>> CATEGORIES.index("multihop")
    5
"""

# The paper's six question categories, in a fixed order: the ClassLabel ids depend on it.
CATEGORIES: tuple[str, ...] = (
    "remove_group",
    "remove_subset",
    "insertion",
    "count_backwards",
    "adversarial",
    "multihop",
)
