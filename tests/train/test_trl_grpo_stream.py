"""TRL's GRPOTrainer on ``clevr_math.stream(...)``, with the curriculum moved by its trainer callback.

The stream renders synthetic worlds on the fly (no data folder); its ``Curriculum`` raises the
number of operations every step, and ``curriculum.trainer_callback()`` tells it the trainer's
step. The rewards are ours; a thin wrapper around the accuracy reward records which problems
(their ``num_operations``, a column TRL passes on) each step trained on.

What TRL and the stream do between them, measured here: GRPO shuffles an iterable train set
through a 1,000-problem buffer unless ``shuffle_dataset=False`` (the whole buffer would be drawn
at the first level), and Accelerate's data loader reads one batch ahead, so the problems of step
``k`` are drawn when the curriculum is at step ``k - 2``: a level set at step ``s`` is trained on
from step ``s + 2``. Three steps are therefore the fewest that show the curriculum acting.
"""

from __future__ import annotations

import functools
import math

import pytest

pytest.importorskip("trl")

import datasets  # noqa: E402
from trl import GRPOTrainer  # noqa: E402

from clevr_math import Curriculum, stream  # noqa: E402
from clevr_math.rewards import accuracy_reward, format_reward  # noqa: E402
from tiny_models import tiny_llava  # noqa: E402
from train_helpers import grpo_args, print_steps, step_logs, tokenizer_texts  # noqa: E402

STREAM_STEPS = 3
OPERATIONS = [1, 2, 3]


def _recording(reward, seen: list):
    """``reward`` unchanged (same name, so TRL logs it as ours), also keeping per call the
    trainer's step, the problems' ``num_operations`` and the values returned."""

    @functools.wraps(reward)
    def recorded(completions, trainer_state, num_operations, **kwargs):
        values = reward(completions=completions, **kwargs)
        seen.append({"step": trainer_state.global_step + 1, "num_operations": list(num_operations),
                     "values": values})
        return values

    return recorded


def test_grpo_on_the_stream_follows_the_curriculum_callback_and_logs_the_reward_per_step(tmp_path):
    curriculum = Curriculum.raising("num_operations", OPERATIONS, every=1)
    # One shard, one problem per scene: the curriculum is read for every scene, so every problem.
    problems = stream(seed=0, curriculum=curriculum, num_shards=1, questions_per_image=1)
    sample = datasets.Dataset.from_list(list(stream(seed=0, num_questions=16, num_shards=1, num_operations=3)))
    kit = tiny_llava(tmp_path / "model", tokenizer_texts(sample, columns=("prompt",)))
    seen: list[dict] = []
    trainer = GRPOTrainer(
        model=str(kit.folder), processing_class=kit.processor, train_dataset=problems,
        reward_funcs=[_recording(accuracy_reward, seen), format_reward],
        args=grpo_args(tmp_path / "run", kit.processor.tokenizer, max_steps=STREAM_STEPS, shuffle_dataset=False,
                       log_completions=False),
        callbacks=[curriculum.trainer_callback()],
    )
    trainer.train()

    assert curriculum.step == STREAM_STEPS  # the callback moved it with the trainer
    trained_on = {call["step"]: set(call["num_operations"]) for call in seen}
    # step k trains on problems drawn at curriculum step max(0, k - 2) (see the module docstring)
    assert trained_on == {1: {1}, 2: {1}, 3: {2}}

    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STREAM_STEPS + 1))
    for log, call in zip(logs, seen):
        assert math.isclose(log["rewards/accuracy_reward/mean"], sum(call["values"]) / len(call["values"]))
        assert 0.0 <= log["rewards/format_reward/mean"] <= 1.0 and math.isfinite(log["loss"])
    print_steps("GRPO clevr_math.stream + curriculum", logs)
    per_step = [sorted(trained_on[step]) for step in sorted(trained_on)]
    print(f"[GRPO clevr_math.stream + curriculum] num_operations per step: {per_step}")
