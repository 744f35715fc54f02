"""TRL's GRPOTrainer on the ``prompts`` configuration with our rewards, as exported.

The rows are those of a ``--media shared`` export, ``attach_media(prompts, images)``: TRL reads
``prompt`` (conversational, an image placeholder), the joined ``images`` list and passes every other
column (``answer``, ``label``, ...) to the reward functions. Two real GRPO steps of a tiny model
of each of two vision families (LLaVA, Idefics3); then every completion TRL logged is scored again by our functions, and the values and
the per-step means TRL logged must be exactly those.
"""

from __future__ import annotations

import collections
import math

import pytest

pytest.importorskip("trl")

from trl import GRPOTrainer  # noqa: E402
from trl.data_utils import is_conversational  # noqa: E402

from builder_utils.hub import attach_media  # noqa: E402
from tiny_models import tiny_idefics3, tiny_llava  # noqa: E402
from train_helpers import STEPS, grpo_args, logged_completions, print_steps, step_logs, tokenizer_texts  # noqa: E402


def _question(prompt) -> str:
    user = next(m for m in prompt if m["role"] == "user")
    return "".join(part["text"] or "" for part in user["content"] if part["type"] == "text")


def _unique_questions(rows):
    """The rows whose question text no other row has: a logged completion names its prompt by
    that text only."""
    counts = collections.Counter(_question(p) for p in rows["prompt"])
    return rows.filter(lambda prompt: counts[_question(prompt)] == 1, input_columns=["prompt"])


def _rescored(records, rows, reward_funcs) -> list[dict[str, float]]:
    """Our reward functions called again on each logged completion, with its row's columns as
    TRL passes them (one list item per completion)."""
    by_question = {_question(row["prompt"]): row for row in rows}
    scores = []
    for record in records:
        row = by_question[record["question"]]
        columns = {name: [value] for name, value in row.items() if name != "prompt"}
        completion = [[{"role": "assistant", "content": record["completion"]}]]
        scores.append({f.__name__: f(prompts=[row["prompt"]], completions=completion, **columns)[0]
                       for f in reward_funcs})
    return scores


@pytest.mark.parametrize("family", [tiny_llava, tiny_idefics3], ids=["llava", "idefics3"])
def test_grpo_on_shared_media_prompts_logs_exactly_our_rewards(clevr_export, tmp_path, family):
    from clevr_math.rewards import accuracy_reward, format_reward

    prompts = _unique_questions(clevr_export.load("prompts"))  # filtered before the join: no media read
    rows = attach_media(prompts, clevr_export.load("images"))
    first = rows[0]
    assert is_conversational(first) and [image.size for image in first["images"]] == [(480, 320)]
    kit = family(tmp_path / "model", tokenizer_texts(clevr_export.load("prompts")))
    reward_funcs = [accuracy_reward, format_reward]
    trainer = GRPOTrainer(model=str(kit.folder), processing_class=kit.processor, reward_funcs=reward_funcs,
                          train_dataset=rows, args=grpo_args(tmp_path / "run", kit.processor.tokenizer))
    trainer.train()

    records = logged_completions(tmp_path / "run")
    args = trainer.args
    assert len(records) == STEPS * args.per_device_train_batch_size
    rescored = _rescored(records, prompts, reward_funcs)  # the rows without their media
    names = [f.__name__ for f in reward_funcs]
    for record, ours in zip(records, rescored):
        assert {name: record[name] for name in names} == ours, record["completion"]
    # The biased random policy gives both values of each reward (see train_helpers.format_bias; seed 0).
    assert all({r[name] for r in rescored} == {0.0, 1.0} for name in names)

    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STEPS + 1))
    print_steps(f"GRPO CLEVR-Math prompts (shared media), {family.__name__}", logs)
    for log in logs:
        step = [ours for record, ours in zip(records, rescored) if record["step"] == log["step"]]
        for name in names:
            mean = sum(s[name] for s in step) / len(step)
            assert math.isclose(log[f"rewards/{name}/mean"], mean, abs_tol=1e-6), (log["step"], name)
        assert math.isclose(log["reward"], sum(sum(s.values()) for s in step) / len(step), abs_tol=1e-6)
