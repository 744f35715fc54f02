"""Safety table of the ``evaluate`` commands: a report never lands on a user's file.

Every row runs the real console script (``clotho-aqa evaluate`` on a small synthetic release
used as the builder's ``data_dir``, ``clevr-math evaluate`` where the failure comes before any
data is read) and checks the exit status, the one-line error, the user's files and the debris.
"""

from __future__ import annotations

import json
import os
import signal

import pytest
from safety_harness import Case, run_case

from clotho_aqa.synth import write_synthetic_release


def _release(tmp):
    write_synthetic_release(tmp / "release", num_files=5, seed=0)
    (tmp / "notes.txt").write_text("the user's notes")
    return tmp


def _evaluate(tmp, *extra):
    return ["clotho-aqa", "evaluate", "--data", str(tmp / "release"), "--out", str(tmp / "eval"),
            "--cache_dir", str(tmp / "cache"), "--quiet", *extra]


def _user(tmp):
    (tmp / "notes.txt").write_text("the user's notes")
    return tmp


def _out_is_a_file(tmp):
    _user(tmp)
    (tmp / "eval").write_text("a user's file named like the folder")
    return _evaluate(tmp)


def _reports_in_out(tmp):
    _user(tmp)
    (tmp / "eval").mkdir()
    (tmp / "eval" / "report.json").write_text('{"mine": true}')
    (tmp / "eval" / "keep.txt").write_text("other work")
    return _evaluate(tmp)


def _overwrite_keeps_other_files(tmp):
    _reports_in_out(tmp)
    _release(tmp)
    return _evaluate(tmp, "--overwrite")


def _check_overwritten(tmp, done):
    assert json.loads((tmp / "eval" / "report.json").read_text())["dataset"] == "clotho_aqa"
    assert (tmp / "eval" / "keep.txt").read_text() == "other work"


def _report_is_a_symlink(tmp):
    _user(tmp)
    (tmp / "secret.json").write_text('{"token": "do not touch"}')
    (tmp / "eval").mkdir()
    os.symlink(tmp / "secret.json", tmp / "eval" / "report.json")
    return _evaluate(tmp, "--overwrite")


def _bad_predictions(tmp):
    _user(tmp)
    (tmp / "preds.jsonl").write_text('{"question_id": "a", "prediction": "yes"}\n{"oops"\n')
    return _evaluate(tmp, "--predictions", str(tmp / "preds.jsonl"))


def _wrong_split_predictions(tmp):
    _release(tmp)
    (tmp / "preds.csv").write_text("question_id,prediction\nnot-a-question#0,yes\n")
    return _evaluate(tmp, "--predictions", str(tmp / "preds.csv"))


def _no_data(tmp):
    _user(tmp)
    return ["clevr-math", "evaluate", "--data", str(tmp / "missing"), "--out", str(tmp / "eval")]


def _interrupted_reading(tmp):
    _user(tmp)
    # the command waits after the first row it reads (wait_at): the interrupt lands while the file is open
    line = json.dumps({"question_id": "{}", "prediction": "There are 3 cubes left."}) + "\n"
    with open(tmp / "preds.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(line.replace("{}", f"q{i}") for i in range(1000))
    return ["clevr-math", "evaluate", "--data", str(tmp / "missing"), "--out", str(tmp / "eval"),
            "--predictions", str(tmp / "preds.jsonl")]


def _no_report(tmp, done):
    assert not (tmp / "eval" / "report.json").exists()


def _predictions_in_out(tmp):
    """issue 20 Seen 5: --predictions D/report.json --out D --overwrite."""
    _release(tmp)
    (tmp / "eval").mkdir()
    (tmp / "eval" / "report.json").write_text('{"question_id": "x", "prediction": "yes"}\n')
    return _evaluate(tmp, "--predictions", str(tmp / "eval" / "report.json"), "--overwrite")


CASES = [
    Case("--predictions inside --out, with --overwrite", _predictions_in_out, exit_code=2,
         stderr_has="contains --predictions", protected=["eval/report.json"]),
    Case("--out is a user's file", _out_is_a_file, exit_code=2, stderr_has="is not a folder",
         protected=["eval", "notes.txt"]),
    Case("--out holds report files, no --overwrite", _reports_in_out, exit_code=2,
         stderr_has="report.json: exists and was not written by evaluate; it is never replaced without --overwrite", protected=["eval", "notes.txt"]),
    Case("--overwrite replaces only the report files", _overwrite_keeps_other_files, exit_code=0,
         protected=["eval/keep.txt", "notes.txt", "release"], check=_check_overwritten),
    Case("report.json is a symlink to a secret, even with --overwrite", _report_is_a_symlink, exit_code=2,
         stderr_has="not a regular file", protected=["secret.json", "eval/report.json", "notes.txt"]),
    Case("malformed predictions file", _bad_predictions, exit_code=2, stderr_has="preds.jsonl: line 2 column 8: not valid JSON",
         protected=["preds.jsonl", "notes.txt"], check=_no_report),
    Case("predictions of another split", _wrong_split_predictions, exit_code=2,
         stderr_has="not in split 'test'", protected=["preds.csv", "notes.txt"], check=_no_report),
    Case("--data names nothing", _no_data, exit_code=2, stderr_has="no such folder", protected=["notes.txt"],
         check=_no_report),
    Case("SIGINT while the predictions are read", _interrupted_reading, exit_code=130, stderr_has="interrupted",
         protected=["notes.txt", "preds.jsonl"], interrupt=signal.SIGINT, wait_at="predictions-row", check=_no_report),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_evaluate_safety(case, tmp_path):
    run_case(case, tmp_path)
