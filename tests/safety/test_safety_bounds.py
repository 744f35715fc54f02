"""Bounded work on hostile input (issue 20 items 7 and 11): the real console scripts fed JSON
nested 100,000 levels deep, integers of 5,000 digits, a scene over ``MAX_OBJECTS``, a PNG
decompression bomb, a file name holding a newline. Every row must end in one line on stderr,
exit status 2, naming the file (see ``safety_harness.py`` for what every row also checks).

This table is separate from the ownership rows (``test_safety_generator.py``,
``test_safety_builders.py`` ...) so that both grow without touching each other.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import struct
import sys
import zlib
from pathlib import Path

import pytest
from safety_harness import Case, run_case
from test_safety_generator import scene_file

from builder_utils.clevr.scenes import MAX_OBJECTS
from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.media_check import MediaError, check_png

DEPTH = 100_000
DEEP = "[" * DEPTH + "]" * DEPTH
HUGE = "9" * 5000


def gq(*args) -> list[str]:
    return ["generate-questions", *map(str, args)]


def _one_line(tmp: Path, done) -> None:
    """The error is one line (a warning the command printed before it may precede it)."""
    lines = [line for line in done.stderr.splitlines() if ": warning: " not in line]
    assert len(lines) == 1 and ": error: " in lines[0], f"expected one error line, got: {done.stderr[-2000:]}"


def _generator_input(flag: str, text: str, name: str = "hostile.json"):
    """generate-questions with ``flag`` naming a file of ``text`` (for --template_dir: a folder
    holding it as its only template file)."""
    def setup(tmp: Path) -> list[str]:
        scene_file(tmp)
        if flag == "--template_dir":
            (tmp / "tpl").mkdir()
            (tmp / "tpl" / name).write_text(text)
            target = tmp / "tpl"
        else:
            (tmp / name).write_text(text)
            target = tmp / name
        return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json", flag, target)
    return setup


def _scene_with(mutate):
    def setup(tmp: Path) -> list[str]:
        scene_file(tmp, mutate=mutate)
        return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json")
    return setup


def _huge_index(scene_list):
    scene_list[1]["image_index"] = "HUGE"


def _huge_integer_scene(tmp: Path) -> list[str]:
    path = scene_file(tmp, mutate=_huge_index)
    path.write_text(path.read_text().replace('"HUGE"', HUGE))
    return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json")


def _crowded(count: int, empty_relations: bool = False):
    """A scene of ``count`` objects (copies of one object), relationships full or empty."""
    def mutate(scene_list):
        scene = scene_list[0]
        scene["objects"] = [dict(scene["objects"][0]) for _ in range(count)]
        if empty_relations:
            scene["relationships"] = {rel: [[] for _ in range(count)] for rel in scene["relationships"]}
        else:
            scene["relationships"] = {rel: [[j for j in range(count) if j != i] if rel in ("left", "front") else []
                                            for i in range(count)] for rel in scene["relationships"]}
    return mutate


def _newline_name(tmp: Path) -> list[str]:
    (tmp / "bad\nname.json").write_text('{"info": {}, "scenes": [' + DEEP + "]}")
    return gq("--input_scene_file", "bad\nname.json", "--output_questions_file", "q.json")


def _forged_line(tmp: Path, done) -> None:
    _one_line(tmp, done)
    assert "bad\\nname.json" in done.stderr


def _predictions(text: str, command: str = "clevr-math"):
    def setup(tmp: Path) -> list[str]:
        (tmp / "preds.jsonl").write_text('{"question_id": "a", "prediction": "3"}\n' + text + "\n")
        return [command, "evaluate", "--data", str(tmp / "missing"), "--out", str(tmp / "eval"),
                "--predictions", str(tmp / "preds.jsonl")]
    return setup


def _clevr_questions(text: str):
    def setup(tmp: Path) -> list[str]:
        (tmp / "questions.json").write_text(text)
        return [Path(sys.executable).name, "-m", "builder_utils.clevr.evaluate", "--questions",
                str(tmp / "questions.json"), "--out", str(tmp / "eval")]
    return setup


def bomb_png(path: Path, width: int = 20_000, height: int = 20_000) -> Path:
    """A valid PNG of ``width`` x ``height`` black 1-bit pixels: ~50 KB that decode to 400 Mpx."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    packer = zlib.compressobj(9)
    row = b"\x00" * (1 + (width + 7) // 8)
    pixels = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b""))
    return path


def _bomb_image(tmp: Path) -> list[str]:
    data = write_clevr_folder(tmp / "CLEVR_v1.0", 2, seed=0, splits=("train", "val"), progress=False)
    bomb_png(data / "images" / "val" / "CLEVR_val_000001.png")
    return ["clevr-math", "export", "--data_dir", str(data), "--out", str(tmp / "E"), "--config", "general",
            "--quiet"]


TOO_DEEP = "nested more than 64 levels deep"
TOO_LONG = "an integer of 5000 digits"

CASES = [
    # deep nesting and huge integers, in every JSON input of the generator
    *[
        Case(f"generate-questions {flag} {kind}", setup=_generator_input(flag, text), exit_code=2,
             stderr_has=f"hostile.json: line 1 column {column}: {message}", protected=["tpl" if flag == "--template_dir" else "hostile.json"], check=_one_line)
        for flag in ("--metadata_file", "--synonyms_json", "--template_dir")
        for kind, text, column, message in (
            ("nested 100,000 levels", DEEP, 65, TOO_DEEP),
            ("holding a 5,000-digit integer", f'{{"n": {HUGE}}}', 7, TOO_LONG),
        )
    ],
    Case("generate-questions on a scene with a 5,000-digit image_index", setup=_huge_integer_scene, exit_code=2,
         stderr_has="s.json: scene 1: line 1 column", protected=["s.json"], check=_one_line),
    Case("generate-questions on a scene info block nested 100,000 levels",
         setup=lambda tmp: ((tmp / "s.json").write_text('{"info": ' + DEEP + ', "scenes": []}'),
                            gq("--input_scene_file", "s.json", "--output_questions_file", "q.json"))[1],
         exit_code=2, stderr_has="s.json: line 1 column", protected=["s.json"], check=_one_line),
    # a scene over the object limit, with full or (the 1.3 MB, 6,000-object case) empty relationships
    Case(f"generate-questions on a scene of {MAX_OBJECTS + 1} objects", setup=_scene_with(_crowded(MAX_OBJECTS + 1)),
         exit_code=2, stderr_has=f"s.json: scene 0 (CLEVR_val_000000.png): objects: {MAX_OBJECTS + 1} objects, "
                                 f"more than the {MAX_OBJECTS}", protected=["s.json"], check=_one_line),
    Case("generate-questions on a 6,000-object scene", setup=_scene_with(_crowded(6000, empty_relations=True)),
         exit_code=2, stderr_has="objects: 6000 objects, more than", protected=["s.json"], check=_one_line),
    # a file name that would forge a second line is escaped
    Case("generate-questions on a file named with a newline", setup=_newline_name, exit_code=2,
         stderr_has="not valid JSON", check=_forged_line),
    Case("generate-questions on a missing file named with a newline",
         setup=lambda tmp: gq("--input_scene_file", "gone\nname.json", "--output_questions_file", "q.json"),
         exit_code=2, stderr_has="gone\\nname.json", check=_one_line),
    # predictions and CLEVR question files of the evaluate commands
    Case("clevr-math evaluate on predictions nested 100,000 levels", setup=_predictions(DEEP), exit_code=2,
         stderr_has=f"preds.jsonl: line 2 column 65: {TOO_DEEP}", protected=["preds.jsonl"], check=_one_line),
    Case("clotho-aqa evaluate on predictions with a 5,000-digit integer",
         setup=_predictions(f'{{"question_id": "b", "prediction": {HUGE}}}', "clotho-aqa"), exit_code=2,
         stderr_has=f"preds.jsonl: line 2 column 36: {TOO_LONG}", protected=["preds.jsonl"], check=_one_line),
    Case("CLEVR evaluate on a question file nested 100,000 levels", setup=_clevr_questions(DEEP), exit_code=2,
         stderr_has=f"questions.json: line 1 column 65: {TOO_DEEP}", protected=["questions.json"], check=_one_line),
    # a decompression bomb among the images
    Case("clevr-math export with a 20000x20000-pixel PNG bomb", setup=_bomb_image, exit_code=2,
         stderr_has="CLEVR_val_000001.png: refused: the image declares 20000x20000 pixels",
         protected=["CLEVR_v1.0"], check=_one_line),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bounds_safety(case, tmp_path):
    run_case(case, tmp_path)


def test_a_decompression_bomb_is_a_media_error_naming_the_image(tmp_path):
    """The bomb of the table is the issue's: tens of KB declaring 20000x20000 pixels."""
    bomb = bomb_png(tmp_path / "bomb.png")
    assert bomb.stat().st_size < 100_000
    with pytest.raises(MediaError, match=r"bomb.png: refused: the image declares 20000x20000 pixels"):
        check_png(bomb)
    # Pillow itself only warns between its limit and twice it: the guard refuses there too
    with pytest.raises(MediaError, match="10000x10000 pixels"):
        check_png(bomb_png(tmp_path / "warned.png", 10_000, 10_000))
    assert check_png(bomb_png(tmp_path / "fine.png", 480, 320)) == (480, 320)


# --- no stale result served (issue 20 item 9) --------------------------------------------------


def _first_export(builder_cls, template: str, tmp: Path, data: Path, config: str) -> None:
    from builder_utils.hub import export_builder

    export_builder(builder_cls, tmp / "first", card_template=template, data_dir=data, configs=[config],
                   cache_dir=tmp / "cache", progress=False)


def _csv_edited_in_place(tmp: Path) -> list[str]:
    """After a cached build, the train CSV is rewritten with the same size and modification time."""
    from clotho_aqa import ClothoAQA
    from clotho_aqa.release import SPLIT_CSVS
    from clotho_aqa.synth import write_synthetic_release

    root = write_synthetic_release(tmp / "rel", num_files=5, seed=1).root
    _first_export(ClothoAQA, "clotho_aqa", tmp, root, "questions")
    path = root / SPLIT_CSVS["train"]
    stat, text = path.stat(), path.read_text(encoding="utf-8")
    question = next(line.split(",")[1] for line in text.splitlines()[1:] if line.split(",")[1].endswith("?"))
    path.write_text(text.replace(question, question.upper()), encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    (tmp / "question.txt").write_text(question.upper())
    return ["clotho-aqa", "export", "--data_dir", str(root), "--out", str(tmp / "E"), "--config", "questions",
            "--quiet", "--cache_dir", str(tmp / "cache")]


def _check_rebuilt(tmp: Path, done) -> None:
    import pyarrow.parquet as pq

    questions = pq.read_table(sorted((tmp / "E" / "questions").glob("train-*.parquet")),
                              columns=["question"]).column("question").to_pylist()
    assert (tmp / "question.txt").read_text() in questions, "the export served the rows of the CSV before the edit"


def cached_build(tmp: Path, png: bool) -> tuple[Path, list[str]]:
    """A cached build (``tmp/cache``) of a CLEVR world or a Clotho-AQA release: one of its media
    files, and the export command line (without ``--out``) that reads it again."""
    if png:
        from clevr_math import ClevrMath

        data = write_clevr_folder(tmp / "CLEVR_v1.0", 2, seed=0, splits=("train", "val"), progress=False)
        _first_export(ClevrMath, "clevr_math", tmp, data, "general")
        return data / "images" / "val" / "CLEVR_val_000001.png", [
            "clevr-math", "export", "--data_dir", str(data), "--config", "general"]
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    data = write_synthetic_release(tmp / "rel", num_files=3, seed=1).root
    _first_export(ClothoAQA, "clotho_aqa", tmp, data, "yes_no_majority")
    return sorted((data / "audio_files").glob("*.wav"))[0], [
        "clotho-aqa", "export", "--data_dir", str(data), "--config", "yes_no_majority"]


def _media_changed_after_build(kind: str):
    """After a cached build, one image (or clip) is truncated, or replaced by another valid one."""
    def setup(tmp: Path) -> list[str]:
        media, command = cached_build(tmp, kind.endswith("PNG"))
        raw = media.read_bytes()
        if kind.startswith("truncated"):
            media.write_bytes(raw[: len(raw) // 2])
        else:  # as valid as before, and one byte longer: not the file the build checked
            media.write_bytes(raw + b"\0")
        (tmp / "media.txt").write_text(media.name)
        return [*command, "--out", str(tmp / "E"), "--quiet", "--cache_dir", str(tmp / "cache")]
    return setup


def _check_named(tmp: Path, done) -> None:
    _one_line(tmp, done)
    assert f"{(tmp / 'media.txt').read_text()}: changed since the build checked it" in done.stderr
    assert not (tmp / "E").exists() or not any((tmp / "E").rglob("*.parquet"))


STALE_CASES = [
    Case("clotho-aqa export after the CSV was rewritten with its size and mtime kept, same --cache_dir",
         setup=_csv_edited_in_place, check=_check_rebuilt),
    *[
        Case(f"{'clevr-math' if kind.endswith('PNG') else 'clotho-aqa'} export of a {kind} changed after the "
             "cached build", setup=_media_changed_after_build(kind), exit_code=2,
             stderr_has="changed since the build checked it", check=_check_named)
        for kind in ("truncated PNG", "lengthened PNG", "truncated WAV")
    ],
]


@pytest.mark.parametrize("case", STALE_CASES, ids=[case.name for case in STALE_CASES])
def test_no_stale_result(case, tmp_path):
    run_case(case, tmp_path)


# --- Dask: a scratch folder of our own, one line on Ctrl-C (issue 20 items 10 and 11) ----------

HAS_DASK = importlib.util.find_spec("distributed") is not None
DASK_TMP = {"TMPDIR": "{tmp}/tmp"}  # the scratch folder's parent: what is left there is ours


def _with_tmp(command):
    def setup(tmp: Path) -> list[str]:
        (tmp / "tmp").mkdir()
        return command(tmp)
    return setup


def _generate_on_dask(tmp: Path) -> list[str]:
    scene_file(tmp, count=40)
    return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json", "--dask", "local",
              "--num_workers", "2")


def _synth_on_dask(tmp: Path) -> list[str]:
    return ["clevr-math", "synth", "--out", str(tmp / "W"), "--num_scenes", "400", "--dask", "local",
            "--num_proc", "2"]


def _no_scratch_left(tmp: Path, done) -> None:
    assert not list((tmp / "tmp").iterdir()), f"left in the temporary folder: {list((tmp / 'tmp').iterdir())}"


def _one_interrupt_line(tmp: Path, done) -> None:
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0], f"expected one line, got: {done.stderr[-3000:]}"
    _no_scratch_left(tmp, done)


# A TMPDIR this deep puts multiprocessing's socket path (TMPDIR/pymp-*/listener-*) past Linux's
# 108 bytes: the fork server of the cluster's workers could not start ("AF_UNIX path too long").
DEEP = "deep-" * 14


def _with_deep_tmp(command):
    def setup(tmp: Path) -> list[str]:
        (tmp / DEEP / "tmp").mkdir(parents=True)
        return command(tmp)
    return setup


def _ran_under_the_deep_tmp(tmp: Path, done) -> None:
    assert json.loads((tmp / "q.json").read_text())["questions"], "no questions"
    assert not list((tmp / DEEP / "tmp").iterdir()), list((tmp / DEEP / "tmp").iterdir())


DASK_CASES = [
    Case("generate-questions --dask local leaves no scratch folder", setup=_with_tmp(_generate_on_dask),
         env=DASK_TMP, check=_no_scratch_left),
    Case("generate-questions --dask local under a TMPDIR too deep for a socket", setup=_with_deep_tmp(_generate_on_dask),
         env={"TMPDIR": "{tmp}/" + DEEP + "/tmp"}, exit_code=0, check=_ran_under_the_deep_tmp),
    Case("Ctrl-C during generate-questions --dask local, cluster up", setup=_with_tmp(_generate_on_dask),
         env=DASK_TMP, exit_code=130, interrupt=signal.SIGINT, interrupt_group=True,
         wait_at="dask-cluster-up", check=_one_interrupt_line),
    Case("Ctrl-C during clevr-math synth --dask local, cluster starting", setup=_with_tmp(_synth_on_dask),
         env=DASK_TMP, exit_code=130, interrupt=signal.SIGINT, interrupt_group=True,
         wait_at="dask-cluster-starting", check=_one_interrupt_line),
    Case("Ctrl-C during clevr-math synth --dask local, cluster up", setup=_with_tmp(_synth_on_dask),
         env=DASK_TMP, exit_code=130, interrupt=signal.SIGINT, interrupt_group=True,
         wait_at="dask-cluster-up", check=_one_interrupt_line),
]


@pytest.mark.skipif(not HAS_DASK, reason="needs the dask extra")
@pytest.mark.parametrize("case", DASK_CASES, ids=[case.name for case in DASK_CASES])
def test_dask_safety(case, tmp_path):
    run_case(case, tmp_path)


def test_a_missing_wav_is_one_line(tmp_path):
    """issue 20 item 11: the message names the folder and the clip, on one line."""
    from clotho_aqa.synth import write_synthetic_release

    def setup(tmp: Path) -> list[str]:
        root = write_synthetic_release(tmp / "rel", num_files=3, seed=1).root
        clip = sorted((root / "audio_files").glob("*.wav"))[0]
        clip.unlink()
        (tmp / "clip.txt").write_text(clip.name)
        return ["clotho-aqa", "export", "--data_dir", str(root), "--out", str(tmp / "E"), "--config", "questions",
                "--quiet"]

    done = run_case(Case("clotho-aqa export with a missing WAV", setup=setup, exit_code=2,
                         stderr_has="audio file(s) referenced by the QA CSVs are missing", check=_one_line),
                    tmp_path)
    assert repr((tmp_path / "clip.txt").read_text()) in done.stderr
