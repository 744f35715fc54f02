"""The shared-media layout, ``conversations``, FLAC and ``--plan``, on tiny generated data.

Both datasets are exported twice with the real commands (``--media inline`` and ``--media
shared``, every configuration plus ``conversations``), then the source images and WAVs are
deleted: everything below reads only the exported Parquet, through ``datasets.load_dataset``.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.clevr.text import with_post_prompt
from builder_utils.hub import MediaJoinError, attach_media, export_builder
from builder_utils.hub.audio_format import AudioFormatError, to_flac
from clevr_math import ClevrMath
from clevr_math.cli import main as clevr_math_cli
from clotho_aqa import ClothoAQA
from clotho_aqa.cli import main as clotho_aqa_cli
from clotho_aqa.synth import write_synthetic_release

DATASETS = {
    # name: builder, card template, command line, media config, key, media column, conversations media
    "clevr": (ClevrMath, "clevr_math", clevr_math_cli, "images", "image_filename", "image", "images"),
    "clotho": (ClothoAQA, "clotho_aqa", clotho_aqa_cli, "clips", "file_name", "audio", "audios"),
}
CONFIGS = {name: [c.name for c in spec[0].BUILDER_CONFIGS] for name, spec in DATASETS.items()}


def _sources(root: Path) -> dict[str, Path]:
    return {
        "clevr": write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False),
        "clotho": write_synthetic_release(root / "release", num_files=5, seed=0).root,
    }


def _undecoded(ds, column: str):
    if isinstance(ds, datasets.DatasetDict):
        return datasets.DatasetDict({split: _undecoded(part, column) for split, part in ds.items()})
    feature = ds.features[column] if column in (ds.features or {}) else None
    if isinstance(feature, datasets.Image):
        return ds.cast_column(column, datasets.Image(decode=False))
    if isinstance(feature, datasets.Audio):
        return ds.cast_column(column, datasets.Audio(decode=False))
    if isinstance(feature, datasets.List) and isinstance(feature.feature, datasets.Image):
        return ds.cast_column(column, datasets.List(datasets.Image(decode=False)))
    if isinstance(feature, datasets.List) and isinstance(feature.feature, datasets.Audio):
        return ds.cast_column(column, datasets.List(datasets.Audio(decode=False)))
    return ds


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """Both datasets exported inline and shared (every config + conversations); sources deleted."""
    root = tmp_path_factory.mktemp("media")
    sources = _sources(root)
    files = {
        "clevr": {p.name: p.read_bytes() for p in (sources["clevr"] / "images").rglob("*.png")},
        "clotho": {p.name: p.read_bytes() for p in (sources["clotho"] / "audio_files").glob("*.wav")},
    }
    out = {}
    for name, (builder, template, cli, *_rest) in DATASETS.items():
        for media in ("inline", "shared"):
            out[name, media] = root / f"{name}_{media}"
            argv = ["--data_dir", str(sources[name]), "--out", str(out[name, media]), "--media", media,
                    "--config", ",".join([*CONFIGS[name], "conversations"]),
                    "--cache_dir", str(root / "cache"), "--quiet"]
            assert cli(["export", *argv]) == 0
    shutil.rmtree(sources["clevr"] / "images")
    shutil.rmtree(sources["clotho"] / "audio_files")
    return {"out": out, "files": files, "cache": root / "load_cache", "root": root}


def _load(exports, dataset: str, media: str, config: str, **kwargs):
    return datasets.load_dataset(str(exports["out"][dataset, media]), config, cache_dir=str(exports["cache"]), **kwargs)


def _parquet_files(folder: Path, config: str) -> list[Path]:
    return sorted((folder / config).glob("*.parquet"))


@pytest.mark.parametrize("dataset, config", [(d, c) for d, names in CONFIGS.items() for c in names])
def test_shared_questions_joined_with_their_media_equal_the_inline_export(exports, dataset, config):
    builder, *_, media_config, key, column, _ = DATASETS[dataset]
    # Media the builder draws per row (CLEVR-Math's step_images) stay inline only: not files to share.
    drawn = set(builder.HUB_LAYOUT.get("drawn_media", ()))
    inline = _load(exports, dataset, "inline", config)
    media = _undecoded(_load(exports, dataset, "shared", media_config), column)
    joined = attach_media(_load(exports, dataset, "shared", config), media)
    assert list(joined) == list(inline)
    for split in inline:
        expected = _undecoded(inline[split], column)
        assert len(joined[split]) == len(expected)
        got = joined[split][:]
        for name in set(expected.column_names) - drawn:
            assert got[name] == expected[name][:], f"{config}/{split}: column {name} differs"
        assert set(got) == set(expected.column_names) - drawn
        assert got[column][0]["bytes"] == exports["files"][dataset][got[column][0]["path"]]


@pytest.mark.parametrize("dataset", DATASETS)
def test_each_file_once_in_the_media_config_and_no_media_bytes_in_question_configs(exports, dataset):
    *_, media_config, key, column, _ = DATASETS[dataset]
    folder = exports["out"][dataset, "shared"]
    keys = []
    for path in _parquet_files(folder, media_config):
        table = pq.read_table(path)
        for name, stored in zip(table.column(key).to_pylist(), table.column(column).to_pylist()):
            keys.append(name)
            assert stored["bytes"] == exports["files"][dataset][stored["path"]]  # the path: the file's own name
    referenced = set()
    for config in [*CONFIGS[dataset]]:
        for path in _parquet_files(folder, config):
            schema = pq.read_schema(path)
            assert column not in schema.names and "bytes" not in str(schema), path
            referenced |= set(pq.read_table(path, columns=[key]).column(key).to_pylist())
    assert len(keys) == len(set(keys)) == len(referenced) and set(keys) == referenced


@pytest.mark.parametrize("dataset", DATASETS)
def test_conversations_round_trip_to_the_question_rows(exports, dataset):
    builder, *_, key, column, many = DATASETS[dataset]
    source = builder.HUB_LAYOUT["conversations_from"]
    turn, fields = builder.HUB_LAYOUT["turn"], builder.HUB_LAYOUT["turn_fields"]
    questions = _load(exports, dataset, "inline", source)
    talks = _load(exports, dataset, "inline", "conversations")
    shared = _load(exports, dataset, "shared", "conversations")
    for split in questions:
        rows = _undecoded(questions[split], column)
        got = _undecoded(talks[split], many)
        assert got.data.table.equals(shared[split].data.table)  # the same in both layouts
        expected: dict[str, list] = {}
        media: dict[str, dict] = {}
        for row in rows:
            media.setdefault(row[key], row[column])
            if row[turn["assistant"]] is None:
                continue
            expected.setdefault(row[key], []).append(
                {"user": row[turn["user"]], "assistant": str(row[turn["assistant"]]),
                 "source": builder.HUB_LAYOUT["data_source"], **{f: row[f] for f in fields}}
            )
        assert got[key][:] == list(expected)  # one row per file, in the order of the questions
        for conversation in got:
            assert conversation[many] == [media[conversation[key]]]
            assert conversation["texts"] == expected[conversation[key]]
        assert got.features["texts"].feature == dict(
            {"user": datasets.Value("string"), "assistant": datasets.Value("string"), "source": datasets.Value("string"),
             **{f: rows.features[f] for f in fields}}
        )


def test_conversations_honour_add_post_prompt(exports, tmp_path):
    clevr = write_clevr_folder(tmp_path / "CLEVR_v1.0", 3, seed=1, splits=("train", "val"), progress=False)
    export_builder(ClevrMath, tmp_path / "out", card_template="clevr_math", data_dir=clevr, configs=["conversations"],
                   builder_kwargs={"add_post_prompt": True}, cache_dir=tmp_path / "cache", progress=False)
    talks = datasets.load_dataset(str(tmp_path / "out"), "conversations", cache_dir=str(tmp_path / "lc"))["train"]
    users = [turn["user"] for row in talks for turn in row["texts"]]
    assert users and all(user == with_post_prompt(user.split("?")[0] + "?", "Integer") for user in users)


def test_flac_clips_decode_to_the_wav_samples(tmp_path, capsys):
    release = write_synthetic_release(tmp_path / "release", num_files=5, seed=0, duration=2.0).root
    wavs = {p.name: soundfile.read(p, dtype="int16") for p in (release / "audio_files").glob("*.wav")}
    wav_bytes = sum(p.stat().st_size for p in (release / "audio_files").glob("*.wav"))
    argv = ["--data_dir", str(release), "--config", "questions", "--cache_dir", str(tmp_path / "cache"), "--quiet",
            "--audio_format", "flac"]
    assert clotho_aqa_cli(["export", *argv, "--out", str(tmp_path / "shared"), "--media", "shared"]) == 0
    assert clotho_aqa_cli(["export", *argv, "--out", str(tmp_path / "inline")]) == 0
    shutil.rmtree(release / "audio_files")
    clips = datasets.load_dataset(str(tmp_path / "shared"), "clips", cache_dir=str(tmp_path / "lc"))
    inline = datasets.load_dataset(str(tmp_path / "inline"), "questions", cache_dir=str(tmp_path / "lc"))
    flac_bytes = 0
    for split in clips:
        for row in clips[split].cast_column("audio", datasets.Audio(decode=False)):
            stored = row["audio"]
            assert stored["path"].endswith(".flac") and soundfile.info(io.BytesIO(stored["bytes"])).format == "FLAC"
            samples, rate = soundfile.read(io.BytesIO(stored["bytes"]), dtype="int16")
            wav = wavs[Path(stored["path"]).stem + ".wav"]
            assert rate == wav[1] and np.array_equal(samples, wav[0])
            flac_bytes += len(stored["bytes"])
        for row in inline[split].cast_column("audio", datasets.Audio(decode=False)):
            samples, _ = soundfile.read(io.BytesIO(row["audio"]["bytes"]), dtype="int16")
            assert np.array_equal(samples, wavs[Path(row["audio"]["path"]).stem + ".wav"][0])
    assert flac_bytes < wav_bytes  # the ratio itself is measured by benchmarks/bench_export.py


def test_float_wav_has_no_flac_form_and_is_named():
    wav = io.BytesIO()
    soundfile.write(wav, np.zeros(10, dtype="float32"), 8000, format="WAV", subtype="FLOAT")
    with pytest.raises(AudioFormatError, match=r"^odd\.wav: FLOAT samples have no lossless FLAC form"):
        to_flac(wav.getvalue(), "odd.wav")


def test_plan_prints_the_table_every_export_prints_and_writes_nothing(tmp_path, capsys):
    release = write_synthetic_release(tmp_path / "release", num_files=5, seed=0).root
    argv = ["--data_dir", str(release), "--config", "all,questions", "--cache_dir", str(tmp_path / "cache"), "--quiet"]
    out = tmp_path / "out"
    assert clotho_aqa_cli(["export", *argv, "--out", str(out), "--plan"]) == 0
    planned = capsys.readouterr()
    assert not out.exists()
    table = planned.out[planned.out.index("configuration"):planned.out.index("--plan: nothing written")]
    lines = table.splitlines()
    assert re.match(r"configuration +rows +inline\* +shared$", lines[0])
    assert [line.split()[0] for line in lines[1:-1]] == ["all", "questions", "clips", "total"]
    # an inline export of Clotho-AQA's per-answer rows stores each clip 18 times: it says so
    assert re.search(r"clotho-aqa export: warning: inline would write .*x the .* of the 5 media files.*--media shared",
                     planned.err)
    assert clotho_aqa_cli(["export", *argv, "--out", str(out)]) == 0
    written = capsys.readouterr()
    assert table in written.out and "--media shared" in written.err
    parquet = sum(p.stat().st_size for p in out.rglob("*.parquet"))
    projected = int(float(lines[-2].split()[1]) * {"kB": 1e3, "MB": 1e6}[lines[-2].split()[2]])
    assert 0.5 * projected < parquet < 1.5 * projected
    assert clotho_aqa_cli(["export", *argv, "--out", str(tmp_path / "shared"), "--media", "shared"]) == 0
    shared = capsys.readouterr()
    assert "shared*" in shared.out and "warning" not in shared.err


@pytest.mark.parametrize("source", ["folder", "stream", "clotho"])
def test_a_training_only_export_counts_the_media_files_it_embeds(tmp_path, capsys, source):
    """prompts and conversations embed every image: the plan counts each file once (it printed
    ``media files: 0, 0 B``), and does not advise --media shared, which moves no media of theirs
    out (conversations) or leaves their readers without pixels (prompts)."""
    if source == "folder":
        folder = write_clevr_folder(tmp_path / "CLEVR_v1.0", 3, seed=0, splits=("train", "val"), progress=False)
        argv = ["--data_dir", str(folder), "--config", "prompts,conversations"]
    elif source == "stream":
        argv = ["--config", "prompts", "--stream_questions", "10", "--stream_seed", "2"]
    else:  # Clotho-AQA's prompts hold each clip's decoded samples, once per question (6 per clip)
        release = write_synthetic_release(tmp_path / "release", num_files=3, seed=0).root
        argv = ["--data_dir", str(release), "--config", "prompts"]
    out = tmp_path / "out"
    cli = clotho_aqa_cli if source == "clotho" else clevr_math_cli
    assert cli(["export", *argv, "--out", str(out), "--cache_dir", str(tmp_path / "cache"), "--quiet"]) == 0
    printed = capsys.readouterr()
    embedded = set()
    column = "audios" if source == "clotho" else "images"
    for path in out.rglob("*.parquet"):
        for media in pq.read_table(path, columns=[column]).column(column).to_pylist():
            embedded.update(item["bytes"] if source != "clotho" else np.asarray(item, np.float32).tobytes()
                            for item in media)
    files = int(re.search(r"media files: (\d+), ", printed.out).group(1))
    assert files == len(embedded) > 0
    assert "warning" not in printed.err


def test_attach_media_on_streams_and_views_reads_media_only_for_rows_read(exports):
    questions = _load(exports, "clevr", "shared", "general")
    images = _load(exports, "clevr", "shared", "images")
    inline = _load(exports, "clevr", "inline", "general")["train"]
    stream = attach_media(_load(exports, "clevr", "shared", "general", streaming=True), images)
    for got, expected in zip(stream["train"], inline):
        assert got["image"].tobytes() == expected["image"].tobytes() and got["question_id"] == expected["question_id"]
    joined = attach_media(questions["train"], images)
    test_split = joined.shuffle(seed=1).train_test_split(test_size=0.25, seed=0)["test"]
    by_id = {r["question_id"]: r for r in inline}
    assert all(r["image"].tobytes() == by_id[r["question_id"]]["image"].tobytes() for r in test_split)
    # Media of one image left out: rows of that image fail when read, and only then.
    first = questions["train"][0]["image_filename"]
    partial = images.filter(lambda name: name != first, input_columns="image_filename")
    lazy = attach_media(questions["train"], partial)
    first_ids = set(questions["train"].filter(lambda name: name == first, input_columns="image_filename")["question_id"])
    others = lazy.filter(lambda qid: qid not in first_ids, input_columns="question_id").select([0])
    assert others[0]["image_filename"] != first and others[0]["image"].size == (480, 320)
    with pytest.raises(MediaJoinError, match=re.escape(f"image_filename {first!r} is not in the media table")):
        lazy[0]
    with pytest.raises(MediaJoinError, match="media must be a map-style Dataset"):
        attach_media(questions, _load(exports, "clevr", "shared", "images", streaming=True))


@pytest.mark.parametrize("dataset", DATASETS)
def test_the_cards_datasets_only_join_snippet_runs(exports, dataset):
    *_, media_config, key, column, _ = DATASETS[dataset]
    folder = exports["out"][dataset, "shared"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "## Media stored once" in card and f'load_dataset("REPO_ID", "{media_config}")' in card
    snippet = re.search(r"With `datasets` alone:\n\n```python\n(.*?)```", card, re.S).group(1)
    snippet = snippet.replace('"REPO_ID"', repr(str(folder)))
    namespace: dict = {}
    exec(compile(snippet, "card snippet", "exec"), namespace)
    config = re.search(r'load_dataset\([^,]+, "(\w+)", split="train"\)', snippet).group(1)
    expected = _undecoded(_load(exports, dataset, "inline", config)["train"], column)[0]
    if dataset == "clevr":
        got = namespace["ds"][0]
        assert got[column].tobytes() == datasets.Image().decode_example(expected[column]).tobytes()
    else:  # Audio decoding needs torchcodec: compare the undecoded row of the snippet's own media table
        namespace["media"] = namespace["media"].cast_column(column, datasets.Audio(decode=False))
        got = namespace["questions"].with_transform(namespace["add_media"])[0]
        assert got[column] == expected[column]
    assert {k: v for k, v in got.items() if k != column} == {k: v for k, v in expected.items() if k != column}


def test_a_shared_export_into_a_folder_keeps_the_media_of_the_shared_configs_it_keeps(tmp_path):
    big = write_clevr_folder(tmp_path / "a" / "CLEVR_v1.0", 4, seed=0, splits=("train", "val"), progress=False)
    small = write_clevr_folder(tmp_path / "b" / "CLEVR_v1.0", 2, seed=0, splits=("train", "val", "test"), progress=False)
    old_bytes = {p.name: p.read_bytes() for p in (big / "images").rglob("*.png")}
    out = tmp_path / "out"
    common = dict(card_template="clevr_math", media="shared", progress=False)
    export_builder(ClevrMath, out, data_dir=big, configs=["general"], cache_dir=tmp_path / "c1", **common)
    # a later export of another configuration from a smaller world: general is kept, and so are its images
    export_builder(ClevrMath, out, data_dir=small, configs=["multihop"], cache_dir=tmp_path / "c2", **common)
    shutil.rmtree(big / "images")
    shutil.rmtree(small / "images")
    load = dict(cache_dir=str(tmp_path / "lc"))
    images = datasets.load_dataset(str(out), "images", **load).cast_column("image", datasets.Image(decode=False))
    general = attach_media(datasets.load_dataset(str(out), "general", **load), images)
    names = [n for split in general.values() for n in split["image_filename"]]
    assert {"CLEVR_train_000003.png", "CLEVR_val_000003.png"} <= set(names)  # only the first world has them
    for split in general.values():
        for row in split.select(range(0, len(split), 7)):
            if row["image_filename"].endswith(("2.png", "3.png")):
                assert row["image"]["bytes"] == old_bytes[row["image_filename"]]
    keys = [k for split in images.values() for k in split["image_filename"]]
    assert len(keys) == len(set(keys))


def test_kept_shared_configs_naming_files_nobody_holds_are_an_error(exports, tmp_path):
    from builder_utils.hub.derived import resolve
    from builder_utils.hub.layout import layout_of
    from builder_utils.hub.outputs import keep_media_of_kept_configs

    folder = exports["out"]["clevr", "shared"]
    kept = {"chains": {"train": [str(p) for p in _parquet_files(folder, "chains") if p.name.startswith("train")]}}
    with pytest.raises(ValueError, match=r"keeps shared configuration\(s\) chains naming \d+ file\(s\) that neither"):
        keep_media_of_kept_configs({}, resolve(layout_of(ClevrMath)), kept, {})
