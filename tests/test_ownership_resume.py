"""A resumable staging folder (``OutputFolder.open(..., resume=KEY)``): what a failed run finished
is kept for the next run with the same key, never committed by itself, and another key's is removed."""

from __future__ import annotations

import pytest

from builder_utils.ownership import STAGING_PREFIX, OutputFolder, OwnershipError


def _fail_after_staging(root, key, name):
    with pytest.raises(KeyboardInterrupt):
        with OutputFolder.open(root, command="x", resume=key) as out:
            (out.stage / name).write_text(name)
            raise KeyboardInterrupt


def test_a_failed_run_leaves_its_files_for_the_next_run_with_the_same_key(tmp_path):
    _fail_after_staging(tmp_path, "k1", "a.txt")
    assert not (tmp_path / "a.txt").exists()  # nothing committed
    with OutputFolder.open(tmp_path, command="x", resume="k1") as out:
        assert (out.stage / "a.txt").read_text() == "a.txt"  # taken up again
        (out.stage / "b.txt").write_text("b.txt")
        out.add(["a.txt", "b.txt"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".ownership.json", "a.txt", "b.txt"]  # staging gone


def test_another_key_removes_the_left_staging_folder(tmp_path):
    _fail_after_staging(tmp_path, "k1", "a.txt")
    with OutputFolder.open(tmp_path, command="x", resume="k2") as out:
        assert not (out.stage / "a.txt").exists()
        out.add([])
    assert list(tmp_path.glob(STAGING_PREFIX + "*")) == []


def test_a_resume_folder_without_our_marker_is_refused(tmp_path):
    (tmp_path / f"{STAGING_PREFIX}resume-k1").mkdir()
    (tmp_path / f"{STAGING_PREFIX}resume-k1" / "theirs.txt").write_text("?")
    with pytest.raises(OwnershipError, match="not a staging folder"):
        with OutputFolder.open(tmp_path, command="x", resume="k1"):
            pass
    assert (tmp_path / f"{STAGING_PREFIX}resume-k1" / "theirs.txt").exists()


@pytest.mark.parametrize("key", ["", "a/b", "../x", "a b"])
def test_a_resume_key_is_a_plain_name(tmp_path, key):
    with pytest.raises(ValueError, match="resume"):
        with OutputFolder.open(tmp_path, command="x", resume=key):
            pass
