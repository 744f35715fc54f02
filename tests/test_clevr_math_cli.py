"""The ``clevr-math`` command: dispatch, ``synth`` and ``demo``."""

from __future__ import annotations

import json

import datasets
import pytest

from clevr_math.cli import main

COMMANDS = ("synth", "demo", "export", "push")


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_unknown_command_is_an_error_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["bake"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'bake'" in err and "synth" in err and "demo" in err


def test_synth_writes_a_clevr_folder(tmp_path):
    assert main(["synth", "--out", str(tmp_path), "--num_scenes", "3", "--splits", "val,test", "--quiet"]) == 0
    scenes = json.loads((tmp_path / "scenes" / "CLEVR_test_scenes.json").read_text())["scenes"]
    assert [s["image_filename"] for s in scenes] == [f"CLEVR_test_00000{i}.png" for i in range(3)]
    assert sorted(p.name for p in (tmp_path / "images" / "val").iterdir()) == [
        f"CLEVR_val_00000{i}.png" for i in range(3)
    ]


def test_demo_exports_and_reloads_both_configs(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--num_scenes", "6", "--rows", "1"]) == 0
    printed, status = capsys.readouterr()
    # The demo chose the inline layout itself: no size advice its user cannot act on (issue 40).
    assert "projected size of the export" in status and "warning" not in status, status
    hub = out / "hub"
    for config in ("general", "multihop"):
        assert f"== {config} ==" in printed
        assert list((hub / config).glob("train-*-of-*.parquet"))
        reloaded = datasets.load_dataset(str(hub), config, cache_dir=str(tmp_path / "hf"))
        assert sorted(reloaded) == ["test", "train", "validation"]
        for split, ds in reloaded.items():
            assert f"{split}: {ds.num_rows} questions on" in printed
    names = reloaded["test"].features["category"].names
    assert {names[c] for c in reloaded["test"]["category"]} == {"multihop"}
    # Images are embedded: the exported rows do not need the synthetic world any more.
    world = out / "CLEVR_v1.0"
    for png in (world / "images" / "test").iterdir():
        png.unlink()
    reloaded = datasets.load_dataset(str(hub), "multihop", cache_dir=str(tmp_path / "hf2"))
    assert reloaded["test"][0]["image"].size == (480, 320)  # synthetic images are CLEVR v1.0's size
    # The demo ends with the baselines (and the program oracle, 100 %) on each test split.
    for config in ("general", "multihop"):
        assert f"baselines on {config}/test" in printed
        report = json.loads((out / "evaluation" / config / "report.json").read_text())
        assert report["baselines"]["oracle"]["overall"]["accuracy"] == 1.0
    assert "| oracle | 100.0% |" in printed
    # No temporary folders are left behind.
    assert sorted(p.name for p in out.iterdir()) == ["CLEVR_v1.0", "evaluation", "hub"]


def test_demo_rerun_replaces_its_outputs(tmp_path):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--num_scenes", "2", "--rows", "0"]) == 0
    assert main(["demo", "--out", str(out), "--num_scenes", "3", "--rows", "0"]) == 0
    reloaded = datasets.load_dataset(str(out / "hub"), "general", cache_dir=str(tmp_path / "hf"))
    assert len(set(reloaded["train"]["image_filename"])) == 3
    assert sorted(p.name for p in out.iterdir()) == ["CLEVR_v1.0", "evaluation", "hub"]


def test_synth_warns_about_a_split_the_builder_needs(tmp_path, capsys):
    assert main(["synth", "--out", str(tmp_path / "w"), "--num_scenes", "train=2", "--no_render"]) == 0
    err = capsys.readouterr().err
    assert "warning: no val scenes" in err and "add val=N to --num_scenes" in err
    assert main(["synth", "--out", str(tmp_path / "w2"), "--num_scenes", "train=2,val=1", "--no_render"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_num_proc_above_the_shards_is_explained(tmp_path, caplog):
    from clevr_math import ClevrMath

    assert main(["synth", "--out", str(tmp_path / "w"), "--num_scenes", "train=3,val=2", "--quiet"]) == 0
    datasets.disable_progress_bars()
    builder = ClevrMath(config_name="general", data_dir=str(tmp_path / "w"), cache_dir=str(tmp_path / "cache"))
    with caplog.at_level("WARNING", logger="clevr_math"):
        builder.download_and_prepare(num_proc=2)
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("clevr_math")]
    assert any("train split: num_proc=2" in m and "1 shard(s) of reset_counts_every=250 scenes" in m for m in ours), ours
    assert len(builder.as_dataset()["train"]) > 0


def test_quiet_demo_prints_no_transcript_and_no_success_line(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path / "d"), "--num_scenes", "4", "--quiet"]) == 0
    said = capsys.readouterr()
    assert said.out == ""
    assert "demo finished" not in said.err and "error" not in said.err
    assert (tmp_path / "d" / "hub" / "README.md").is_file()
