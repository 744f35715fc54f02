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
    RECORD, BusyError, OutputFolder, OwnershipError, PathRuleError, RecordError, check_relative, read_record_at,
    refuse_overlap, sha256_of,
)


def _record(folder, files, **extra):
    (folder / RECORD).write_text(json.dumps({"format": "builder-utils-ownership", "version": 1, "files": files, **extra}))


def _entry(folder, path, command="x"):
    target = folder / path
    return {"path": path, "size": target.stat().st_size, "sha256": sha256_of(target), "command": command,
            "group": None}


@pytest.mark.parametrize("path", ["../v.txt", "/etc/hostname", "a/../../b", "a\nb", "a\0b", "", "./a", "a//b", "C:x"])
def test_a_path_breaking_a_rule_is_refused(path):
    with pytest.raises(PathRuleError):
        check_relative(path, "record")


@pytest.mark.parametrize("path", ["../v.txt", "/etc/hostname"])
def test_a_record_with_a_traversal_or_absolute_path_is_not_ours(tmp_path, path):
    (tmp_path / "v.txt").write_text("the user's")
    folder = tmp_path / "out"
    folder.mkdir()
    _record(folder, [{"path": path, "size": 10, "sha256": "00", "command": "x"}])
    with pytest.raises(RecordError, match=f"{RECORD}: {path!r}.*nothing in it is ours"):
        OutputFolder(folder, "x").read()
    assert (tmp_path / "v.txt").read_text() == "the user's"


def test_an_older_record_format_says_how_to_recreate(tmp_path):
    _record(tmp_path, [], version=0)
    with pytest.raises(RecordError, match="version 0.*run the command again to re-create it"):
        read_record_at(tmp_path)
    (tmp_path / RECORD).unlink()
    (tmp_path / ".hub-export-manifest.json").write_text("{}")
    with pytest.raises(RecordError, match="earlier version of this package"):
        read_record_at(tmp_path)


def test_only_unchanged_recorded_files_are_replaced_or_removed(tmp_path):
    with OutputFolder(tmp_path, "x") as out:
        out.write_file("a/ours.txt", "ours")
        out.write_file("a/edited.txt", "ours too")
    (tmp_path / "a" / "edited.txt").write_text("the user edited it")
    (tmp_path / "a" / "mine.txt").write_text("the user's")
    with OutputFolder(tmp_path, "x") as out:
        assert out.user_files() == ["a/edited.txt", "a/mine.txt"]
        with pytest.raises(OwnershipError, match="size changed since x wrote it"):
            out.write_file("a/edited.txt", "new")
        with pytest.raises(OwnershipError, match="was not written by x"):
            out.write_file("a/mine.txt", "new")
        assert out.remove(["a/ours.txt", "a/edited.txt", "a/mine.txt"]) == ["a/ours.txt"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["edited.txt", "mine.txt"]


def test_overwrite_replaces_a_foreign_file_but_never_a_symlink(tmp_path):
    (tmp_path / "secret").write_text("secret")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "q.json").write_text("user")
    (tmp_path / "out" / "link.json").symlink_to(tmp_path / "secret")
    with OutputFolder(tmp_path / "out", "x") as out:
        out.write_file("q.json", "ours", overwrite=True)
        with pytest.raises(OwnershipError, match="not a regular file"):
            out.write_file("link.json", "ours", overwrite=True)
    assert (tmp_path / "out" / "q.json").read_text() == "ours" and (tmp_path / "secret").read_text() == "secret"


def test_nothing_is_written_through_a_symlinked_folder(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "images").symlink_to(tmp_path / "elsewhere")
    with OutputFolder(tmp_path / "out", "x") as out, pytest.raises(OwnershipError, match="images: .*symlink"):
        out.write_file("images/a.png", b"png")
    assert not any((tmp_path / "elsewhere").iterdir())
    (tmp_path / "link").symlink_to(tmp_path / "out")
    with pytest.raises(PathRuleError, match="output folder is a symlink"):
        OutputFolder(tmp_path / "link", "x").__enter__()


@pytest.mark.parametrize("out, given, how", [
    ("R", "R", "is the same path as"), ("R/x.csv", "R", "lies inside"), ("R", "R/a/s.json", "contains")])
def test_an_output_overlapping_an_input_is_refused(tmp_path, out, given, how):
    with pytest.raises(OwnershipError, match=how):
        refuse_overlap({"--out": tmp_path / out}, {"--in": tmp_path / given, "--other": None})


def test_a_second_writer_is_refused_naming_the_folder(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from builder_utils.ownership import OutputFolder\n"
        f"with OutputFolder({str(tmp_path)!r}, 'x'):\n    print('locked', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(BusyError, match=f"{tmp_path}: another command is writing into this folder"):
            OutputFolder(tmp_path, "y").__enter__()
    finally:
        holder.kill()
        holder.wait()
    with OutputFolder(tmp_path, "y"):  # the lock died with its process
        pass


def test_a_commit_killed_midway_is_finished_by_the_next_run(tmp_path):
    """The pending commit is in the record; the staging folder holds only files, no instruction."""
    with OutputFolder(tmp_path, "x") as out:
        out.write_file("a/old-0.parquet", b"old shard 0", group="a")
        out.write_file("a/old-1.parquet", b"old shard 1", group="a")
        staging = out.staging()
        (staging / "a").mkdir()
        (staging / "a" / "new.parquet").write_bytes(b"new shard")
        (staging / "README.md").write_text("card")
        entries = [dict(_entry(staging, p), group="a") for p in ("README.md", "a/new.parquet")]
        pending = {"staging": staging.name, "files": entries, "remove": ["a/old-0.parquet", "a/old-1.parquet"]}
        record = json.loads((tmp_path / RECORD).read_text())
        _record(tmp_path, record["files"], pending=pending)
        os.replace(staging / "README.md", tmp_path / "README.md")  # the kill came after the first move
        out._stagings.clear()  # as after kill -9: nothing cleans up
    (tmp_path / "a" / "notes.md").write_text("mine")
    with OutputFolder(tmp_path, "x") as out:
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
    with OutputFolder(out_dir, "x") as out:
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
        with OutputFolder(tmp_path, "x") as out:
            staging = out.staging()
            (staging / "a.txt").write_text("half a run")
            _SignalInFinaliser()  # collected at once: the Terminated it raises is lost
            out.commit(staging, {"a.txt": None})
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


class _CtrlCInFinaliser:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)


def test_a_ctrl_c_lost_in_a_finaliser_stops_the_commit_from_python_too(tmp_path):
    """No command around it (a notebook calling a writer): the open output folder remembers."""
    with pytest.raises(KeyboardInterrupt):
        with OutputFolder(tmp_path, "x") as out:
            staging = out.staging()
            (staging / "a.txt").write_text("half a run")
            _CtrlCInFinaliser()
            out.commit(staging, {"a.txt": None})
    assert list(tmp_path.iterdir()) == []
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
