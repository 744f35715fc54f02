"""What the verl tests share: tiny processors built offline from configs (the tokenizer of
``tests/train/tiny_models.py``), verl's dataset config, and a verl batch of scored responses.

Example::
    processor = audio_processor(["Is it raining?"])
    ds = RLHFDataset(files, processor.tokenizer, dataset_config(tmp_path), processor=processor)
    batch = response_batch(processor.tokenizer, [ds[i] for i in range(len(ds))], ["<answer>yes</answer>"] * len(ds))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow.parquet as pq
import torch
from omegaconf import OmegaConf
from transformers import CLIPImageProcessorPil, LlavaProcessor, Qwen2AudioProcessor, WhisperFeatureExtractor
from verl import DataProto
from verl.utils.dataset.rl_dataset import collate_fn

from tiny_models import AUDIO, AUDIO_RATE, AUDIO_SECONDS, CHAT_TEMPLATE, IMAGE_SIZE, MEL_BINS, PATCH_SIZE, train_tokenizer

RESPONSE_LENGTH = 32


def export_texts(files: Iterable[str]) -> list[str]:
    """The questions, answers and system instructions of exported prompt files: the tokenizer's corpus."""
    texts = []
    for path in files:
        table = pq.read_table(path, columns=["verl_prompt", "answer"])
        texts += [m["content"] for messages in table.column("verl_prompt").to_pylist() for m in messages]
        texts += [a for a in table.column("answer").to_pylist() if a]
    return texts


def image_processor(texts: Iterable[str]) -> LlavaProcessor:
    """A LLaVA processor over 28-pixel images (5 image tokens each), with a tokenizer trained on ``texts``."""
    pixels = CLIPImageProcessorPil(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return LlavaProcessor(image_processor=pixels, tokenizer=train_tokenizer(texts), patch_size=PATCH_SIZE,
                          vision_feature_select_strategy="default", num_additional_image_tokens=1,
                          chat_template=CHAT_TEMPLATE)


def audio_processor(texts: Iterable[str], sampling_rate: int = AUDIO_RATE) -> Qwen2AudioProcessor:
    """A Qwen2-Audio processor: a Whisper feature extractor at ``sampling_rate`` (16 mel bins, one-second
    windows), with a tokenizer trained on ``texts``."""
    extractor = WhisperFeatureExtractor(feature_size=MEL_BINS, sampling_rate=sampling_rate, chunk_length=AUDIO_SECONDS)
    return Qwen2AudioProcessor(feature_extractor=extractor, tokenizer=train_tokenizer(texts),
                               chat_template=CHAT_TEMPLATE, audio_token=AUDIO)


def dataset_config(cache: Path, **overrides):
    """verl's ``data`` config for ``RLHFDataset``: our prompt column, one filtering process, a local cache."""
    values = {"prompt_key": "verl_prompt", "cache_dir": str(cache), "filter_overlong_prompts_workers": 1}
    return OmegaConf.create(values | overrides)


def response_batch(tokenizer, rows: Sequence[dict], responses: Sequence[str]) -> DataProto:
    """A verl batch as the reward managers receive it after a rollout: verl's collated rows
    (``data_source``, ``reward_model``, ``extra_info``, ...) with ``prompts``, ``responses`` (right
    padded to :data:`RESPONSE_LENGTH`) and the ``attention_mask`` over both."""
    collated = collate_fn(list(rows))
    non_tensors = {key: value for key, value in collated.items() if not isinstance(value, torch.Tensor)}
    pad = tokenizer.pad_token_id
    prompt = torch.tensor([[pad, tokenizer.bos_token_id]] * len(rows))
    response_ids = torch.full((len(rows), RESPONSE_LENGTH), pad)
    mask = torch.zeros((len(rows), RESPONSE_LENGTH), dtype=torch.long)
    for i, text in enumerate(responses):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"][:RESPONSE_LENGTH]
        response_ids[i, :len(ids)] = torch.tensor(ids)
        mask[i, :len(ids)] = 1
    attention = torch.cat([torch.tensor([[0, 1]] * len(rows)), mask], dim=1)
    tensors = {"prompts": prompt, "responses": response_ids, "attention_mask": attention}
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)
