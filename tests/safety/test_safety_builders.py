"""The builders and their demos, used the way a careless or hostile user would (issue 12).

Each row runs the real console script (``clevr-math``, ``clotho-aqa``) on a situation its setup
made under ``tmp_path``: a user's folder where the demo writes, a corrupt PNG or WAV, a CSV edited
between two builds. See ``safety_harness.py`` for what every row checks.
"""

from __future__ import annotations

import csv
import json
import signal

import numpy as np
import pyarrow.parquet as pq
import pytest
import soundfile
from safety_harness import Case, run_case

from builder_utils.clevr.synth import write_clevr_folder
from clotho_aqa.release import AUDIO_DIR, SPLIT_CSVS
from clotho_aqa.synth import write_synthetic_release


# --- situations ------------------------------------------------------------------------


def _user_folder(tmp, *parts):
    """A user's folder ``tmp/parts...`` holding one file of theirs."""
    folder = tmp.joinpath(*parts)
    folder.mkdir(parents=True)
    (folder / "mine.txt").write_text("the user's own file")
    return folder


def _clevr(tmp, scenes=2):
    write_clevr_folder(tmp / "CLEVR_v1.0", scenes, seed=0, splits=("train", "val"), progress=False)
    return tmp / "CLEVR_v1.0"


def _clotho(tmp, num_files=3):
    return write_synthetic_release(tmp / "rel", num_files=num_files, seed=1).root


def _first_clip(root):
    with open(root / SPLIT_CSVS["train"], encoding="utf-8", newline="") as fh:
        name = next(csv.DictReader(fh))["file_name"]
    return root / AUDIO_DIR / name


def _clevr_export(tmp, data):
    return ["clevr-math", "export", "--data_dir", str(data), "--out", str(tmp / "E"), "--config", "general", "--quiet"]


def _clotho_export(tmp, data, config="yes_no_majority", *extra):
    return ["clotho-aqa", "export", "--data_dir", str(data), "--out", str(tmp / "E"), "--config", config, "--quiet",
            *extra]


def _damaged_png(how):
    def setup(tmp):
        data = _clevr(tmp)
        png = data / "images" / "val" / "CLEVR_val_000001.png"
        raw = png.read_bytes()
        png.write_bytes({"empty": b"", "truncated": raw[: len(raw) // 2], "not a png": b"GIF89a" + raw[6:]}[how])
        return _clevr_export(tmp, data)
    return setup


def _folder_as_image(tmp):
    data = _clevr(tmp)
    png = data / "images" / "val" / "CLEVR_val_000001.png"
    png.unlink()
    png.mkdir()
    return _clevr_export(tmp, data)


def _damaged_wav(how):
    def setup(tmp):
        root = _clotho(tmp)
        wav = _first_clip(root)
        raw = wav.read_bytes()
        wav.write_bytes({"empty": b"", "truncated": raw[: len(raw) // 2], "garbage": b"not audio" * 50}[how])
        return _clotho_export(tmp, root)
    return setup


def _stereo_48k_clip(tmp):
    root = _clotho(tmp)
    soundfile.write(_first_clip(root), np.zeros((4800, 2), dtype=np.float32), 48_000)
    return _clotho_export(tmp, root)


def _respelt_answers(tmp):
    """One yes/no question answered ``Yes``, ``yes `` and ``YES``: still one yes/no question."""
    root = _clotho(tmp)
    path = root / SPLIT_CSVS["train"]
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    first = next(i for i in range(1, len(rows), 3) if {r[2] for r in rows[i:i + 3]} <= {"yes", "no"})
    for row, spelling in zip(rows[first:first + 3], ("Yes", "yes ", "YES")):
        row[2] = spelling
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    (tmp / "question.txt").write_text(f"{rows[first][0]}#{(first - 1) // 3}")
    return _clotho_export(tmp, root)


def _majority_ids(tmp):
    table = pq.read_table(sorted((tmp / "E" / "yes_no_majority").glob("train-*.parquet")), columns=["question_id"])
    return table.column("question_id").to_pylist()


def _check_respelt(tmp, done):
    assert "normalised the spelling" in done.stderr and "3 answer(s)" in done.stderr
    clip = (tmp / "question.txt").read_text()
    assert any(qid.startswith(clip.rsplit("#", 1)[0]) for qid in _majority_ids(tmp))


def _edited_csv_after_a_build(tmp):
    """A first export fills the cache; the train CSV then loses its first clip's questions."""
    from builder_utils.hub import export_builder
    from clotho_aqa import ClothoAQA

    root = _clotho(tmp, num_files=5)
    export_builder(ClothoAQA, tmp / "first", card_template="clotho_aqa", data_dir=root, configs=["questions"],
                   cache_dir=tmp / "cache", progress=False)
    path = root / SPLIT_CSVS["train"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:1] + lines[19:]), encoding="utf-8")  # header + clips 2.. (18 rows per clip)
    return _clotho_export(tmp, root, "questions", "--cache_dir", str(tmp / "cache"))


def _check_new_rows(tmp, done):
    rows = lambda folder: pq.read_table(sorted((tmp / folder / "questions").glob("train-*.parquet"))).num_rows  # noqa: E731
    assert rows("E") == rows("first") - 6, "the rebuild served the rows of the CSV before the edit"


def _demo_beside_user_files(command):
    def setup(tmp):
        _user_folder(tmp, "D", "notes")
        (tmp / "D" / "README.txt").write_text("my folder")
        return [command, "demo", "--out", str(tmp / "D"), *DEMO_ARGS[command]]
    return setup


def _check_no_hidden_folders(tmp, done):
    hidden = [p.name for p in (tmp / "D").iterdir() if p.name.startswith(".") and p.is_dir()]
    assert not hidden, f"temporary folders left behind: {hidden}"


def _demo_manifest_links_to_a_claim(tmp):
    """The user's D/CLEVR_v1.0, and a D/.clevr-math-demo.json that is a symlink to a JSON claiming it."""
    _user_folder(tmp, "D", "CLEVR_v1.0")
    (tmp / "claims.json").write_text(json.dumps({"written_by": "clevr-math demo", "folders": ["CLEVR_v1.0"]}))
    (tmp / "D" / ".clevr-math-demo.json").symlink_to(tmp / "claims.json")
    return ["clevr-math", "demo", "--out", str(tmp / "D"), *DEMO_ARGS["clevr-math"]]


def _corrupt_demo_manifest(tmp):
    _user_folder(tmp, "D", "release")
    (tmp / "D" / ".clotho-aqa-demo.json").write_text('{"written_by": "clotho-aqa demo", "folders": ["release"')
    return ["clotho-aqa", "demo", "--out", str(tmp / "D"), *DEMO_ARGS["clotho-aqa"]]


def _marker_links_to_a_claim(tmp):
    _user_folder(tmp, "R")
    (tmp / "claims.json").write_text(json.dumps({"written_by": "clotho-aqa synth"}))
    (tmp / "R" / ".clotho-aqa-synth.json").symlink_to(tmp / "claims.json")
    return ["clotho-aqa", "synth", "--out", str(tmp / "R"), "--overwrite"]


def _demo_rerun_with_user_files(command):
    def setup(tmp):
        import subprocess

        from safety_harness import script

        argv = [command, "demo", "--out", str(tmp / "D"), *DEMO_ARGS[command]]
        subprocess.run([script(command), *argv[1:]], check=True, capture_output=True, cwd=tmp)
        names = ("CLEVR_v1.0", "hub") if command == "clevr-math" else ("release", "hub")
        for name in names:
            (tmp / "D" / name / "mine.txt").write_text("the user's own file")
        return argv
    return setup


def _splits_over_release(tmp):
    root = _clotho(tmp)
    return ["clotho-aqa", "splits", "--data_dir", str(root), "--out", str(root / SPLIT_CSVS["train"])]


def _splits_same_out_and_report(tmp):
    _clotho(tmp)
    (tmp / "X").write_text("the user's")
    return ["clotho-aqa", "splits", "--data_dir", str(tmp / "rel"), "--out", str(tmp / "X"), "--report", str(tmp / "X")]


DEMO_ARGS = {"clevr-math": ["--num_scenes", "2", "--rows", "0"], "clotho-aqa": ["--num_files", "3"]}
NOT_OURS = "was not created by"

CASES = [
    # item 1: a demo never replaces or empties a folder it did not create
    *[
        Case(f"{command} demo --out D with the user's D/{name}",
             setup=lambda tmp, command=command, name=name: (
                 _user_folder(tmp, "D", name), [command, "demo", "--out", str(tmp / "D"), *DEMO_ARGS[command]])[1],
             exit_code=2, stderr_has=NOT_OURS, protected=[f"D/{name}"])
        for command, names in (("clevr-math", ("CLEVR_v1.0", "hub", "evaluation")),
                               ("clotho-aqa", ("release", "hub", "evaluation")))
        for name in names
    ],
    # issue 29: the demos keep their builds' cache in their staging; a user's D/cache is not theirs
    Case("clevr-math demo --out D beside the user's D/cache",
         setup=lambda tmp: (_user_folder(tmp, "D", "cache"), ["clevr-math", "demo", "--out", str(tmp / "D"),
                                                               *DEMO_ARGS["clevr-math"]])[1],
         exit_code=0, protected=["D/cache"]),
    # a record behind a symlink, or one that cannot be read, claims nothing
    Case("clevr-math demo with a manifest that is a symlink claiming the user's D/CLEVR_v1.0",
         setup=_demo_manifest_links_to_a_claim,
         exit_code=2, stderr_has="written by an earlier version", protected=["D/CLEVR_v1.0", "claims.json"]),
    Case("clotho-aqa demo with its manifest corrupted", setup=_corrupt_demo_manifest,
         exit_code=2, stderr_has="written by an earlier version", protected=["D/release"]),
    Case("clotho-aqa demo --out D beside the user's other files",
         setup=_demo_beside_user_files("clotho-aqa"), protected=["D/notes", "D/README.txt"]),
    Case("clotho-aqa demo interrupted by SIGTERM while exporting",
         setup=lambda tmp: ["clotho-aqa", "demo", "--out", str(tmp / "D"), "--num_files", "3"],
         exit_code=143, interrupt=signal.SIGTERM,
         wait_at="export-shard",
         check=_check_no_hidden_folders),
    # issue 20 Seen 2: --overwrite writes beside the user's file, which stays
    Case("clotho-aqa synth --overwrite onto the user's folder keeps the user's file",
         setup=lambda tmp: (_user_folder(tmp, "R"), ["clotho-aqa", "synth", "--out", str(tmp / "R"), "--overwrite"])[1],
         exit_code=0, protected=["R/mine.txt"]),
    *[Case(f"{command} demo re-run keeps the user's files inside our folders",
           setup=_demo_rerun_with_user_files(command), protected=[f"D/{name}/mine.txt" for name in names])
      for command, names in (("clevr-math", ("CLEVR_v1.0", "hub")), ("clotho-aqa", ("release", "hub")))],
    Case("clotho-aqa splits --out the release's own CSV is refused", setup=_splits_over_release,
         exit_code=2, stderr_has="lies inside --data_dir", protected=["rel"]),
    Case("clotho-aqa splits --out X --report X is refused", setup=_splits_same_out_and_report,
         exit_code=2, stderr_has="name the same file", protected=["rel", "X"]),
    Case("clotho-aqa synth --overwrite onto the user's folder with a marker that is a symlink",
         setup=_marker_links_to_a_claim, exit_code=2, stderr_has="written by an earlier version",
         protected=["R", "claims.json"]),
    # should-fix: an output that is a folder is a one-line error
    Case("clotho-aqa splits --out <a folder>",
         setup=lambda tmp: (_clotho(tmp), _user_folder(tmp, "S"),
                            ["clotho-aqa", "splits", "--data_dir", str(tmp / "rel"), "--out", str(tmp / "S")])[2],
         exit_code=2, stderr_has="is a folder", protected=["S", "rel"]),
    # item 7: the cache key covers the input files
    Case("clotho-aqa export after the CSV was edited, same --cache_dir",
         setup=_edited_csv_after_a_build, check=_check_new_rows, protected=["rel"]),
    # item 8: one spelling per answer
    Case("clotho-aqa export of a CSV answering Yes / yes  / YES", setup=_respelt_answers, check=_check_respelt),
    # item 11: media checked at build time, the file named
    *[
        Case(f"clevr-math export with a {how} PNG", setup=_damaged_png(how), exit_code=2,
             stderr_has="CLEVR_val_000001.png: not a", protected=["CLEVR_v1.0"])
        for how in ("empty", "truncated", "not a png")
    ],
    Case("clevr-math export with a folder where an image should be", setup=_folder_as_image, exit_code=2,
         stderr_has="CLEVR_val_000001.png is a folder", protected=["CLEVR_v1.0"]),
    *[
        Case(f"clotho-aqa export with a {how} WAV", setup=_damaged_wav(how), exit_code=2,
             stderr_has=".wav: " + ("truncated audio file" if how == "truncated" else "not a readable audio file"),
             protected=["rel"])
        for how in ("empty", "truncated", "garbage")
    ],
    Case("clotho-aqa export with a 48 kHz stereo clip", setup=_stereo_48k_clip,
         stderr_has="1 clip(s) are not 44100 Hz mono", protected=["rel"]),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_builders_safety(case, tmp_path):
    run_case(case, tmp_path)
