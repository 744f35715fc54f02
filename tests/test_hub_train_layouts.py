"""The training layouts: `messages` (SFT), `prompts` (RL, TRL and verl), the multihop variants, the
audio list helpers and the card's trainer snippets, on tiny generated data, without TRL or torch.

Both datasets are exported with the real commands (``--media inline`` and ``--media shared``),
then the source images and WAVs are deleted: everything below reads the exported Parquet.

What TRL expects is written down here as facts read in trl 1.16.0's source (``trl/data_utils.py``,
``trl/trainer/sft_trainer.py``, ``trl/trainer/grpo_trainer.py``), so that the suite checks them
without TRL; ``make test-train`` runs TRL itself. verl: ``verl/utils/dataset/rl_dataset.py`` of
verl 0.9.1; ``make test-verl`` (tests/verl_train/) runs verl itself.
"""

from __future__ import annotations

import io
import re
import shutil
import sys
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile

from builder_utils.audio import decode_audio, without_decoding
from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub import attach_media
from builder_utils.hub.prompt_config import DEFAULT_AUDIO_RATE
from builder_utils.hub.trainer_card import snippet_before_trl
from builder_utils.prompts import PROMPT_STYLES, prompt_messages, prompt_spec_of, prompt_style
from clevr_math import ClevrMath
from clevr_math.cli import main as clevr_math_cli
from clotho_aqa import ClothoAQA
from clotho_aqa.cli import main as clotho_aqa_cli
from clotho_aqa.synth import write_synthetic_release

CLEVR_CONFIGS = ["general", "multihop", "conversations", "conversations_multihop", "prompts", "prompts_multihop"]
CLOTHO_CONFIGS = ["questions", "conversations", "prompts"]
DATASETS = {
    # name: builder, command, exported configs, media config, key, media column, media list, placeholder
    "clevr": (ClevrMath, clevr_math_cli, CLEVR_CONFIGS, "images", "image_filename", "image", "images", "image"),
    "clotho": (ClothoAQA, clotho_aqa_cli, CLOTHO_CONFIGS, "clips", "file_name", "audio", "audios", "audio"),
}
FOLLOWS = {("clevr", "conversations"): "general", ("clevr", "conversations_multihop"): "multihop",
           ("clevr", "prompts"): "general", ("clevr", "prompts_multihop"): "multihop",
           ("clotho", "conversations"): "questions", ("clotho", "prompts"): "questions"}
PROMPT_COLUMNS = {
    "clevr": ["prompt", "verl_prompt", "images", "answer", "label", "category", "template", "num_operations",
              "question_id", "image_filename", "data_source", "reward_model", "extra_info"],
    "clotho": ["prompt", "verl_prompt", "audios", "answer", "answers", "confidences", "unanimous", "answer_type",
               "question_id", "file_name", "data_source", "reward_model", "extra_info"],
}


# -- TRL 1.16's rules, as read in its source ------------------------------------------------------

def trl_is_conversational(example: dict) -> bool:
    """trl.data_utils.is_conversational: a supported key whose value is a list starting with a
    dict that has "role"."""
    for key in ("prompt", "chosen", "rejected", "completion", "messages"):
        if key in example:
            value = example[key]
            return isinstance(value, list) and bool(value) and isinstance(value[0], dict) and "role" in value[0]
    return False


def check_trl_messages(messages: list, media: list, placeholder: str) -> None:
    """What prepare_multimodal_messages and the chat templates rely on: roles among system/user/
    assistant/tool; content already typed (a list of parts with "type"; text parts carry a str);
    the unfilled image placeholders ({"type": "image"} without an "image" key) are exactly as many
    as the row's images (else TRL raises); ours sit in the first user turn, before its text."""
    assert {m["role"] for m in messages} <= {"system", "user", "assistant", "tool"}
    for message in messages:
        assert isinstance(message["content"], list) and message["content"]
        for part in message["content"]:
            assert part["type"] in ("text", "image", "audio")
            if part["type"] == "text":
                assert isinstance(part["text"], str) and part["text"]
    placeholders = [(i, j) for i, m in enumerate(messages) for j, part in enumerate(m["content"])
                    if part["type"] == placeholder and placeholder not in part]
    first_user = next(i for i, m in enumerate(messages) if m["role"] == "user")
    assert len(placeholders) == len(media) == 1 and placeholders == [(first_user, 0)]


# -- the exports --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("train_layouts")
    sources = {
        "clevr": write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False),
        "clotho": write_synthetic_release(root / "release", num_files=5, seed=0).root,
    }
    files = {
        "clevr": {p.name: p.read_bytes() for p in (sources["clevr"] / "images").rglob("*.png")},
        "clotho": {p.name: p.read_bytes() for p in (sources["clotho"] / "audio_files").glob("*.wav")},
    }
    out = {}
    for name, (_, cli, configs, *_rest) in DATASETS.items():
        for media in ("inline", "shared"):
            out[name, media] = root / f"{name}_{media}"
            argv = ["export", "--data_dir", str(sources[name]), "--out", str(out[name, media]), "--media", media,
                    "--config", ",".join(configs), "--cache_dir", str(root / "cache"), "--quiet"]
            assert cli(argv) == 0
    shutil.rmtree(sources["clevr"] / "images")
    shutil.rmtree(sources["clotho"] / "audio_files")
    return {"out": out, "files": files, "cache": root / "load_cache", "sources": sources, "root": root}


def _load(exports, dataset, media, config, **kwargs):
    return datasets.load_dataset(str(exports["out"][dataset, media]), config, cache_dir=str(exports["cache"]), **kwargs)


def _undecoded(ds):
    """Every Image/Audio column (plain or a list) read as stored bytes."""
    if isinstance(ds, datasets.DatasetDict):
        return datasets.DatasetDict({split: _undecoded(part) for split, part in ds.items()})
    for name, feature in ds.features.items():
        inner = feature.feature if isinstance(feature, datasets.List) else feature
        if isinstance(inner, (datasets.Image, datasets.Audio)):
            kept = type(inner)(decode=False)
            ds = ds.cast_column(name, datasets.List(kept) if inner is not feature else kept)
    return ds


# -- SFT: messages --------------------------------------------------------------------------------

@pytest.mark.parametrize("dataset, config", [("clevr", "conversations"), ("clevr", "conversations_multihop"),
                                             ("clotho", "conversations")])
def test_messages_follow_trls_conversational_schema_and_the_texts(exports, dataset, config):
    builder, *_, many, placeholder = DATASETS[dataset]
    talks = _undecoded(_load(exports, dataset, "inline", config)["train"])
    assert {"messages", many, "texts"} <= set(talks.column_names)
    for row in talks:
        assert trl_is_conversational(row)
        check_trl_messages(row["messages"], row[many], placeholder)
        roles = [m["role"] for m in row["messages"]]
        assert roles == ["user", "assistant"] * len(row["texts"])
        pairs = [(m["content"][-1]["text"]) for m in row["messages"]]
        assert pairs == [text for turn in row["texts"] for text in (turn["user"], turn["assistant"])]
        assert {turn["source"] for turn in row["texts"]} == {builder.HUB_LAYOUT["data_source"]}


@pytest.mark.parametrize("config", ["conversations", "conversations_multihop"])
def test_reasoning_messages_answer_each_turn_in_the_format_the_format_reward_scores(exports, config):
    from clevr_math.rewards import accuracy_reward, format_reward

    talks = _undecoded(_load(exports, "clevr", "shared", config)["train"])
    general = _undecoded(_load(exports, "clevr", "shared", "multihop" if config.endswith("multihop") else "general")["train"])
    cot = dict(zip(general["question_id"], general["cot"]))
    think_answer = prompt_style("think_answer").instruction
    for row in talks:
        messages = row["reasoning_messages"]
        check_trl_messages(messages, row["images"], "image")
        assert messages[0] == {"role": "system", "content": [{"type": "text", "text": think_answer}]}
        assert messages[1:][0::2] == row["messages"][0::2]  # the same user turns, the image in the first
        answers = [m["content"][0]["text"] for m in messages[2::2]]
        assert answers == [f"<think>{cot[t['question_id']]}</think><answer>{t['assistant']}</answer>" for t in row["texts"]]
        assert all(cot[t["question_id"]] for t in row["texts"])
        completions = [[{"role": "assistant", "content": text}] for text in answers]
        assert format_reward(completions) == [1.0] * len(answers)
        assert accuracy_reward(completions, answer=[t["assistant"] for t in row["texts"]]) == [1.0] * len(answers)
    clotho = _load(exports, "clotho", "shared", "conversations")["train"]
    assert "reasoning_messages" not in clotho.column_names  # no chain of thought there


def test_multihop_conversations_hold_single_hop_turns_in_train_and_multihop_turns_in_test(exports):
    for config in ("conversations_multihop", "prompts_multihop"):
        ds = _load(exports, "clevr", "shared", config)
        if config.startswith("conversations"):
            names = ds["train"].features["texts"].feature["category"].names
            categories = {split: [names[t["category"]] for row in ds[split] for t in row["texts"]] for split in ds}
        else:
            names = ds["train"].features["category"].names
            categories = {split: [names[c] for c in ds[split]["category"]] for split in ds}
        assert set(categories) == {"train", "validation", "test"}
        for split in ("train", "validation"):
            assert categories[split] and "multihop" not in categories[split], (config, split)
        assert categories["test"] and set(categories["test"]) == {"multihop"}, config
    # and the plain ones follow `general`: multihop turns in every split
    general = _load(exports, "clevr", "shared", "conversations")["train"]
    names = general.features["texts"].feature["category"].names
    assert "multihop" in {names[t["category"]] for row in general for t in row["texts"]}


# -- RL: prompts ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dataset", DATASETS)
def test_prompt_rows_carry_every_column_with_the_source_rows_values(exports, dataset):
    builder, _, configs, _, key, column, many, placeholder = DATASETS[dataset]
    source_config = FOLLOWS[dataset, "prompts"]
    prompts = _load(exports, dataset, "inline", "prompts")
    questions = _load(exports, dataset, "inline", source_config)
    spec = prompt_spec_of(builder)
    style = prompt_style("think_answer")  # the default
    for split in questions:
        rows = _undecoded(prompts[split])
        assert rows.column_names == PROMPT_COLUMNS[dataset]
        source = _undecoded(questions[split])
        assert len(rows) == len(source)
        for index, (row, question) in enumerate(zip(rows, source)):
            assert trl_is_conversational(row)
            check_trl_messages(row["prompt"], row[many], placeholder)
            assert [m["role"] for m in row["prompt"]] == ["system", "user"]
            assert row["prompt"][0]["content"][0]["text"] == style.instruction
            assert row["prompt"][1]["content"][1]["text"] == question["question"]
            if placeholder == "image":
                assert row[many] == [question[column]]
            else:  # the clip's samples, as verl hands them to the processor (16 kHz mono by default)
                expected = decode_audio(question[column], sampling_rate=DEFAULT_AUDIO_RATE, mono=True)[0]
                assert len(row[many]) == 1 and np.array_equal(np.asarray(row[many][0], dtype=np.float32), expected)
            answer = question["label"] if dataset == "clevr" else question["majority_answer"]
            assert row["answer"] == (None if answer is None else str(answer))
            for name in spec.columns:
                assert row[name] == question[name], name
            truth = row["answer"] if dataset == "clevr" else question["answers"]
            assert row["reward_model"] == {"style": "rule", "ground_truth": truth}
            assert row["data_source"] == builder.HUB_LAYOUT["data_source"]
            assert row["extra_info"] == {"split": split, "index": index, "question_id": question["question_id"]}
            # verl: string content; the media is an <image> / <audio> marker (its RLHF dataset splits on
            # it and asserts one marker per item of the media list)
            verl = row["verl_prompt"]
            assert all(isinstance(m["content"], str) for m in verl) and [m["role"] for m in verl] == ["system", "user"]
            assert verl[-1]["content"] == f"<{placeholder}>" + question["question"]
            assert re.findall("<image>|<audio>|<video>", verl[0]["content"]) == []
        assert rows.features["category" if dataset == "clevr" else "unanimous"] == questions[split].features[
            "category" if dataset == "clevr" else "unanimous"]  # typed as in the source


def test_prompt_style_chooses_the_system_turn(exports, tmp_path):
    for style in PROMPT_STYLES:
        messages = prompt_messages("How many?", "image", style.name)
        assert [m["role"] for m in messages] == (["user"] if style.instruction is None else ["system", "user"])
    out = tmp_path / "plain"
    release = write_synthetic_release(tmp_path / "release", num_files=3, seed=1).root
    argv = ["export", "--data_dir", str(release), "--out", str(out), "--config", "prompts",
            "--media", "shared", "--prompt_style", "plain", "--cache_dir", str(tmp_path / "cache"), "--quiet"]
    assert clotho_aqa_cli(argv) == 0
    rows = datasets.load_dataset(str(out), "prompts", cache_dir=str(tmp_path / "lc"))["train"]
    assert {tuple(m["role"] for m in p) for p in rows["prompt"]} == {("user",)}
    # exported alone and shared, the prompts still get the media configuration their rows name
    clips = datasets.load_dataset(str(out), "clips", cache_dir=str(tmp_path / "lc"))["train"]
    assert set(rows["file_name"]) == set(clips["file_name"])


def test_unknown_prompt_style_is_refused_in_one_line(exports, tmp_path, capsys):
    argv = ["export", "--data_dir", str(exports["sources"]["clotho"]), "--out", str(tmp_path / "x"),
            "--config", "prompts", "--prompt_style", "json"]
    with pytest.raises(SystemExit) as stop:
        clotho_aqa_cli(argv)
    assert stop.value.code == 2 and "--prompt_style" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("dataset", DATASETS)
def test_shared_prompts_hold_no_media_and_every_media_config_holds_each_file_once(exports, dataset):
    _, _, configs, media_config, key, column, many, _ = DATASETS[dataset]
    folder = exports["out"][dataset, "shared"]
    files = exports["files"][dataset]
    stored = []
    for path in sorted((folder / media_config).glob("*.parquet")):
        table = pq.read_table(path)
        for name, value in zip(table.column(key).to_pylist(), table.column(column).to_pylist()):
            assert value["bytes"] == files[value["path"]]
            stored.append(name)
    source = FOLLOWS[dataset, "prompts"]
    referenced = {k for p in (folder / source).glob("*.parquet") for k in pq.read_table(p, columns=[key]).column(key).to_pylist()}
    assert len(stored) == len(set(stored)) and set(stored) == referenced
    for config in configs:
        paths = sorted((folder / config).glob("*.parquet"))
        assert paths, config
        if config.startswith("prompts") or config in FOLLOWS.values():
            for path in paths:
                schema = pq.read_schema(path)
                assert many not in schema.names and column not in schema.names and "binary" not in str(schema), path
                assert set(pq.read_table(path, columns=[key]).column(key).to_pylist()) <= set(stored)
        if config.startswith("conversations"):
            held = []
            for path in paths:
                table = pq.read_table(path, columns=[key, many])
                for name, media in zip(table.column(key).to_pylist(), table.column(many).to_pylist()):
                    assert len(media) == 1 and media[0]["bytes"] == files[media[0]["path"]]
                    held.append(name)
            assert len(held) == len(set(held)), config  # each file once in each conversation config


@pytest.mark.parametrize("dataset, config", [("clevr", "prompts"), ("clevr", "prompts_multihop"), ("clotho", "prompts")])
def test_attach_media_gives_shared_prompts_the_rows_of_the_inline_export(exports, dataset, config):
    *_, media_config, key, column, many, _ = DATASETS[dataset]
    media = _undecoded(_load(exports, dataset, "shared", media_config))
    joined = attach_media(_load(exports, dataset, "shared", config), media)
    inline = _load(exports, dataset, "inline", config)
    for split in inline:
        expected = _undecoded(inline[split])[:]
        got = joined[split][:]
        # the columns of the inline rows but verl's: its prompt and, for audio, the clips' samples
        verl_only = {"verl_prompt"} | ({many} if many == "audios" else set())
        assert set(got) == set(expected) - {"verl_prompt"}
        for name in set(expected) - verl_only:
            assert got[name] == expected[name], (split, name)
        if many == "audios":
            for files, samples in zip(got[many], expected[many]):
                clip = decode_audio(files[0], DEFAULT_AUDIO_RATE, mono=True)[0]
                assert np.array_equal(np.asarray(samples[0], dtype=np.float32), clip)
        row = joined[split].shuffle(seed=0)[0]  # shuffled on the small table, media read when the row is
        assert len(row[many]) == 1 and row[many][0]["bytes"] == exports["files"][dataset][row[key]]


# -- audio lists ------------------------------------------------------------------------------------

def test_audio_helpers_read_every_clotho_layout_without_torch(exports, monkeypatch):
    files = exports["files"]["clotho"]
    layouts = (("questions", "audio"), ("conversations", "audios"))  # prompts hold samples: see above
    loaded = {config: _load(exports, "clotho", "inline", config) for config, _ in layouts}
    shared = _load(exports, "clotho", "shared", "questions")
    monkeypatch.setitem(sys.modules, "torch", None)  # from here on, any import of torch or torchcodec fails
    monkeypatch.setitem(sys.modules, "torchcodec", None)
    for config, column in layouts:
        ds = loaded[config]
        for undecoded in (without_decoding(ds), without_decoding(ds, column=column)):
            feature = undecoded["train"].features[column]
            assert getattr(feature, "feature", feature).decode is False
            row = undecoded["train"][0]
            for decoded in (decode_audio(row), decode_audio(row, column=column), decode_audio(row[column])):
                samples, rate = soundfile.read(io.BytesIO(files[row["file_name"]]), dtype="float32")
                assert decoded[1] == rate and decoded[0].shape == samples.shape and (decoded[0] == samples).all()
    assert without_decoding(shared)["train"].features == shared["train"].features  # no audio: unchanged
    with pytest.raises(ValueError, match="attach_media"):
        decode_audio(shared["train"][0])
    with pytest.raises(ValueError, match="'question' is Value"):
        without_decoding(shared, column="question")
    with pytest.raises(ValueError, match="no column 'audio'"):
        without_decoding(shared, column="audio")


# -- the card's trainer snippets ------------------------------------------------------------------

def _card_snippets(folder: Path) -> dict[str, str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    section = text.split("## Training with TRL and verl", 1)[1].split("\n## ", 1)[0]
    found = {}
    for block in section.split("\n### ")[1:]:
        name = re.match(r"`([^`]+)`", block).group(1)
        found[name] = re.search(r"```python\n(.*?)```", block, flags=re.DOTALL).group(1)
    return found


@pytest.mark.parametrize("dataset, media", [(d, m) for d in DATASETS for m in ("inline", "shared")])
def test_card_trainer_snippets_load_what_the_trainers_read(exports, dataset, media, monkeypatch):
    _, _, configs, *_rest, many, placeholder = DATASETS[dataset]
    folder = exports["out"][dataset, media]
    snippets = _card_snippets(folder)
    assert sorted(snippets) == sorted(c for c in configs if (dataset, c) in FOLLOWS)
    monkeypatch.setattr(datasets, "load_dataset", _cached_load(exports))
    for config, code in snippets.items():
        assert "from trl import" in code  # the rest needs TRL (make test-train runs it)
        scope: dict = {}
        exec(snippet_before_trl(code).replace("REPO_ID", str(folder)), scope)
        train = _undecoded(scope["train"])
        row = train[0]
        assert trl_is_conversational(row)
        check_trl_messages(row["messages" if config.startswith("conversations") else "prompt"], row[many], placeholder)
        if config.startswith("prompts"):
            # The reward lines need no TRL: our rewards read the row's columns as TRL passes them.
            rewards = [line for line in code.splitlines() if line.startswith(("from clevr_math.rewards",
                       "from clotho_aqa.rewards", "format_reward ="))]
            assert rewards
            exec("\n".join(rewards), scope)
            row = next(r for r in train if r["answer"] is not None)
            columns = {name: [value] for name, value in row.items() if name not in ("prompt", "verl_prompt", many)}
            completion = [[{"role": "assistant", "content": f"<think>I look.</think><answer>{row['answer']}</answer>"}]]
            assert scope["accuracy_reward"](completion, **columns) == [1.0]
            assert scope["format_reward"](completion, **columns) == [1.0]


_real_load = datasets.load_dataset


def _cached_load(exports):
    def load(path, name=None, **kwargs):  # the card's own call, with the test's cache folder, audio undecoded
        return without_decoding(_real_load(path, name, cache_dir=str(exports["cache"]), **kwargs))
    return load
