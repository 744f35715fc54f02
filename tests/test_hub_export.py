"""Hub export and push on tiny generated data, through the real builders, Parquet and ``load_dataset``.

The central check: every configuration of both builders, exported and loaded back with
``datasets.load_dataset(folder, config)`` after the source images and WAVs are deleted, has the
builder's features and rows (the media columns compared with the builder's rows embedded by
``datasets`` itself).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import types
from pathlib import Path

import datasets
import huggingface_hub
import pyarrow.parquet as pq
import pytest
import yaml
from datasets.table import embed_table_storage
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard
from PIL import Image

from builder_test_helpers import BuilderSpec, build
from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub import (
    CardError,
    add_export_subcommand,
    add_push_subcommand,
    ExportError,
    PushError,
    export_builder,
    load_card_template,
    load_exported,
    plan_upload,
    push_folder,
)
from builder_utils.hub.card import config_entry, merge_metadata
from builder_utils.hub.export import write_split
from builder_utils.ownership import RECORD, read_record_at
from builder_utils.hub.cli import _config_list
from builder_utils.hub.plots import SPLIT_COLOURS, axis_ticks, bar_chart
from builder_utils.hub import push as push_module
from builder_utils.hub.push import RemoteFile, _merged_readme, card_for_repo, git_blob_id, local_files, plan_push
from clevr_math import ClevrMath
from clotho_aqa import ClothoAQA
from clotho_aqa.synth import write_synthetic_release

CARD_KEYS = ("configs", "dataset_info", "license", "pretty_name", "task_categories", "language", "tags",
             "size_categories", "source_datasets")
SHARD = re.compile(r"^(?P<config>[^/]+)/(?P<split>\w+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.parquet$")
CLEVR_CONFIGS = [c.name for c in ClevrMath.BUILDER_CONFIGS]
CLOTHO_CONFIGS = [c.name for c in ClothoAQA.BUILDER_CONFIGS]


def _command(builder_cls, card_template: str, argv: list[str]) -> int:
    """Run ``export`` / ``push`` through the argparse entry points, as the dataset CLIs register them."""
    prog = "clevr-math" if builder_cls is ClevrMath else "clotho-aqa"
    parser = argparse.ArgumentParser(prog=prog)
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_export_subcommand(subparsers, builder_cls, card_template)
    add_push_subcommand(subparsers)
    args = parser.parse_args(argv)
    return args.run(args)


def _export(argv: list[str], builder_cls, card_template: str) -> int:
    return _command(builder_cls, card_template, ["export", *argv])


def _push(argv: list[str], builder_cls=ClevrMath) -> int:
    return _command(builder_cls, "", ["push", *argv])


def _clevr(root: Path) -> Path:
    return write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)


def _clotho(root: Path) -> Path:
    return write_synthetic_release(root / "release", num_files=5, seed=0).root


def _embedded_builder_tables(builder_cls, data_dir, cache_dir) -> dict[str, tuple[datasets.Features, dict]]:
    """Each config's features and, per split, its rows with media embedded by ``datasets``."""
    expected = {}
    spec = BuilderSpec(builder_cls, str(data_dir))
    for config in builder_cls.BUILDER_CONFIGS:
        _, built = build(spec, config.name, cache_dir)
        features = next(iter(built.values())).features
        expected[config.name] = (features, {split: embed_table_storage(ds.data.table) for split, ds in built.items()})
    return expected


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Both datasets exported with the commands (small shards), then their sources deleted."""
    root = tmp_path_factory.mktemp("hub")
    clevr, clotho = _clevr(root / "clevr"), _clotho(root / "clotho")
    expected = {
        "clevr": _embedded_builder_tables(ClevrMath, clevr, root / "cache"),
        "clotho": _embedded_builder_tables(ClothoAQA, clotho, root / "cache"),
    }
    out = {"clevr": root / "out_clevr", "clotho": root / "out_clotho"}
    # --cache_dir: the export reuses the builds above instead of building again
    common = ["--cache_dir", str(root / "cache"), "--quiet"]
    assert _export(["--data_dir", str(clevr), "--out", str(out["clevr"]), "--max_shard_size", "300KB", *common],
                   ClevrMath, "clevr_math") == 0
    assert _export(["--data_dir", str(clotho), "--out", str(out["clotho"]), *common],
                   ClothoAQA, "clotho_aqa") == 0
    shutil.rmtree(clevr / "images")
    shutil.rmtree(clotho / "audio_files")
    return {"out": out, "expected": expected, "cache": root / "load_cache"}


@pytest.mark.parametrize(
    "dataset, config", [("clevr", c) for c in CLEVR_CONFIGS] + [("clotho", c) for c in CLOTHO_CONFIGS]
)
def test_every_config_loads_back_with_the_builders_rows_after_sources_are_deleted(exported, dataset, config):
    features, tables = exported["expected"][dataset][config]
    loaded = load_exported(exported["out"][dataset], config, cache_dir=exported["cache"])
    assert list(loaded) == list(tables)
    for split, table in tables.items():
        assert loaded[split].features == features, f"{config}/{split}"
        assert loaded[split].data.table.equals(table), f"{config}/{split}: rows differ"


def test_media_are_embedded_bytes(exported):
    row = load_exported(exported["out"]["clevr"], "general", cache_dir=exported["cache"])["train"][0]
    assert row["image"].size == (480, 320)  # decoded from the Parquet bytes; the PNGs are gone
    clotho = load_exported(exported["out"]["clotho"], "questions", cache_dir=exported["cache"])["test"]
    audio = clotho.cast_column("audio", datasets.Audio(decode=False))[0]["audio"]
    assert audio["bytes"][:4] == b"RIFF" and "/" not in audio["path"]


def test_layout_is_push_to_hubs(exported):
    for dataset, names in (("clevr", CLEVR_CONFIGS), ("clotho", CLOTHO_CONFIGS)):
        folder = exported["out"][dataset]
        card = MetadataConfigs.from_dataset_card_data(DatasetCard.load(folder / "README.md").data)
        shards: dict[tuple[str, str], list[tuple[int, int]]] = {}
        for path in folder.rglob("*.parquet"):
            match = SHARD.match(path.relative_to(folder).as_posix())
            assert match, path
            shards.setdefault((match["config"], match["split"]), []).append((int(match["index"]), int(match["count"])))
        assert sorted({c for c, _ in shards}) == sorted(names)
        for (config, split), found in shards.items():
            count = found[0][1]
            assert sorted(found) == [(i, count) for i in range(count)], (config, split)
            assert {"split": split, "path": f"{config}/{split}-*"} in card[config]["data_files"]
    # 300KB shards cut the image splits of CLEVR-Math into several files
    assert len(list((exported["out"]["clevr"] / "general").glob("train-*.parquet"))) > 1


@pytest.mark.parametrize("dataset, default", [("clevr", "general"), ("clotho", "all")])
def test_card_parses_and_holds_the_hub_keys_and_real_statistics(exported, dataset, default):
    folder = exported["out"][dataset]
    card = DatasetCard.load(folder / "README.md")
    data = card.data.to_dict()
    for key in CARD_KEYS:
        assert data.get(key), key
    defaults = [c["config_name"] for c in data["configs"] if c.get("default")]
    assert defaults == [default]
    infos = {info["config_name"]: info for info in data["dataset_info"]}
    for config, info in infos.items():
        for split in info["splits"]:
            rows = sum(pq.ParquetFile(p).metadata.num_rows for p in (folder / config).glob(f"{split['name']}-*.parquet"))
            assert split["num_examples"] == rows, (config, split["name"])
        table_row = next(line for line in card.text.splitlines() if line.startswith(f"| `{config}`"))
        assert f"| {sum(s['num_examples'] for s in info['splits']):,} |" in table_row
    assert not re.search(r"\{\{\s*\w+\s*\}\}", card.text)  # every placeholder filled
    images = re.findall(r"!\[[^\]]*\]\((assets/[^)]+\.png)\)", card.text)
    assert images
    for image in images:
        with Image.open(folder / image) as png:
            assert png.format == "PNG" and png.width > 100
    assert "bibtex" in card.text and "## Licenses" in card.text


def test_clevr_card_counts_templates_and_categories(exported):
    text = DatasetCard.load(exported["out"]["clevr"] / "README.md").text
    general = datasets.load_dataset(str(exported["out"]["clevr"]), "general", split="test", cache_dir=exported["cache"])
    multihop = sum(1 for c in general["category"] if c == general.features["category"].str2int("multihop"))
    section = text.split("### `general`")[1].split("### `multihop`")[0]
    line = next(line for line in section.splitlines() if line.startswith("| `multihop` |"))
    assert line.split("|")[3].strip() == str(multihop)  # columns: value, train, validation, test
    # the template statistics' keys are values of the `template` column, the one users filter on
    keys = {line.split("`")[1] for line in section.split("template")[-1].splitlines() if line.startswith("| `")}
    assert "subtraction-multihop" in keys and keys <= set(general["template"]) | {"multihop"}


def test_reexport_of_one_config_keeps_the_others_and_foreign_card_entries(tmp_path):
    release = _clotho(tmp_path)
    out = tmp_path / "out"
    export_builder(ClothoAQA, out, card_template="clotho_aqa", data_dir=release, configs=["all", "questions"], progress=False)
    # a hand-edited card: an extra key and a configuration that is not ours
    card = DatasetCard.load(out / "README.md")
    card.data["annotations_note"] = "kept"
    card.data["configs"].append({"config_name": "extra", "data_files": [{"split": "train", "path": "extra/*.csv"}]})
    (out / "README.md").write_text(str(card), encoding="utf-8")
    before = sorted(p.name for p in (out / "questions").iterdir())

    export_builder(ClothoAQA, out, card_template="clotho_aqa", data_dir=release, configs=["yes_no_majority"], progress=False)
    export_builder(ClothoAQA, out, card_template="clotho_aqa", data_dir=release, configs=["all"], progress=False)

    data = DatasetCard.load(out / "README.md").data
    assert sorted(c["config_name"] for c in data["configs"]) == ["all", "extra", "questions", "yes_no_majority"]
    assert [c["config_name"] for c in data["configs"] if c.get("default")] == ["all"]
    assert sorted(i["config_name"] for i in data["dataset_info"]) == ["all", "questions", "yes_no_majority"]
    assert data["annotations_note"] == "kept"
    assert sorted(p.name for p in (out / "questions").iterdir()) == before
    for config in ("all", "questions", "yes_no_majority"):
        assert load_exported(out, config, cache_dir=tmp_path / "cache")["train"].num_rows > 0
    assert [p.name for p in out.iterdir() if p.name.startswith(".")] == [RECORD]  # no staging left behind


def test_same_inputs_give_byte_identical_exports(tmp_path):
    release = _clotho(tmp_path)
    outputs = []
    for name in ("a", "b"):
        export_builder(ClothoAQA, tmp_path / name, card_template="clotho_aqa", data_dir=release,
                       configs=["questions", "single_word"], progress=False)
        outputs.append({p.relative_to(tmp_path / name).as_posix(): p.read_bytes()
                        for p in sorted((tmp_path / name).rglob("*")) if p.is_file()})
    assert outputs[0].keys() == outputs[1].keys() and "assets/single_word-answer.png" in outputs[0]
    assert outputs[0] == outputs[1]


def test_a_failed_export_leaves_the_folder_as_it_was(tmp_path, capsys):
    release = _clotho(tmp_path)
    out = tmp_path / "out"
    export_builder(ClothoAQA, out, card_template="clotho_aqa", data_dir=release, configs=["all"], progress=False)
    snapshot = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    missing = sorted((release / "audio_files").iterdir())[0]
    missing.unlink()
    status = _export(["--data_dir", str(release), "--out", str(out), "--config", "all,questions", "--quiet"],
                     ClothoAQA, "clotho_aqa")
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("clotho-aqa export: error:") and "Traceback" not in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == snapshot


def test_a_media_file_missing_at_export_time_is_named(tmp_path):
    clevr = _clevr(tmp_path)
    train = build(BuilderSpec(ClevrMath, str(clevr)), "general", tmp_path / "cache")[1]["train"]
    gone = clevr / "images" / "train" / train[0]["image_filename"]
    gone.unlink()
    with pytest.raises(ExportError, match=re.escape(str(gone)) + r": image file of general/train row 0 not found"):
        write_split(train, tmp_path / "staging", "general", "train")


def test_shards_match_the_librarys_own_embedding(tmp_path):
    release = _clotho(tmp_path)
    train = build(BuilderSpec(ClothoAQA, str(release)), "all", tmp_path / "cache")[1]["train"]
    written = write_split(train, tmp_path / "out", "all", "train", "150KB")
    assert len(written.shards) > 2 and written.rows == train.num_rows
    for index, name in enumerate(written.shards):
        # the reference: push_to_hub's embedding of the same contiguous shard
        shard = train.shard(num_shards=len(written.shards), index=index, contiguous=True)
        reference = shard.with_format("arrow").map(embed_table_storage, batched=True, keep_in_memory=True)
        assert pq.read_table(tmp_path / "out" / name).equals(reference.data.table)


def test_unknown_config_is_an_error_listing_the_valid_ones(tmp_path, capsys):
    status = _export(["--data_dir", str(tmp_path), "--out", str(tmp_path / "o"), "--config", "nope"],
                     ClevrMath, "clevr_math")
    assert status == 2
    err = capsys.readouterr().err
    assert "unknown ClevrMath config(s) 'nope'" in err and "general, multihop, chains" in err
    assert not (tmp_path / "o").exists()


def test_a_non_positive_shard_size_fails_before_any_build(tmp_path):
    out = tmp_path / "o"
    with pytest.raises(ExportError, match="max_shard_size must be positive, got '0MB'"):
        export_builder(ClevrMath, out, card_template="clevr_math", data_dir=tmp_path / "nowhere",
                       max_shard_size="0MB", progress=False)
    assert not out.exists()


def test_card_template_problems_name_the_file_and_line(tmp_path):
    good = Path(load_card_template("clevr_math").path).read_text(encoding="utf-8")
    no_license = tmp_path / "no_license.md"
    no_license.write_text(good.replace("license: cc-by-4.0\n", ""), encoding="utf-8")
    with pytest.raises(CardError, match=r"no_license\.md: front matter lacks license"):
        load_card_template(no_license)
    typo = tmp_path / "typo.md"
    typo.write_text(good.replace("{{features_table}}", "{{feature_table}}"), encoding="utf-8")
    line = good.split("\n").index("{{features_table}}") + 1
    with pytest.raises(CardError, match=rf"typo\.md: line {line}: unknown placeholder \{{\{{feature_table\}}\}}"):
        load_card_template(typo)


def test_an_unparsable_existing_card_is_an_error_and_stays(tmp_path):
    release = _clotho(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("---\nconfigs: [oops\n---\nmine\n", encoding="utf-8")
    # a card export never wrote is refused before it is parsed (issue 20: never rewritten)
    with pytest.raises(CardError, match="README.md: not written by export"):
        export_builder(ClothoAQA, out, card_template="clotho_aqa", data_dir=release, configs=["all"], progress=False)
    assert (out / "README.md").read_text(encoding="utf-8") == "---\nconfigs: [oops\n---\nmine\n"
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]


def test_merge_moves_default_to_the_builders_default_only_when_present():
    existing = merge_metadata(None, None, {"x": config_entry("x", ["train"])}, {}, "x")
    kept = merge_metadata(None, existing, {"y": config_entry("y", ["train"])}, {}, "z")
    assert [c["config_name"] for c in kept["configs"] if c.get("default")] == ["x"]
    moved = merge_metadata(None, existing, {"y": config_entry("y", ["test"])}, {}, "y")
    assert [c["config_name"] for c in moved["configs"] if c.get("default")] == ["y"]
    assert sorted(c["config_name"] for c in moved["configs"]) == ["x", "y"]


def test_push_dry_run_lists_exactly_the_files_and_sizes(exported, capsys):
    folder = exported["out"]["clotho"]
    (folder / ".export-leftover").mkdir(exist_ok=True)
    assert _push(["--folder", str(folder), "--repo_id", "me/clotho-aqa", "--dry_run"], ClothoAQA) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    listed = {}
    for line in lines[:-1]:
        size, path = line.split()
        listed[path] = int(size.replace(",", ""))
    on_disk = {p.relative_to(folder).as_posix(): p.stat().st_size for p in folder.rglob("*")
               if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)}
    # the README as uploaded: its usage examples name the repository instead of REPO_ID
    uploaded_card = card_for_repo((folder / "README.md").read_text(encoding="utf-8"), "me/clotho-aqa")
    on_disk["README.md"] = len(uploaded_card.encode("utf-8"))
    assert listed == on_disk
    assert lines[-1].startswith(f"{len(on_disk)} file(s), {sum(on_disk.values()):,} bytes")
    assert "datasets/me/clotho-aqa" in lines[-1]


def test_subcommands_register_on_an_argparse_cli(exported, capsys):
    parser = argparse.ArgumentParser(prog="clotho-aqa")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_export_subcommand(subparsers, ClothoAQA, "clotho_aqa")
    add_push_subcommand(subparsers, "clotho-aqa push")
    args = parser.parse_args(["push", "--folder", str(exported["out"]["clotho"]), "--repo_id", "me/x", "--dry_run"])
    assert args.run(args) == 0
    assert "all/train-00000-of-00001.parquet" in capsys.readouterr().out
    args = parser.parse_args(["export", "--data_dir", "nowhere", "--out", "o", "--config", "bogus"])
    assert args.run(args) == 2
    assert "clotho-aqa export: error: unknown ClothoAQA config(s) 'bogus'" in capsys.readouterr().err


def test_push_without_a_reachable_hub_fails_with_one_clear_line(exported, monkeypatch, capsys):
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    folder = exported["out"]["clevr"]
    # a port nothing listens on: refused at once, whatever the machine's network
    with pytest.raises(PushError, match="cannot reach the Hugging Face Hub to push me/clevr-math"):
        push_folder(folder, "me/clevr-math", endpoint="http://127.0.0.1:9")
    # the command with the real endpoint: this machine has no route to the Hub
    status = _push(["--folder", str(folder), "--repo_id", "me/clevr-math"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("clevr-math push: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_push_needs_an_exported_folder(tmp_path, capsys):
    assert _push(["--folder", str(tmp_path), "--repo_id", "me/x", "--dry_run"]) == 2
    assert "README.md: missing" in capsys.readouterr().err
    (tmp_path / "README.md").write_text(
        "---\nconfigs:\n- config_name: a\n  data_files:\n  - split: train\n    path: a/train-*\n---\n", encoding="utf-8"
    )
    with pytest.raises(PushError, match=r"config 'a' names data files that are not in the folder \(split\(s\) train\)"):
        plan_upload(tmp_path)


class _HubRepository:
    """A dataset repository in memory, behind the few ``HfApi`` calls push makes (no Hub server
    runs offline): commits change its tree, which ``list_repo_tree`` then reports as the Hub does."""

    def __init__(self, files: dict[str, bytes] | None = None):
        self.files = dict(files or {})
        self.commits: list[dict] = []

    def api(self, token=None, endpoint=None):
        self.token = token
        return self

    endpoint = "https://hub.invalid"

    def create_repo(self, repo_id, **kwargs):
        pass

    def create_branch(self, repo_id, **kwargs):
        pass

    def list_repo_tree(self, repo_id, **kwargs):
        from huggingface_hub.hf_api import RepoFile

        for path, data in sorted(self.files.items()):
            lfs = None if path.endswith(".md") else {"size": len(data), "oid": hashlib.sha256(data).hexdigest(),
                                                    "pointerSize": 130}
            yield RepoFile(path=path, size=len(data), oid=git_blob_id(data), lfs=lfs)

    def hf_hub_download(self, repo_id, filename, local_dir, **kwargs):
        target = Path(local_dir) / filename
        target.write_bytes(self.files[filename])
        return str(target)

    def create_commit(self, repo_id, operations, commit_message, revision=None, create_pr=False, **kwargs):
        from huggingface_hub import CommitOperationAdd

        commit = {"message": commit_message, "revision": revision, "create_pr": create_pr, "add": [], "delete": []}
        for op in operations:
            if isinstance(op, CommitOperationAdd):
                source = op.path_or_fileobj
                self.files[op.path_in_repo] = source if isinstance(source, bytes) else Path(source).read_bytes()
                commit["add"].append(op.path_in_repo)
            else:
                del self.files[op.path_in_repo]
                commit["delete"].append(op.path_in_repo)
        self.commits.append(commit)
        pr = "https://hub.invalid/datasets/me/x/discussions/7" if create_pr else None
        return types.SimpleNamespace(commit_url=f"https://hub.invalid/commit/{len(self.commits)}", pr_url=pr,
                                     pr_revision="refs/pr/7" if create_pr else None)


def test_push_commits_in_batches_card_and_deletions_last_and_resumes(exported, monkeypatch, tmp_path):
    folder = tmp_path / "clevr"
    shutil.copytree(exported["out"]["clevr"], folder)
    (folder / "general" / "notes.md").write_text("not ours: never uploaded")
    shards = sorted(p.relative_to(folder).as_posix() for p in folder.glob("general/*.parquet"))
    remote = _HubRepository({"general/notes.md": b"a remote note", "general/train-00007-of-00009.parquet": b"stale",
                             "predictions/run1.jsonl": b"{}"})
    monkeypatch.setattr(huggingface_hub, "HfApi", remote.api)
    monkeypatch.setattr(push_module, "COMMIT_FILES", 4)

    result = push_folder(folder, "me/x", token="hf_x", create_pr=True, num_workers=2)
    manifest = read_record_at(folder)[0]
    assert (result.uploaded, result.unchanged, result.deleted) == (len(manifest), 0, ["general/train-00007-of-00009.parquet"])
    uploaded = [path for commit in remote.commits for path in commit["add"]]
    assert sorted(uploaded) == sorted(manifest) and "general/notes.md" not in uploaded
    assert all(len(commit["add"]) <= 4 for commit in remote.commits)
    *data, last = remote.commits
    assert last["add"] == ["README.md"] and last["delete"] == ["general/train-00007-of-00009.parquet"]
    # the pull request opens with the first commit; every later one goes to it
    assert remote.commits[0]["create_pr"] and [c["revision"] for c in remote.commits[1:]] == ["refs/pr/7"] * len(data)
    assert remote.files["general/notes.md"] == b"a remote note" and "predictions/run1.jsonl" in remote.files
    assert all(remote.files[path] == (folder / path).read_bytes() for path in shards)

    # cut short after the first commit: the re-run sends only what is missing
    first = set(remote.commits[0]["add"])
    for path in set(manifest) - first:
        remote.files.pop(path, None)
    remote.commits.clear()
    result = push_folder(folder, "me/x", token="hf_x", revision="refs/pr/7")
    assert sorted(p for c in remote.commits for p in c["add"]) == sorted(set(manifest) - first)
    assert (result.uploaded, result.unchanged) == (len(set(manifest) - first), len(first))
    remote.commits.clear()
    result = push_folder(folder, "me/x", token="hf_x")  # up to date: no commit at all
    assert remote.commits == [] and result.uploaded == 0 and result.url == "https://hub.invalid/datasets/me/x"


def test_push_plan_on_an_exported_folder(exported):
    plan = plan_upload(exported["out"]["clevr"], "me/x")
    local = local_files(plan, b"card")
    shards = sorted(p for p in local if p.endswith(".parquet"))
    remote = {p: RemoteFile(p, local[p].size, local[p].sha256) for p in shards[:3]}
    remote["README.md"] = RemoteFile("README.md", 4, None, git_blob_id(b"card"))
    remote["general/train-00000-of-00099.parquet"] = RemoteFile("general/train-00000-of-00099.parquet", 1, "0")
    remote["chains/old-notes.parquet"] = RemoteFile("chains/old-notes.parquet", 1, "0")
    remote["other/train-00000-of-00001.parquet"] = RemoteFile("other/train-00000-of-00001.parquet", 1, "0")
    todo = plan_push(local, remote, plan.config_dirs)
    assert todo.unchanged == sorted(shards[:3] + ["README.md"])
    assert [f.path for f in todo.upload] == sorted(set(local) - set(todo.unchanged))
    assert todo.delete == ["general/train-00000-of-00099.parquet"]
    # a remote file of the same size but other content is sent again
    remote[shards[0]] = RemoteFile(shards[0], local[shards[0]].size, "f" * 64)
    assert shards[0] in [f.path for f in plan_push(local, remote, plan.config_dirs).upload]


def test_push_keeps_remote_configs_in_the_uploaded_card(exported):
    remote = "---\nconfigs:\n- config_name: legacy\n  data_files: legacy/*.parquet\n  default: true\n---\nold text\n"
    merged, kept = _merged_readme(exported["out"]["clotho"] / "README.md", remote)
    card = DatasetCard(merged.decode("utf-8"))
    names = [c["config_name"] for c in card.data["configs"]]
    assert kept == ["legacy"] and "legacy" in names and "all" in names
    assert [c["config_name"] for c in card.data["configs"] if c.get("default")] == ["all"]
    assert "old text" not in card.text and "## Citation" in card.text


def test_load_exported_checks_rows_against_the_card(tmp_path):
    release = _clotho(tmp_path)
    out = tmp_path / "out"
    export_builder(ClothoAQA, out, card_template="clotho_aqa", data_dir=release, configs=["all"],
                   max_shard_size="100KB", progress=False)
    shards = sorted((out / "all").glob("train-*.parquet"))
    assert len(shards) > 1
    shards[-1].unlink()
    with pytest.raises(ExportError, match="README.md: config 'all' records other rows than its files hold"):
        load_exported(out, "all", cache_dir=tmp_path / "cache")


def test_shipped_templates_parse_with_their_metadata():
    for name in ("clevr_math", "clotho_aqa"):
        template = load_card_template(name)
        assert yaml.safe_load(yaml.safe_dump(template.metadata)) == template.metadata
        assert "{{statistics}}" in template.body and "{{configs_table}}" in template.body
    assert os.path.basename(load_card_template("clotho_aqa").path) == "clotho_aqa.md"


def test_pushed_card_names_the_repository_in_its_usage_examples(exported):
    merged, kept = _merged_readme(exported["out"]["clevr"] / "README.md", None, "me/clevr-math")
    text = merged.decode("utf-8")
    assert kept == [] and "REPO_ID" not in text
    assert 'load_dataset("me/clevr-math", "general")' in text  # the default configuration
    # the local card keeps the placeholder: the folder is not tied to one repository
    assert 'load_dataset("REPO_ID", "general")' in (exported["out"]["clevr"] / "README.md").read_text(encoding="utf-8")


def test_config_option_takes_names_as_listed_in_the_issue_and_repeated_or_comma_separated():
    parser = argparse.ArgumentParser(prog="clevr-math")
    add_export_subcommand(parser.add_subparsers(), ClevrMath, "clevr_math")
    args = parser.parse_args(
        ["export", "--data_dir", "d", "--out", "o", "--config", "general", "multihop", "--config", "chains,general"]
    )
    assert _config_list(args.config) == ["general", "multihop", "chains", "general"]


def _runs(image: Image.Image, y: int, colour: tuple[int, int, int]) -> list[tuple[int, int]]:
    """(start, length) of each horizontal run of ``colour`` on pixel row ``y``."""
    runs, start = [], None
    for x in range(image.width + 1):
        inside = x < image.width and image.getpixel((x, y)) == colour
        if inside and start is None:
            start = x
        elif not inside and start is not None:
            runs.append((start, x - start))
            start = None
    return runs


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def test_plot_bars_are_to_scale_on_a_ticked_axis(tmp_path):
    rows = [("yes", {"train": 30, "test": 10}), ("no", {"train": 10}), ("maybe", {"test": 5})]
    path = bar_chart(tmp_path / "p.png", "Rows per answer", rows, ["train", "test"],
                     subtitle="Clotho-AQA, configuration all", value_label="answer")
    with Image.open(path) as png:
        image = png.convert("RGB")
    train, test = _rgb(SPLIT_COLOURS[0]), _rgb(SPLIT_COLOURS[1])
    # the rows of pixels crossing a train-coloured bar, top to bottom, one per bar (legend excluded)
    lines = [y for y in range(image.height) if any(length > 20 for _, length in _runs(image, y, train))]
    first_bar = lines[0]
    second_bar = next(y for previous, y in zip(lines, lines[1:]) if y > previous + 1)  # after a gap
    (yes_start, yes_train), = _runs(image, first_bar, train)
    (test_start, yes_test), = [r for r in _runs(image, first_bar, test) if r[1] > 20]
    (no_start, no_train), = _runs(image, second_bar, train)
    assert yes_start == no_start and test_start == yes_start + yes_train  # stacked from one baseline
    assert abs(yes_train - 3 * no_train) <= 2 and abs(yes_train - 3 * yes_test) <= 2
    assert axis_ticks(40) == [0, 10, 20, 30, 40]
    # the x axis: a grey line exactly as long as the last tick (40) is far from the baseline
    axis = [y for y in range(image.height) if any(length >= yes_train for _, length in _runs(image, y, (0x77,) * 3))]
    (axis_start, axis_length), = [r for r in _runs(image, axis[0], (0x77,) * 3) if r[1] >= yes_train]
    # (the baseline is drawn over the first pixel of each bar)
    assert axis_start == yes_start - 1 and abs(axis_length - (1 + yes_train + yes_test)) <= 2
    again = bar_chart(tmp_path / "q.png", "Rows per answer", rows, ["train", "test"],
                      subtitle="Clotho-AQA, configuration all", value_label="answer")
    assert Path(again).read_bytes() == Path(path).read_bytes()
