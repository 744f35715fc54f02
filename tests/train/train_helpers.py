"""What the TRL tests share: trainer arguments for two tiny CPU steps, a format-biased random
policy, and reading back what TRL logged.

Example::
    trainer = GRPOTrainer(model=str(kit.folder), processing_class=kit.processor,
                          reward_funcs=[accuracy_reward], train_dataset=rows,
                          args=grpo_args(tmp_path / "run", kit.processor.tokenizer))
    trainer.train()
    logged_completions(tmp_path / "run")[0]["completion"]   # the text TRL scored
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import torch
from transformers import PreTrainedTokenizerBase
from trl import GRPOConfig, SFTConfig, SFTTrainer

from tiny_models import EOS, FORMAT_TOKENS, IMAGE

STEPS = 2
# Strong enough that most sampled completions follow the biased grammar, weak enough that some
# break it: the format reward then takes both values over two steps.
FORMAT_BIAS = 9.0


def _common(output_dir: Path, seed: int) -> dict[str, Any]:
    # use_cpu: the suite's machines have no accelerator; report_to=[]: no tracker is contacted;
    # save_strategy="no": two steps need no checkpoint; logging every step: one log record per step.
    return dict(output_dir=str(output_dir), max_steps=STEPS, use_cpu=True, report_to=[], logging_steps=1,
                save_strategy="no", seed=seed, disable_tqdm=True, dataloader_num_workers=0)


def sft_args(output_dir: Path, seed: int = 0, **overrides) -> SFTConfig:
    """Two SFT steps of two conversations each, the loss on the assistant turns only."""
    values = dict(_common(output_dir, seed), per_device_train_batch_size=2, assistant_only_loss=True,
                  learning_rate=1e-3)
    return SFTConfig(**(values | overrides))


def format_bias(tokenizer: PreTrainedTokenizerBase, strength: float = FORMAT_BIAS) -> list[list]:
    """``sequence_bias`` for generation: a random model's completions mostly read
    ``<think>D</think><answer>D</answer>`` (D a digit), then end.

    A randomly initialised model samples near-uniform tokens, so without a bias no completion would
    ever earn a reward and "TRL logs what our rewards return" would compare zeros with zeros. The
    bias only favours a grammar; which digit is answered stays random, so accuracy varies too.
    """
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in (*FORMAT_TOKENS, EOS, "<|assistant|>")}
    think, end_think, answer, end_answer = (ids[t] for t in FORMAT_TOKENS)
    digits = [tokenizer.convert_tokens_to_ids(str(d)) for d in range(10)]
    assert tokenizer.unk_token_id not in digits and len(set(digits)) == 10, "each digit must be one token"
    bias = [[[ids["<|assistant|>"], think], strength], [[end_think, answer], strength],
            [[end_answer, ids[EOS]], strength]]
    for digit in digits:
        bias += [[[think, digit], strength], [[answer, digit], strength],
                 [[think, digit, end_think], strength], [[answer, digit, end_answer], strength]]
    return bias


def grpo_args(output_dir: Path, tokenizer: PreTrainedTokenizerBase, seed: int = 0, **overrides) -> GRPOConfig:
    """Two GRPO steps of 4 prompts x 2 completions, each completion logged to Parquet
    (``log_completions``) with the value of every reward function."""
    generation = {"sequence_bias": format_bias(tokenizer),
                  # TRL suppresses the image token itself unless generation_kwargs say otherwise
                  "suppress_tokens": [tokenizer.convert_tokens_to_ids(IMAGE)]}
    values = dict(_common(output_dir, seed), per_device_train_batch_size=8, num_generations=2,
                  max_completion_length=8, temperature=1.0, log_completions=True, generation_kwargs=generation,
                  learning_rate=1e-3)
    return GRPOConfig(**(values | overrides))


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(part.get("text") or "" for part in content)


def logged_completions(output_dir: Path) -> list[dict[str, Any]]:
    """Every completion TRL logged (``OUTPUT/completions/completions_<step>.parquet``), as
    ``{"step", "question", "completion", <reward name>: value, ...}`` with plain-text fields."""
    records = []
    for path in sorted(glob.glob(os.path.join(output_dir, "completions", "completions_*.parquet"))):
        for row in pq.read_table(path).to_pylist():
            user = next(m for m in row.pop("prompt") if m["role"] == "user")
            completion = row.pop("completion")
            records.append({**row, "question": _text(user["content"]),
                            "completion": _text(completion[-1]["content"])})
    return records


def step_logs(log_history: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-step records of a trainer's ``state.log_history`` (the closing summary left out)."""
    return [dict(record) for record in log_history if "train_runtime" not in record]


def tokenizer_texts(*datasets_: Iterable[Mapping[str, Any]], columns: tuple[str, ...] = ("texts", "prompt")) -> list[str]:
    """The texts a tiny tokenizer trains on: the ``columns`` of the rows (questions, answers,
    instructions) as JSON text, one string per column (BPE merges only need the characters)."""
    return [json.dumps(rows[column], ensure_ascii=False, default=str)
            for rows in datasets_ for column in columns if column in rows.column_names]


class BatchRecordingSFTTrainer(SFTTrainer):
    """TRL's SFTTrainer, unchanged, that also keeps each batch it computes the loss on (its tensors)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches: list[dict[str, torch.Tensor]] = []

    def compute_loss(self, model, inputs, *args, **kwargs):
        self.batches.append({key: value.detach().clone() for key, value in inputs.items()
                             if isinstance(value, torch.Tensor)})
        return super().compute_loss(model, inputs, *args, **kwargs)


def supervised_segments(input_ids: torch.Tensor, labels: torch.Tensor, tokenizer) -> list[str]:
    """The decoded runs of consecutive supervised positions (labels != -100) of one sequence."""
    segments, current = [], []
    for token, label in zip(input_ids.tolist(), labels.tolist()):
        if label != -100:
            assert label == token  # causal LM labels are the input ids (the model shifts them)
            current.append(token)
        elif current:
            segments.append(tokenizer.decode(current))
            current = []
    if current:
        segments.append(tokenizer.decode(current))
    return segments


def assert_assistant_only(trainer: BatchRecordingSFTTrainer, rows, tokenizer) -> None:
    """Every recorded sequence supervises exactly its conversation's assistant answers, each
    followed by the end-of-turn token: nothing of the user turns, the media tokens or padding.

    A sequence is matched to its conversation (a ``conversations`` row) by its first question.
    """
    expected = {row["texts"][0]["user"]: [f"{turn['assistant']}{EOS}" for turn in row["texts"]] for row in rows}
    seen = 0
    for batch in trainer.batches:
        for input_ids, labels in zip(batch["input_ids"], batch["labels"]):
            text = tokenizer.decode(input_ids, skip_special_tokens=False)
            first_question = next(q for q in expected if q in text)
            assert supervised_segments(input_ids, labels, tokenizer) == expected[first_question], first_question
            seen += 1
    assert seen == STEPS * trainer.args.per_device_train_batch_size


def print_steps(run: str, logs: Iterable[Mapping[str, Any]]) -> None:
    """One line per step (shown with ``pytest -s``): the loss and, for GRPO, the rewards TRL logged;
    BENCHMARKS.md quotes these lines."""
    for log in logs:
        rewards = "".join(f", {key[len('rewards/'):-len('/mean')]} {value:.3f}" for key, value in log.items()
                          if key.startswith("rewards/") and key.endswith("/mean"))
        reward = f", reward {log['reward']:.3f}" if "reward" in log else ""
        print(f"[{run}] step {log['step']}: loss {log['loss']:.4f}{reward}{rewards}")
