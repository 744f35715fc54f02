"""The ownership module (:mod:`builder_utils.ownership`) on real folders: the record, the path
rules, the lock, staging and the takeover of what a killed run left."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys

import pytest

from builder_utils.interrupt import Terminated, stop_on_signals
from builder_utils.ownership import (
    RECORD, BusyError, OutputFolder, OwnershipError, PathRuleError, RecordError, read_record, sha256_of,
)


def _write(root, files, *, command="x", overwrite=False, remove=(), **kwargs):
    """One run of a command writing ``files`` (path -> bytes or text) into ``root``."""
    with OutputFolder.open(root, command=command, overwrite=overwrite, **kwargs) as out:
        for path, data in files.items():
            target = out.stage / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.encode() if isinstance(data, str) else data)
        out.add(list(files), remove=remove)
    return out


def _record(folder, files, **extra):
    (folder / RECORD).write_text(json.dumps({"format": "builder-utils-ownership", "version": 1, "files": files, **extra}))


def _entry(folder, path, command="x"):
    target = folder / path
    return {"path": path, "size": target.stat().st_size, "sha256": sha256_of(target), "command": command,
            "group": None}


@pytest.mark.parametrize("path", ["../v.txt", "/etc/hostname", "a/../../b", "a\nb", "a\0b", "", "./a", "a//b", "C:x"])
def test_a_path_breaking_a_rule_is_refused(tmp_path, path):
    _record(tmp_path, [{"path": path, "size": 1, "sha256": "00", "command": "x"}])
    with pytest.raises(RecordError, match="breaks the path rules|not a path"):
        read_record(tmp_path)


@pytest.mark.parametrize("path", ["../v.txt", "/etc/hostname"])
def test_a_record_with_a_traversal_or_absolute_path_is_not_ours(tmp_path, path):
    (tmp_path / "v.txt").write_text("the user's")
    folder = tmp_path / "out"
    folder.mkdir()
    _record(folder, [{"path": path, "size": 10, "sha256": "00", "command": "x"}])
    with pytest.raises(RecordError, match=f"{RECORD}: {path!r}.*nothing in it is ours"):
        _write(folder, {"a.txt": "a"})
    assert (tmp_path / "v.txt").read_text() == "the user's"


def test_an_older_record_format_says_how_to_recreate(tmp_path):
    _record(tmp_path, [], version=0)
    with pytest.raises(RecordError, match="version 0.*run the command again to re-create it"):
        read_record(tmp_path)
    (tmp_path / RECORD).unlink()
    (tmp_path / ".hub-export-manifest.json").write_text("{}")
    with pytest.raises(RecordError, match="earlier version of this package"):
        read_record(tmp_path)


def test_only_unchanged_recorded_files_are_replaced_or_removed(tmp_path):
    _write(tmp_path, {"a/ours.txt": "ours", "a/edited.txt": "ours too"})
    (tmp_path / "a" / "edited.txt").write_text("the user edited it")
    (tmp_path / "a" / "mine.txt").write_text("the user's")
    with pytest.raises(OwnershipError, match="size changed since x wrote it"):
        _write(tmp_path, {"a/edited.txt": "new"})
    with pytest.raises(OwnershipError, match="was not written by x"):
        _write(tmp_path, {"a/mine.txt": "new"})
    _write(tmp_path, {}, remove=["a/ours.txt", "a/edited.txt", "a/mine.txt"])
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["edited.txt", "mine.txt"]


def test_overwrite_replaces_a_foreign_file_but_never_a_symlink(tmp_path):
    (tmp_path / "secret").write_text("secret")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "q.json").write_text("user")
    (tmp_path / "out" / "link.json").symlink_to(tmp_path / "secret")
    _write(tmp_path / "out", {"q.json": "ours"}, overwrite=True)
    with pytest.raises(OwnershipError, match="not a regular file"):
        _write(tmp_path / "out", {"link.json": "ours"}, overwrite=True)
    assert (tmp_path / "out" / "q.json").read_text() == "ours" and (tmp_path / "secret").read_text() == "secret"


def test_the_record_is_the_only_claim_and_its_name_is_reserved(tmp_path):
    (tmp_path / "q.json").write_text('{"info": {"generated_by": "builder_utils generate-questions"}}')
    with pytest.raises(OwnershipError, match="was not written by x"):  # content claims nothing
        _write(tmp_path / "q.json", {}, file=True)
    for name in (RECORD, "sub/.ownership.json", ".staging-x/a"):
        with pytest.raises(PathRuleError, match="reserved"):
            _write(tmp_path / "out", {name: "forged"})
    with pytest.raises(PathRuleError, match="reserved"):
        _write(tmp_path / "S" / RECORD, {}, file=True)
    assert not (tmp_path / "S").exists() and not (tmp_path / "out").exists()


def test_nothing_is_written_through_a_symlinked_folder(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "images").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OwnershipError, match="images: .*symlink"):
        _write(tmp_path / "out", {"images/a.png": b"png"})
    assert not any((tmp_path / "elsewhere").iterdir())
    (tmp_path / "link").symlink_to(tmp_path / "out")
    with pytest.raises(PathRuleError, match="is a symlink"):
        _write(tmp_path / "link", {"a": "a"})


def _stage_and_add(out, files):
    for path, text in files.items():
        (out.stage / path).parent.mkdir(parents=True, exist_ok=True)
        (out.stage / path).write_text(text)
    out.add(list(files))


def _after_renames(monkeypatch, name, count, action):
    """Call ``action()`` right after the ``count``-th rename of a file called ``name`` (the
    attacker, or the disk, acting between two moves of a commit)."""
    real, seen = os.rename, []

    def rename(src, dst, **fds):
        if src == name:
            seen.append(src)
            if len(seen) == count and action(before=True):
                raise OSError(30, "Read-only file system")
        real(src, dst, **fds)
        if src == name and len(seen) == count:
            action(before=False)
    monkeypatch.setattr(os, "rename", rename)


def test_a_folder_swapped_for_a_symlink_mid_commit_is_refused_and_rolled_back(tmp_path, monkeypatch):
    """The commit moves through folders held open, each checked at each move: a swap between two
    moves is refused at the next one, and every file the commit moved goes back."""
    out_dir, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    elsewhere.mkdir()
    _write(out_dir, {"images/a.png": "old a", "images/b.png": "old b", "scenes.json": "old scenes"})

    def swap(before):
        if not before:
            os.replace(out_dir / "images", out_dir / "images-real")
            (out_dir / "images").symlink_to(elsewhere)
        return False
    with pytest.raises(PathRuleError, match="images: replaced"):
        with OutputFolder.open(out_dir, command="x") as out:
            _stage_and_add(out, {"images/a.png": "new a", "images/b.png": "new b", "scenes.json": "new scenes"})
            _after_renames(monkeypatch, "a.png", 2, swap)  # 1: the old a.png kept aside, 2: the new one moved in
    assert list(elsewhere.iterdir()) == []
    assert sorted(p.read_text() for p in (out_dir / "images-real").iterdir()) == ["old a", "old b"]
    assert (out_dir / "scenes.json").read_text() == "old scenes"


def test_a_failed_move_rolls_the_commit_back(tmp_path, monkeypatch):
    """A move that fails (a read-only scenes/) puts back what the commit had moved: the folder
    holds the first run's files, never half of two runs, and the record says so."""
    out_dir = tmp_path / "out"
    _write(out_dir, {"images/a.png": "old a", "scenes/s.json": "old scenes"})
    with pytest.raises(OwnershipError, match="Read-only file system"):
        with OutputFolder.open(out_dir, command="x") as out:
            _stage_and_add(out, {"images/a.png": "new", "images/b.png": "new", "scenes/s.json": "new"})
            _after_renames(monkeypatch, "s.json", 2, lambda before: before)
    assert (out_dir / "images" / "a.png").read_text() == "old a"
    assert not (out_dir / "images" / "b.png").exists()
    assert (out_dir / "scenes" / "s.json").read_text() == "old scenes"
    entries, pending = read_record(out_dir)
    assert sorted(entries) == ["images/a.png", "scenes/s.json"] and pending is None
    assert sorted(p.name for p in out_dir.iterdir()) == [RECORD, "images", "scenes"]


@pytest.mark.parametrize("alias", ["hard link", "symlinked parent", "bind mount"])
def test_an_output_aliasing_an_input_is_refused_by_identity(tmp_path, alias):
    release = tmp_path / "release"
    release.mkdir()
    (release / "train.csv").write_text("the release")
    if alias == "hard link":
        os.link(release / "train.csv", tmp_path / "copy.csv")
        out, given = tmp_path / "copy.csv", release / "train.csv"
    elif alias == "symlinked parent":
        (tmp_path / "via").symlink_to(release)
        out, given = tmp_path / "via" / "new.csv", release
    else:
        (tmp_path / "alias").mkdir()
        if os.geteuid() != 0 or subprocess.run(["mount", "--bind", str(release), str(tmp_path / "alias")],
                                               capture_output=True).returncode != 0:
            pytest.skip("needs root and mount --bind")
        out, given = tmp_path / "alias" / "train.csv", release
    try:
        with pytest.raises(OwnershipError, match="is the same file as|lies inside"):
            _write(out, {}, file=True, overwrite=True, inputs={"--data_dir": given})
    finally:
        if alias == "bind mount":
            subprocess.run(["umount", "-l", str(tmp_path / "alias")], capture_output=True)
    assert (release / "train.csv").read_text() == "the release"


@pytest.mark.parametrize("out, given, how", [
    ("R", "R", "is the same file as"), ("R/x.csv", "R", "lies inside"), ("R", "R/a/s.json", "contains")])
def test_an_output_overlapping_an_input_is_refused(tmp_path, out, given, how):
    (tmp_path / "R" / "a").mkdir(parents=True)
    (tmp_path / "R" / "a" / "s.json").write_text("{}")
    with pytest.raises(OwnershipError, match=how):
        _write(tmp_path / out, {}, file=out.endswith(".csv"), inputs={"--in": tmp_path / given, "--other": None})


def test_a_cache_inside_an_input_or_the_output_is_refused(tmp_path):
    (tmp_path / "data").mkdir()
    for cache in (tmp_path / "data" / "cache", tmp_path / "out" / "cache"):
        with pytest.raises(OwnershipError, match="--cache_dir"):
            _write(tmp_path / "out", {"a": "a"}, inputs={"--data_dir": tmp_path / "data"}, caches={"--cache_dir": cache})
    assert not (tmp_path / "out").exists()


def test_the_package_own_files_are_an_input_of_every_command(tmp_path):
    import builder_utils

    shipped = os.path.join(os.path.dirname(builder_utils.__file__), "clevr", "synonyms.json")
    before = sha256_of(shipped)
    with pytest.raises(OwnershipError, match="lies inside the installed package|same file"):
        _write(shipped, {}, file=True, overwrite=True)
    assert sha256_of(shipped) == before


def test_a_second_writer_is_refused_naming_the_folder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from builder_utils.ownership import OutputFolder\n"
        f"with OutputFolder.open({str(tmp_path)!r}, command='x'):\n    print('locked', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(BusyError, match=f"{tmp_path}: another command is writing into this folder"):
            _write(tmp_path, {"a": "a"})
    finally:
        holder.kill()
        holder.wait()
    _write(tmp_path, {"a": "a"})  # the lock died with its process


def test_a_commit_killed_midway_is_finished_by_the_next_run(tmp_path):
    """The pending commit is in the record; the staging folder holds only files, no instruction."""
    _write(tmp_path, {"a/old-0.parquet": b"old shard 0", "a/old-1.parquet": b"old shard 1"})
    staging = tmp_path / ".staging-killed"
    (staging / "a").mkdir(parents=True)
    (staging / ".staging-owner").write_text('{"pid": 1}')
    (staging / "a" / "new.parquet").write_bytes(b"new shard")
    (staging / "README.md").write_text("card")
    entries = [dict(_entry(staging, p), group="a") for p in ("README.md", "a/new.parquet")]
    pending = {"staging": staging.name, "files": entries, "remove": ["a/old-0.parquet", "a/old-1.parquet"]}
    record = json.loads((tmp_path / RECORD).read_text())
    _record(tmp_path, record["files"], pending=pending)
    os.replace(staging / "README.md", tmp_path / "README.md")  # the kill came after the first move
    (tmp_path / "a" / "notes.md").write_text("mine")
    with OutputFolder.open(tmp_path, command="x") as out:
        assert sorted(out.record) == ["README.md", "a/new.parquet"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        RECORD, "README.md", "a/new.parquet", "a/notes.md"]


def test_a_crafted_staging_folder_is_not_followed(tmp_path):
    """A stale staging folder with our marker and a journal: removed, its instructions never read."""
    (tmp_path / "thesis.txt").write_text("years of work")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    crafted = out_dir / ".staging-crafted"
    crafted.mkdir()
    (crafted / ".staging-owner").write_text('{"pid": 1}')
    (crafted / ".hub-export-commit.json").write_text(json.dumps({"moves": [], "stale": [{"path": "../thesis.txt"}]}))
    with OutputFolder.open(out_dir, command="x") as out:
        assert out.record == {}
    assert (tmp_path / "thesis.txt").read_text() == "years of work" and not crafted.exists()


class _SignalInFinaliser:
    """Receives SIGTERM inside ``__del__``: Python drops the handler's exception there (it only
    prints "Exception ignored"), as it does in an import lock's callback, where a real run lost it."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.parametrize("nested", [False, True], ids=["one block", "a subcommand's block inside the command's"])
def test_an_interruption_lost_in_a_finaliser_still_stops_the_commit(tmp_path, nested):
    with pytest.raises(Terminated), contextlib.ExitStack() as blocks:
        for _ in range(1 + nested):
            blocks.enter_context(stop_on_signals())
        with OutputFolder.open(tmp_path, command="x") as out:
            (out.stage / "a.txt").write_text("half a run")
            _SignalInFinaliser()  # collected at once: the Terminated it raises is lost
            out.add(["a.txt"])
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


class _CtrlCInFinaliser:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_lost_in_a_finaliser_stops_the_commit_from_python_too(tmp_path):
    """No command around it (a notebook calling a writer): the open output folder remembers."""
    with pytest.raises(KeyboardInterrupt):
        with OutputFolder.open(tmp_path, command="x") as out:
            (out.stage / "a.txt").write_text("half a run")
            _CtrlCInFinaliser()
            out.add(["a.txt"])
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
