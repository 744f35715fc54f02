"""The safety matrix of issue 20: every attack applied to every writing command.

:data:`COMMANDS` is the table of commands (how to make their inputs, their command line for an
output path, which of their files to use as "one of our names"); :data:`ATTACKS` is the table
of attacks, each turning a command into a :class:`safety_harness.Case` (or ``None`` when it
does not apply: a command with no input cannot have its output equal to one). A new command
gets every row by being added to :data:`COMMANDS`.

Attacks: a NUL/newline in the output name; output = an input; output inside / containing an input; a symlinked output or
sub-folder; a record with a traversal or absolute path; a user file at one of our names; a
user file inside our folder, then a re-run (with ``--overwrite`` where the command has it);
``kill -9``, then a re-run; SIGTERM mid-run; a read-only folder; two writers at once; and, as
root, a full disk on a small tmpfs (skipped when not root or when the mount fails).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from safety_harness import Case, kill_at, run, run_case, script

from builder_utils.clevr.synth import generate_scenes

RECORD = ".ownership.json"
INFO = {"split": "val", "license": "CC BY 4.0", "version": "1.0", "date": "1/1/2026"}
PACKAGE = Path(__file__).resolve().parents[2] / "builder_utils" / "clevr"


def _scenes(tmp: Path, count: int) -> None:
    base = generate_scenes(50, seed=5, split="val")
    scenes = [dict(base[k % 50], image_index=k, image_filename=f"CLEVR_val_{k:06d}.png") for k in range(count)]
    (tmp / "in").mkdir(exist_ok=True)
    (tmp / "in" / "s.json").write_text(json.dumps({"info": INFO, "scenes": scenes}))


def _generator_inputs(count: int):
    def prepare(tmp: Path) -> None:
        _scenes(tmp, count)
        shutil.copy(PACKAGE / "metadata.json", tmp / "in" / "meta.json")
        shutil.copy(PACKAGE / "synonyms.json", tmp / "in" / "syn.json")
        shutil.copytree(PACKAGE / "templates" / "clevr_math", tmp / "in" / "tpl")
    return prepare


def _release(num_files: int = 5, duration: float = 0.2):
    def prepare(tmp: Path) -> None:
        from clotho_aqa.synth import write_synthetic_release

        (tmp / "in").mkdir(exist_ok=True)
        write_synthetic_release(tmp / "in" / "rel", num_files=num_files, seed=1, duration=duration)
    return prepare


def _release_and_predictions(tmp: Path) -> None:
    import csv

    from clotho_aqa.release import SPLIT_CSVS

    _release()(tmp)
    with open(tmp / "in" / "rel" / SPLIT_CSVS["test"], encoding="utf-8", newline="") as fh:
        clip = next(csv.DictReader(fh))["file_name"]
    (tmp / "in" / "p.jsonl").write_text(json.dumps({"question_id": f"{clip}#0", "prediction": "yes"}) + "\n")


@dataclasses.dataclass(frozen=True)
class Command:
    """One writing command of the matrix.

    ``argv(out)`` is its command line writing to ``out`` (a path relative to the test folder,
    where ``prepare`` made the inputs, all under ``in/``); ``long_argv`` a run that writes enough
    to fill a small disk (the full-disk row; None: ``argv``). ``inputs``: paths of its inputs (under
    ``in/``); ``folder``: whether ``out`` is a folder (else a file, whose folder is its parent);
    ``ours``: a file it writes, relative to the output folder; ``overwrite``: its overwrite flag;
    ``locks``: whether it holds the output folder's lock; ``disk_kb``: a tmpfs size it cannot
    fit in (None: no full-disk row).
    """

    name: str
    prepare: Callable[[Path], None]
    argv: Callable[[str], list[str]]
    out: str
    inputs: tuple[str, ...] = ()
    folder: bool = True
    ours: str = ""
    overwrite: str | None = None
    long_argv: Callable[[str], list[str]] | None = None
    locks: bool = True
    disk_kb: int | None = None


def _gq(fmt: str, count_flag: tuple[str, ...] = ()):
    def argv(out: str) -> list[str]:
        return ["generate-questions", "--input_scene_file", "in/s.json", "--metadata_file", "in/meta.json",
                "--synonyms_json", "in/syn.json", "--template_dir", "in/tpl", "--output_questions_file", out,
                "--output_format", fmt, "--quiet", *count_flag]
    return argv


def _gq_long(fmt: str):
    def argv(out: str) -> list[str]:
        _scenes_big = ["--input_scene_file", "in/big.json"]
        return ["generate-questions", *_scenes_big, "--output_questions_file", out, "--output_format", fmt,
                "--reset_counts_every", "25", "--scenes_per_shard", "100", "--quiet"]
    return argv


def _gq_prepare(tmp: Path) -> None:
    _generator_inputs(6)(tmp)
    base = json.loads((tmp / "in" / "s.json").read_text())
    big = [dict(base["scenes"][k % 6], image_index=k, image_filename=f"CLEVR_val_{k:06d}.png") for k in range(1500)]
    (tmp / "in" / "big.json").write_text(json.dumps({"info": INFO, "scenes": big}))


COMMANDS = [
    Command("generate-questions json", _gq_prepare, _gq("json"), "q.json",
            inputs=("in/s.json", "in/meta.json", "in/syn.json", "in/tpl"), folder=False, ours="q.json",
            overwrite="--overwrite", long_argv=_gq_long("json"), disk_kb=64),
    Command("generate-questions parquet", _gq_prepare, _gq("parquet"), "Q",
            inputs=("in/s.json", "in/meta.json", "in/syn.json", "in/tpl"), ours="index.json",
            overwrite="--overwrite", long_argv=_gq_long("parquet"), disk_kb=64),
    Command("clevr-math synth", lambda tmp: None,
            lambda out: ["clevr-math", "synth", "--out", out, "--num_scenes", "val=2", "--quiet"], "W",
            ours="scenes/CLEVR_val_scenes.json", overwrite="--overwrite",
            long_argv=lambda out: ["clevr-math", "synth", "--out", out, "--num_scenes", "val=3000", "--quiet"],
            disk_kb=256),
    Command("clotho-aqa synth", lambda tmp: None,
            lambda out: ["clotho-aqa", "synth", "--out", out, "--num_files", "3"], "R",
            ours="clotho_aqa_train.csv", overwrite="--overwrite",
            long_argv=lambda out: ["clotho-aqa", "synth", "--out", out, "--num_files", "400", "--duration", "2"],
            disk_kb=64),
    Command("clotho-aqa splits", _release(),
            lambda out: ["clotho-aqa", "splits", "--data_dir", "in/rel", "--out", out, "--candidates", "20",
                         "--keep", "5", "--quiet"], "S/splits.csv",
            inputs=("in/rel",), folder=False, ours="splits.csv", overwrite="--overwrite"),
    Command("clotho-aqa evaluate", _release_and_predictions,
            lambda out: ["clotho-aqa", "evaluate", "--data", "in/rel", "--predictions", "in/p.jsonl", "--out", out,
                         "--bootstrap", "10", "--quiet"], "V",
            inputs=("in/rel", "in/p.jsonl"), ours="report.json", overwrite="--overwrite"),
    Command("clotho-aqa export", _release(),
            lambda out: ["clotho-aqa", "export", "--data_dir", "in/rel", "--out", out, "--config", "all", "--quiet"],
            "E", inputs=("in/rel",), ours="all/train-00000-of-00001.parquet",
            long_argv=None, disk_kb=64),
]


# ------------------------------------------------------------------ helpers of the attacks


def _run(tmp: Path, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    return run([script(argv[0]), *argv[1:]], cwd=tmp, **kwargs)


def _folder_of(command: Command) -> str:
    return command.out if command.folder else Path(command.out).parent.as_posix()


def _our_path(command: Command) -> str:
    return os.path.normpath(f"{_folder_of(command)}/{command.ours}")


def _first_run(command: Command, tmp: Path) -> None:
    done = _run(tmp, command.argv(command.out))
    assert done.returncode == 0, done.stderr


def _no_output(command: Command):
    def check(tmp: Path, done) -> None:
        assert not (tmp / _our_path(command)).exists(), "an interrupted run left an output"
        assert "Traceback" not in done.stderr, done.stderr
    return check


# ------------------------------------------------------------------ the attacks


def output_is_an_input(command: Command) -> list[Case]:
    cases = []
    for given in command.inputs:
        cases.append(Case(f"{command.name}: output = input {given}",
                          lambda tmp, c=command, t=given: (c.prepare(tmp), c.argv(t))[1],
                          exit_code=2, protected=["in"]))
    return cases


def output_inside_an_input(command: Command) -> list[Case]:
    folders = [g for g in command.inputs if not Path(g).suffix]
    cases = [Case(f"{command.name}: output inside input {given}",
                  lambda tmp, c=command, g=given: (c.prepare(tmp), c.argv(f"{g}/{Path(c.out).name}"))[1],
                  exit_code=2, stderr_has="lies inside", protected=["in"]) for given in folders]
    if command.inputs and command.folder:
        cases.append(Case(f"{command.name}: output contains the inputs",
                          lambda tmp, c=command: (c.prepare(tmp), c.argv("in"))[1],
                          exit_code=2, stderr_has="contains", protected=["in"]))
    return cases


def _elsewhere(tmp: Path) -> Path:
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere" / "secret.txt").write_text("outside the output")
    return tmp / "elsewhere"


def symlinked_output(command: Command) -> list[Case]:
    def setup(tmp: Path, c=command) -> list[str]:
        c.prepare(tmp)
        target = _elsewhere(tmp)
        if c.folder:
            (tmp / c.out).symlink_to(target)
        else:
            (tmp / _folder_of(c)).mkdir(parents=True, exist_ok=True)
            (tmp / c.out).symlink_to(target / "secret.txt")
        return c.argv(c.out)
    cases = [Case(f"{command.name}: symlinked output", setup, exit_code=2, stderr_has="symlink",
                  protected=["elsewhere"])]
    sub = Path(command.ours).parent
    if command.folder and sub != Path("."):
        def sub_setup(tmp: Path, c=command) -> list[str]:
            c.prepare(tmp)
            (tmp / c.out).mkdir()
            (tmp / c.out / sub.as_posix()).symlink_to(_elsewhere(tmp))
            argv = c.argv(c.out)
            return argv + ([c.overwrite] if c.overwrite else [])
        cases.append(Case(f"{command.name}: symlinked sub-folder {sub}/", sub_setup, exit_code=2,
                          stderr_has="symlink", protected=["elsewhere"]))
    return cases


def crafted_record(command: Command) -> list[Case]:
    if not command.locks:
        return []  # no record
    cases = []
    for name, path in (("traversal", "../victim.txt"), ("absolute", "/etc/hostname")):
        def setup(tmp: Path, c=command, path=path) -> list[str]:
            c.prepare(tmp)
            (tmp / "victim.txt").write_text("the user's")
            folder = tmp / _folder_of(c)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / RECORD).write_text(json.dumps({"format": "builder-utils-ownership", "version": 1, "files": [
                {"path": path, "size": 10, "sha256": "0" * 64, "command": "x", "group": None}]}))
            return c.argv(c.out) + ([c.overwrite] if c.overwrite else [])
        cases.append(Case(f"{command.name}: record with a {name} path", setup, exit_code=2,
                          stderr_has="nothing in it is ours",
                          protected=["victim.txt", _folder_of(command) if _folder_of(command) != "." else RECORD]))
    return cases


def user_file_at_our_name(command: Command) -> list[Case]:
    def setup(tmp: Path, c=command) -> list[str]:
        c.prepare(tmp)
        target = tmp / _our_path(c)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("the user's own file at one of our names")
        return c.argv(c.out)
    return [Case(f"{command.name}: a user file at one of our names", setup, exit_code=2,
                 protected=[_our_path(command)])]


def user_file_inside_then_rerun(command: Command) -> list[Case]:
    cases = []
    for flag in dict.fromkeys([None, command.overwrite]):
        def setup(tmp: Path, c=command, flag=flag) -> list[str]:
            c.prepare(tmp)
            _first_run(c, tmp)
            folder = tmp / _folder_of(c)
            (folder / "mine.txt").write_text("the user's")  # beside our output (in our folder)
            sub = (tmp / _our_path(c)).parent
            (sub / "mine-too.txt").write_text("the user's, inside our sub-folder")
            return c.argv(c.out) + ([flag] if flag else [])
        cases.append(Case(f"{command.name}: a user file inside our folder, then a re-run{' ' + flag if flag else ''}",
                          setup, exit_code=0,
                          protected=[os.path.normpath(f"{_folder_of(command)}/mine.txt"),
                                     os.path.normpath(f"{Path(_our_path(command)).parent}/mine-too.txt")]))
    return cases


def kill_then_rerun(command: Command) -> list[Case]:
    def setup(tmp: Path, c=command) -> list[str]:
        c.prepare(tmp)
        kill_at(tmp, c.argv(c.out), timeout=120)  # everything staged, nothing moved
        return c.argv(c.out) + ([c.overwrite] if c.overwrite else [])
    return [Case(f"{command.name}: kill -9, then a re-run", setup, exit_code=0, timeout=180)]


def sigterm_mid_run(command: Command) -> list[Case]:
    # at the commit's start (everything staged, nothing moved): by construction, so any run will do
    return [Case(f"{command.name}: SIGTERM mid-run", lambda tmp, c=command: (c.prepare(tmp), c.argv(c.out))[1],
                 exit_code=143, interrupt=signal.SIGTERM, wait_at="commit",
                 check=_no_output(command), timeout=180)]


def two_writers(command: Command) -> list[Case]:
    if not command.locks:
        return []

    def setup(tmp: Path, c=command) -> list[str]:
        c.prepare(tmp)
        folder = tmp / _folder_of(c)
        folder.mkdir(parents=True, exist_ok=True)
        holder = subprocess.Popen([sys.executable, "-c", (
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(folder)!r}, os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('locked', flush=True); time.sleep(60)")], stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline() == "locked\n"
        (tmp / "holder.pid").write_text(str(holder.pid))
        return c.argv(c.out)

    def check(tmp: Path, done) -> None:
        os.kill(int((tmp / "holder.pid").read_text()), signal.SIGKILL)
    return [Case(f"{command.name}: two writers at once", setup, exit_code=2, stderr_has="another command is writing",
                 check=check)]


def newline_in_output(command: Command) -> list[Case]:
    name = Path(command.out)
    bad = (name.parent / f"a\nb{name.suffix}").as_posix()
    return [Case(f"{command.name}: an output name with a newline", lambda tmp, c=command: (c.prepare(tmp), c.argv(bad))[1],
                 exit_code=2, stderr_has="holds a NUL or newline character")]


ATTACKS = [newline_in_output, output_is_an_input, output_inside_an_input, symlinked_output, crafted_record, user_file_at_our_name,
           user_file_inside_then_rerun, kill_then_rerun, sigterm_mid_run, two_writers]
CASES = [case for command in COMMANDS for attack in ATTACKS for case in attack(command)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matrix(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)


# ------------------------------------------------- the disk rows: read-only and full (as root)


def _mount(where: Path, options: str) -> None:
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
@pytest.mark.parametrize("disk", ["read-only", "full"])
def test_disk(command: Command, disk: str, tmp_path: Path) -> None:
    if disk == "full" and command.disk_kb is None:
        pytest.skip(f"{command.name} writes too little to fill a tmpfs page")
    mount = tmp_path / "disk"
    _mount(mount, "ro,size=1m" if disk == "read-only" else f"size={command.disk_kb}k")
    try:
        case = Case(f"{command.name} on a {disk} disk",
                    lambda tmp, c=command: (c.prepare(tmp), (c.long_argv if disk == "full" and c.long_argv else c.argv)(
                        f"disk/{c.out}"))[1],
                    exit_code=2, stderr_has="read-only file system" if disk == "read-only" else "no space left on device",
                    protected=["in"] if command.inputs else [], timeout=180)
        done = run_case(case, tmp_path)
        assert len(done.stderr.strip().splitlines()) >= 1 and "Traceback" not in done.stderr
        assert not os.listdir(mount), f"left behind on the {disk} disk: {os.listdir(mount)}"
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)
