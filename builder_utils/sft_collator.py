"""The SFT data collator for audio conversations (``messages`` + ``audios``) under TRL's ``SFTTrainer``.

TRL 1.16 has no audio path: it counts a row as multimodal only with ``image`` / ``images`` and
prepares the rest as text (the processor then refuses the audio placeholder), but its loop takes
a collator with ``skip_prepare_dataset``. This one fills each placeholder with its clip (decoded
without torchcodec) and labels the assistant turns only, as TRL's ``assistant_only_loss``.

Example (needs transformers and a processor with an audio feature extractor)::

    train = without_decoding(load_dataset("REPO_ID", "conversations", split="train"))
    trainer = SFTTrainer(model="MODEL_ID", processing_class=processor, train_dataset=train,
                         data_collator=AudioSFTCollator(processor),
                         args=SFTConfig(output_dir="sft", remove_unused_columns=False,
                                        dataset_kwargs={"skip_prepare_dataset": True}))
"""

from __future__ import annotations

import dataclasses
from typing import Any

from builder_utils.audio import decode_audio

__all__ = ["AudioSFTCollator"]

#: What labels hold where no loss is computed (PyTorch's cross-entropy ``ignore_index``).
IGNORE_INDEX = -100


@dataclasses.dataclass
class AudioSFTCollator:
    """Batches of conversation rows for an audio-language processor (see the module docstring).

    ``assistant_only`` needs ``{% generation %}`` markers in the chat template (none marked is a
    ValueError; ``False`` trains on every token but the padding).
    """

    processor: Any
    assistant_only: bool = True
    messages: str = "messages"
    audios: str = "audios"

    @property
    def sampling_rate(self) -> int:
        """The rate the processor's feature extractor expects (16 kHz for Qwen2-Audio)."""
        return int(self.processor.feature_extractor.sampling_rate)

    def filled(self, row: dict) -> list[dict]:
        """The row's messages with each audio placeholder holding its clip; as many placeholders as clips."""
        clips = list(row[self.audios] or [])
        messages, used = [], 0
        for message in row[self.messages]:
            content = message["content"]
            if isinstance(content, str):
                messages.append(message)
                continue
            parts = []
            for part in content:
                if part.get("type") == "audio":
                    if used == len(clips):
                        raise ValueError(f"a row has more audio placeholders than clips in {self.audios!r} "
                                         f"({len(clips)})")
                    array, _ = decode_audio(clips[used], sampling_rate=self.sampling_rate, mono=True)
                    part = {"type": "audio", "audio": array}
                    used += 1
                parts.append(part)
            messages.append({**message, "content": parts})
        if used != len(clips):
            raise ValueError(f"a row has {len(clips)} clip(s) in {self.audios!r} but {used} audio placeholder(s)")
        return messages

    def __call__(self, rows: list[dict]) -> dict:
        out = self.processor.apply_chat_template(
            [self.filled(row) for row in rows], tokenize=True, return_dict=True, return_tensors="pt",
            return_assistant_tokens_mask=self.assistant_only,
            processor_kwargs={"padding": True, "padding_side": "right"},
        )
        labels = out["input_ids"].clone()
        ignored = out["attention_mask"] == 0
        if self.assistant_only:
            assistant = out.pop("assistant_masks")
            if not bool((assistant.sum(dim=1) > 0).all()):
                raise ValueError("the chat template marks no assistant token ({% generation %} markers are missing): "
                                 "use a template that has them, or AudioSFTCollator(processor, assistant_only=False)")
            ignored |= assistant == 0
        labels[ignored] = IGNORE_INDEX
        out["labels"] = labels
        return dict(out)
