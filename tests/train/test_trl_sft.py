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

from trl.data_utils import is_conversational  # noqa: E402

from tiny_models import tiny_llava  # noqa: E402
from train_helpers import (  # noqa: E402
    STEPS,
    BatchRecordingSFTTrainer,
    assert_assistant_only,
    print_steps,
    sft_args,
    step_logs,
    tokenizer_texts,
)


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
    print_steps("SFT CLEVR-Math conversations", logs)

    assert_assistant_only(trainer, rows, kit.processor.tokenizer)
