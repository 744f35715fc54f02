"""A dataset's scoring specification, as data: ``evaluate``, the rewards and lmms-eval all score
with it, so they agree by construction (README.md, this package).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from builder_utils.evaluation.accuracy import Scored, score
from builder_utils.evaluation.extract import KINDS, NUMBER_WORDS, Work, extract_ranked

__all__ = ["Baseline", "ChartSpec", "Extraction", "Labelling", "Question", "ScoringSpec", "Section"]

Rule = Literal["each", "unanimous", "majority", "any"]


@dataclass(frozen=True)
class Extraction:
    """How the prediction of one kind of question is read (see :mod:`builder_utils.evaluation.extract`).

    ``vocabulary`` is part of the spec so that every scorer reads against the same words;
    ``unlisted_words`` reads a one-word span outside it as that word (answers it may lack);
    ``digit_words`` lets ``2`` answer ``two`` when ``two`` is a known answer.

    Example:
        >>> Extraction("word", digit_words=True, top_k=5).answers(["2", "The birds."], {"two", "birds"})
        ['two', 'birds']
    """

    kind: str
    vocabulary: frozenset[str] | None = None
    synonyms: Mapping[str, str] = field(default_factory=dict)
    normalize: Callable[[str], str] | None = None
    unlisted_words: bool = False
    digit_words: bool = False
    top_k: int = 1

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown answer kind {self.kind!r}; valid: {', '.join(KINDS)}")

    def answers(self, prediction: Any, vocabulary: Collection[str] | None = None,
                work: Work | None = None) -> list[str]:
        """The prediction's answers in rank order (at most ``top_k``); ``vocabulary`` if none is fixed.

        Example:
            >>> Extraction("integer").answers("Answer: twenty-one")
            ['21']
        """
        if self.kind != "word":
            return extract_ranked(prediction, self.kind, limit=1, work=work)
        words = self.vocabulary if self.vocabulary is not None else vocabulary
        synonyms = dict(self.synonyms)
        if self.digit_words:
            synonyms |= {str(value): word for word, value in NUMBER_WORDS.items()
                         if word != "none" and (words is None or word in words)}
        return extract_ranked(prediction, "word", words, synonyms, self.normalize, limit=self.top_k, work=work,
                              unlisted_words=self.unlisted_words)


@dataclass(frozen=True)
class Labelling:
    """Which answers are targets: ``each`` annotator's (unfiltered), the ``unanimous`` or ``majority``
    (2 of 3) one, or ``any`` (one target). ``kinds``: the kinds covered; ``top_k`` adds top-k accuracy.

    Example:
        >>> q = Question("q", ("rain", "water", "rain"), "single_word")
        >>> Labelling("majority", "majority").targets(q), [sorted(t) for t in Labelling("any_of_3", "any").targets(q)]
        ([frozenset({'rain'})], [['rain', 'water']])
    """

    name: str
    rule: Rule
    kinds: tuple[str, ...] | None = None
    top_k: int | None = None
    description: str = ""

    def targets(self, question: Question) -> list[frozenset[str]]:
        """The targets of ``question`` (none outside ``kinds``, or without the agreement the rule needs).

        Example:
            >>> Labelling("u", "unanimous").targets(Question("q", ("no", "no", "yes"), "yes_no"))
            []
        """
        answers = question.answers
        if not answers or (self.kinds is not None and question.kind not in self.kinds):
            return []
        if self.rule == "each":
            return [frozenset({a}) for a in answers]
        if self.rule == "any":
            return [frozenset(answers)]
        if self.rule == "unanimous":
            return [frozenset(answers[:1])] if len(set(answers)) == 1 else []
        majority = next((a for a in answers if answers.count(a) * 2 > len(answers)), None)
        return [] if majority is None else [frozenset({majority})]


@dataclass(frozen=True)
class Question:
    """What scoring needs of one question; ``kind`` keys the extractions, a tuple value of ``keys``
    puts it in several groups, ``extra`` holds what a dataset needs (a program, an image)."""

    question_id: str
    answers: tuple[str, ...]
    kind: str
    keys: Mapping[str, Any] = field(default_factory=dict)
    extra: Any = None


@dataclass(frozen=True)
class Section:
    """A breakdown of a report (``name``: its key, ``by_category``) by the question ``key``.

    ``generalisation``: its groups, named by ``label``, are rows of that table (with each group's
    train questions: 0 is zero-shot).

    Example:
        >>> Section("by_hop", "hop").header
        'hop'
    """

    name: str
    key: str
    header: str | None = None
    order: Callable[[Hashable], Any] | None = None
    table: bool = True
    generalisation: bool = False
    label: str = "{}"

    def __post_init__(self):
        if self.header is None:
            object.__setattr__(self, "header", self.key.replace("_", " "))


@dataclass(frozen=True)
class ChartSpec:
    """One PNG chart of a report section (``by_labelling`` included), every system as bars."""

    title: str
    section: str
    value_label: str

    @property
    def filename(self) -> str:
        """``accuracy_<section>.png``: every report names its charts after their section."""
        return f"accuracy_{self.section}.png"


@dataclass(frozen=True)
class Baseline:
    """A model-free baseline: the most frequent train answers of questions sharing ``keys``.

    Keys finest first, backing off to the next, then to the majority (no keys: the majority
    baseline); ``within_kind`` counts per kind of question.
    """

    name: str
    keys: tuple[str, ...] = ()
    top_k: int = 1
    within_kind: bool = False

    def predictions(self, train: Sequence[Question], questions: Sequence[Question]) -> dict[str, list[str]]:
        """``question_id`` -> ranked answers; ties go to the answer that sorts first (no row-order effect).

        Example:
            >>> train = [Question(a + c, (a,), "integer", {"category": c}) for a, c in ("5a", "5a", "2b")]
            >>> test = [Question(c, ("5",), "integer", {"category": c}) for c in "bc"]
            >>> Baseline("category_prior", ("category",)).predictions(train, test)  # "c": backs off to the majority
            {'b': ['2'], 'c': ['5']}
        """
        def ranked(pairs) -> dict[Hashable, list[str]]:
            counts: dict[Hashable, Counter] = {}
            for key, answer in pairs:
                counts.setdefault(key, Counter())[answer] += 1
            return {k: sorted(c, key=lambda a: (-c[a], a))[:self.top_k] for k, c in counts.items()}

        out: dict[str, list[str]] = {}
        for kind in sorted({q.kind for q in questions}) if self.within_kind else [None]:
            rows = [(q, a) for q in train if kind is None or q.kind == kind for a in q.answers]
            majority = ranked((None, a) for _, a in rows).get(None, [])
            tables = [ranked((q.keys[key], a) for q, a in rows) for key in self.keys]
            for q in questions:
                if kind is None or q.kind == kind:
                    found = (t[q.keys[k]] for t, k in zip(tables, self.keys) if q.keys[k] in t)
                    out[q.question_id] = next(found, majority)
        return out


def _default_headline(config: str) -> Labelling:
    return Labelling("exact", "each")


@dataclass(frozen=True)
class ScoringSpec:
    """A dataset's scoring (examples: its methods).

    ``labellings``: the rows of ``by_labelling`` (none: no section); ``headline(config)``: the
    labelling of ``overall`` and the sections (default: each answer a target).
    """

    dataset: str
    title: str
    extractions: Mapping[str, Extraction]
    labellings: tuple[Labelling, ...] = ()
    headline: Callable[[str], Labelling] = _default_headline
    sections: tuple[Section, ...] = ()
    charts: tuple[ChartSpec, ...] = ()
    baselines: tuple[Baseline, ...] = ()
    extraction_note: str = ""

    def answers(self, question: Question, prediction: Any, vocabulary: Collection[str] | None = None,
                work: Work | None = None) -> list[str]:
        """The prediction's answers, read the way this question's kind is read.

        Example:
            >>> ScoringSpec("t", "T", {"integer": Extraction("integer")}).answers(Question("q", ("1",), "integer"), "one")
            ['1']
        """
        return self.extractions[question.kind].answers(prediction, vocabulary, work)

    def score(self, question: Question, prediction: Any, labelling: Labelling | None = None,
              vocabulary: Collection[str] | None = None) -> list[Scored]:
        """One :class:`Scored` per target of ``question`` under ``labelling`` (default: ``headline("")``).

        Example:
            >>> spec = ScoringSpec("t", "T", {"yes_no": Extraction("yes_no")})
            >>> [s.correct for s in spec.score(Question("q", ("yes", "no", "yes"), "yes_no"), "yes")]
            [True, False, True]
        """
        targets = (labelling or self.headline("")).targets(question)
        answers = self.answers(question, prediction, vocabulary) if targets else None
        return [score(answers, target) for target in targets]

    def reward(self, question: Question, prediction: Any, labelling: Labelling | None = None,
               vocabulary: Collection[str] | None = None) -> float | None:
        """The share of the question's targets right (top-1), None without targets.

        Over one-target questions, its mean is ``evaluate``'s accuracy.

        Example:
            >>> spec = ScoringSpec("t", "T", {"yes_no": Extraction("yes_no")})
            >>> spec.reward(Question("q", ("yes", "no", "no"), "yes_no"), "no", Labelling("m", "majority"))
            1.0
        """
        scored = self.score(question, prediction, labelling, vocabulary)
        return None if not scored else sum(s.correct for s in scored) / len(scored)

    def correct(self, question: Question, prediction: Any, labelling: Labelling | None = None,
                vocabulary: Collection[str] | None = None) -> bool:
        """The prediction is right on every target of ``question`` (False when it has none).

        Example:
            >>> ScoringSpec("t", "T", {"integer": Extraction("integer")}).correct(Question("q", ("3",), "integer"), "3")
            True
        """
        return self.reward(question, prediction, labelling, vocabulary) == 1.0

    def labelling(self, name: str) -> Labelling:
        """The labelling called ``name`` (a row of ``by_labelling``), or a ValueError naming them.

        Example:
            >>> ScoringSpec("t", "T", {}, labellings=(Labelling("a", "any"),)).labelling("a").rule
            'any'
        """
        for labelling in self.labellings:
            if labelling.name == name:
                return labelling
        raise ValueError(f"unknown labelling {name!r}; valid: {', '.join(x.name for x in self.labellings)}")
