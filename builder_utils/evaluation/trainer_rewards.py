"""The training rewards in the R1-family trainers' own call signatures, each a thin wrapper over a
dataset's scoring (its ``accuracy(text, ground_truth, extra_info)`` and TRL rewards in ``<pkg>.rewards``),
so a change of the scoring spec applies to every trainer alike. No trainer is imported.

Signatures, as read in each trainer's source (cited in ``tests/test_trainer_formats.py``):

- EasyR1 (``verl/workers/reward/function.py``): a file whose ``REWARD_TYPE`` is ``"batch"``
  (``compute_score(reward_inputs: list[dict]) -> list[dict]``) or ``"sequential"``
  (``compute_score(reward_input: dict) -> dict``); each input has ``response``, ``response_length``,
  ``ground_truth``; each score ``overall`` (the trained reward), ``format``, ``accuracy``.
- ms-swift (``swift/rewards/orm.py``): an ``ORM`` class, built with ``args``, called
  ``(completions: list[str], **columns) -> list[float]``; registered in ``orms`` by a plugin file.
- VLM-R1 (``grpo_jsonl.py``, ``accuracy_reward``): a per-row method ``(content, sol) -> float``
  chosen by the row's ``accu_reward_method``; ``sol`` arrives as ``<answer> N </answer>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from builder_utils.evaluation.rewards import completion_text, format_ok
from builder_utils.options import Number

__all__ = ["easyr1_batch", "easyr1_sequential", "solution_reward", "swift_orm", "vlm_r1_method"]

Accuracy = Callable[..., "float | None"]
#: EasyR1's default weight of the format score in ``overall`` (its ``examples/reward_function/r1v.py``).
EASYR1_FORMAT_WEIGHT = 0.5
_ANSWER_TAGS = re.compile(r"^\s*<answer>(.*?)</answer>\s*$", re.DOTALL)


def easyr1_sequential(accuracy: Accuracy, format_style: str = "think_answer") -> Callable[..., dict]:
    """EasyR1's sequential reward over ``accuracy``: ``overall`` = (1 - w) x accuracy + w x format,
    as EasyR1's own r1v reward weighs them (``format_weight`` w, a reward function kwarg).

    Example:
        >>> score = easyr1_sequential(lambda text, truth, extra: float(text.endswith(truth + "</answer>")))
        >>> score({"response": "<think>.</think><answer>3</answer>", "response_length": 9, "ground_truth": "3"})
        {'overall': 1.0, 'format': 1.0, 'accuracy': 1.0}
    """
    def compute_score(reward_input: Mapping[str, Any], format_weight: float = EASYR1_FORMAT_WEIGHT,
                      **kwargs) -> dict[str, float]:
        if not isinstance(reward_input, Mapping):
            raise ValueError(f"compute_score: EasyR1 hands one dict per response (REWARD_TYPE sequential), "
                             f"got {type(reward_input).__name__}")
        try:  # a weight that is not finite would make every reward NaN (issue 37)
            weight = Number(minimum=0, maximum=1)("format_weight", format_weight)
        except ValueError as exc:
            raise ValueError(f"compute_score: {exc}") from None
        text = completion_text(reward_input.get("response"), "compute_score: response")
        value = accuracy(text, reward_input.get("ground_truth"), {}, **kwargs)
        correct = 0.0 if value is None else float(value)
        form = 1.0 if format_ok(text, format_style) else 0.0
        return {"overall": (1 - weight) * correct + weight * form, "format": form, "accuracy": correct}

    return compute_score


def easyr1_batch(sequential: Callable[..., dict]) -> Callable[..., list[dict]]:
    """EasyR1's batch reward: ``sequential`` over a list of reward inputs, in order.

    Example:
        >>> score = easyr1_batch(easyr1_sequential(lambda text, truth, extra: float(text == truth)))
        >>> [s["accuracy"] for s in score([{"response": "3", "ground_truth": "3"}, {"response": "4", "ground_truth": "3"}])]
        [1.0, 0.0]
    """
    def compute_score(reward_inputs: Sequence[Mapping[str, Any]], **kwargs) -> list[dict[str, float]]:
        if isinstance(reward_inputs, Mapping) or not isinstance(reward_inputs, (list, tuple)):
            raise ValueError("compute_score: EasyR1 hands a list of dicts (REWARD_TYPE batch), "
                             f"got {type(reward_inputs).__name__}")
        return [sequential(one, **kwargs) for one in reward_inputs]

    return compute_score


def swift_orm(reward: Callable[..., list], name: str, columns: Mapping[str, str] | None = None) -> type:
    """An ms-swift ORM class over a TRL-style ``reward(completions, **columns)``; ``columns`` renames
    ms-swift's row columns to the reward's keywords (``solution`` -> ``answer``); None rewards become 0.0.

    Example:
        >>> Exact = swift_orm(lambda completions, answer=None, **kw: [float(c == a) for c, a in zip(completions, answer)],
        ...                   "exact", {"solution": "answer"})
        >>> Exact(args=None)(["3", "4"], solution=["3", "3"], trainer_state=None)
        [1.0, 0.0]
    """
    renames = dict(columns or {})

    def __init__(self, args=None, **kwargs):
        self.args = args

    def __call__(self, completions: list, **kwargs) -> list[float]:
        given = {renames.get(key, key): value for key, value in kwargs.items()}
        return [0.0 if value is None else float(value) for value in reward(completions, **given)]

    return type(name, (), {"__init__": __init__, "__call__": __call__, "__doc__": f"ms-swift ORM: {name}.",
                           "__module__": getattr(reward, "__module__", __name__)})


def _untagged(sol: Any) -> Any:
    if not isinstance(sol, str):
        return sol
    tagged = _ANSWER_TAGS.match(sol)
    return (tagged.group(1) if tagged else sol).strip()


def solution_reward(reward: Callable[..., list], name: str) -> Callable[..., list]:
    """A TRL-style reward over ``reward`` for trainers whose rows give the answer as ``solution``
    (``<answer> x </answer>`` or bare: R1-V, R1-AQA), whatever their other columns; None becomes 0.0.

    Example:
        >>> exact = solution_reward(lambda completions, answer=None, **kw: [float(c == a) for c, a in zip(completions, answer)],
        ...                         "exact")
        >>> exact(["dog", "cat"], solution=["<answer>dog</answer>", "dog"], answer=[2, 0])
        [1.0, 0.0]
    """
    def wrapped(completions: list, solution: list | None = None, **kwargs) -> list[float]:
        kwargs.pop("answer", None)  # the trainer's own column (R1-AQA: the option's index), not ours
        answers = None if solution is None else [_untagged(s) for s in solution]
        return [0.0 if value is None else float(value) for value in reward(completions, answer=answers, **kwargs)]

    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def vlm_r1_method(accuracy: Accuracy) -> Callable[..., float]:
    """VLM-R1's per-row accuracy method over ``accuracy``; ``sol`` may keep the ``<answer>`` tags VLM-R1 adds.

    Example:
        >>> method = vlm_r1_method(lambda text, truth, extra: float(text.strip() == truth))
        >>> method("3", "<answer> 3 </answer>"), method("4", "3")
        (1.0, 0.0)
    """
    def reward(content: str, sol: str, **kwargs) -> float:
        if not isinstance(sol, str):
            raise ValueError(f"accuracy method: sol must be a string, got {type(sol).__name__}")
        value = accuracy(completion_text(content), _untagged(sol), {})
        return 0.0 if value is None else float(value)

    return reward
