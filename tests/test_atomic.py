"""builder_utils.atomic: temp file in the target's folder, renamed into place, cleaned on error."""

from __future__ import annotations

import os

import pytest

from builder_utils.atomic import atomic_output, write_atomic


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_atomic_text_and_bytes(tmp_path):
    text = tmp_path / "a.json"
    write_atomic(text, '{"q": "é"}\n')
    assert text.read_bytes() == '{"q": "é"}\n'.encode("utf-8")

    binary = tmp_path / "b.bin"
    write_atomic(binary, b"\x89PNG\x00\xff")
    assert binary.read_bytes() == b"\x89PNG\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.bin"]


def test_success_replaces_the_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old contents, longer than the new ones", encoding="utf-8")
    with atomic_output(target) as fh:
        fh.write("new")
        # the target is only replaced when the block ends
        assert target.read_text(encoding="utf-8") == "old contents, longer than the new ones"
    assert target.read_text(encoding="utf-8") == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_temp_file_sits_next_to_the_target_with_a_hidden_name(tmp_path):
    target = tmp_path / "scenes.json"
    with atomic_output(target, "wb") as fh:
        temps = [p.name for p in tmp_path.iterdir()]
        fh.write(b"{}")
    assert len(temps) == 1
    assert temps[0].startswith(".scenes.json.") and temps[0].endswith(".tmp")
    assert target.read_bytes() == b"{}"


def test_an_exception_leaves_the_old_file_untouched_and_no_temp_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError, match="half-way"):
        with atomic_output(target) as fh:
            fh.write("partial")
            raise RuntimeError("failed half-way")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_exception_without_an_old_file_leaves_nothing(tmp_path):
    target = tmp_path / "new.bin"
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(target, "wb") as fh:
            fh.write(b"partial")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rename_removes_the_temp_file(tmp_path):
    target = tmp_path / "blocked.png"
    target.mkdir()  # a folder where the file must go: os.replace fails
    with pytest.raises(OSError):
        write_atomic(target, b"png")
    assert target.is_dir() and list(target.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["blocked.png"]


def test_parent_folders_are_created(tmp_path):
    target = tmp_path / "a" / "b" / "c.txt"
    write_atomic(target, "x")
    assert target.read_text(encoding="utf-8") == "x"


def test_permissions_follow_the_umask_like_open(tmp_path):
    target = tmp_path / "shared.txt"
    write_atomic(target, "x")
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()


def test_newline_and_encoding_are_passed_to_the_text_file(tmp_path):
    target = tmp_path / "rows.csv"
    write_atomic(target, "a\r\nb\n", newline="")
    assert target.read_bytes() == b"a\r\nb\n"
    write_atomic(target, "é", encoding="latin-1")
    assert target.read_bytes() == b"\xe9"


def test_bad_arguments_fail_before_any_file_exists(tmp_path):
    target = tmp_path / "x.txt"
    with pytest.raises(ValueError, match="x.txt"):
        with atomic_output(target, "a"):
            pass
    with pytest.raises(ValueError, match="newline"):
        with atomic_output(target, newline="\t"):
            pass
    with pytest.raises(LookupError):
        with atomic_output(target, encoding="no-such-codec"):
            pass
    with pytest.raises(TypeError, match="x.txt"):
        write_atomic(target, 42)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_as_output_is_named_and_left_alone(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("mine")
    with pytest.raises(IsADirectoryError, match=f"^{tmp_path / 'out'}: is a folder") as raised:
        write_atomic(tmp_path / "out", "data")
    assert ".tmp" not in str(raised.value)
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and (tmp_path / "out" / "keep.txt").read_text() == "mine"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_named_not_the_temporary_file(tmp_path):
    (tmp_path / "ro").mkdir(mode=0o555)
    try:
        with pytest.raises(PermissionError, match=f"^{tmp_path / 'ro' / 'a.txt'}: cannot write this file") as raised:
            write_atomic(tmp_path / "ro" / "a.txt", "data")
        assert ".tmp" not in str(raised.value)
    finally:
        (tmp_path / "ro").chmod(0o755)
