"""SFT that leads into GRPO: reasoning SFT on CLEVR-Math's ``reasoning_messages``, then GRPO from
that model on ``prompts`` with our rewards.

``reasoning_messages`` answers every turn ``<think>{cot}</think><answer>{n}</answer>`` after the
``think_answer`` system turn, which the ``prompts`` rows open with too. A tiny LLaVA-style model
(random weights) is fine-tuned on it, exactly as the card's SFT snippet loads it (the column
renamed to ``messages``, ``assistant_only_loss=True``), until it writes the format; GRPO then
starts from the saved model with no generation bias, and the format reward it logs is not zero
(a random model never writes the four tags in order: the other GRPO tests need a biased policy
for that). Every completion TRL logged is scored again by ``format_reward``.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("trl")

from trl import GRPOConfig, GRPOTrainer, SFTTrainer  # noqa: E402

from builder_utils.hub import attach_media  # noqa: E402
from clevr_math.rewards import accuracy_reward, format_reward  # noqa: E402
from tiny_models import IMAGE, tiny_llava  # noqa: E402
from train_helpers import logged_completions, print_steps, sft_args, step_logs, tokenizer_texts  # noqa: E402

SFT_STEPS = 120
#: A wider, deeper text model than the other tests' (those never learn to write long answers):
#: it learns to close the chain of thought and answer in the tags within 120 steps.
WIDTH, LAYERS = 128, 2
GRPO_STEPS = 2


def test_reasoning_sft_then_grpo_earns_a_format_reward(clevr_export, tmp_path):
    talks = clevr_export.load("conversations")
    # what the card's SFT snippet does: the reasoning target under TRL's column name
    rows = talks.remove_columns("messages").rename_column("reasoning_messages", "messages")
    prompts = clevr_export.load("prompts")
    kit = tiny_llava(tmp_path / "model", tokenizer_texts(rows, prompts, columns=("messages", "prompt")),
                     width=WIDTH, layers=LAYERS)
    sft = SFTTrainer(model=str(kit.folder), processing_class=kit.processor, train_dataset=rows,
                     args=sft_args(tmp_path / "sft", max_steps=SFT_STEPS, learning_rate=3e-3))
    sft.train()
    sft_logs = step_logs(sft.state.log_history)
    assert sft_logs[-1]["loss"] < sft_logs[0]["loss"]
    print_steps("reasoning SFT CLEVR-Math conversations (first and last)", [sft_logs[0], sft_logs[-1]])
    tuned = tmp_path / "tuned"
    sft.save_model(str(tuned))
    kit.processor.save_pretrained(tuned)

    train = attach_media(prompts, clevr_export.load("images"))
    tokenizer = kit.processor.tokenizer
    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=GRPO_STEPS, use_cpu=True, report_to=[],
                      logging_steps=1, save_strategy="no", seed=0, disable_tqdm=True, dataloader_num_workers=0,
                      per_device_train_batch_size=8, num_generations=4, max_completion_length=256,
                      temperature=0.2, log_completions=True, learning_rate=1e-4,
                      generation_kwargs={"suppress_tokens": [tokenizer.convert_tokens_to_ids(IMAGE)]})
    grpo = GRPOTrainer(model=str(tuned), processing_class=kit.processor, reward_funcs=[accuracy_reward, format_reward],
                       train_dataset=train, args=args)
    grpo.train()

    logs = step_logs(grpo.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, GRPO_STEPS + 1))
    print_steps("GRPO CLEVR-Math prompts from the reasoning-SFT model", logs)
    assert sum(log["rewards/format_reward/mean"] for log in logs) > 0
    records = logged_completions(tmp_path / "grpo")
    assert len(records) == GRPO_STEPS * args.per_device_train_batch_size
    for record in records:  # TRL logged what our reward returns for the text it generated
        assert record["format_reward"] == format_reward([record["completion"]])[0]
    assert any(record["format_reward"] == 1.0 for record in records)
    assert all(math.isfinite(log["loss"]) for log in logs)
