"""TRL's SFTTrainer on the ``conversations`` configuration's ``messages`` column, as exported.

Two real optimisation steps of a tiny LLaVA-style model (built from configs, random weights) on
CLEVR-Math conversations read back from a ``--media shared`` export; no conversion between the
export and the trainer. The loss must cover the assistant turns only: we record the batches the
trainer really computed its loss on and decode their supervised tokens.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("trl")

import torch  # noqa: E402
from trl import SFTTrainer  # noqa: E402
from trl.data_utils import is_conversational  # noqa: E402

from tiny_models import EOS, tiny_llava  # noqa: E402
from train_helpers import STEPS, sft_args, step_logs, tokenizer_texts  # noqa: E402


class BatchRecordingSFTTrainer(SFTTrainer):
    """TRL's SFTTrainer, unchanged, that also keeps each batch it computes the loss on."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches: list[dict[str, torch.Tensor]] = []

    def compute_loss(self, model, inputs, *args, **kwargs):
        self.batches.append({key: inputs[key].detach().clone() for key in ("input_ids", "labels")})
        return super().compute_loss(model, inputs, *args, **kwargs)


def _supervised_segments(input_ids: torch.Tensor, labels: torch.Tensor, tokenizer) -> list[str]:
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


def test_sft_trains_on_clevr_messages_and_supervises_only_the_assistant_turns(clevr_export, tmp_path):
    rows = clevr_export.load("conversations")
    assert is_conversational(rows[0])  # TRL's own test of its conversational format
    kit = tiny_llava(tmp_path / "model", tokenizer_texts(rows))
    trainer = BatchRecordingSFTTrainer(model=str(kit.folder), processing_class=kit.processor,
                                       train_dataset=rows, args=sft_args(tmp_path / "run"))
    trainer.train()

    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STEPS + 1))
    assert all(math.isfinite(log["loss"]) and log["loss"] > 0 for log in logs)
    assert len(trainer.batches) == STEPS

    # Which conversation a sequence is: its first question; what must be supervised: each
    # assistant answer followed by the end-of-turn token, nothing of the user turns or the image.
    tokenizer = kit.processor.tokenizer
    expected = {row["texts"][0]["user"]: [f"{turn['assistant']}{EOS}" for turn in row["texts"]] for row in rows}
    seen = 0
    for batch in trainer.batches:
        for input_ids, labels in zip(batch["input_ids"], batch["labels"]):
            text = tokenizer.decode(input_ids, skip_special_tokens=False)
            first_question = next(q for q in expected if q in text)
            assert _supervised_segments(input_ids, labels, tokenizer) == expected[first_question]
            seen += 1
    assert seen == STEPS * trainer.args.per_device_train_batch_size
