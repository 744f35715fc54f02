"""The Clotho-AQA builder on synthetic releases: every config, the quirks, bad input, no torch."""

from __future__ import annotations

import csv
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

import datasets
import builder_test_helpers
from builder_test_helpers import BuilderSpec, check_builder, make_builder
from clotho_aqa import CONFIG_NAMES, ClothoAQA, ClothoAQAConfig, MissingAudioError, decode_audio, without_decoding
from builder_utils.checksums import ChecksumError, read_checksums, verify_download
from clotho_aqa.release import AUDIO_DIR, CHECKSUMS_FILE, METADATA_CSV, SPLIT_CSVS, ZENODO_URL, ReleaseError
from clotho_aqa.synth import MOJIBAKE_QUESTION, write_synthetic_release

SPLITS = list(SPLIT_CSVS)
BASE = ["file_name", "audio", "question_id", "question"]
METADATA = ["keywords", "sound_link", "license", "manufacturer", "start_end_samples"]
COLUMNS = {
    "all": ["answer", "confidence", "annotator", "answer_type"],
    "questions": ["answers", "confidences", "majority_answer", "unanimous", "answer_type"],
    "yes_no_unfiltered": ["label", "confidence", "annotator"],
    "yes_no_unanimous": ["label", "answers", "confidences"],
    "yes_no_majority": ["label", "answers", "confidences"],
    "single_word": ["label", "answer", "confidence", "annotator"],
    "single_word_majority": ["label", "answers", "confidences"],
}

datasets.disable_progress_bars()


def build(config, root, cache, num_proc=None, **options):
    """``(builder, DatasetDict)`` of one config prepared from ``root`` (the shared helper's build)."""
    return builder_test_helpers.build(BuilderSpec(ClothoAQA, str(root)), config, cache, num_proc=num_proc, **options)


def csv_groups(root):
    """split -> list of (file, question, answers, confidences) read with the csv module alone."""
    groups = {}
    for split, name in SPLIT_CSVS.items():
        with open(root / name, encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        groups[split] = [
            (
                rows[i]["file_name"],
                rows[i]["QuestionText"],
                [r["answer"] for r in rows[i : i + 3]],
                [r["confidence"].lower() for r in rows[i : i + 3]],
            )
            for i in range(0, len(rows), 3)
        ]
    return groups


def expected_rows(config, groups):
    """Rows per split of a config, counted from the raw CSV groups."""
    counts = {}
    for split, items in groups.items():
        n = 0
        for _, _, answers, _ in items:
            yes_no = set(answers) <= {"yes", "no"}
            top = Counter(answers).most_common(1)[0][1]
            n += {
                "all": 3,
                "questions": 1,
                "yes_no_unfiltered": 3 * yes_no,
                "yes_no_unanimous": yes_no and top == 3,
                "yes_no_majority": yes_no,
                "single_word": 3 * (not yes_no),
                "single_word_majority": (not yes_no) and top >= 2,
            }[config]
        counts[split] = int(n)
    return counts


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_synthetic_release(tmp_path_factory.mktemp("clotho") / "release", num_files=10, seed=7)


PER_QUESTION = ("questions", "yes_no_unanimous", "yes_no_majority", "single_word_majority")


@pytest.fixture(scope="module")
def built(release, tmp_path_factory):
    """Every config through the shared declarative check (sizes, info, disjoint clips, cache reuse)."""
    cache = tmp_path_factory.mktemp("cache")
    groups = csv_groups(release.root)
    result = {}
    for names, unique in ((PER_QUESTION, "question_id"), (tuple(n for n in CONFIG_NAMES if n not in PER_QUESTION), None)):
        spec = BuilderSpec(
            builder_class=ClothoAQA,
            data_dir=str(release.root),
            configs={name: expected_rows(name, groups) for name in names},
            unique_column=unique,
            disjoint_column="file_name",
        )
        checked = check_builder(spec, cache)
        for name in names:
            builder = make_builder(spec, name, cache)
            builder.download_and_prepare()  # served from the cache check_builder filled
            result[name] = (builder, checked[name])
    return result


@pytest.mark.parametrize("config", CONFIG_NAMES)
def test_every_config_rows_and_columns(config, built, release):
    builder, dsets = built[config]
    assert list(dsets) == SPLITS
    assert {s: len(d) for s, d in dsets.items()} == expected_rows(config, csv_groups(release.root))
    assert list(builder.info.features) == BASE + COLUMNS[config] + METADATA
    audio = builder.info.features["audio"]
    assert isinstance(audio, datasets.Audio) and audio.sampling_rate == 44_100
    # splits never share a clip
    clips = [set(d["file_name"]) for d in dsets.values()]
    assert not (clips[0] & clips[1] or clips[0] & clips[2] or clips[1] & clips[2])


def test_rows_match_the_csv(built, release):
    groups = csv_groups(release.root)
    for split in SPLITS:
        rows = built["all"][1][split].remove_columns("audio")
        flat = [(f, q, a, c, k) for f, q, answers, confs in groups[split] for k, (a, c) in enumerate(zip(answers, confs))]
        assert list(zip(rows["file_name"], rows["question"], rows["answer"], rows["confidence"], rows["annotator"])) == flat
        questions = built["questions"][1][split].remove_columns("audio")
        assert questions["answers"] == [g[2] for g in groups[split]]
        assert len(set(questions["question_id"])) == len(questions)


def test_questions_config_majority_and_unanimous(built):
    rows = built["questions"][1]["train"].remove_columns("audio")
    for answers, majority, unanimous in zip(rows["answers"], rows["majority_answer"], rows["unanimous"]):
        top, votes = Counter(answers).most_common(1)[0]
        assert majority == (top if votes >= 2 else None)
        assert unanimous == (votes == 3)
    assert None in rows["majority_answer"], "the synthetic release has single-word questions without a majority"


def test_labels(built):
    for config in ("yes_no_unfiltered", "yes_no_unanimous", "yes_no_majority"):
        builder, dsets = built[config]
        assert builder.info.features["label"].names == ["yes", "no"]
        d = dsets["train"].remove_columns("audio")
        if config == "yes_no_unfiltered":
            assert set(d["label"]) == {0, 1}
        else:
            for label, answers in zip(d["label"], d["answers"]):
                top, votes = Counter(answers).most_common(1)[0]
                assert ["yes", "no"][label] == top and votes >= (3 if config == "yes_no_unanimous" else 2)

    train_words = sorted({a for a in built["single_word"][1]["train"]["answer"]})
    for config in ("single_word", "single_word_majority"):
        builder, dsets = built[config]
        label = builder.info.features["label"]
        assert label.names == train_words  # vocabulary of the train split, for both configs
        for split in SPLITS:
            d = dsets[split].remove_columns("audio")
            assert -1 not in d["label"]  # every validation/test answer occurs in train
            if config == "single_word":
                assert [label.int2str(i) for i in d["label"]] == d["answer"]


def test_quirks_survive_the_build(built, release):
    d = built["all"][1]["train"]
    undecoded = without_decoding(d)
    by_clip = {row["file_name"]: row for row in undecoded.remove_columns([c for c in METADATA if c != "sound_link"])}
    for quirk in ("apostrophe_entity", "ampersand_entity"):
        assert release.quirk_names[quirk] in by_clip
    dotted = by_clip[release.quirk_names["underscore_for_dot"]]["audio"]["path"]
    assert Path(dotted).name == "tin_can_da.nce.wav" and Path(dotted).is_file()
    assert by_clip[release.quirk_names["metadata_underscore"]]["sound_link"] is not None
    assert MOJIBAKE_QUESTION in set(d["question"])
    assert set(d["confidence"]) <= {"yes", "maybe", "no"}
    meta = built["questions"][1]["train"].remove_columns("audio")
    assert all(len(k) == 3 for k in meta["keywords"])
    assert any(s is None for s in meta["start_end_samples"])


def test_audio_decodes_without_torch(built):
    row = without_decoding(built["yes_no_majority"][1]["validation"])[0]
    array, rate = decode_audio(row)
    assert rate == 44_100 and array.ndim == 1 and array.shape[0] == int(44_100 * 0.2)
    assert 0.05 < abs(array).max() <= 1.0


def test_build_never_imports_torch(release, tmp_path):
    """Build in a fresh interpreter where torch and torchcodec cannot be imported at all."""
    script = f"""
import sys
sys.modules["torch"] = None  # makes 'import torch' fail and find_spec report it absent
sys.modules["torchcodec"] = None
from clotho_aqa import ClothoAQA
b = ClothoAQA(config_name="all", data_dir={str(release.root)!r}, cache_dir={str(tmp_path)!r})
b.download_and_prepare()
print(len(b.as_dataset(split="train")))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(release.num_rows["train"])


def test_torch_absent_from_this_environment():
    # The project's venv is the "no torch" environment the issue asks the builder to run in.
    if importlib.util.find_spec("torch") is not None:
        pytest.skip("torch is installed here; test_build_never_imports_torch still covers the no-torch path")
    assert "torch" not in sys.modules and "torchcodec" not in sys.modules


def test_same_input_same_arrow_bytes(release, tmp_path):
    first, _ = build("questions", release.root, tmp_path / "a")
    second, _ = build("questions", release.root, tmp_path / "b")
    files = [sorted(Path(b.cache_dir).glob("*.arrow")) for b in (first, second)]
    assert [f.name for f in files[0]] == [f.name for f in files[1]] and files[0]
    assert [f.read_bytes() for f in files[0]] == [f.read_bytes() for f in files[1]]


def test_num_proc_gives_the_same_rows(tmp_path, monkeypatch):
    root = write_synthetic_release(tmp_path / "rel", num_files=6, seed=2).root
    _, one = build("all", root, tmp_path / "one")
    monkeypatch.setattr(ClothoAQA, "FILES_PER_SHARD", 2)  # several shards for the 2 workers
    builder, two = build("all", root, tmp_path / "two", num_proc=2)
    assert len(builder.info.splits["train"].shard_lengths or []) > 1
    for split in SPLITS:
        assert one[split].remove_columns("audio").to_list() == two[split].remove_columns("audio").to_list()


def test_without_metadata_csv(release, tmp_path):
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    (root / METADATA_CSV).unlink()
    builder, dsets = build("single_word_majority", root, tmp_path / "cache")
    assert list(builder.info.features) == BASE + COLUMNS["single_word_majority"]


def test_audio_zip_instead_of_folder(release, tmp_path):
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    with zipfile.ZipFile(root / "audio_files.zip", "w") as z:
        for wav in sorted((root / AUDIO_DIR).iterdir()):
            z.write(wav, f"{AUDIO_DIR}/{wav.name}")
    shutil.rmtree(root / AUDIO_DIR)
    _, dsets = build("yes_no_unanimous", root, tmp_path / "cache")
    array, rate = decode_audio(without_decoding(dsets["test"])[0])
    assert rate == 44_100 and array.size > 0


def test_missing_audio_error_and_skip(release, tmp_path, caplog):
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    gone = release.files["train"][-1]
    (root / AUDIO_DIR / gone).unlink()
    with pytest.raises(MissingAudioError, match="1 audio file"):
        build("all", root, tmp_path / "cache")
    with caplog.at_level(logging.WARNING, logger="clotho_aqa.release"):
        _, dsets = build("all", root, tmp_path / "cache", skip_missing_audio=True)
    assert "1 audio file(s) missing" in caplog.text
    assert len(dsets["train"]) == release.num_rows["train"] - 18
    assert gone not in set(dsets["train"]["file_name"])


def test_bad_csv_stops_the_build(release, tmp_path):
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    path = root / SPLIT_CSVS["test"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    del lines[5]  # the second question of the first test clip loses an annotator row
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(ReleaseError, match="has 2 consecutive row") as err:
        build("questions", root, tmp_path / "cache")
    assert err.value.path == str(path) and err.value.line == 5


def test_unknown_config_lists_the_configs(release, tmp_path):
    with pytest.raises(ValueError) as err:
        ClothoAQA(config_name="yes_no", data_dir=str(release.root), cache_dir=str(tmp_path))
    assert all(name in str(err.value) for name in CONFIG_NAMES)
    with pytest.raises(ValueError) as err:
        ClothoAQAConfig(name="binary")
    assert all(name in str(err.value) for name in CONFIG_NAMES)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"split_strategy": "random"}, "split_strategy"),
        ({"candidates": 0}, "candidates"),
        ({"keep": 0}, "keep"),
        ({"candidates": "many"}, "candidates"),
        ({"seed": -1}, "seed"),
        ({"skip_missing_audio": "yes"}, "skip_missing_audio"),
        ({"split_strategi": "official"}, r"unknown Clotho-AQA config option\(s\) split_strategi; valid: .*split_strategy"),
    ],
)
def test_bad_options(release, tmp_path, options, message):
    with pytest.raises(ValueError, match=message):
        ClothoAQA(config_name="all", data_dir=str(release.root), cache_dir=str(tmp_path), **options)


def test_data_dir_without_audio(tmp_path, release):
    root = tmp_path / "rel"
    root.mkdir()
    for name in SPLIT_CSVS.values():
        shutil.copy(release.root / name, root / name)
    with pytest.raises(FileNotFoundError, match="audio_files"):
        build("all", root, tmp_path / "cache")


def test_checksums_table_and_verification(tmp_path):
    recorded = read_checksums(CHECKSUMS_FILE)
    wanted = list(SPLIT_CSVS.values()) + [METADATA_CSV, "audio_files.zip"]
    assert recorded == {ZENODO_URL.format(n): recorded[ZENODO_URL.format(n)] for n in wanted}
    assert [d.filename for d in recorded.values()] == wanted
    assert recorded[ZENODO_URL.format("audio_files.zip")].size == 3140677494
    small = tmp_path / "audio_files.zip"
    small.write_bytes(b"not the release")
    with pytest.raises(ChecksumError, match="3140677494"):
        verify_download(small, recorded[ZENODO_URL.format("audio_files.zip")])
    fake_csv = tmp_path / "clotho_aqa_val.csv"
    fake_csv.write_bytes(b"x" * 422039)  # right size, wrong content
    with pytest.raises(ChecksumError, match="sha256"):
        verify_download(fake_csv, recorded[ZENODO_URL.format("clotho_aqa_val.csv")])
    verify_download(small, recorded.get("https://example.org/unlisted"))  # nothing recorded: nothing to check


def test_recomputed_split(tmp_path):
    root = write_synthetic_release(tmp_path / "rel", num_files=15, seed=5).root
    options = {"split_strategy": "recomputed", "seed": 1, "candidates": 20, "keep": 5}
    builder, dsets = build("single_word", root, tmp_path / "cache", **options)
    clips = {s: set(d["file_name"]) for s, d in dsets.items()}
    assert sum(len(c) for c in clips.values()) == 15 and not (clips["train"] & (clips["validation"] | clips["test"]))
    # the vocabulary comes from the recomputed train split
    assert builder.info.features["label"].names == sorted(set(dsets["train"]["answer"]))
    again, _ = build("single_word", root, tmp_path / "cache2", **options)
    assert again.as_dataset(split="train")["question_id"] == dsets["train"]["question_id"]
    json.dumps(builder.info.features.to_dict())


def test_empty_split_is_left_out(tmp_path, caplog):
    rel = write_synthetic_release(tmp_path / "rel", num_files=5, seed=3)
    (rel.root / AUDIO_DIR / rel.files["validation"][0]).unlink()  # the only validation clip
    with caplog.at_level(logging.WARNING, logger="clotho_aqa.clotho_aqa"):
        _, dsets = build("questions", rel.root, tmp_path / "cache", skip_missing_audio=True)
    assert list(dsets) == ["train", "test"]
    assert "validation split has no rows" in caplog.text


def test_download_branch_from_a_mirror(release, tmp_path):
    """Without data_dir the builder fetches the five release files through the download manager."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for name in [*SPLIT_CSVS.values(), METADATA_CSV]:
        shutil.copy(release.root / name, mirror / name)
    with zipfile.ZipFile(mirror / "audio_files.zip", "w") as z:
        for wav in sorted((release.root / AUDIO_DIR).iterdir()):
            z.write(wav, f"{AUDIO_DIR}/{wav.name}")

    class MirroredClothoAQA(ClothoAQA):
        BASE_URL = str(mirror / "{}")

    builder = MirroredClothoAQA(config_name="yes_no_majority", cache_dir=str(tmp_path / "cache"))
    builder.download_and_prepare()
    dsets = builder.as_dataset()
    assert {s: len(d) for s, d in dsets.items()} == expected_rows("yes_no_majority", csv_groups(release.root))
    assert "sound_link" in dsets["train"].features
    array, rate = decode_audio(without_decoding(dsets["train"])[0])
    assert rate == 44_100 and array.ndim == 1


def test_no_data_dir_and_no_network_gives_the_url_the_reason_and_data_dir(tmp_path, monkeypatch):
    from builder_utils.checksums import DownloadError

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    builder = ClothoAQA(config_name="all", cache_dir=str(tmp_path))
    with pytest.raises(DownloadError) as raised:
        builder.download_and_prepare()
    message = str(raised.value)
    for part in (ZENODO_URL.format("clotho_aqa_train.csv"), "Offline mode is enabled", "data_dir=", "clotho-aqa synth"):
        assert part in message


def test_edited_csv_is_rebuilt_not_served_from_the_cache(release, tmp_path):
    """Issue 12 item 7: the cache key covers the input files, as CLEVR-Math's does."""
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    first, before = build("questions", root, tmp_path / "cache")
    path = root / SPLIT_CSVS["test"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:4]), encoding="utf-8")  # the header and the first question only
    second, after = build("questions", root, tmp_path / "cache")
    assert second.cache_dir != first.cache_dir
    assert len(after["test"]) == 1 < len(before["test"])


@pytest.mark.parametrize("spellings", [("Yes", "yes ", "YES"), (" no", "No", "NO\t")])
def test_answers_are_normalised_with_a_warning(release, tmp_path, caplog, spellings):
    """Issue 12 item 8: case and whitespace never make a yes/no question single-word."""
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    path = root / SPLIT_CSVS["validation"]
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    first = next(i for i in range(1, len(rows), 3) if {r[2] for r in rows[i:i + 3]} <= {"yes", "no"})
    for row, spelling in zip(rows[first:first + 3], spellings):
        row[2] = spelling
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    with caplog.at_level(logging.WARNING, logger="clotho_aqa.release"):
        _, dsets = build("yes_no_majority", root, tmp_path / "cache")
    assert "3 answer(s)" in caplog.text
    assert len(dsets["validation"]) == expected_rows("yes_no_majority", csv_groups(release.root))["validation"]
    word = spellings[0].strip().lower()
    rows_of_question = [r for r in dsets["validation"].remove_columns("audio")
                        if (r["file_name"], r["question"]) == (rows[first][0], rows[first][1])]
    assert [r["answers"] for r in rows_of_question] == [[word] * 3]


NEW_ENTRY = '''    _config("single_word_unanimous", ("single_word",), QUESTION, "unanimous",
            "Single-word questions whose 3 annotators agree, one row per question."),
'''
NEW_CONFIG = """
import json, sys
from builder_utils.hub import export_builder, load_exported
from clotho_aqa import CONFIG_NAMES, ClothoAQA, evaluation
release, out = sys.argv[1:]
export_builder(ClothoAQA, out + "/hub", card_template="clotho_aqa", data_dir=release,
               configs=["single_word_unanimous"], cache_dir=out + "/cache", progress=False)
splits = load_exported(out + "/hub", "single_word_unanimous", cache_dir=out + "/cache")
label = splits["train"].features["label"]
report = evaluation.evaluate(out + "/hub", "single_word_unanimous", "train", cache_dir=out + "/cache")
print(json.dumps({
    "package": evaluation.__file__, "names": CONFIG_NAMES, "columns": list(splits["train"].features),
    "classes": label.names, "card": open(out + "/hub/README.md").read(),
    "rows": {s: [[label.int2str(r["label"]), r["answers"]] for r in d.remove_columns("audio")]
             for s, d in splits.items()},
    "headline": report["labelling"]["name"], "questions": report["baselines"]["majority"]["overall"]["questions"],
}))
"""


def test_a_new_configuration_is_one_entry_in_builder_configs(release, tmp_path):
    """Issue 31: a copy of the package with one more entry in BUILDER_CONFIGS, and nothing else
    changed, builds, exports (with its description in the card) and evaluates (under its own
    labelling) the new configuration, in a fresh interpreter."""
    root = Path(__file__).resolve().parent.parent
    copy = tmp_path / "package"
    shutil.copytree(root / "clotho_aqa", copy / "clotho_aqa", ignore=shutil.ignore_patterns("__pycache__"))
    config = copy / "clotho_aqa" / "config.py"
    source = config.read_text(encoding="utf-8")
    end = source.index("\n]\nCONFIG_NAMES") + 1
    config.write_text(source[:end] + NEW_ENTRY + source[end:], encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(copy), str(root)])}
    done = subprocess.run([sys.executable, "-c", NEW_CONFIG, str(release.root), str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["package"].startswith(str(copy)) and found["names"][-1] == "single_word_unanimous"
    assert found["columns"] == BASE + ["label", "answers", "confidences"] + METADATA
    groups = csv_groups(release.root)
    expected = {split: [(answers[0], answers) for _, _, answers, _ in items
                        if not set(answers) <= {"yes", "no"} and len(set(answers)) == 1]
                for split, items in groups.items()}
    assert expected["train"] and len(expected["train"]) < sum(not set(g[2]) <= {"yes", "no"} for g in groups["train"])
    found_rows = {split: [tuple(row) for row in rows] for split, rows in found["rows"].items()}
    assert found_rows == {split: rows for split, rows in expected.items() if rows}  # an empty split is left out
    assert found["classes"] == sorted({a for _, _, answers, _ in groups["train"] if not set(answers) <= {"yes", "no"}
                                       for a in answers})
    assert "Single-word questions whose 3 annotators agree, one row per question." in found["card"]
    assert found["headline"] == "unanimous" and found["questions"] == len(expected["train"])
