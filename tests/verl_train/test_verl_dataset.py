"""verl 0.9.1's own ``RLHFDataset`` and ``collate_fn`` read our ``prompts`` exports as they are,
with ``data.prompt_key=verl_prompt``: CLEVR-Math's images and Clotho-AQA's clips reach the
processor (tiny ones built from configs); the default prompt key and a ``--media shared`` file
fail loudly, as the cards say.
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile
from PIL import Image

pytest.importorskip("verl")

from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402
from verl.utils.tokenizer import build_multimodal_processor_inputs  # noqa: E402

from builder_utils.audio import decode_audio  # noqa: E402
from builder_utils.hub.prompt_config import DEFAULT_AUDIO_RATE  # noqa: E402
from tiny_models import AUDIO, IMAGE  # noqa: E402
from verl_helpers import audio_processor, dataset_config, export_texts, image_processor  # noqa: E402


def _rows(files):
    return [row for path in files for row in pq.read_table(path).to_pylist()]


def _user_parts(item):
    return next(m for m in item["raw_prompt"] if m["role"] == "user")["content"]


def test_clevr_math_prompts_reach_an_image_processor_through_verls_dataset(exports, tmp_path):
    files = exports.files("clevr")
    processor = image_processor(export_texts(files))
    # No length filter: verl measures a prompt with images through qwen_vl_utils, which needs
    # torchvision, whose PyPI build does not load beside torch's CPU wheel (see the Makefile).
    ds = RLHFDataset(files, processor.tokenizer, dataset_config(tmp_path, filter_overlong_prompts=False),
                     processor=processor)
    stored = _rows(files)
    assert len(ds) == len(stored) > 0
    batch = collate_fn([ds[i] for i in range(4)])
    assert batch["dummy_tensor"].shape == (4, 1)
    assert list(batch["data_source"]) == ["clevr_math"] * 4
    assert [r["ground_truth"] for r in batch["reward_model"]] == [row["answer"] for row in stored[:4]]
    assert [e["index"] for e in batch["extra_info"]] == [0, 1, 2, 3] == list(batch["index"])
    for item, row in zip((ds[i] for i in range(len(ds))), stored):
        parts = _user_parts(item)
        # verl placed the row's image at the <image> marker, the question after it
        assert [p["type"] for p in parts] == ["image", "text"]
        question = row["verl_prompt"][-1]["content"].removeprefix("<image>")
        assert parts[1]["text"] == question
        expected = Image.open(io.BytesIO(row["images"][0]["bytes"])).convert("RGB")
        assert np.array_equal(np.asarray(parts[0]["image"]), np.asarray(expected))
    # what verl's rollout then gives the processor: the rendered prompt and that image
    item = ds[0]
    text = processor.apply_chat_template(item["raw_prompt"], add_generation_prompt=True, tokenize=False)
    inputs = build_multimodal_processor_inputs(processor, text=[text], images=[_user_parts(item)[0]["image"]])
    image_token = processor.tokenizer.convert_tokens_to_ids(IMAGE)
    assert inputs["pixel_values"].shape == (1, 3, 28, 28)
    # one token per 14-pixel patch (transformers 5.10's LLaVA processor, "default" strategy: no CLS)
    assert int((inputs["input_ids"][0] == image_token).sum()) == (28 // 14) ** 2


def test_clotho_aqa_prompts_reach_an_audio_processor_through_verls_dataset(exports, tmp_path):
    files = exports.files("clotho")
    processor = audio_processor(export_texts(files))
    # verl's defaults otherwise: its length filter runs the processor on every row's audio
    ds = RLHFDataset(files, processor.tokenizer, dataset_config(tmp_path), processor=processor)
    stored = _rows(files)
    assert len(ds) == len(stored) > 0  # no row dropped
    batch = collate_fn([ds[i] for i in range(len(ds))])
    assert set(batch["data_source"]) == {"clotho_aqa"}
    assert [list(r["ground_truth"]) for r in batch["reward_model"]] == [row["answers"] for row in stored]
    audio_token = processor.tokenizer.convert_tokens_to_ids(AUDIO)
    for item, row in zip((ds[i] for i in range(len(ds))), stored):
        parts = _user_parts(item)
        assert [p["type"] for p in parts] == ["audio", "text"]
        assert parts[1]["text"] == row["verl_prompt"][-1]["content"].removeprefix("<audio>")
        samples = np.asarray(parts[0]["audio"], dtype=np.float32)
        assert samples.ndim == 1 and np.array_equal(samples, np.asarray(row["audios"][0], dtype=np.float32))
        # verl's own extraction and processor call, as its rollout makes them
        _, _, audios = RLHFDataset._process_multi_modal_info(item["raw_prompt"], 14, ds.config)
        text = processor.apply_chat_template(item["raw_prompt"], add_generation_prompt=True, tokenize=False)
        inputs = build_multimodal_processor_inputs(processor, text=[text], audio=audios)
        assert inputs["input_features"].shape == (1, 16, 100)  # one-second windows of 16 mel bins
        # the placeholder expanded to the clip's tokens: frames halved twice by the encoder
        frames = int(inputs["feature_attention_mask"].sum())
        assert int((inputs["input_ids"][0] == audio_token).sum()) == ((frames - 1) // 2 + 1 - 2) // 2 + 1


def test_clotho_aqa_clips_are_the_source_wavs_at_the_processors_rate(exports):
    """The samples in the export are the clip's, mono, resampled to 16 kHz (the default)."""
    wavs = {row["file_name"]: row["audio"]["bytes"] for row in _rows(exports.files("clotho", "shared", "clips"))}
    for row in _rows(exports.files("clotho")):
        data, rate = soundfile.read(io.BytesIO(wavs[row["file_name"]]), dtype="float32")
        expected = decode_audio({"bytes": wavs[row["file_name"]], "path": None}, sampling_rate=DEFAULT_AUDIO_RATE,
                                mono=True)[0]
        samples = np.asarray(row["audios"][0], dtype=np.float32)
        assert np.array_equal(samples, expected)
        assert abs(len(samples) - round(len(data) * DEFAULT_AUDIO_RATE / rate)) <= 1


@pytest.mark.parametrize("dataset, marker", [("clevr", "image"), ("clotho", "audio")])
def test_the_default_prompt_key_fails_with_the_error_the_card_names(exports, tmp_path, capfd, dataset, marker):
    files = exports.files(dataset)
    make = image_processor if dataset == "clevr" else audio_processor
    processor = make(export_texts(files))
    ds = RLHFDataset(files, processor.tokenizer, dataset_config(tmp_path, prompt_key="prompt"), processor=processor)
    message = f"AssertionError: {marker}_offset 0 != len({marker}s) 1"
    assert len(ds) == 0 and message in capfd.readouterr().err  # printed by verl's filter, once per row
    card = exports.card(dataset)
    assert f"`{message}`" in card and "data.prompt_key=verl_prompt" in card


@pytest.mark.parametrize("dataset", ["clevr", "clotho"])
def test_a_shared_prompts_file_is_refused_not_read_without_its_media(exports, tmp_path, capfd, dataset):
    files = exports.files(dataset, "shared")
    make = image_processor if dataset == "clevr" else audio_processor
    processor = make(export_texts(exports.files(dataset)))
    ds = RLHFDataset(files, processor.tokenizer, dataset_config(tmp_path), processor=processor)
    assert len(ds) == 0 and "KeyError: 'verl_prompt'" in capfd.readouterr().err
    assert "`KeyError: 'verl_prompt'`" in exports.card(dataset, "shared")
