"""Clotho-AQA's rewards in the R1-family trainers' signatures (:mod:`builder_utils.evaluation.trainer_rewards`),
over the same scoring as :mod:`clotho_aqa.rewards` and ``clotho-aqa evaluate``. Of those trainers only
ms-swift reads audio: its plugin is ``clotho_aqa/swift_plugin.py``.

Example:
    >>> SwiftAccuracy(args=None)(["<think>.</think><answer>yes</answer>", "no"], solution=["yes", "yes"],
    ...                          annotator_answers=[["yes", "yes", "no"]] * 2, answer_type=["yes_no"] * 2)
    [1.0, 0.0]
"""

from __future__ import annotations

from builder_utils.evaluation.trainer_rewards import solution_reward, swift_orm
from builder_utils.hub.trainer_formats import SWIFT_ANSWERS
from clotho_aqa.rewards import accuracy_reward, format_reward

__all__ = ["SwiftAccuracy", "SwiftFormat", "r1_aqa_accuracy"]

#: ms-swift reward classes: ``solution`` is the majority answer, the annotators' answers are renamed
#: in the rows (``answers`` is one of ms-swift's automatic response columns).
SwiftAccuracy = swift_orm(accuracy_reward, "SwiftAccuracy", {"solution": "answer", SWIFT_ANSWERS: "answers"})
SwiftFormat = swift_orm(format_reward, "SwiftFormat")
#: R1-AQA's reward signature (``src/utils/rewards.py``: ``(completions, solution, **kwargs)``, the solution
#: ``<answer>option</answer>``): pass it in its ``reward_funcs`` beside its format reward.
r1_aqa_accuracy = solution_reward(accuracy_reward, "accuracy_reward")
