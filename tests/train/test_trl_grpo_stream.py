"""TRL's GRPOTrainer on ``clevr_math.stream(...)``, with the curriculum moved by its trainer callback.

The stream renders synthetic worlds on the fly (no data folder); its ``Curriculum`` raises the
number of operations every step, and ``curriculum.trainer_callback()`` tells it the trainer's
step. The rewards are ours; a thin wrapper around the accuracy reward records which problems
(their ``num_operations``, a column TRL passes on) each step trained on.

What TRL and the stream do between them, measured here: GRPO shuffles an iterable train set
through a 1,000-problem buffer unless ``shuffle_dataset=False`` (the whole buffer would be drawn
at the first level), and Accelerate's data loader reads one batch ahead, so the problems of step
``k`` are drawn when the curriculum is at step ``k - 2``: a level set at step ``s`` is trained on
from step ``s + 2``. The stream reads the level for every problem (a scene whose level changed
is cut short), so this holds whatever ``questions_per_image``: checked at 1 and 4, with 2 prompts
per step (4 completions of 2 generations), where reading the level once per scene used to train
each level for a number of steps that depended on how the scenes fell.

The adaptive curriculum (``AdaptiveCurriculum``) moves on the rewards TRL logs: its callback
reads ``rewards/<name>/mean`` from every log record.
"""

from __future__ import annotations

import functools
import math

import pytest

pytest.importorskip("trl")

import datasets  # noqa: E402
from trl import GRPOTrainer  # noqa: E402

from clevr_math import AdaptiveCurriculum, Curriculum, stream  # noqa: E402
from clevr_math.rewards import accuracy_reward, format_reward  # noqa: E402
from tiny_models import tiny_llava  # noqa: E402
from train_helpers import grpo_args, print_steps, step_logs, tokenizer_texts  # noqa: E402

STREAM_STEPS = 5
OPERATIONS = [1, 2, 3, 4]
#: Problems drawn at curriculum step s are trained on at step s + READ_AHEAD (see the module docstring).
READ_AHEAD = 2


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


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    sample = datasets.Dataset.from_list(list(stream(seed=0, num_questions=16, num_shards=1, num_operations=3)))
    return tiny_llava(tmp_path_factory.mktemp("model"), tokenizer_texts(sample, columns=("prompt",)))


def _train(kit, curriculum, output_dir, reward, steps, questions_per_image, **overrides):
    problems = stream(seed=0, curriculum=curriculum, num_shards=1, questions_per_image=questions_per_image)
    seen: list[dict] = []
    trainer = GRPOTrainer(
        model=str(kit.folder), processing_class=kit.processor, train_dataset=problems,
        reward_funcs=[_recording(reward, seen), format_reward],
        args=grpo_args(output_dir, kit.processor.tokenizer, max_steps=steps, shuffle_dataset=False,
                       log_completions=False, **overrides),
        callbacks=[curriculum.trainer_callback()],
    )
    trainer.train()
    return trainer, seen


@pytest.mark.parametrize("questions_per_image", [1, 4])
def test_grpo_on_the_stream_trains_each_level_from_its_documented_step(kit, tmp_path, questions_per_image):
    curriculum = Curriculum.raising("num_operations", OPERATIONS, every=1)
    # 4 completions of 2 generations: 2 prompts per step
    trainer, seen = _train(kit, curriculum, tmp_path / "run", accuracy_reward, STREAM_STEPS, questions_per_image,
                           per_device_train_batch_size=4)

    assert curriculum.step == STREAM_STEPS  # the callback moved it with the trainer
    trained_on = {call["step"]: sorted(set(call["num_operations"])) for call in seen}
    # step k trains on problems drawn at curriculum step max(0, k - 2): level max(0, k - 2)
    expected = {k: [OPERATIONS[min(max(0, k - READ_AHEAD), len(OPERATIONS) - 1)]] for k in range(1, STREAM_STEPS + 1)}
    assert trained_on == expected
    assert all(len(call["num_operations"]) == 4 for call in seen)

    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STREAM_STEPS + 1))
    for log, call in zip(logs, seen):
        assert math.isclose(log["rewards/accuracy_reward/mean"], sum(call["values"]) / len(call["values"]))
        assert 0.0 <= log["rewards/format_reward/mean"] <= 1.0 and math.isfinite(log["loss"])
    print_steps(f"GRPO clevr_math.stream + curriculum, {questions_per_image} question(s) per image", logs)
    print(f"[GRPO clevr_math.stream + curriculum, {questions_per_image} q/image] num_operations per step: "
          f"{[trained_on[step] for step in sorted(trained_on)]}")


def _constant(value: float, name: str):
    """A reward that gives every completion ``value``: the adaptive curriculum's input, fixed."""

    def reward(completions, **kwargs):
        return [value] * len(completions)

    reward.__name__ = name
    return reward


@pytest.mark.parametrize("value, start, moves", [(1.0, 0, [1, 2]), (0.0, 2, [1, 0])])
def test_adaptive_curriculum_moves_on_the_rewards_trl_logs(kit, tmp_path, value, start, moves):
    """A constant reward of 1 raises the level every ``window`` counted steps, 0 lowers it; the
    logged step right after a change is not counted (``delay=1``: it still trains on problems
    drawn before the change). With a window of 1: changes at the end of steps 1 and 3, and the
    problems follow from steps 3 and 5."""
    name = "solved"
    curriculum = AdaptiveCurriculum.over("num_operations", [1, 2, 3], reward=name, window=1, raise_above=0.75,
                                         lower_below=0.25, start=start, delay=1)
    trainer, seen = _train(kit, curriculum, tmp_path / "run", _constant(value, name), STREAM_STEPS, 4,
                           per_device_train_batch_size=4)

    logs = step_logs(trainer.state.log_history)
    assert [log[f"rewards/{name}/mean"] for log in logs] == [value] * STREAM_STEPS
    assert curriculum.changes == [(1, moves[0]), (3, moves[1])]
    trained_on = {call["step"]: sorted(set(call["num_operations"])) for call in seen}
    level_at = {1: start, 2: start, 3: moves[0], 4: moves[0], 5: moves[1]}
    assert trained_on == {step: [[1, 2, 3][level]] for step, level in level_at.items()}
    print(f"[GRPO clevr_math.stream + adaptive curriculum, reward {value}] num_operations per step: "
          f"{[trained_on[step] for step in sorted(trained_on)]}, changes {curriculum.changes}")


def test_adaptive_curriculum_holds_between_the_thresholds(kit, tmp_path):
    curriculum = AdaptiveCurriculum.over("num_operations", [1, 2, 3], reward="middling", window=2, raise_above=0.75,
                                         lower_below=0.25, start=1)
    _, seen = _train(kit, curriculum, tmp_path / "run", _constant(0.5, "middling"), 3, 4,
                     per_device_train_batch_size=4)
    assert curriculum.changes == [] and {n for call in seen for n in call["num_operations"]} == {2}
