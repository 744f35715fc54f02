"""TRL's SFTTrainer on the ``conversations`` configuration's ``messages`` column, as exported.

CLEVR-Math: two real optimisation steps of a tiny model of each of two vision families, LLaVA
and Idefics3 (built from configs, random weights), on conversations read back from a
``--media shared`` export; no conversion between the export and the trainer. The loss must cover the assistant turns only: we record the batches the
trainer really computed its loss on and decode their supervised tokens.

Clotho-AQA ``messages``: how far TRL 1.16's SFT path goes with audio (read in its source and run here):
- ``is_conversational`` accepts them (the ``{"type": "audio"}`` placeholder is a typed part).
- ``SFTTrainer`` counts a dataset as multimodal only when a row has ``image`` / ``images``; our
  rows have ``audios``, so it prepares them as text: it renders ``messages`` through the
  processor's chat template without the clip, and the processor refuses the audio token with no
  audio (``Found 1 <|AUDIO|> tokens in the text but no audio inputs were passed``). TRL never
  reads ``audios``; its vision collator takes ``images`` only.
- What TRL's loop does accept is a data collator of our own with ``skip_prepare_dataset``: the
  package's ``builder_utils.sft_collator.AudioSFTCollator`` fills the placeholder with the clip
  (16 kHz, decoded by our ``decode_audio``, without torch's audio stack) and masks everything but
  the assistant turns. With it, ``SFTTrainer`` runs two real steps on a tiny Qwen2-Audio-style
  model, labels checked as for CLEVR-Math.
"""

from __future__ import annotations

import math

import pytest

pytest.importorskip("trl")

from trl import SFTTrainer  # noqa: E402
from trl.data_utils import is_conversational  # noqa: E402
from trl.trainer.sft_trainer import DataCollatorForVisionLanguageModeling  # noqa: E402

from builder_utils.audio import without_decoding  # noqa: E402
from builder_utils.sft_collator import AudioSFTCollator  # noqa: E402
from tiny_models import AUDIO, AUDIO_FRAMES, MEL_BINS, tiny_idefics3, tiny_llava, tiny_qwen2_audio  # noqa: E402
from train_helpers import (  # noqa: E402
    STEPS,
    BatchRecordingSFTTrainer,
    assert_assistant_only,
    print_steps,
    sft_args,
    step_logs,
    tokenizer_texts,
)


@pytest.mark.parametrize("family", [tiny_llava, tiny_idefics3], ids=["llava", "idefics3"])
def test_sft_trains_on_clevr_messages_and_supervises_only_the_assistant_turns(clevr_export, tmp_path, family):
    rows = clevr_export.load("conversations")
    assert is_conversational(rows[0])  # TRL's own test of its conversational format
    kit = family(tmp_path / "model", tokenizer_texts(rows))
    trainer = BatchRecordingSFTTrainer(model=str(kit.folder), processing_class=kit.processor,
                                       train_dataset=rows, args=sft_args(tmp_path / "run"))
    trainer.train()

    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STEPS + 1))
    assert all(math.isfinite(log["loss"]) and log["loss"] > 0 for log in logs)
    assert len(trainer.batches) == STEPS
    print_steps(f"SFT CLEVR-Math conversations, {family.__name__}", logs)

    assert_assistant_only(trainer, rows, kit.processor.tokenizer)


@pytest.fixture(scope="module")
def clotho(clotho_export, tmp_path_factory):
    rows = without_decoding(clotho_export.load("conversations"))  # bytes; decoded by decode_audio
    kit = tiny_qwen2_audio(tmp_path_factory.mktemp("audio_model"), tokenizer_texts(rows))
    return rows, kit


def test_trl_takes_clotho_messages_as_conversational_but_stops_before_the_audio(clotho, tmp_path):
    rows, kit = clotho
    assert is_conversational(rows[0]) and rows[0]["messages"][0]["content"][0]["type"] == "audio"
    with pytest.raises(ValueError, match="no audio inputs were passed"):
        SFTTrainer(model=str(kit.folder), processing_class=kit.processor, train_dataset=rows,
                   args=sft_args(tmp_path / "run"))
    with pytest.raises(KeyError, match="images"):
        DataCollatorForVisionLanguageModeling(kit.processor)([dict(rows[0])])


def test_sft_trainer_runs_on_clotho_messages_with_the_shipped_audio_collator(clotho, tmp_path):
    rows, kit = clotho
    args = sft_args(tmp_path / "run", dataset_kwargs={"skip_prepare_dataset": True}, remove_unused_columns=False)
    trainer = BatchRecordingSFTTrainer(model=str(kit.folder), processing_class=kit.processor, train_dataset=rows,
                                       data_collator=AudioSFTCollator(kit.processor), args=args)
    trainer.train()

    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STEPS + 1))
    assert all(math.isfinite(log["loss"]) and log["loss"] > 0 for log in logs)
    assert_assistant_only(trainer, rows, kit.processor.tokenizer)
    print_steps("SFT Clotho-AQA conversations (audio collator)", logs)
    # The clips reached the model: one window of mel features per conversation, and as many audio
    # tokens in each sequence as the processor made of its clip (none would mean text-only training).
    audio_token = kit.processor.tokenizer.convert_tokens_to_ids(AUDIO)
    for batch in trainer.batches:
        assert batch["input_features"].shape == (args.per_device_train_batch_size, MEL_BINS, AUDIO_FRAMES)
        assert ((batch["input_ids"] == audio_token).sum(dim=1) > 0).all()


def test_audio_collator_refuses_rows_whose_clips_and_placeholders_disagree(clotho):
    rows, kit = clotho
    row = dict(rows[0])
    collator = AudioSFTCollator(kit.processor)
    with pytest.raises(ValueError, match="2 clip\\(s\\) in 'audios' but 1 audio placeholder"):
        collator([{**row, "audios": row["audios"] * 2}])
    with pytest.raises(ValueError, match="more audio placeholders than clips"):
        collator([{**row, "audios": []}])
