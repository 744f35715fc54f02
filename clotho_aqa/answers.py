"""One spelling per answer: the rule the builder applies to every annotator answer, and the
rule the evaluation applies to a model's single-word predictions, so that both compare equal.

The official answers are lower-case single tokens; a hand-edited or re-exported CSV may carry
``Yes``, ``yes `` or ``YES``, which would otherwise be three label classes and would turn a yes/no
question into a single-word one. Case is lowered and surrounding whitespace dropped; runs of inner
whitespace become one space (a multi-word answer stays multi-word, but spelled one way).

Example:
    >>> normalize_answer("  Yes ")
    'yes'
    >>> normalize_answer("Dog\\tbarking")
    'dog barking'
"""

from __future__ import annotations

__all__ = ["RULES", "TYPES", "normalize_answer"]

#: The answer types of the release's questions.
TYPES = ("yes_no", "single_word")

#: The labellings by their short name (the rewards' ``labelling=``): rule and description.
RULES = {
    "unfiltered": ("each", "every annotator answer is a target"),
    "unanimous": ("unanimous", "questions whose 3 annotators agree"),
    "majority": ("majority", "the majority vote (>= 2 of 3 agree)"),
    "any_of_3": ("any", "right if it matches any annotator's answer"),
}


def normalize_answer(text: str) -> str:
    """``text`` lower-cased, stripped, inner whitespace runs collapsed to one space.

    Example:
        >>> normalize_answer("NO")
        'no'
    """
    return " ".join(text.split()).lower()
