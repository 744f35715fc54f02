"""CLEVR-Math's EasyR1 reward, one response at a time: ``worker.reward.reward_function=<this file>:compute_score``
(the batch one is ``clevr_math/trainer_rewards.py``).

Example:
    >>> compute_score({"response": "<answer>3</answer>", "response_length": 4, "ground_truth": "3"})
    {'overall': 0.5, 'format': 0.0, 'accuracy': 1.0}
"""

from clevr_math.trainer_rewards import REWARD_NAME, compute_score_sequential as compute_score

__all__ = ["REWARD_NAME", "REWARD_TYPE", "compute_score"]

REWARD_TYPE = "sequential"  # EasyR1 reads it (verl/workers/reward/function.py)
