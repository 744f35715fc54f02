"""The safety harness itself must catch what it is there to catch: a lost user file, debris, an orphan."""

from __future__ import annotations

import signal

import pytest
from safety_harness import Case, run_case


def _user_file(tmp):
    (tmp / "mine.txt").write_text("the user's notes")
    return tmp


def test_an_untouched_user_file_passes(tmp_path):
    case = Case("harmless", lambda tmp: ["sh", "-c", "echo ok"], protected=["mine.txt"])
    _user_file(tmp_path)
    assert run_case(case, tmp_path).stdout == "ok\n"


@pytest.mark.parametrize("command, complaint", [
    ("rm mine.txt", "changed or vanished"),
    ("echo other > mine.txt", "changed or vanished"),
    ("touch .out.json.1234.tmp", "debris"),
])
def test_a_broken_guarantee_fails_the_case(tmp_path, command, complaint):
    _user_file(tmp_path)
    case = Case("careless", lambda tmp: ["sh", "-c", command], protected=["mine.txt"])
    with pytest.raises(AssertionError, match=complaint):
        run_case(case, tmp_path)


def test_an_orphaned_worker_fails_the_case(tmp_path):
    _user_file(tmp_path)
    # the shell exits on SIGTERM, its background sleep (a "worker") lives on
    case = Case("orphan", lambda tmp: ["sh", "-c", "sleep 30 >/dev/null 2>&1 & touch started; wait"], exit_code=None,
                interrupt=signal.SIGTERM, interrupt_when=lambda tmp: (tmp / "started").exists())
    with pytest.raises(AssertionError, match="outlived"):
        run_case(case, tmp_path)
