"""One spelling per answer, for the builder's annotator answers and the evaluation's predictions alike.

An edited CSV's ``Yes``, ``yes `` and ``YES`` would otherwise be three label classes and turn a yes/no
question into a single-word one.

Example:
    >>> normalize_answer("Dog\\tbarking")
    'dog barking'
"""

from __future__ import annotations

__all__ = ["RULES", "TYPES", "normalize_answer", "row_difficulty"]

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


def row_difficulty(row) -> dict:
    """How hard one question is, as the trainer layouts write it (``difficulty``): the share of its
    annotators who gave its most common answer (1/3 when all three differ), and how many answered.

    Example:
        >>> row_difficulty({"answers": ["yes", "Yes", "no"]})
        {'agreement': 0.6666666666666666, 'annotators': 3}
    """
    answers = [normalize_answer(a) for a in row.get("answers") or () if a is not None]
    if not answers:
        return {"agreement": None, "annotators": 0}
    most = max(answers.count(a) for a in set(answers))
    return {"agreement": most / len(answers), "annotators": len(answers)}
