"""Tiny, randomly initialised models for running real TRL trainers offline (``make test-train``).

No weights exist on the machines that run the suite, so everything a trainer loads is built here:
a byte-level BPE tokenizer trained in memory on our own texts, a small chat template with
``{% generation %}`` markers (TRL's ``assistant_only_loss`` reads them), a processor, and a model
created from its configuration and saved to a folder (trainers accept a folder as ``model``).

Example::
    kit = tiny_llava(tmp_path / "model", ["How many red cubes are there?", "3"])
    kit.processor.tokenizer.decode(kit.processor.tokenizer("red cubes")["input_ids"])  # 'red cubes'
    GRPOTrainer(model=str(kit.folder), processing_class=kit.processor, ...)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    CLIPImageProcessorPil,
    CLIPVisionConfig,
    Idefics3Config,
    Idefics3ForConditionalGeneration,
    Idefics3ImageProcessorPil,
    Idefics3Processor,
    Idefics3VisionConfig,
    LlamaConfig,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
    PreTrainedTokenizerFast,
    Qwen2AudioConfig,
    Qwen2AudioEncoderConfig,
    Qwen2AudioForConditionalGeneration,
    Qwen2AudioProcessor,
    Qwen2Config,
    WhisperFeatureExtractor,
)

# Special tokens: padding, start and end of a turn (the end doubles as EOS, so generation stops
# at the end of the assistant's turn), and the media placeholders the processors expand.
PAD, BOS, EOS, IMAGE, AUDIO = "<pad>", "<s>", "<|end|>", "<image>", "<|AUDIO|>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")
SPECIAL_TOKENS = (PAD, BOS, EOS, IMAGE, AUDIO, *ROLE_TOKENS)
# The tags of the think_answer prompt style, one token each (ordinary tokens: they decode into the
# completion text, where the format reward reads them).
FORMAT_TOKENS = ("<think>", "</think>", "<answer>", "</answer>")

# A role token opens each turn; the content follows (a string, or typed parts: media placeholders
# become their token, text parts their text); EOS closes it. The assistant's content and its EOS
# sit inside {% generation %} so that `return_assistant_tokens_mask` marks exactly them.
CHAT_TEMPLATE = (
    "{%- macro render(content) -%}"
    "{%- if content is string -%}{{ content }}"
    "{%- else -%}{%- for part in content -%}"
    "{%- if part['type'] == 'image' -%}{{ '" + IMAGE + "' }}"
    "{%- elif part['type'] == 'audio' -%}{{ '" + AUDIO + "' }}"
    "{%- else -%}{{ part['text'] }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{%- endmacro -%}"
    "{{ bos_token }}"
    "{%- for message in messages -%}"
    "{{ '<|' + message['role'] + '|>' }}"
    "{%- if message['role'] == 'assistant' -%}"
    "{% generation %}{{ render(message['content']) }}{{ eos_token }}{% endgeneration %}"
    "{%- else -%}{{ render(message['content']) }}{{ eos_token }}{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>' }}{%- endif -%}"
)

# 28-pixel images in 14-pixel patches: 4 patches + the CLS position = 5 image tokens per image.
IMAGE_SIZE, PATCH_SIZE = 28, 14
# Audio: 16 kHz (what Qwen2-Audio's Whisper front end expects), one-second windows of 16 mel bins:
# 100 frames, halved twice by the encoder = 25 audio tokens per clip.
AUDIO_RATE, AUDIO_SECONDS, MEL_BINS = 16_000, 1, 16
AUDIO_FRAMES = AUDIO_SECONDS * AUDIO_RATE // 160  # the Whisper front end's 10 ms hop


def train_tokenizer(texts: Iterable[str], vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained in memory on ``texts``, with our special tokens and chat template.

    Byte-level: any text encodes (no unknown token), so completions sampled by a random model decode.

    Example::
        tok = train_tokenizer(["How many cubes?"])
        tok.apply_chat_template([{"role": "user", "content": "Hi"}], tokenize=False)
        # '<s><|user|>Hi<|end|>'
    """
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(texts, trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        extra_special_tokens={"image_token": IMAGE, "audio_token": AUDIO},
        additional_special_tokens=list(ROLE_TOKENS), chat_template=CHAT_TEMPLATE,
    )
    wrapped.add_tokens(list(FORMAT_TOKENS))
    return wrapped


@dataclasses.dataclass(frozen=True)
class TinyModel:
    """A model saved in ``folder`` (pass ``str(folder)`` to a trainer) and the processor that goes with it."""

    folder: Path
    processor: LlavaProcessor | Idefics3Processor | Qwen2AudioProcessor


def _text_config(tokenizer: PreTrainedTokenizerFast, config_class=LlamaConfig, width: int = 32, layers: int = 1):
    return config_class(vocab_size=len(tokenizer), hidden_size=width, intermediate_size=2 * width,
                        num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=1,
                        max_position_embeddings=2048,
                        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                        eos_token_id=tokenizer.eos_token_id)


def _save(model, processor, folder: Path) -> TinyModel:
    tokenizer = processor.tokenizer
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return TinyModel(Path(folder), processor)


def tiny_llava(folder: Path, texts: Iterable[str], seed: int = 0, width: int = 32, layers: int = 1) -> TinyModel:
    """A LLaVA-style vision-language model of about 60k parameters, random weights, saved in ``folder``.

    One-layer CLIP vision tower over 28-pixel images, one-layer Llama text model, a tokenizer
    trained on ``texts`` (the questions and answers the model will see). ``width`` and ``layers``
    size the text model (a model that must learn to write long answers needs more than the default).

    Example::
        kit = tiny_llava(tmp_path / "llava", ["How many cubes?", "2"])
        sum(p.numel() for p in LlavaForConditionalGeneration.from_pretrained(kit.folder).parameters())
    """
    tokenizer = train_tokenizer(texts)
    # The PIL backend: the default one needs torchvision, which the train venv does not install.
    image_processor = CLIPImageProcessorPil(size={"shortest_edge": IMAGE_SIZE},
                                            crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    processor = LlavaProcessor(image_processor=image_processor, tokenizer=tokenizer, patch_size=PATCH_SIZE,
                               vision_feature_select_strategy="default", num_additional_image_tokens=1,
                               chat_template=CHAT_TEMPLATE)
    config = LlavaConfig(
        vision_config=CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                       num_attention_heads=2, image_size=IMAGE_SIZE, patch_size=PATCH_SIZE),
        text_config=_text_config(tokenizer, width=width, layers=layers),
        image_token_id=tokenizer.convert_tokens_to_ids(IMAGE),
        vision_feature_select_strategy="default",
    )
    torch.manual_seed(seed)
    return _save(LlavaForConditionalGeneration(config), processor, folder)


# Idefics3's own markers around each image's tokens (its processor writes them into the prompt).
IDEFICS3_TOKENS = ("<fake_token_around_image>", "<global-img>", "<end_of_utterance>")


def tiny_idefics3(folder: Path, texts: Iterable[str], seed: int = 0) -> TinyModel:
    """An Idefics3-style vision-language model (the SmolVLM family), random weights, saved in ``folder``.

    A second vision family beside LLaVA: a one-layer SigLIP-style vision tower over 28-pixel
    images (no splitting into tiles), pixel shuffle by 2 into one image token per image, a
    one-layer Llama text model; the PIL image processor (no torchvision).

    Example::
        kit = tiny_idefics3(tmp_path / "idefics3", ["How many cubes?", "2"])
        GRPOTrainer(model=str(kit.folder), processing_class=kit.processor, ...)
    """
    tokenizer = train_tokenizer(texts)
    tokenizer.add_tokens(list(IDEFICS3_TOKENS), special_tokens=True)
    image_processor = Idefics3ImageProcessorPil(size={"longest_edge": IMAGE_SIZE},
                                                max_image_size={"longest_edge": IMAGE_SIZE},
                                                do_image_splitting=False)
    scale = 2
    processor = Idefics3Processor(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
                                  image_seq_len=(IMAGE_SIZE // PATCH_SIZE) ** 2 // scale**2)
    config = Idefics3Config(
        vision_config=Idefics3VisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                           num_attention_heads=2, image_size=IMAGE_SIZE, patch_size=PATCH_SIZE),
        text_config=_text_config(tokenizer),
        image_token_id=tokenizer.convert_tokens_to_ids(IMAGE),
        scale_factor=scale,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    return _save(Idefics3ForConditionalGeneration(config), processor, folder)


def tiny_qwen2_audio(folder: Path, texts: Iterable[str], seed: int = 0) -> TinyModel:
    """A Qwen2-Audio-style audio-language model, random weights, saved in ``folder``.

    One-layer Whisper-style audio encoder over one-second 16 kHz windows (16 mel bins), one-layer
    Qwen2 text model, a tokenizer trained on ``texts``; the processor expands each audio
    placeholder to the clip's 25 audio tokens.

    Example::
        kit = tiny_qwen2_audio(tmp_path / "audio", ["Is it raining?", "yes"])
        kit.processor(text=["<|AUDIO|>Is it raining?"], audio=[np.zeros(16_000)])["input_features"].shape
        # (1, 16, 100)
    """
    tokenizer = train_tokenizer(texts)
    extractor = WhisperFeatureExtractor(feature_size=MEL_BINS, sampling_rate=AUDIO_RATE, chunk_length=AUDIO_SECONDS)
    processor = Qwen2AudioProcessor(feature_extractor=extractor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE,
                                    audio_token=AUDIO)
    config = Qwen2AudioConfig(
        audio_config=Qwen2AudioEncoderConfig(num_mel_bins=MEL_BINS, encoder_layers=1, encoder_attention_heads=2,
                                             encoder_ffn_dim=64, d_model=32, max_source_positions=AUDIO_FRAMES // 2),
        text_config=_text_config(tokenizer, Qwen2Config),
        audio_token_index=tokenizer.convert_tokens_to_ids(AUDIO),
    )
    torch.manual_seed(seed)
    return _save(Qwen2AudioForConditionalGeneration(config), processor, folder)
