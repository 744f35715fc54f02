"""The configurations of the Clotho-AQA builder: one per labelling in use (README, "Configurations and columns").

Checked in ``__post_init__`` and again by :meth:`ClothoAQAConfig.validate`: ``datasets`` sets overrides by ``setattr``.
"""

from __future__ import annotations

from dataclasses import InitVar, asdict, dataclass

import datasets

from builder_utils.builder import ConfigError
from builder_utils.options import Choice, check_options
from clotho_aqa.answers import RULES, TYPES
from clotho_aqa.options import CONTENT_FIELDS, SPLIT_STRATEGIES, ClothoAQAOptions
from clotho_aqa.release import YES_NO

VERSION = datasets.Version("1.0.0")
__all__ = ["ANSWER", "BUILDER_CONFIGS", "CONFIG_NAMES", "CONTENT_FIELDS", "DEFAULT_CONFIG_NAME", "QUESTION",
           "SPLIT_STRATEGIES", "VERSION", "ClothoAQAConfig", "Rows", "registered"]

ANSWER, QUESTION = "answer", "question"
#: The labellings that keep one answer per question (the majority's), and the questions they keep.
_ONE_ANSWER = {"unanimous": lambda q: q.unanimous, "majority": lambda q: q.majority_answer is not None}


@dataclass(frozen=True)
class Rows:
    """What the rows of a configuration are: ``answer_types``, ``unit`` (one row per ``"answer"`` or
    ``"question"``) and ``labelling`` (a key of :data:`~clotho_aqa.answers.RULES`; its report's headline).

    Example:
        >>> Rows(("yes_no",), QUESTION, "majority").classes
        ('yes', 'no')
    """

    answer_types: tuple[str, ...]
    unit: str
    labelling: str

    def __post_init__(self):
        if not self.answer_types or len(set(self.answer_types)) < len(self.answer_types):
            raise ConfigError(f"answer_types must be distinct ones of {', '.join(TYPES)}, got {self.answer_types!r}")
        for kind in self.answer_types:
            Choice(TYPES)("answer_types", kind)
        Choice((ANSWER, QUESTION))("unit", self.unit)
        # One row per annotator answer: each answer is a row and a target.
        Choice(tuple(RULES) if self.unit == QUESTION else ("unfiltered",))("labelling", self.labelling)

    @property
    def labelled(self) -> bool:
        """One answer type and one answer per row: the rows have a ``label``."""
        return len(self.answer_types) == 1 and (self.unit == ANSWER or self.labelling in _ONE_ANSWER)

    @property
    def classes(self) -> tuple[str, ...] | None:
        """The label's classes when the answer type fixes them (yes/no); None: the train answers."""
        return YES_NO if self.labelled and self.answer_types == ("yes_no",) else None

    def keeps(self, question) -> bool:
        """Whether a :class:`~clotho_aqa.release.Question` has rows here: its type, and a target."""
        kept = _ONE_ANSWER.get(self.labelling)  # the other labellings keep every question
        return question.answer_type in self.answer_types and (kept is None or kept(question))


@dataclass
class ClothoAQAConfig(ClothoAQAOptions, datasets.BuilderConfig):
    """A configuration of the Clotho-AQA builder: a name, its :class:`Rows` (default: the registered
    ones) and the options. ``rows`` is no field, so no keyword override and no flag; it is in the cache key.

    Example:
        >>> ClothoAQAConfig(name="questions", split_strategy="recomputed", seed=3).seed
        3
        >>> ClothoAQAConfig(name="sw_agreed", rows=Rows(("single_word",), QUESTION, "unanimous")).rows.labelled
        True
    """

    rows: InitVar[Rows | None] = None

    def __post_init__(self, rows: Rows | None):
        if not isinstance(self.name, str):  # datasets' own check of the name would be a TypeError
            raise ConfigError(f"name must be a config name (a str), got {type(self.name).__name__} {self.name!r}")
        super().__post_init__()
        self.rows = rows or registered(self.name)
        self.validate()

    def validate(self) -> None:
        """Raise :class:`ConfigError` for an unknown config name or an unusable option.

        Example:
            >>> ClothoAQAConfig(name="binary")
            Traceback (most recent call last):
            ...
            builder_utils.builder.ConfigError: unknown Clotho-AQA config 'binary'; valid: all, questions, yes_no_unfiltered, yes_no_unanimous, yes_no_majority, single_word, single_word_majority
        """
        if not isinstance(self.rows, Rows):
            raise ConfigError(f"unknown Clotho-AQA config {self.name!r}; valid: {', '.join(CONFIG_NAMES)}")
        where = f"Clotho-AQA config {self.name!r}"
        check_options(self, where=where, error=ConfigError)

    def content(self) -> dict:
        """The fields that decide the rows, as a plain dict (for the cache key).

        Example:
            >>> ClothoAQAConfig(name="all").content()["split_strategy"]
            'official'
        """
        return {**{name: getattr(self, name) for name in CONTENT_FIELDS}, "rows": asdict(self.rows)}


def registered(name: str) -> Rows | None:
    """The rows of the configuration of :data:`BUILDER_CONFIGS` called ``name`` (None: none is).

    Example:
        >>> registered("yes_no_majority")
        Rows(answer_types=('yes_no',), unit='question', labelling='majority')
    """
    # Only called for a config made without rows, so after BUILDER_CONFIGS exists (each entry has rows).
    return next((config.rows for config in BUILDER_CONFIGS if config.name == name), None)


def _config(name: str, answer_types: tuple[str, ...], unit: str, labelling: str, description: str) -> ClothoAQAConfig:
    return ClothoAQAConfig(name=name, version=VERSION, description=description,
                           rows=Rows(answer_types, unit, labelling))


_YES_NO, _SINGLE_WORD = ("yes_no",), ("single_word",)
#: The configurations and what their rows are (the Hub card's table of configurations reads the descriptions).
BUILDER_CONFIGS = [
    _config("all", TYPES, ANSWER, "unfiltered",
            "One row per annotator answer (3 per question), both question types."),
    _config("questions", TYPES, QUESTION, "unfiltered",
            "One row per question: its 3 answers and confidences, the majority answer, unanimity."),
    _config("yes_no_unfiltered", _YES_NO, ANSWER, "unfiltered",
            "Yes/no questions, one row per annotator answer (the paper's unfiltered setting)."),
    _config("yes_no_unanimous", _YES_NO, QUESTION, "unanimous",
            "Yes/no questions whose 3 annotators agree, one row per question."),
    _config("yes_no_majority", _YES_NO, QUESTION, "majority",
            "Yes/no questions, one row per question labelled by majority vote."),
    _config("single_word", _SINGLE_WORD, ANSWER, "unfiltered",
            "Single-word questions, one row per annotator answer (the authors' multiclass baseline)."),
    _config("single_word_majority", _SINGLE_WORD, QUESTION, "majority",
            "Single-word questions where at least 2 of 3 annotators agree, one row per question."),
]
CONFIG_NAMES = tuple(config.name for config in BUILDER_CONFIGS)
DEFAULT_CONFIG_NAME = "all"
