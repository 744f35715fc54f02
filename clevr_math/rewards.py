"""Training rewards for CLEVR-Math (TRL, verl) on :data:`clevr_math.scoring.SPEC`: the mean accuracy
reward is ``evaluate``'s accuracy (builder_utils/evaluation/README.md, "Training rewards").

Example:
    >>> format_reward(["<think>5 - 2</think><answer>3</answer>", "3"])
    [1.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from decimal import Decimal, InvalidOperation

from builder_utils.evaluation.rewards import (check_columns, completion_text, gold_text, make_format_reward, named,
                                              verl_compute_score)
from builder_utils.evaluation.spec import Question
from builder_utils.options import Instance
from clevr_math.scoring import SPEC

__all__ = ["accuracy_reward", "compute_score", "format_reward", "make_accuracy_reward", "make_format_reward"]


def _question(answer: Any, where: str) -> Question | None:
    """The integer question of a gold answer: numbers compared as numbers (``3.0`` and ``"3.0"`` are 3)."""
    text = gold_text(answer, where)
    if text is None:
        return None
    if text.isascii() and text.isdigit():
        return Question("", (text,), "integer")
    try:
        number = Decimal(text)
    except InvalidOperation:
        number = None
    if number is not None and number.is_finite() and number == number.to_integral_value():
        text = str(int(number))
    return Question("", (text,), "integer")


def make_accuracy_reward(name: str = "accuracy_reward") -> Callable[..., list[float | None]]:
    """A TRL accuracy reward: 1.0 where the completion's integer is the ``answer``, None without one.

    Example:
        >>> make_accuracy_reward()(["\\\\boxed{2}", "2"], answer=["2", None])
        [1.0, None]
    """
    Instance(str)("name", name)

    def accuracy_reward(completions: list, answer: list | None = None, **kwargs) -> list[float | None]:
        count = check_columns(name, completions, answer=answer)
        answers = answer if answer is not None else [None] * count
        out: list[float | None] = []
        for k, (completion, gold) in enumerate(zip(completions, answers)):
            question = _question(gold, f"{name}: answer[{k}]")
            text = completion_text(completion, f"{name}: completions[{k}]")
            out.append(None if question is None else SPEC.reward(question, text))
        return out

    return named(accuracy_reward, name)


accuracy_reward = make_accuracy_reward()
format_reward = make_format_reward("think_answer")


def _accuracy(text: str, ground_truth: Any, extra_info: dict, **kwargs) -> float | None:
    question = _question(ground_truth, "compute_score: ground_truth")
    return None if question is None else SPEC.reward(question, text)


_verl_score = verl_compute_score(_accuracy)


def compute_score(data_source: str | None = None, solution_str: str | None = None, ground_truth: Any = None,
                  extra_info: dict | None = None, **kwargs) -> Any:
    """verl's custom reward: 1.0 when ``solution_str`` gives ``ground_truth``, else 0.0 (also without one).

    Example:
        >>> compute_score("clevr_math", "I count 7.", "7"), compute_score("clevr_math", "7", None)
        (1.0, 0.0)
        >>> compute_score("clevr_math", "<think>4 + 3</think><answer>7</answer>", "7", format_weight=0.2)
        {'score': 1.2, 'accuracy': 1.0, 'format': 1.0}
    """
    return _verl_score(data_source, solution_str, ground_truth, extra_info, **kwargs)
