"""The safety matrix's rows for causes 5 to 8 of issue 29, each written from the issue's
description and applied to every command the cause can reach.

5. **Trust by stat.** A media file replaced after a cached build by one of the same size, its
   modification time set back, is re-checked and refused by every export that embeds media
   (CLEVR-Math PNGs; Clotho-AQA WAVs, as WAV and re-encoded as FLAC).
6. **Unbounded work.** Every numeric flag of every command, read from the parsers themselves,
   has a declared maximum and one error line above it; so do the Python APIs. Audio that
   decodes to far more than its size (FLAC or Ogg named ``.wav``) and zip bombs are refused by
   every command that reads a release; a record nested too deep or malformed is one line for
   every writing command; a template of 1,000 nodes or nested too deep is one line.
7. **Rewards.** Every reward function of both datasets refuses columns of another length than
   the completions, and inputs that are not lists, with one ``ValueError`` line.
8. **A suite that does not depend on how it runs.** Every interrupt row of every table waits at a
   named point (none polls for a moment the command may pass), and a row still holds when the
   suite itself was started with SIGINT ignored (a background job).

The ``kill -9`` loop over every writing command is ``test_safety_kill.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import signal
import zipfile
from pathlib import Path

import numpy as np
import pytest
import soundfile
from safety_harness import Case, run_case
from test_safety_bounds import _one_line, cached_build
from test_safety_generator import scene_file
from test_safety_kill import EXTRA
from test_safety_matrix import COMMANDS, RECORD, Command

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.options import Integer, Share
from clotho_aqa.release import AUDIO_DIR
from clotho_aqa.synth import write_synthetic_release

# --- cause 5: a cache trusted by content, not by size and modification time -------------------

EMBEDDING_EXPORTS = {
    "clevr-math export (PNG)": ("png", []),
    "clotho-aqa export (WAV)": ("wav", []),
    "clotho-aqa export --audio_format flac": ("wav", ["--audio_format", "flac"]),
}


def _replaced_in_place(kind: str, extra: list[str], how: str):
    """After a cached build, one media file is replaced by bytes of the same size (undecodable,
    or another valid file), and its modification time is set back."""
    def setup(tmp: Path) -> list[str]:
        media, command = cached_build(tmp, kind == "png")
        raw, stat = media.read_bytes(), media.stat()
        if how == "undecodable":
            replaced = raw[:8] + bytes(len(raw) - 8)  # the signature kept, the rest zeros
        else:  # valid and different: the samples of a WAV inverted, its header kept
            replaced = raw[:44] + bytes(255 - b for b in raw[44:])
        media.write_bytes(replaced)
        os.utime(media, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert (media.stat().st_size, media.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
        (tmp / "media.txt").write_text(media.name)
        return [*command, "--out", str(tmp / "E"), "--quiet", "--cache_dir", str(tmp / "cache"), *extra]
    return setup


def _refused_and_named(tmp: Path, done) -> None:
    _one_line(tmp, done)
    assert f"{(tmp / 'media.txt').read_text()}: changed since the build checked it" in done.stderr
    assert not (tmp / "E").exists() or not any((tmp / "E").rglob("*.parquet")), "a stale cache was embedded"


CAUSE_5 = [
    Case(f"{name} of a file replaced by {how} bytes of the same size, mtime restored, after a cached build",
         setup=_replaced_in_place(kind, extra, how), exit_code=2, stderr_has="changed since the build checked it",
         check=_refused_and_named)
    for name, (kind, extra) in EMBEDDING_EXPORTS.items()
    for how in (("undecodable", "valid") if kind == "wav" else ("undecodable",))
]


@pytest.mark.parametrize("case", CAUSE_5, ids=[case.name for case in CAUSE_5])
def test_cause_5_cache_trusted_by_content(case, tmp_path):
    run_case(case, tmp_path)


# --- cause 6: every number bounded, on every command line --------------------------------------


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every command's parser, by the name a user types."""
    from builder_utils.clevr.generate_questions import build_parser as gq_parser
    from builder_utils.clevr.synth.folder import build_parser as synth_parser
    from clevr_math.cli import build_parser as clevr_parser
    from clotho_aqa.cli import build_parser as clotho_parser

    found = {"generate-questions": gq_parser(), "clevr-math synth": synth_parser("clevr-math synth")}
    for prog, parser in (("clevr-math", clevr_parser()), ("clotho-aqa", clotho_parser())):
        choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        for name, sub in choices.items():
            if not any(action.option_strings for action in sub._actions if action.dest != "help"):
                continue  # forwarded (synth: its own parser, above)
            found[f"{prog} {name}"] = sub
    return found


def _declared_maximum(dest: str):
    """The maximum the option declarations give ``dest`` (None: not declared)."""
    from builder_utils.clevr.options import GeneratorOptions
    from builder_utils.clevr.synth.controls import WorldOptions
    from builder_utils.clevr.synth.folder import ImageOptions
    from builder_utils.hub.prompt_config import PromptAudioOptions
    from builder_utils.options import _KEY, Number
    from clevr_math.config import ClevrMathConfig
    from clevr_math.difficulty import Difficulty
    from clotho_aqa.options import ClothoAQAOptions

    # every class that declares a command's numeric options (the renderer's, the export's and
    # the builder configs' own fields included)
    for cls in (GeneratorOptions, Difficulty, ClothoAQAOptions, ImageOptions, WorldOptions, PromptAudioOptions,
                ClevrMathConfig):
        for f in dataclasses.fields(cls):
            check = f.metadata.get(_KEY, {}).get("check")
            if f.name == dest and isinstance(check, Integer):
                return check.maximum
            if f.name == dest and isinstance(check, Share):
                return 1.0
            if f.name == dest and isinstance(check, Number) and check.maximum is not None:
                return check.maximum
    return None


# Flags parsed as plain numbers whose bound is the Python API's they feed (one error line there).
API_BOUNDED = {("clotho-aqa synth", "num_files"), ("clotho-aqa synth", "seed"), ("clotho-aqa synth", "duration"),
               ("clotho-aqa demo", "num_files"), ("clotho-aqa demo", "seed")}


def _numeric_flags() -> list[tuple[str, str, str, object]]:
    """(command, flag, dest, the value just above its maximum) of every numeric flag."""
    from clotho_aqa.options import MAX_DURATION, MAX_FILES

    api_maximum = {"num_files": MAX_FILES, "seed": 2**64 - 1, "duration": MAX_DURATION}
    rows = []
    for command, parser in _parsers().items():
        for action in parser._actions:
            kind = action.type
            bound = getattr(kind, "__self__", None)
            if not action.option_strings or kind in (None, str) or action.choices is not None:
                continue  # a word, one of a few choices, or a path (a numeric type of another kind fails below)
            flag = action.option_strings[-1]
            if isinstance(bound, Integer):
                maximum = bound.maximum
            elif (command, action.dest) in API_BOUNDED:
                maximum = api_maximum[action.dest]
            else:
                maximum = _declared_maximum(action.dest)
            rows.append((command, flag, action.dest, None if maximum is None else
                         (maximum * 2 if kind is float else maximum + 1)))
    return rows


NUMERIC_FLAGS = _numeric_flags()


def test_every_numeric_flag_declares_a_maximum():
    undeclared = [f"{command} {flag}" for command, flag, _, above in NUMERIC_FLAGS if above is None]
    assert not undeclared, f"numeric flags without a declared maximum: {undeclared}"
    assert len(NUMERIC_FLAGS) >= 40  # the walk found the commands' flags, not an empty list


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Valid inputs for every command: a scene file, a CLEVR world, a Clotho-AQA release."""
    root = tmp_path_factory.mktemp("inputs")
    scene_file(root)
    write_clevr_folder(root / "W", 2, seed=0, splits=("train", "val"), progress=False)
    write_synthetic_release(root / "rel", num_files=3, seed=1)
    return root


def _argv(command: str, root: Path, out: Path) -> list[str]:
    base = {
        "generate-questions": ["--input_scene_file", root / "s.json", "--output_questions_file", out / "q.json"],
        "clevr-math synth": ["--out", out / "w", "--num_scenes", "1", "--no_render"],
        "clevr-math demo": ["--out", out / "d"],
        "clevr-math export": ["--data_dir", root / "W", "--out", out / "E", "--config", "general"],
        "clevr-math push": ["--folder", out / "E", "--repo_id", "a/b", "--dry_run"],
        "clevr-math evaluate": ["--data", root / "W", "--out", out / "V"],
        "clotho-aqa synth": ["--out", out / "R"],
        "clotho-aqa demo": ["--out", out / "D"],
        "clotho-aqa splits": ["--data_dir", root / "rel", "--out", out / "S" / "splits.csv"],
        "clotho-aqa export": ["--data_dir", root / "rel", "--out", out / "E"],
        "clotho-aqa push": ["--folder", out / "E", "--repo_id", "a/b", "--dry_run"],
        "clotho-aqa evaluate": ["--data", root / "rel", "--out", out / "V"],
    }[command]
    return [*command.split()[1:], *map(str, base)]


def _main(command: str):
    from builder_utils.clevr.generate_questions import main as gq_main
    from builder_utils.clevr.synth import main as synth_main
    from clevr_math.cli import main as clevr_main
    from clotho_aqa.cli import main as clotho_main

    if command == "generate-questions":
        return gq_main
    if command == "clevr-math synth":
        return lambda argv: synth_main(argv[1:], prog="clevr-math synth")
    return clevr_main if command.startswith("clevr-math") else clotho_main


@pytest.mark.parametrize("command, flag, dest, above", NUMERIC_FLAGS,
                         ids=[f"{c} {f}" for c, f, _, _ in NUMERIC_FLAGS])
def test_every_numeric_flag_above_its_maximum_is_one_error_line(command, flag, dest, above, inputs, tmp_path, capsys):
    """Each flag, one above its maximum, on otherwise valid inputs: exit status 2 before any
    work, an error line naming the option, no traceback, nothing written."""
    if above is None:
        pytest.skip("no maximum (test_every_numeric_flag_declares_a_maximum fails)")
    argv = [*_argv(command, inputs, tmp_path), flag, str(above)]
    try:
        status = _main(command)(argv)
    except SystemExit as exit_:  # argparse's own error (a usage line, then the error line)
        status = exit_.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert status == 2, f"{command} {flag} {above}: status {status}\n{err[-2000:]}"
    assert "Traceback" not in err and len(errors) == 1 and dest in errors[0], err[-2000:]
    assert not any(p.is_file() for p in tmp_path.rglob("*")), "a refused run wrote something"


def _calls():
    """The Python APIs, each called one above (or far above) a declared maximum."""
    from builder_utils.clevr.options import GeneratorOptions
    from builder_utils.evaluation.accuracy import bootstrap_interval
    from clevr_math import Difficulty, stream
    from clotho_aqa.cli import compute_split_file
    from clotho_aqa.config import ClothoAQAConfig

    return {
        "stream(max_answer=10**7)": lambda tmp: stream(max_answer=10**7),
        "stream(num_shards=10**8)": lambda tmp: stream(num_shards=10**8),
        "stream(questions_per_image=10**6)": lambda tmp: stream(questions_per_image=10**6),
        "stream(seed=2**70)": lambda tmp: stream(seed=2**70),
        "Difficulty(max_answer=10**8)": lambda tmp: Difficulty(max_answer=10**8),
        "GeneratorOptions(max_answer=10**8)": lambda tmp: GeneratorOptions(max_answer=10**8),
        "GeneratorOptions(templates_per_image=10**9)": lambda tmp: GeneratorOptions(templates_per_image=10**9),
        "GeneratorOptions(search_budget=10**9)": lambda tmp: GeneratorOptions(search_budget=10**9),
        "ClothoAQAConfig(candidates=10**8)": lambda tmp: ClothoAQAConfig(name="all", candidates=10**8),
        "compute_split_file(candidates=10**8)": lambda tmp: compute_split_file(tmp / "rel", tmp / "s.csv",
                                                                               candidates=10**8),
        "bootstrap_interval(resamples=10**9)": lambda tmp: bootstrap_interval(1, 2, resamples=10**9),
        "write_clevr_folder(num_scenes=10**8)": lambda tmp: write_clevr_folder(tmp / "w", 10**8, seed=0),
        "write_synthetic_release(num_files=10**7)": lambda tmp: write_synthetic_release(tmp / "r", num_files=10**7),
        "write_synthetic_release(duration=1e9)": lambda tmp: write_synthetic_release(tmp / "r", duration=1e9),
    }


@pytest.mark.parametrize("call", list(_calls()), ids=str)
def test_every_python_api_size_is_bounded(call, tmp_path):
    with pytest.raises(ValueError) as refused:
        _calls()[call](tmp_path)
    assert "\n" not in str(refused.value) and ("must be" in str(refused.value)), str(refused.value)
    assert not any(tmp_path.iterdir()), "a refused call wrote something"


# --- cause 6: audio bombs and zip bombs, in every command that reads a release -----------------


def _silent(fmt: str, frames: int) -> bytes:
    """``frames`` frames of silence in ``fmt`` (FLAC or OGG): a few hundred KB that decode to far more."""
    out = io.BytesIO()
    with soundfile.SoundFile(out, "w", 44_100, 1, format=fmt, subtype="PCM_16" if fmt == "FLAC" else "VORBIS") as fh:
        block = np.zeros(1 << 20, dtype="float32")
        for _ in range(frames // len(block)):
            fh.write(block)
    return out.getvalue()


RELEASE_READERS = {
    "clotho-aqa export": lambda tmp: ["clotho-aqa", "export", "--data_dir", "rel", "--out", "E", "--config", "all",
                                      "--quiet", "--cache_dir", "cache"],
    "clotho-aqa export --audio_format flac": lambda tmp: ["clotho-aqa", "export", "--data_dir", "rel", "--out", "E",
                                                          "--config", "all", "--quiet", "--audio_format", "flac",
                                                          "--cache_dir", "cache"],
    "clotho-aqa evaluate": lambda tmp: ["clotho-aqa", "evaluate", "--data", "rel", "--out", "V", "--quiet",
                                        "--cache_dir", "cache"],
}


def _audio_bomb(fmt: str, reader):
    def setup(tmp: Path) -> list[str]:
        root = write_synthetic_release(tmp / "rel", num_files=3, seed=1).root
        clip = sorted((root / AUDIO_DIR).glob("*.wav"))[0]
        clip.write_bytes(_silent(fmt, 24 << 20))  # 48 MB of samples, named .wav
        assert clip.stat().st_size < 1_000_000
        return reader(tmp)
    return setup


def _zip_bomb(reader):
    def setup(tmp: Path) -> list[str]:
        root = write_synthetic_release(tmp / "rel", num_files=3, seed=1).root
        clips = sorted((root / AUDIO_DIR).iterdir())
        with zipfile.ZipFile(root / "audio_files.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            for clip in clips:
                archive.write(clip, f"{AUDIO_DIR}/{clip.name}")
            archive.writestr(f"{AUDIO_DIR}/padding.wav", bytes(64 << 20))  # 64 MB from 64 KB
        for clip in clips:
            clip.unlink()
        (root / AUDIO_DIR).rmdir()
        return reader(tmp)
    return setup


def _nothing_extracted(tmp: Path, done) -> None:
    _one_line(tmp, done)
    extracted = [p for p in (tmp / "cache").rglob("*") if p.is_file()] if (tmp / "cache").exists() else []
    assert sum(p.stat().st_size for p in extracted) < 16 << 20, "the bomb was extracted"


CAUSE_6_MEDIA = [
    *[Case(f"{reader}: a {fmt} of silence named .wav (an audio bomb)", setup=_audio_bomb(fmt, argv), exit_code=2,
           stderr_has="an audio bomb?", protected=["rel"], check=_one_line)
      for fmt in ("FLAC", "OGG") for reader, argv in RELEASE_READERS.items()],
    *[Case(f"{reader}: a release whose audio_files.zip is a zip bomb", setup=_zip_bomb(argv), exit_code=2,
           stderr_has="a zip bomb?", protected=["rel"], check=_nothing_extracted)
      for reader, argv in RELEASE_READERS.items()],
]


@pytest.mark.parametrize("case", CAUSE_6_MEDIA, ids=[case.name for case in CAUSE_6_MEDIA])
def test_cause_6_media_bombs(case, tmp_path):
    run_case(case, tmp_path)


# --- cause 6: records and templates bounded ------------------------------------------------------

RECORD_WRITERS = [c for c in (*COMMANDS, *EXTRA) if c.locks]
HOSTILE_RECORDS = {
    "nested 100,000 levels": "[" * 100_000 + "]" * 100_000,
    "a pending commit whose files are a number": json.dumps(
        {"format": "builder-utils-ownership", "version": 1, "files": [], "pending": {"staging": ".staging-x", "files": 5}}),
    "an entry whose group is a list": json.dumps(
        {"format": "builder-utils-ownership", "version": 1,
         "files": [{"path": "a", "size": 1, "sha256": "0" * 64, "command": "x", "group": [1]}]}),
}


def _record_folder(command: Command) -> str:
    return command.out if command.folder else str(Path(command.out).parent)


def _hostile_record(command: Command, text: str):
    def setup(tmp: Path) -> list[str]:
        command.prepare(tmp)
        folder = tmp / _record_folder(command)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / RECORD).write_text(text)
        return command.argv(command.out) + ([command.overwrite] if command.overwrite else [])
    return setup


CAUSE_6_RECORDS = [
    Case(f"{command.name}: a {RECORD} {kind}", setup=_hostile_record(command, text), exit_code=2,
         stderr_has=RECORD, protected=[os.path.normpath(f"{_record_folder(command)}/{RECORD}")], check=_one_line)
    for command in RECORD_WRITERS for kind, text in HOSTILE_RECORDS.items()
]


@pytest.mark.parametrize("case", CAUSE_6_RECORDS, ids=[case.name for case in CAUSE_6_RECORDS])
def test_cause_6_hostile_records(case, tmp_path):
    run_case(case, tmp_path)


def _template(nodes: int, chain: bool, fmt: str):
    """generate-questions on a template of ``nodes`` nodes, each the union of the one before with
    itself (a chain as deep as it is long) or of the scene with itself (wide and flat)."""
    def setup(tmp: Path) -> list[str]:
        scene_file(tmp)
        body = [{"type": "scene", "inputs": []}]
        body += [{"type": "union", "inputs": [k if chain else 0] * 2} for k in range(nodes - 2)]
        body.append({"type": "count", "inputs": [len(body) - 1]})
        (tmp / "tpl").mkdir()
        (tmp / "tpl" / "big.json").write_text(json.dumps([{"params": [], "text": ["How many?"], "nodes": body,
                                                            "constraints": []}]))
        return ["generate-questions", "--input_scene_file", "s.json", "--template_dir", "tpl",
                "--output_questions_file", "q", "--output_format", fmt]
    return setup


CAUSE_6_TEMPLATES = [
    Case(f"generate-questions --output_format {fmt} on a template of {nodes} nodes{' in one chain' * chain}",
         setup=_template(nodes, chain, fmt), exit_code=2, stderr_has=message, protected=["tpl"], check=_one_line)
    for fmt in ("json", "parquet")
    for nodes, chain, message in ((1000, True, "more than the 256 a template may have"),
                                  (1000, False, "more than the 256 a template may have"),
                                  (100, True, "deeper than the 64 a template may nest"))
]


@pytest.mark.parametrize("case", CAUSE_6_TEMPLATES, ids=[case.name for case in CAUSE_6_TEMPLATES])
def test_cause_6_template_size(case, tmp_path):
    run_case(case, tmp_path)


# --- cause 7: rewards --------------------------------------------------------------------------


def _rewards():
    """name -> (reward function, its column names): every reward of both datasets."""
    import clevr_math.rewards as clevr
    import clotho_aqa.rewards as clotho
    from clotho_aqa.scoring import RULES

    found = {"clevr_math.accuracy_reward": (clevr.accuracy_reward, ("answer",)),
             "clevr_math.format_reward": (clevr.format_reward, ()),
             "clotho_aqa.format_reward": (clotho.format_reward, ())}
    for labelling in RULES:
        found[f"clotho_aqa.accuracy_reward[{labelling}]"] = (clotho.make_accuracy_reward(labelling),
                                                             ("answers", "answer", "answer_type"))
    return found


REWARDS = _rewards()
GOOD = {"answer": "3", "answers": ["yes", "yes", "no"], "answer_type": "yes_no"}


def _bad_batches(columns: tuple[str, ...]):
    yield "completions a string", ("<answer>3</answer>",), {}
    yield "completions a dict", ({"role": "assistant", "content": "3"},), {}
    yield "completions None", (None,), {}
    for name in columns:
        yield f"{name} shorter", (["3", "3", "3"],), {name: [GOOD[name]]}
        yield f"{name} longer", (["3"],), {name: [GOOD[name]] * 2}
        yield f"{name} not a list", (["3"],), {name: GOOD[name] if name != "answers" else 7}


REWARD_ROWS = [(name, why, args, kwargs) for name, (_, columns) in REWARDS.items()
               for why, args, kwargs in _bad_batches(columns)]


@pytest.mark.parametrize("name, why, args, kwargs", REWARD_ROWS, ids=[f"{n}: {w}" for n, w, _, _ in REWARD_ROWS])
def test_cause_7_a_bad_batch_is_one_value_error_line(name, why, args, kwargs):
    reward = REWARDS[name][0]
    with pytest.raises(ValueError) as refused:
        reward(*args, **kwargs)
    assert "\n" not in str(refused.value) and reward.__name__ in str(refused.value), str(refused.value)


def test_cause_7_the_issue_s_example():
    from clevr_math.rewards import accuracy_reward

    with pytest.raises(ValueError, match="answer has 1 value"):
        accuracy_reward(["3", "3", "3"], answer=["3"])
    assert accuracy_reward(["3", "3", "3"], answer=["3", "3", "2"]) == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("dataset", ["clevr_math", "clotho_aqa"])
@pytest.mark.parametrize("solution, extra", [(["3"], None), (3, None), ("3", "labelling")],
                         ids=["solution a list", "solution a number", "extra_info a string"])
def test_cause_7_compute_score_refuses_wrong_types(dataset, solution, extra):
    import importlib

    compute_score = importlib.import_module(f"{dataset}.rewards").compute_score
    with pytest.raises(ValueError, match="compute_score: ") as refused:
        compute_score(dataset, solution, ["3"], extra)
    assert "\n" not in str(refused.value)


# --- cause 8: interrupts by construction, whatever the suite's own signals ----------------------


def _every_table() -> dict[str, list[Case]]:
    import test_safety_blender
    import test_safety_bounds
    import test_safety_builders
    import test_safety_evaluation
    import test_safety_generator
    import test_safety_hub
    import test_safety_hub_media
    import test_safety_matrix

    return {"bounds": test_safety_bounds.CASES + test_safety_bounds.STALE_CASES + test_safety_bounds.DASK_CASES,
            "builders": test_safety_builders.CASES, "evaluation": test_safety_evaluation.CASES,
            "generator": test_safety_generator.GENERATOR_CASES + test_safety_generator.SYNTH_CASES,
            "hub": test_safety_hub.CASES, "hub media": test_safety_hub_media.CASES,
            "matrix": test_safety_matrix.CASES, "blender": test_safety_blender.CASES,
            "causes": CAUSE_5 + CAUSE_6_MEDIA + CAUSE_6_RECORDS + CAUSE_6_TEMPLATES}


def test_every_interrupt_row_waits_at_a_named_point():
    """An interrupt sent when a file appears lands wherever the command is by then (or after it
    ended, on a fast machine): every row names the point where the command waits for it."""
    rows = [(table, getattr(row, "values", [row])[0]) for table, cases in _every_table().items() for row in cases]
    timed = [f"{table}: {case.name}" for table, case in rows if case.interrupt is not None and case.wait_at is None]
    assert not timed, f"interrupt rows that depend on timing: {timed}"
    assert sum(case.interrupt is not None for _, case in rows) >= 15


@pytest.fixture
def sigint_ignored():
    """The suite as a background job (``bash -c 'make test' &``, nohup): SIGINT ignored here."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["Ctrl-C", "SIGTERM"])
def test_an_interrupt_row_holds_when_the_suite_ignores_sigint(sigint_ignored, signum, status, tmp_path):
    case = Case("clotho-aqa synth interrupted at its commit, the suite ignoring SIGINT",
                setup=lambda tmp: ["clotho-aqa", "synth", "--out", "R", "--num_files", "20"],
                exit_code=status, stderr_has="interrupted", interrupt=signum, wait_at="commit",
                check=lambda tmp, done: not (tmp / "R" / "clotho_aqa_train.csv").exists() or pytest.fail("committed"))
    run_case(case, tmp_path)
