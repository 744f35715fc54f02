"""The clotho-aqa command: synth (official format, determinism), demo, splits."""

from __future__ import annotations

import csv
import json

import pytest
import soundfile

from clotho_aqa.cli import main
from clotho_aqa.config import CONFIG_NAMES
from clotho_aqa.demo import run_demo
from clotho_aqa.release import AUDIO_DIR, METADATA_CSV, SPLIT_CSVS


def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_synth_writes_the_official_layout(tmp_path, capsys):
    out = tmp_path / "rel"
    assert main(["synth", "--out", str(out), "--num_files", "8", "--seed", "3"]) == 0
    assert "clotho-aqa synth: wrote" in capsys.readouterr().err  # a status line, through logging
    assert sorted(p.name for p in out.iterdir()) == sorted([".ownership.json", AUDIO_DIR, METADATA_CSV, *SPLIT_CSVS.values()])
    clips = set()
    for name in SPLIT_CSVS.values():
        raw = (out / name).read_bytes()
        assert raw.startswith(b"file_name,QuestionText,answer,confidence\n")
        assert b"\r" not in raw and raw.endswith(b"\n")
        rows = list(csv.reader(raw.decode("utf-8").splitlines()))[1:]
        assert len(rows) % 18 == 0 or name == SPLIT_CSVS["train"]
        clips |= {r[0] for r in rows}
    assert any(b'"' in (out / n).read_bytes() for n in SPLIT_CSVS.values())  # quoted commas
    meta = (out / METADATA_CSV).read_bytes()
    assert meta.startswith(b",file_name,keywords,sound_link,start_end_samples,manufacturer,license\n")
    wavs = sorted((out / AUDIO_DIR).iterdir())
    assert len(wavs) == len(clips) + 1  # one unused clip, as in the official zip
    info = soundfile.info(wavs[0])
    assert (info.samplerate, info.channels, info.subtype) == (44_100, 1, "PCM_16")


def test_synth_is_deterministic(tmp_path):
    for name, seed in (("a", 5), ("b", 5), ("c", 6)):
        assert main(["synth", "--out", str(tmp_path / name), "--num_files", "5", "--seed", str(seed)]) == 0
    a, b, c = (_tree(tmp_path / n) for n in "abc")
    assert a == b
    assert a != c


def test_synth_replaces_only_its_own_files(tmp_path, capsys):
    """--overwrite has one meaning: a file at one of our names that the record does not list."""
    out = tmp_path / "rel"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    (out / "clotho_aqa_train.csv").write_text("the user's table")
    assert main(["synth", "--out", str(out), "--num_files", "5"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["clotho_aqa_train.csv", "keep.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["rel"]  # no temporary folder left behind
    (out / "clotho_aqa_train.csv").unlink()
    # a file beside ours stays (only our files are ever replaced)
    assert main(["synth", "--out", str(out), "--num_files", "5"]) == 0
    assert (out / "keep.txt").read_text() == "mine" and (out / AUDIO_DIR).is_dir()
    ours = tmp_path / "ours"
    assert main(["synth", "--out", str(ours), "--num_files", "5"]) == 0
    assert main(["synth", "--out", str(ours), "--num_files", "6"]) == 0
    assert len(list((ours / AUDIO_DIR).iterdir())) == 6 + 1


def test_synth_rejects_too_few_files(tmp_path, capsys):
    assert main(["synth", "--out", str(tmp_path / "rel"), "--num_files", "2"]) == 2
    assert "at least 3" in capsys.readouterr().err
    assert not (tmp_path / "rel").exists()


def test_demo_exports_and_reloads_every_config(tmp_path, capsys):
    sizes = run_demo(tmp_path / "demo", num_files=5, seed=1)
    printed = capsys.readouterr().out
    assert list(sizes) == list(CONFIG_NAMES)
    assert sizes["all"] == {"train": 54, "validation": 18, "test": 18}
    assert sizes["questions"] == {"train": 18, "validation": 6, "test": 6}
    for name in CONFIG_NAMES:
        assert f"[{name}]" in printed
        assert list((tmp_path / "demo" / "hub" / name).glob("train-*-of-*.parquet"))
    assert (tmp_path / "demo" / "hub" / "README.md").is_file()
    assert "@ 44100 Hz" in printed
    assert not list((tmp_path / "demo" / "hub").glob(".staging-*"))  # no staging folder left
    # the demo ends with the baselines under the paper's labellings
    assert "baselines on questions/test" in printed and "| yes_no/majority |" in printed
    assert (tmp_path / "demo" / "evaluation" / "report.json").is_file()


def test_splits_command(tmp_path, capsys):
    rel = tmp_path / "rel"
    assert main(["synth", "--out", str(rel), "--num_files", "15", "--seed", "9"]) == 0
    out, report = tmp_path / "out" / "splits.csv", tmp_path / "out" / "report.json"
    args = ["splits", "--data_dir", str(rel), "--out", str(out), "--report", str(report)]
    assert main(args + ["--candidates", "30", "--keep", "5", "--seed", "2", "--quiet"]) == 0
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    clips = [r for name in SPLIT_CSVS.values() for r in csv.DictReader(open(rel / name, encoding="utf-8", newline=""))]
    assert [r["file_name"] for r in rows] == list(dict.fromkeys(r["file_name"] for r in clips))
    assert {r["split"] for r in rows} == {"train", "validation", "test"}
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["files"] == {s: sum(r["split"] == s for r in rows) for s in ("train", "validation", "test")}
    assert (summary["seed"], summary["candidates"], summary["keep"]) == (2, 30, 5)
    assert "search" in summary
    # The measure in one sentence, the tables' own split on the same measure, the floor under both.
    assert "summed over the answers" in summary["measure"]
    assert summary["label_error_floor"] <= summary["label_error"]
    assert summary["label_error_floor"] <= summary["tables_split_label_error"]
    markdown = report.with_suffix(".md").read_text(encoding="utf-8")
    assert summary["measure"] in markdown
    assert f"| label error (lower is better) | {summary['label_error']} | {summary['tables_split_label_error']} |" in markdown
    assert sorted(p.name for p in out.parent.iterdir()) == [".ownership.json", "report.json", "report.md", "splits.csv"]  # no temp files
    first = out.read_bytes()
    assert main(args + ["--candidates", "30", "--keep", "5", "--seed", "2", "--quiet"]) == 0
    assert out.read_bytes() == first


def test_splits_command_reports_bad_input(tmp_path, capsys):
    assert main(["splits", "--data_dir", str(tmp_path / "missing"), "--out", str(tmp_path / "s.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "s.csv").exists()


def test_builder_recomputed_split_is_the_splits_command(tmp_path):
    """`clotho-aqa splits` and split_strategy="recomputed" run the same search: same clips per split."""
    import datasets

    from clotho_aqa import ClothoAQA

    datasets.disable_progress_bars()
    rel = tmp_path / "rel"
    assert main(["synth", "--out", str(rel), "--num_files", "20", "--seed", "4"]) == 0
    out, report = tmp_path / "splits.csv", tmp_path / "report.json"
    assert main(["splits", "--data_dir", str(rel), "--out", str(out), "--report", str(report),
                 "--candidates", "40", "--keep", "6", "--seed", "3", "--quiet"]) == 0
    with open(out, encoding="utf-8", newline="") as f:
        from_command = {row["file_name"]: row["split"] for row in csv.DictReader(f)}

    cache = tmp_path / "cache"
    official = ClothoAQA(config_name="questions", data_dir=str(rel), cache_dir=str(cache))
    official.download_and_prepare()
    # Same cache folder: the recomputed build must not be served the official tables.
    builder = ClothoAQA(config_name="questions", data_dir=str(rel), cache_dir=str(cache),
                        split_strategy="recomputed", seed=3, candidates=40, keep=6)
    builder.download_and_prepare()
    from_builder = {name: split for split, ds in builder.as_dataset().items() for name in ds["file_name"]}
    assert from_builder == from_command
    from_official = {name: split for split, ds in official.as_dataset().items() for name in ds["file_name"]}
    assert from_official != from_command

    summary = json.loads(report.read_text(encoding="utf-8"))
    search = summary["search"]
    assert search["sizes"] == summary["files"]
    assert search["constraint"]["satisfied"] is (not search["constraint"]["violations"])
    per_label = {row["label"]: row for row in search["labels"]}
    words = {}  # answer word -> {clip: split}
    for split, ds in builder.as_dataset().items():
        for name, answers in zip(ds["file_name"], ds["answers"]):
            for word in answers:
                words.setdefault(word, {})[name] = split
    assert set(per_label) == set(words)  # labels = every answer word, yes/no included
    for word, files in words.items():
        assert per_label[word]["total"] == len(files)
        for split in ("train", "validation", "test"):
            assert per_label[word][split] == sum(s == split for s in files.values())


def test_splits_command_warns_about_constraint_violations(tmp_path, capsys):
    # Three clips whose answer sets pairwise overlap ({x,y}, {y,z}, {x,z}): no train-vs-rest
    # split can put every answer on both sides, so the command must say which ones it breaks.
    rel = tmp_path / "rel"
    rel.mkdir()
    header = "file_name,QuestionText,answer,confidence\n"
    rows = {"a.wav": ("x", "y", "x"), "b.wav": ("y", "z", "z"), "c.wav": ("x", "z", "x")}
    body = "".join(f"{clip},What is it?,{answer},yes\n" for clip, answers in rows.items() for answer in answers)
    (rel / SPLIT_CSVS["train"]).write_text(header + body, encoding="utf-8")
    for split in ("validation", "test"):
        (rel / SPLIT_CSVS[split]).write_text(header, encoding="utf-8")
    out = tmp_path / "splits.csv"
    assert main(["splits", "--data_dir", str(rel), "--out", str(out), "--candidates", "10", "--keep", "2"]) == 0
    captured = capsys.readouterr()
    assert "clotho-aqa splits: wrote" in captured.err and "label error" in captured.err
    assert "warning: 1 answer(s)" in captured.err
    with open(out, encoding="utf-8", newline="") as f:
        split_of = {row["file_name"]: row["split"] for row in csv.DictReader(f)}
    in_train = {w for clip, answers in rows.items() if split_of[clip] == "train" for w in answers}
    in_rest = {w for clip, answers in rows.items() if split_of[clip] != "train" for w in answers}
    broken = sorted({"x", "y", "z"} - (in_train & in_rest))
    assert len(broken) == 1 and repr(broken[0]) in captured.err


def test_recomputed_split_with_missing_audio_is_the_splits_command(tmp_path):
    """Issue 12 item 10: with skip_missing_audio=True the remaining clips keep the split that
    `clotho-aqa splits` gives them (the split is a property of the QA tables, not of the WAVs)."""
    import datasets

    from clotho_aqa import ClothoAQA

    datasets.disable_progress_bars()
    rel = tmp_path / "rel"
    assert main(["synth", "--out", str(rel), "--num_files", "9", "--seed", "4"]) == 0
    out = tmp_path / "splits.csv"
    search = ["--candidates", "40", "--keep", "6", "--seed", "3"]
    assert main(["splits", "--data_dir", str(rel), "--out", str(out), *search, "--quiet"]) == 0
    with open(out, encoding="utf-8", newline="") as f:
        from_command = {row["file_name"]: row["split"] for row in csv.DictReader(f)}
    missing = sorted(from_command)[:3]
    for name in missing:
        (rel / AUDIO_DIR / name).unlink()
    builder = ClothoAQA(config_name="questions", data_dir=str(rel), cache_dir=str(tmp_path / "cache"),
                        split_strategy="recomputed", seed=3, candidates=40, keep=6, skip_missing_audio=True)
    builder.download_and_prepare()
    from_builder = {name: split for split, ds in builder.as_dataset().items() for name in ds["file_name"]}
    assert from_builder == {name: split for name, split in from_command.items() if name not in missing}


def test_export_takes_the_builder_options_as_flags_and_says_what_it_wrote(tmp_path, capsys):
    rel = tmp_path / "rel"
    assert main(["synth", "--out", str(rel), "--num_files", "6", "--seed", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""  # --quiet: no success line
    missing = sorted((rel / AUDIO_DIR).iterdir())[0]
    missing.unlink()
    out = tmp_path / "hub"
    base = ["export", "--data_dir", str(rel), "--out", str(out), "--config", "questions"]
    # The missing-WAV error names the option and its flag.
    assert main(base) == 2
    err = capsys.readouterr().err
    assert missing.name in err and "skip_missing_audio=True" in err and "--skip_missing_audio" in err
    assert main(base + ["--skip_missing_audio", "--split_strategy", "recomputed", "--refine_rounds", "20"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("clotho-aqa export: warning")]
    success = [line for line in lines if line.startswith("clotho-aqa export: wrote ")]
    assert len(success) == 1 and str(out) in success[0] and "questions (train" in success[0], lines
    from datasets import load_dataset

    loaded = load_dataset(str(out), "questions", cache_dir=str(tmp_path / "load_cache"))
    names = set().union(*(split["file_name"] for split in loaded.values()))
    assert missing.name not in names and len(names) == 5
    assert main(base + ["--skip_missing_audio", "--quiet"]) == 0
    assert "wrote" not in capsys.readouterr().err


def test_export_refuses_a_bad_builder_option_value(tmp_path, capsys):
    rel = tmp_path / "rel"
    assert main(["synth", "--out", str(rel), "--num_files", "4", "--quiet"]) == 0
    with pytest.raises(SystemExit) as exited:
        main(["export", "--data_dir", str(rel), "--out", str(tmp_path / "hub"), "--split_strategy", "random"])
    assert exited.value.code == 2 and "invalid choice: 'random'" in capsys.readouterr().err


def test_evaluate_on_a_data_dir_takes_the_builder_options(tmp_path, capsys):
    rel = tmp_path / "rel"
    assert main(["synth", "--out", str(rel), "--num_files", "6", "--seed", "2", "--quiet"]) == 0
    sorted((rel / AUDIO_DIR).iterdir())[0].unlink()
    args = ["evaluate", "--data", str(rel), "--cache_dir", str(tmp_path / "cache"), "--quiet"]
    assert main(args + ["--out", str(tmp_path / "e1")]) == 2
    assert "--skip_missing_audio" in capsys.readouterr().err
    assert main(args + ["--out", str(tmp_path / "e2"), "--skip_missing_audio"]) == 0
    report = json.loads((tmp_path / "e2" / "report.json").read_text(encoding="utf-8"))
    assert report["num_questions"] > 0


def test_quiet_demo_prints_no_transcript_and_no_success_line(tmp_path, capsys):
    from clotho_aqa.cli import main as clotho_main

    assert clotho_main(["demo", "--out", str(tmp_path / "d"), "--num_files", "4", "--quiet"]) == 0
    said = capsys.readouterr()
    assert said.out == ""
    assert "finished" not in said.err and "error" not in said.err
    assert (tmp_path / "d" / "hub" / "README.md").is_file()
