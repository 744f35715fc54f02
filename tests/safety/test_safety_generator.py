"""Safety table of the question generator (`generate-questions`) and the synthetic world
(`clevr-math synth`): issue 12 items 5, 6, 9 and 12 and the generator's "should fix" errors.

Each row builds a situation under ``tmp_path``, runs the real console script and checks the
exit status, the message, the user's files and the debris (see ``safety_harness.py``).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from safety_harness import Case, run_case, script

from builder_utils.clevr.synth import generate_scenes

INFO = {"split": "val", "license": "CC BY 4.0", "version": "1.0", "date": "1/1/2026"}
_BASE = generate_scenes(50, seed=5, split="val")


def scenes(count: int) -> list[dict]:
    """``count`` valid val scenes (the 50 synthetic ones repeated, renumbered)."""
    out = []
    for k in range(count):
        scene = _BASE[k % len(_BASE)]
        if count <= len(_BASE):
            scene = json.loads(json.dumps(scene))  # a deep copy: rows mutate theirs
        out.append(dict(scene, image_index=k, image_filename=f"CLEVR_val_{k:06d}.png"))
    return out


def scene_file(tmp: Path, count: int = 6, name: str = "s.json", mutate=None) -> Path:
    document = {"info": INFO, "scenes": scenes(count)}
    if mutate is not None:
        mutate(document["scenes"])
    path = tmp / name
    path.write_text(json.dumps(document))
    return path


def gq(*args) -> list[str]:
    return ["generate-questions", *map(str, args)]


def _deep(tmp: Path) -> list[str]:
    (tmp / "deep.json").write_text('{"info": {}, "scenes": [' + "[" * 50_000 + "]" * 50_000 + "]}")
    return gq("--input_scene_file", "deep.json", "--output_questions_file", "q.json")


def _symlinked_output(tmp: Path) -> list[str]:
    scene_file(tmp)
    (tmp / "link.json").symlink_to(tmp / "s.json")
    return gq("--input_scene_file", tmp / "s.json", "--output_questions_file", tmp / "link.json")


def _directory_output(tmp: Path) -> list[str]:
    scene_file(tmp)
    (tmp / "out").mkdir()
    (tmp / "out" / "keep.txt").write_text("mine")
    return gq("--input_scene_file", "s.json", "--output_questions_file", "out")


def _output_under_a_file(tmp: Path) -> list[str]:
    scene_file(tmp)
    (tmp / "notes").write_text("mine")
    return gq("--input_scene_file", "s.json", "--output_questions_file", "notes/q.json")


def _no_tmp_name(tmp: Path, done) -> None:
    assert ".tmp" not in done.stderr, done.stderr


def _output_file_absent(name: str):
    def check(tmp: Path, done) -> None:
        assert not (tmp / name).exists()
    return check


def _parquet_into_user_folder(tmp: Path) -> list[str]:
    scene_file(tmp)
    (tmp / "out").mkdir()
    (tmp / "out" / "notes.txt").write_text("mine")
    return gq("--input_scene_file", "s.json", "--output_questions_file", "out", "--output_format", "parquet")


def _big_run(workers: int, *extra, count: int = 1500) -> callable:
    def setup(tmp: Path) -> list[str]:
        scene_file(tmp, count)
        return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json", "--reset_counts_every", "25",
                  "--num_workers", workers, *extra)
    return setup


def _index_listing_outside(tmp: Path) -> list[str]:
    """A Parquet output folder whose index.json (not ours) lists ../v.txt as a shard."""
    scene_file(tmp)
    (tmp / "v.txt").write_text("the user's")
    (tmp / "out").mkdir()
    (tmp / "out" / "index.json").write_text(json.dumps({"shards": [{"file": "../v.txt"}]}))
    return gq("--input_scene_file", "s.json", "--output_questions_file", "out", "--output_format", "parquet")


LONG = "q" * 245 + ".json"  # a legal 250-byte name: the temporary names must stay within 255 bytes


def _long_name(tmp: Path, done) -> None:
    assert (tmp / LONG).is_file() and [p.name for p in tmp.glob(".*")] == [".ownership.json"]


def _generator_file_replaced(tmp: Path) -> list[str]:
    """The original generator overwrites its output: a file our generator wrote is replaced without asking."""
    scene_file(tmp)
    done = subprocess.run([script("generate-questions"), "--input_scene_file", "s.json", "--output_questions_file",
                           "q.json", "--quiet"], cwd=tmp, capture_output=True)
    assert done.returncode == 0
    return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json", "--seed", "3", "--quiet")


def _generator_file_corrected(tmp: Path) -> list[str]:
    """Our question file, then corrected by hand (its info still says our generator wrote it)."""
    _generator_file_replaced(tmp)
    doc = json.loads((tmp / "q.json").read_text())
    doc["questions"][0]["answer"] = "corrected by hand"
    (tmp / "q.json").write_text(json.dumps(doc))
    return gq("--input_scene_file", "s.json", "--output_questions_file", "q.json", "--quiet")


GENERATOR_CASES = [
    # issue 20 Seen 4: a record is never trusted, paths and all; a user's index.json is not ours
    Case("parquet output folder with an index.json listing ../v.txt", _index_listing_outside,
         exit_code=2, stderr_has="index.json: exists and was not written by generate-questions",
         protected=["v.txt", "out"]),
    Case("parquet output folder with an index.json listing ../v.txt, --overwrite",
         lambda tmp: [*_index_listing_outside(tmp), "--overwrite"], exit_code=0, protected=["v.txt"]),
    # issue 20 Seen 12: a legal 250-byte output name works
    Case("a 250-byte output name", lambda tmp: gq("--input_scene_file", scene_file(tmp), "--output_questions_file",
                                                  LONG, "--quiet"), check=_long_name),
    # issue 24 item 3: our own output is replaced without asking, anything else needs --overwrite
    Case("a question file our generator wrote is replaced without --overwrite", _generator_file_replaced),
    # issue 29 cause 2: the record is the only claim; a file corrected by hand is not ours any more
    Case("a question file corrected by hand is not replaced without --overwrite", _generator_file_corrected,
         exit_code=2, stderr_has="changed since generate-questions wrote it", protected=["q.json"]),
    Case("a user's file at the output name needs --overwrite",
         lambda tmp: ((tmp / "q.json").write_text("{}"), gq("--input_scene_file", scene_file(tmp),
                                                           "--output_questions_file", "q.json"))[1],
         exit_code=2, stderr_has="without --overwrite", protected=["q.json"]),
    Case("input and output are the same file",
         lambda tmp: gq("--input_scene_file", scene_file(tmp), "--output_questions_file", tmp / "s.json"),
         exit_code=2, stderr_has="is the same file as --input_scene_file", protected=["s.json"]),
    Case("output is the input through a symlink", _symlinked_output,
         exit_code=2, stderr_has="is a symlink", protected=["s.json", "link.json"]),
    Case("output is the input through a relative path",
         lambda tmp: [*gq("--input_scene_file", scene_file(tmp), "--output_questions_file", "./sub/../s.json")],
         exit_code=2, stderr_has="same file", protected=["s.json"]),
    Case("output is a directory", _directory_output,
         exit_code=2, stderr_has="out: is a directory", protected=["out", "s.json"], check=_no_tmp_name),
    Case("output folder is a file", _output_under_a_file,
         exit_code=2, stderr_has="notes: exists and is not a folder", protected=["notes"], check=_no_tmp_name),
    Case("parquet output into a folder of the user's", _parquet_into_user_folder,
         exit_code=0, protected=["out/notes.txt"]),
    Case("a repeated image_index",
         lambda tmp: gq("--input_scene_file", scene_file(tmp, mutate=lambda s: s[4].update(image_index=2)),
                        "--output_questions_file", "q.json"),
         exit_code=2, stderr_has="scene 4 (CLEVR_val_000004.png): image_index: 2 repeats the image_index of scene 2",
         check=_output_file_absent("q.json")),
    Case("a NaN coordinate",
         lambda tmp: gq("--input_scene_file", scene_file(
             tmp, mutate=lambda s: s[3]["objects"][1]["3d_coords"].__setitem__(2, float("nan"))),
             "--output_questions_file", "q.json"),
         exit_code=2, stderr_has="s.json: scene 3 (CLEVR_val_000003.png): objects[1].3d_coords[2]: expected a finite number"),
    Case("an Infinity pixel coordinate",
         lambda tmp: gq("--input_scene_file", scene_file(
             tmp, mutate=lambda s: s[1]["objects"][0]["pixel_coords"].__setitem__(0, float("inf"))),
             "--output_questions_file", "q.json"),
         exit_code=2, stderr_has="scene 1 (CLEVR_val_000001.png): objects[0].pixel_coords[0]: expected a finite number"),
    Case("deeply nested scene JSON", _deep, exit_code=2, stderr_has="deep.json: scene 0: line 1 column 25: not valid "
         "JSON (nested too deeply)"),
    Case("--question_types with no type",
         lambda tmp: gq("--input_scene_file", scene_file(tmp), "--output_questions_file", "q.json",
                        "--question_types", ""),
         exit_code=2, stderr_has="--question_types names no type", check=_output_file_absent("q.json")),
    Case("a run that produces no question",
         lambda tmp: gq("--input_scene_file", scene_file(tmp, 0), "--output_questions_file", "q.json"),
         exit_code=1, stderr_has="no question generated for the 0 scene(s)"),
    Case("SIGTERM in one process", _big_run(1),
         exit_code=143, interrupt=signal.SIGTERM, wait_at="question-written",
         check=_output_file_absent("q.json"), timeout=120),
    Case("SIGTERM with two workers", _big_run(2),
         exit_code=143, interrupt=signal.SIGTERM, wait_at="question-written",
         check=_output_file_absent("q.json"), timeout=120),
    # The whole run takes minutes even with 2 workers (300,000 questions); the hang timeout is
    # far shorter, so waiting for the queued windows before stopping fails the row.
    Case("Ctrl-C with two workers", _big_run(2, "--instances_per_template", "5", count=6000),
         exit_code=130, interrupt=signal.SIGINT, wait_at="question-written",
         check=_output_file_absent("q.json"), timeout=30),
    Case("SIGTERM on a local Dask cluster", _big_run(2, "--dask", "local"),
         exit_code=143, interrupt=signal.SIGTERM, wait_at="question-written",
         check=_output_file_absent("q.json"), timeout=120),
    Case("SIGTERM during parquet output with two workers", _big_run(2, "--output_format", "parquet",
                                                                    "--scenes_per_shard", "100"),
         exit_code=143, interrupt=signal.SIGTERM,
         wait_at="shard-written@2",
         check=_output_file_absent("q.json/index.json"), timeout=120),
]


# ---------------------------------------------------------------- clevr-math synth


def synth(*args) -> list[str]:
    return ["clevr-math", "synth", *map(str, args), "--quiet"]


def _user_folder(tmp: Path) -> list[str]:
    (tmp / "world").mkdir()
    (tmp / "world" / "notes.txt").write_text("mine")
    return synth("--out", "world", "--num_scenes", "2", "--splits", "val")


def _users_clevr(tmp: Path) -> list[str]:
    (tmp / "CLEVR_v1.0" / "scenes").mkdir(parents=True)
    (tmp / "CLEVR_v1.0" / "scenes" / "CLEVR_val_scenes.json").write_text('{"info": {}, "scenes": []}')
    return synth("--out", "CLEVR_v1.0", "--num_scenes", "2", "--splits", "val")


def _users_clevr_claimed_through_a_symlink(tmp: Path) -> list[str]:
    """The user's CLEVR_v1.0 with a manifest that is a symlink to a JSON claiming their scene file."""
    _users_clevr(tmp)
    (tmp / "claims.json").write_text(json.dumps({"seed": 0, "splits": {"val": {"scenes": 2, "images": False}}}))
    (tmp / "CLEVR_v1.0" / ".clevr-synth.json").symlink_to(tmp / "claims.json")
    return synth("--out", "CLEVR_v1.0", "--num_scenes", "2", "--splits", "val", "--no_render", "--overwrite")


def _our_world_with_a_corrupt_manifest(tmp: Path) -> list[str]:
    from builder_utils.clevr.synth import write_clevr_folder

    write_clevr_folder(tmp / "world", {"val": 2}, seed=0, render=False, progress=False)
    (tmp / "world" / ".clevr-synth.json").write_text('{"seed": 0, "splits": {"val": {"scen')
    return synth("--out", "world", "--num_scenes", "2", "--splits", "val", "--no_render", "--overwrite")


def _rerun_smaller(tmp: Path) -> list[str]:
    from builder_utils.clevr.synth import write_clevr_folder

    write_clevr_folder(tmp / "world", {"train": 2, "val": 5}, seed=0, progress=False)
    (tmp / "world" / "notes.txt").write_text("mine")
    (tmp / "world" / "images" / "val" / "my_drawing.png").write_bytes(b"not ours")
    return synth("--out", "world", "--num_scenes", "val=3", "--overwrite")


def _only_the_new_world(tmp: Path, done) -> None:
    world = tmp / "world"
    assert sorted(p.name for p in (world / "images" / "val").iterdir()) == [
        "CLEVR_val_000000.png", "CLEVR_val_000001.png", "CLEVR_val_000002.png", "my_drawing.png"]
    # the split the run did not name is kept (issue 36: a re-run of val alone used to delete train)
    assert sorted(p.name for p in (world / "images" / "train").iterdir()) == [
        "CLEVR_train_000000.png", "CLEVR_train_000001.png"]
    assert sorted(p.name for p in (world / "scenes").iterdir()) == ["CLEVR_train_scenes.json", "CLEVR_val_scenes.json"]


def _file_out(tmp: Path) -> list[str]:
    (tmp / "world.txt").write_text("mine")
    return synth("--out", "world.txt", "--num_scenes", "2")


def _big_synth(*extra):
    return lambda tmp: synth("--out", "world", "--num_scenes", "val=3000", *extra)


def _symlinked_images_val(tmp: Path) -> list[str]:
    """issue 20 Seen 3: our world, whose images/val was then made a symlink to the user's folder."""
    from builder_utils.clevr.synth import write_clevr_folder

    write_clevr_folder(tmp / "world", {"val": 2}, seed=0, progress=False)
    (tmp / "photos").mkdir()
    (tmp / "photos" / "CLEVR_val_000000.png").write_bytes(b"the user's photo")
    shutil.rmtree(tmp / "world" / "images" / "val")
    (tmp / "world" / "images" / "val").symlink_to(tmp / "photos")
    return synth("--out", "world", "--num_scenes", "val=2", "--overwrite")


SYNTH_CASES = [
    Case("synth --overwrite through a symlinked images/val", _symlinked_images_val, exit_code=2,
         stderr_has="symlink", protected=["photos"]),
    Case("synth --out a 250-byte name", lambda tmp: synth("--out", "w" * 250, "--num_scenes", "val=1"),
         check=lambda tmp, done: (tmp / ("w" * 250) / "scenes" / "CLEVR_val_scenes.json").is_file()),
    Case("synth into a folder of the user's writes beside their file", _user_folder,
         exit_code=0, protected=["world/notes.txt"]),
    Case("synth onto a CLEVR folder it did not write", _users_clevr,
         exit_code=2, stderr_has="a CLEVR folder that clevr-math synth did not write (scenes/CLEVR_val_scenes.json)",
         protected=["CLEVR_v1.0"]),
    # a manifest behind a symlink, or one that cannot be read, claims nothing
    Case("synth --overwrite with a manifest that is a symlink claiming the user's scenes",
         _users_clevr_claimed_through_a_symlink, exit_code=2,
         stderr_has="written by an earlier version of this package", protected=["CLEVR_v1.0", "claims.json"]),
    Case("synth --overwrite with its own manifest corrupted", _our_world_with_a_corrupt_manifest, exit_code=2,
         stderr_has="written by an earlier version of this package", protected=["world"]),
    Case("synth --overwrite replaces only its own earlier split", _rerun_smaller,
         exit_code=0, protected=["world/notes.txt", "world/images/val/my_drawing.png"], check=_only_the_new_world),
    Case("synth --out a file", _file_out,
         exit_code=2, stderr_has="world.txt: exists and is not a folder", protected=["world.txt"]),
    Case("synth SIGTERM in one process", _big_synth(),
         exit_code=143, interrupt=signal.SIGTERM, wait_at="scene-chunk",
         check=_output_file_absent("world/scenes/CLEVR_val_scenes.json"), timeout=120),
    Case("synth Ctrl-C with two workers", _big_synth("--num_proc", "2"),
         exit_code=130, interrupt=signal.SIGINT, wait_at="scene-chunk",
         check=_output_file_absent("world/scenes/CLEVR_val_scenes.json"), timeout=60),
    Case("synth SIGTERM with two workers", _big_synth("--num_proc", "2"),
         exit_code=143, interrupt=signal.SIGTERM, wait_at="scene-chunk",
         check=_output_file_absent("world/scenes/CLEVR_val_scenes.json"), timeout=120),
]


if importlib.util.find_spec("distributed") is None:  # the [dask] extra (make test installs it)
    GENERATOR_CASES = [case for case in GENERATOR_CASES if "Dask" not in case.name]


@pytest.mark.parametrize("case", GENERATOR_CASES + SYNTH_CASES, ids=lambda c: c.name)
def test_generator_safety(case, tmp_path):
    run_case(case, tmp_path)
