"""CLEVR-Math's rewards in the R1-family trainers' signatures (:mod:`builder_utils.evaluation.trainer_rewards`),
over the same scoring as :mod:`clevr_math.rewards` and ``clevr-math evaluate``.

This file is also EasyR1's batch reward function file (``REWARD_TYPE``):
``worker.reward.reward_function=<this file>:compute_score``; the sequential one is
``clevr_math/easyr1_sequential.py``; ms-swift's plugin is ``clevr_math/swift_plugin.py``.

Example:
    >>> compute_score([{"response": "<think>2 + 1</think><answer>3</answer>", "response_length": 9, "ground_truth": "3"}])
    [{'overall': 1.0, 'format': 1.0, 'accuracy': 1.0}]
"""

from __future__ import annotations

from builder_utils.evaluation.trainer_rewards import easyr1_batch, easyr1_sequential, swift_orm, vlm_r1_method
from clevr_math.rewards import _accuracy, accuracy_reward, format_reward

__all__ = ["REWARD_NAME", "REWARD_TYPE", "SwiftAccuracy", "SwiftFormat", "compute_score", "compute_score_sequential",
           "vlm_r1_accuracy"]

# EasyR1 reads these two module attributes (verl/workers/reward/function.py).
REWARD_NAME = "clevr_math"
REWARD_TYPE = "batch"

compute_score_sequential = easyr1_sequential(_accuracy)
compute_score = easyr1_batch(compute_score_sequential)
#: ms-swift reward classes: the rows' ``solution`` is the answer.
SwiftAccuracy = swift_orm(accuracy_reward, "SwiftAccuracy", {"solution": "answer"})
SwiftFormat = swift_orm(format_reward, "SwiftFormat")
#: VLM-R1's per-row method (the rows' ``accu_reward_method`` is ``clevr_math``).
vlm_r1_accuracy = vlm_r1_method(_accuracy)
