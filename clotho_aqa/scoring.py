"""How Clotho-AQA is scored, as data: :data:`SPEC` and its labellings, shared by ``clotho-aqa evaluate``,
the rewards and the lmms-eval task. It imports the spec alone: no ``datasets``, no report code.

Example:
    >>> SPEC.reward(aqa_question("q", "Is it raining?", ["yes", "no", "yes"], "yes_no"), "Yes.", labelling("majority"))
    1.0
    >>> SPEC.reward(aqa_question("q", "What is it made of?", ["metal"] * 3, "single_word"), "It is metal.")
    1.0
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Labelling, Question, ScoringSpec, Section
from clotho_aqa.answers import RULES, TYPES, normalize_answer

__all__ = ["ANSWER_VOCABULARY", "EXTRACTION", "RULES", "SPEC", "TOP_K", "TYPES", "VOCABULARY_FILE",
           "aqa_question", "headline", "labelling", "read_vocabulary"]

TOP_K = 5
EXTRACTION = ("yes/no: the first yes/no word of the answer span; single word: the span normalised like the "
              "builder's answers (clotho_aqa.answers.normalize_answer), punctuation and a leading article removed, "
              "else its first word that is an answer of the release (the 828 single-word answers, "
              "clotho_aqa/answer_vocabulary.txt), else the span if it is one word; a digit read as its number "
              "word; ranked lists item by item")
VOCABULARY_FILE = Path(__file__).with_name("answer_vocabulary.txt")


def read_vocabulary(path: str | Path = VOCABULARY_FILE) -> frozenset[str]:
    """The words of a vocabulary file: one per line, ``#`` comment lines and blank lines skipped.

    Example:
        >>> len(read_vocabulary()), "metal" in read_vocabulary()
        (828, True)
    """
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return frozenset(word for word in (line.strip() for line in lines) if word and not word.startswith("#"))


#: The answers a single-word prediction is read against, everywhere: the release's single-word answers,
#: shipped, so a scorer seeing one question at a time reads "It is metal." as ``evaluate`` does.
ANSWER_VOCABULARY = read_vocabulary()

def labelling(name: str, kind: str | None = None) -> Labelling:
    """The labelling ``name`` (a key of :data:`RULES`), over one question type or both.

    Example:
        >>> labelling("any_of_3", "single_word")
        Labelling(name='single_word/any_of_3', rule='any', kinds=('single_word',), top_k=5, description="right if it matches any annotator's answer")
    """
    if name not in RULES:
        raise ValueError(f"unknown labelling {name!r}; valid: {', '.join(RULES)}")
    rule, description = RULES[name]
    if kind is None:
        return Labelling(name, rule, description=description)
    return Labelling(f"{kind}/{name}", rule, (kind,), TOP_K if kind == "single_word" else None, description)


def headline(config: str) -> Labelling:
    """The labelling of ``overall`` for ``config``: its own over its answer types (none: unfiltered).

    Example:
        >>> headline("yes_no_majority").name, headline("yes_no_majority").kinds, headline("questions").name
        ('majority', ('yes_no',), 'unfiltered')
    """
    rows = None
    if config:
        from clotho_aqa.config import registered  # here: the configurations import datasets, the spec does not

        rows = registered(config)
    name = "unfiltered" if rows is None else rows.labelling
    rule, description = RULES[name]
    return Labelling(name, rule, None if rows is None else rows.answer_types, description=description)


#: How Clotho-AQA is scored: yes/no and single-word extraction (the builder's spelling rule, the
#: release's answers as the vocabulary, digits as number words, top-5 of ranked lists), every
#: labelling, breakdown by question type, majority and question-only prior baselines per question type.
SPEC = ScoringSpec(
    dataset="clotho_aqa",
    title="Clotho-AQA",
    extractions={"yes_no": Extraction("yes_no"),
                 "single_word": Extraction("word", ANSWER_VOCABULARY, normalize=normalize_answer,
                                           unlisted_words=True, digit_words=True, top_k=TOP_K)},
    labellings=tuple(labelling(name, kind) for kind in TYPES for name in RULES),
    headline=headline,
    sections=(Section("by_category", "answer_type", "question type", order=TYPES.index),),
    charts=(ChartSpec("Accuracy by labelling (single-word: top-1)", "by_labelling", "labelling"),
            ChartSpec("Accuracy by question type", "by_category", "question type")),
    baselines=(Baseline("majority", top_k=TOP_K, within_kind=True),
               Baseline("question_prior", ("leading_words", "first_word"), top_k=TOP_K, within_kind=True)),
    extraction_note=EXTRACTION,
)


def aqa_question(question_id: str, question: str, answers: Sequence[str], answer_type: str) -> Question:
    """One Clotho-AQA question as the spec scores it, with the question-only prior's keys.

    Example:
        >>> aqa_question("q", "How many birds sing?", ["two"] * 3, "single_word").keys["leading_words"]
        'how many'
    """
    words = re.findall(r"[a-z']+", question.lower())
    keys = {"answer_type": answer_type, "leading_words": " ".join(words[:2]), "first_word": " ".join(words[:1])}
    return Question(question_id, tuple(answers), answer_type, keys)
