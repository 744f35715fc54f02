"""Training rewards for Clotho-AQA (TRL, verl) on :data:`clotho_aqa.scoring.SPEC`: under one labelling,
the mean accuracy reward is ``evaluate``'s accuracy (builder_utils/evaluation/README.md, "Training rewards").

Example:
    >>> accuracy_reward(["<answer>yes</answer>", "No."], answers=[["yes", "yes", "no"], ["yes", "no", "no"]])
    [1.0, 1.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from builder_utils.evaluation.rewards import (check_columns, completion_text, gold_text, make_format_reward, named,
                                              verl_compute_score)
from builder_utils.options import Choice, Instance
from builder_utils.evaluation.spec import Question
from clotho_aqa.answers import normalize_answer
from clotho_aqa.scoring import RULES, SPEC, labelling as labelling_of

__all__ = ["accuracy_reward", "compute_score", "format_reward", "make_accuracy_reward", "make_format_reward"]

_YES_NO = frozenset({"yes", "no"})


def _question(answers: Any, answer: Any = None, answer_type: str | None = None, where: str = "compute_score",
              row: str = "", field: str = "answers") -> Question | None:
    """The question of one row: ``answers`` (the annotators', a list) or else ``answer`` (one), each a
    string or a number; ``answer_type`` one of the release's types. Anything else is a ``ValueError``."""
    if getattr(answers, "ndim", None) == 0:  # a numpy scalar array: its one value
        answers = answers.item()
    # lists first: an abstract-class check costs more than the rest of the row
    if type(answers) in (list, tuple) or (isinstance(answers, Collection)
                                          and not isinstance(answers, (str, bytes, Mapping))):
        # a string as it is (normalised below); the message only made for what is not one
        texts = [a if type(a) is str else gold_text(a, f"{where}: {field}{row}[{k}]") for k, a in enumerate(answers)]
    else:
        name, given = (field, answers) if answers is not None else ("answer", answer)
        texts = [gold_text(given, f"{where}: {name}{row}")]
    golds = tuple(g for g in (normalize_answer(t) for t in texts if t is not None) if g)
    if answer_type is not None:
        Choice(tuple(SPEC.extractions))(f"{where}: answer_type{row}", answer_type)
    if not golds:
        return None
    kind = answer_type or ("yes_no" if set(golds) <= _YES_NO else "single_word")
    return Question("", golds, kind)


def _column(values: Sequence | None, count: int) -> Sequence:
    return values if values is not None else [None] * count


def make_accuracy_reward(labelling: str = "majority", vocabulary: Collection[str] | None = None,
                         name: str | None = None) -> Callable[..., list[float | None]]:
    """A TRL accuracy reward under ``labelling`` (a key of :data:`clotho_aqa.scoring.RULES`), named
    ``accuracy_reward`` (majority) or ``accuracy_reward_<labelling>``; ``vocabulary``: another release's words.
    Without an ``answer_type`` column, a question whose answers are all yes/no is a yes/no question.

    Example:
        >>> reward = make_accuracy_reward("unanimous")
        >>> reward.__name__, reward(["yes", "yes"], answers=[["yes"] * 3, ["yes", "no", "yes"]])
        ('accuracy_reward_unanimous', [1.0, None])
    """
    Choice(tuple(RULES))("labelling", labelling)
    Instance(str, optional=True)("name", name)
    if vocabulary is not None and (isinstance(vocabulary, (str, bytes)) or not isinstance(vocabulary, Collection)
                                   or not all(isinstance(word, str) and word for word in vocabulary)):
        raise ValueError(f"vocabulary must be a collection of non-empty strings or None, got {vocabulary!r}"[:300])
    rule = labelling_of(labelling)
    spec = SPEC
    if vocabulary is not None:
        words = dataclasses.replace(SPEC.extractions["single_word"], vocabulary=frozenset(vocabulary))
        spec = dataclasses.replace(SPEC, extractions={**SPEC.extractions, "single_word": words})

    def accuracy_reward(completions: list, answer: list | None = None, answers: list | None = None,
                        answer_type: list | None = None, **kwargs) -> list[float | None]:
        count = check_columns(reward_name, completions, answers=answers, answer=answer, answer_type=answer_type)
        rows = zip(completions, _column(answers, count), _column(answer, count), _column(answer_type, count))
        out: list[float | None] = []
        for k, (completion, golds, gold, kind) in enumerate(rows):
            question = _question(golds, gold, kind, reward_name, f"[{k}]")
            text = completion_text(completion, f"{reward_name}: completions[{k}]")
            out.append(None if question is None else spec.reward(question, text, rule))
        return out

    reward_name = name or ("accuracy_reward" if labelling == "majority" else f"accuracy_reward_{labelling}")
    return named(accuracy_reward, reward_name)


accuracy_reward = make_accuracy_reward()
format_reward = make_format_reward("think_answer")


def _accuracy(text: str, ground_truth: Any, extra_info: dict, labelling: str | None = None, **kwargs) -> float | None:
    name = labelling or extra_info.get("labelling") or "majority"
    if not isinstance(name, str) or name not in RULES:
        raise ValueError(f"compute_score: unknown labelling {name!r}; valid: {', '.join(RULES)}")
    question = _question(ground_truth, where="compute_score", field="ground_truth")
    return None if question is None else SPEC.reward(question, text, labelling_of(name))


_verl_score = verl_compute_score(_accuracy)


def compute_score(data_source: str | None = None, solution_str: str | None = None, ground_truth: Any = None,
                  extra_info: dict | None = None, **kwargs) -> Any:
    """verl's custom reward against the 3 annotator answers (majority, unless the reward kwarg or
    ``extra_info`` names a ``labelling``); 0.0 where there is no target.

    Example:
        >>> compute_score("clotho_aqa", "No", ["yes", "no", "maybe"]), compute_score("clotho_aqa", "No", ["no"])
        (0.0, 1.0)
        >>> compute_score("clotho_aqa", "No", ["yes", "no", "maybe"], labelling="any_of_3")
        1.0
    """
    return _verl_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
