"""The safety rows of issue 37 (the third hostile pass), causes 1-5, 11-13 and its smaller items,
each written from the issue's description and run as a real command.

1. **The package's own files.** Every shipped file is an input of every command, from the
   installed location of every package the distribution ships, whatever the command imported.
2. **Defaults declared.** ``evaluate`` without ``--cache_dir`` falls back on the datasets cache
   (``HF_DATASETS_CACHE``): declared with the cache's role, refused inside the command's input;
   the temporary folder (``TMPDIR``) of every command is never inside an input.
3. **Created folders, as the kernel resolved them.** A failed command removes only the folders
   it made (``new/../u/x``: ``new`` and ``u/x``, never the user's ``u``).
4. **Push uploads what it checked.** A shard swapped for a symlink after the check is never uploaded.
5. **Every path option has a role.** ``--template_set DIR`` and ``released_questions_dir`` are
   inputs of ``evaluate``, ``export`` and ``demo``.
11-13 and the smaller items: bounded decoders (a predictions Parquet), one line for a corrupt
shard under ``evaluate --data EXPORT``, bounded label shortening (``tests/test_charts.py``),
one-line usage errors, and no ``dask-scratch-*`` / ``pymp-*`` left after the re-run of a
``--dask local`` run killed with ``kill -9``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import uuid
from pathlib import Path

import pytest
from safety_harness import Case, run_case
from test_safety_bounds import _one_line
from test_safety_generator import gq, scene_file

from builder_utils.ownership import RECORD, SHIPPED_PACKAGES

PACKAGES = {name: Path(importlib.util.find_spec(name).origin).parent for name in SHIPPED_PACKAGES}
PROBE = f".safety-probe-{uuid.uuid4().hex[:8]}"  # a name no shipped file has


def _package_state() -> dict[str, str]:
    """path -> sha256 of every file of every shipped package (no caches)."""
    state = {}
    for root in PACKAGES.values():
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                state[os.fspath(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


@pytest.fixture
def package_kept():
    """The shipped packages' files, restored (and anything new removed) whatever a row did:
    a row that fails on a broken guard must not leave the checkout changed."""
    saved = {path: Path(path).read_bytes() for path in _package_state()}
    before = set(saved)
    try:
        yield
    finally:
        for root in PACKAGES.values():  # only what a row names (another test may write meanwhile)
            for path in sorted(root.rglob("*"), reverse=True):
                if os.fspath(path) in before or not (PROBE in os.fspath(path) or path.name == RECORD):
                    continue
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
        for path, data in saved.items():
            if Path(path).read_bytes() != data:
                Path(path).write_bytes(data)


def _package_unchanged(before: dict[str, str]):
    def check(tmp: Path, done) -> None:
        assert "lies inside" in done.stderr or "same file" in done.stderr, done.stderr
        assert _package_state() == before, "a shipped file was written, replaced or added"
        assert not any((root / RECORD).exists() for root in PACKAGES.values())
    return check


def _release(tmp: Path) -> Path:
    from clotho_aqa.synth import write_synthetic_release

    return write_synthetic_release(tmp / "rel", num_files=3, seed=1).root


# --- cause 1: every shipped file is an input of every command ------------------------------------

def _into(package: str, name: str) -> str:
    return os.fspath(PACKAGES[package] / name)


CAUSE_1 = [
    # clotho-aqa splits imports clotho_aqa and builder_utils, never clevr_math
    ("clotho-aqa splits --out <clevr_math>/x.csv",
     lambda tmp: ["clotho-aqa", "splits", "--quiet", "--data_dir", str(_release(tmp)),
                  "--out", _into("clevr_math", f"{PROBE}.csv")]),
    # generate-questions imports builder_utils only
    ("generate-questions into clotho_aqa/",
     lambda tmp: gq("--input_scene_file", scene_file(tmp), "--output_questions_file",
                    _into("clotho_aqa", f"{PROBE}.json"), "--quiet")),
    ("clotho-aqa splits --out <dataset_cards>/x.csv",
     lambda tmp: ["clotho-aqa", "splits", "--quiet", "--data_dir", str(_release(tmp)),
                  "--out", _into("dataset_cards", f"{PROBE}.csv")]),
    ("generate-questions --overwrite onto a shipped card template",
     lambda tmp: gq("--input_scene_file", scene_file(tmp), "--output_questions_file",
                    _into("dataset_cards", "clevr_math.md"), "--overwrite", "--quiet")),
    ("clotho-aqa splits --overwrite onto clevr_math/README.md",
     lambda tmp: ["clotho-aqa", "splits", "--quiet", "--data_dir", str(_release(tmp)),
                  "--out", _into("clevr_math", "README.md"), "--overwrite"]),
    ("clotho-aqa synth --out <dataset_cards>/x",
     lambda tmp: ["clotho-aqa", "synth", "--num_files", "3", "--out", _into("dataset_cards", PROBE)]),
]


@pytest.mark.parametrize("name, setup", CAUSE_1, ids=[name for name, _ in CAUSE_1])
def test_cause_1_the_package_s_own_files_are_inputs_of_every_command(name, setup, package_kept, tmp_path):
    case = Case(name, setup, exit_code=2, check=_package_unchanged(_package_state()), timeout=120)
    done = run_case(case, tmp_path)
    _one_line(tmp_path, done)


# --- cause 3: what a failed command made, decided on the kernel's paths -----------------------------

def _through_dotdot(tmp: Path) -> list[str]:
    (tmp / "u").mkdir()
    (tmp / "kept").mkdir()
    return ["clotho-aqa", "splits", "--quiet", "--data_dir", str(tmp / "nonexistent"), "--out", "new/../u/x/s.csv"]


def _only_ours_removed(tmp: Path, done) -> None:
    assert (tmp / "u").is_dir(), "the user's empty folder was removed"
    assert not (tmp / "new").exists(), "the folder the command made was left behind"
    assert not (tmp / "u" / "x").exists(), "the folder the command made was left behind"


CAUSE_3 = [
    Case("a failed splits --out new/../u/x/s.csv removes new/ and u/x/, never the user's u/", _through_dotdot,
         exit_code=2, protected=["u", "kept"], check=_only_ours_removed),
]


@pytest.mark.parametrize("case", CAUSE_3, ids=[case.name for case in CAUSE_3])
def test_cause_3_created_folders_as_the_kernel_resolved_them(case, tmp_path):
    run_case(case, tmp_path)


# --- cause 2: every default a command falls back on is declared with its role -----------------------

def _evaluate_release(tmp: Path) -> list[str]:
    release = _release(tmp)
    (release / "tmp").mkdir()
    return ["clotho-aqa", "evaluate", "--quiet", "--data", str(release), "--config", "yes_no_majority",
            "--out", str(tmp / "V")]


def _splits_release(tmp: Path) -> list[str]:
    release = _release(tmp)
    (release / "tmp").mkdir()
    return ["clotho-aqa", "splits", "--quiet", "--data_dir", str(release), "--out", str(tmp / "S" / "splits.csv")]


CAUSE_2 = [
    Case("evaluate without --cache_dir, HF_DATASETS_CACHE inside --data", _evaluate_release, exit_code=2,
         stderr_has="lies inside --data", protected=["rel"], env={"HF_DATASETS_CACHE": "{tmp}/rel/hf_cache"}),
    Case("evaluate without --cache_dir, HF_DATASETS_CACHE is --data", _evaluate_release, exit_code=2,
         stderr_has="same file as --data", protected=["rel"], env={"HF_DATASETS_CACHE": "{tmp}/rel"}),
    Case("evaluate with TMPDIR inside --data", _evaluate_release, exit_code=2,
         stderr_has="the temporary folder (TMPDIR) lies inside --data", protected=["rel"],
         env={"TMPDIR": "{tmp}/rel/tmp", "HF_DATASETS_CACHE": "{tmp}/hf"}),
    Case("splits with TMPDIR inside --data_dir", _splits_release, exit_code=2,
         stderr_has="the temporary folder (TMPDIR) lies inside --data_dir", protected=["rel"],
         env={"TMPDIR": "{tmp}/rel/tmp"}),
]


@pytest.mark.parametrize("case", CAUSE_2, ids=[case.name for case in CAUSE_2])
def test_cause_2_defaults_are_declared_like_explicit_paths(case, tmp_path):
    _one_line(tmp_path, run_case(case, tmp_path))


def test_cause_2_the_evaluate_cache_default_is_the_datasets_cache(monkeypatch, tmp_path):
    from builder_utils.evaluation.cli import EvaluatePaths
    from builder_utils.options import path_values

    monkeypatch.setattr("datasets.config.HF_DATASETS_CACHE", tmp_path / "hf")
    declared = path_values(EvaluatePaths(data="d", out="o"))
    assert declared["cache"] == {"--cache_dir": str(tmp_path / "hf")}


# --- cause 5: every path option has a role, builder options included --------------------------------

def _template_folder(tmp: Path) -> Path:
    import shutil as copy

    from builder_utils.clevr.templates import template_set_dir

    copy.copytree(template_set_dir("clevr_math"), tmp / "T")
    return tmp / "T"


CAUSE_5 = [
    Case("clevr-math evaluate --template_set T --out T (the issue's example)",
         lambda tmp: ["clevr-math", "evaluate", "--quiet", "--data", str(tmp / "data"),
                      "--template_set", str(_template_folder(tmp)), "--out", str(tmp / "T"), "--overwrite"],
         exit_code=2, stderr_has="same file as --template_set", protected=["T"]),
    Case("clevr-math export --template_set T --out T/hub",
         lambda tmp: ["clevr-math", "export", "--quiet", "--data_dir", str(tmp / "data"),
                      "--template_set", str(_template_folder(tmp)), "--out", str(tmp / "T" / "hub")],
         exit_code=2, stderr_has="lies inside --template_set", protected=["T"]),
    Case("clevr-math evaluate --released_questions_dir R --out R/report",
         lambda tmp: (tmp / "R").mkdir() or ["clevr-math", "evaluate", "--quiet", "--data", str(tmp / "data"),
                                              "--released_questions_dir", str(tmp / "R"),
                                              "--out", str(tmp / "R" / "report")],
         exit_code=2, stderr_has="lies inside --released_questions_dir", protected=["R"]),
]


@pytest.mark.parametrize("case", CAUSE_5, ids=[case.name for case in CAUSE_5])
def test_cause_5_builder_options_that_are_paths_are_inputs(case, tmp_path):
    _one_line(tmp_path, run_case(case, tmp_path))


def test_cause_5_a_shipped_template_set_name_is_its_folder():
    from builder_utils.clevr.templates import template_set_dir
    from builder_utils.options import given_path_values
    from clevr_math.config import ClevrMathConfig

    assert given_path_values(ClevrMathConfig, {"template_set": "clevr_math_chains"}) == {
        "input_dir": {"--template_set": os.fspath(template_set_dir("clevr_math_chains"))}}


# --- cause 11: every decoder of user data is bounded before decoding: a predictions Parquet -------

def _dictionary_bomb(tmp: Path, megabytes: int, rows: int = 400, ranked: bool = False) -> Path:
    """A predictions Parquet of a few KB: one ``megabytes`` string, dictionary-encoded, in every row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    # made as a dictionary array: the rows are never expanded here either
    prediction = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["3" * (megabytes << 20)]))
    if ranked:
        prediction = pa.ListArray.from_arrays(pa.array(range(rows + 1), pa.int32()), prediction)
    path = tmp / "p.parquet"
    pq.write_table(pa.table({"question_id": [f"q{i}" for i in range(rows)], "prediction": prediction}), path,
                   compression="zstd")
    assert path.stat().st_size < 64 << 10
    return path


@pytest.mark.parametrize("megabytes, ranked", [(20, False), (10, False), (10, True)],
                         ids=["a 20 MB value (its page alone is over the bound)",
                              "a 10 MB value in 400 rows (the rows are)", "a ranked list of it"])
def test_cause_11_a_dictionary_bomb_of_predictions_is_refused_before_decoding(megabytes, ranked, tmp_path):
    from builder_utils.evaluation.predictions import PredictionsError, read_predictions

    path = _dictionary_bomb(tmp_path, megabytes, ranked=ranked)
    with pytest.raises(PredictionsError, match=r"p\.parquet: its rows decode to [\d,]+ bytes, more than"):
        read_predictions(path)


def test_cause_11_an_honest_predictions_parquet_is_read(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from builder_utils.evaluation.predictions import read_predictions

    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"question_id": ["q1", "q2", "q3"],
                             "prediction": pa.array(["3", "Answer: 4", None]).dictionary_encode()}), path)
    assert read_predictions(path) == {"q1": "3", "q2": "Answer: 4", "q3": None}
    pq.write_table(pa.table({"question_id": ["q1"], "prediction": [["yes", "no"]]}), path)
    assert read_predictions(path) == {"q1": ["yes", "no"]}


def test_cause_11_the_evaluate_command_refuses_it_in_one_line(tmp_path):
    case = Case("clotho-aqa evaluate --predictions <a dictionary bomb>",
                lambda tmp: ["clotho-aqa", "evaluate", "--quiet", "--data", str(tmp / "data"), "--predictions",
                             str(_dictionary_bomb(tmp, 10)), "--out", str(tmp / "V")],
                exit_code=2, stderr_has="decode to", protected=["p.parquet"])
    _one_line(tmp_path, run_case(case, tmp_path))


# --- cause 12: a corrupt shard under evaluate --data EXPORT is one line ----------------------------

@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    from builder_utils.clevr.synth import write_clevr_folder
    from builder_utils.hub import export_builder
    from clevr_math import ClevrMath
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    root = tmp_path_factory.mktemp("exports")
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 3, seed=0, splits=("train", "val", "test"), progress=False)
    release = write_synthetic_release(root / "release", num_files=8, seed=0).root
    export_builder(ClevrMath, root / "hub_clevr", card_template="clevr_math", data_dir=clevr, configs=["general"],
                   cache_dir=root / "cache", progress=False)
    export_builder(ClothoAQA, root / "hub_clotho", card_template="clotho_aqa", data_dir=release, configs=["all"],
                   cache_dir=root / "cache", progress=False)
    return {"hub_clevr": root / "hub_clevr", "hub_clotho": root / "hub_clotho"}


def _corrupted(exports: dict, hub: str, config: str, how: str):
    def setup(tmp: Path) -> list[str]:
        shutil.copytree(exports[hub], tmp / "hub")
        shard = sorted((tmp / "hub" / config).glob("test-*.parquet"))[0]
        raw = shard.read_bytes()
        if how == "truncated":
            shard.write_bytes(raw[: len(raw) // 2])
        else:  # the pages overwritten, the footer kept: only reading the rows finds it
            footer = int.from_bytes(raw[-8:-4], "little") + 8
            middle = len(raw) - footer
            shard.write_bytes(raw[:4] + bytes(middle - 4) + raw[middle:])
        dataset = "clevr-math" if hub == "hub_clevr" else "clotho-aqa"
        return [dataset, "evaluate", "--quiet", "--data", str(tmp / "hub"), "--config", config,
                "--out", str(tmp / "V"), "--cache_dir", str(tmp / "cache")]
    return setup


CAUSE_12 = [(hub, config, how) for hub, config in (("hub_clevr", "general"), ("hub_clotho", "all"))
            for how in ("truncated", "pages overwritten")]


@pytest.mark.parametrize("hub, config, how", CAUSE_12, ids=[f"{h} {c} {how}" for h, c, how in CAUSE_12])
def test_cause_12_a_corrupt_shard_under_evaluate_is_one_line(exports, hub, config, how, tmp_path):
    case = Case(f"evaluate --data EXPORT with a {how} shard", _corrupted(exports, hub, config, how), exit_code=2,
                stderr_has="parquet", protected=["hub"])
    done = run_case(case, tmp_path)
    _one_line(tmp_path, done)
    assert "re-export" in done.stderr


# --- cause 4: push hands the Hub exactly the bytes it checked --------------------------------------

class _SwappingHub:
    """The few ``HfApi`` calls push makes, over an empty repository (no Hub runs offline); listing
    the remote tree, after push checked the folder and before any commit, swaps one shard for a
    symlink to a file outside the export, as an attacker racing the push would."""

    endpoint = "https://hub.invalid"

    def __init__(self, shard: Path, secret: Path):
        self.shard, self.secret, self.uploaded = shard, secret, {}

    def api(self, token=None, endpoint=None):
        return self

    def create_repo(self, repo_id, **kwargs):
        pass

    def list_repo_tree(self, repo_id, **kwargs):
        self.shard.unlink()
        self.shard.symlink_to(self.secret)
        return iter(())

    def create_commit(self, repo_id, operations, **kwargs):
        import types

        from huggingface_hub import CommitOperationAdd

        for op in operations:
            if isinstance(op, CommitOperationAdd):
                source = op.path_or_fileobj
                self.uploaded[op.path_in_repo] = (source if isinstance(source, bytes) else
                                                  Path(source).read_bytes() if isinstance(source, str) else source.read())
        return types.SimpleNamespace(commit_url="https://hub.invalid/commit/1", pr_url=None, pr_revision=None)


def test_cause_4_a_shard_swapped_for_a_symlink_after_the_check_is_never_uploaded(exports, monkeypatch, tmp_path):
    import huggingface_hub

    from builder_utils.hub.push import PushError, push_folder

    folder = tmp_path / "hub"
    shutil.copytree(exports["hub_clotho"], folder)
    shard = sorted(folder.glob("all/*.parquet"))[0]
    secret = tmp_path / "secret.parquet"
    secret.write_bytes(b"PAR1 the user's secret, never uploaded PAR1")
    hub = _SwappingHub(shard, secret)
    monkeypatch.setattr(huggingface_hub, "HfApi", hub.api)
    with pytest.raises(PushError, match=rf"{shard.name}: cannot be read as the file we wrote \(a symlink\)"):
        push_folder(folder, "me/clotho-aqa", token="hf_x")
    assert all(secret.read_bytes() not in data for data in hub.uploaded.values())


# --- smaller: a usage error is one line, the error and a pointer to --help ---------------------------

USAGE_ERRORS = [
    ["clevr-math", "nope"],                                             # an invalid subcommand
    ["clevr-math", "export", "--no_such_flag"],                         # an unknown flag of a subcommand
    ["clotho-aqa", "export", "--out", "E", "--media", "nope"],          # an invalid choice
    ["clotho-aqa", "splits"],                                           # a missing required flag
    ["clotho-aqa", "evaluate", "--data", "d", "--out", "o", "--bootstrap", "x"],  # a bad value
    ["generate-questions", "--no_such_flag"],
    ["generate-questions", "--input_scene_file", "s.json", "--templates", "nope"],
    ["clevr-math", "synth", "--out", "W", "--splits"],                  # a flag without its value
]


@pytest.mark.parametrize("argv", USAGE_ERRORS, ids=" ".join)
def test_a_usage_error_is_one_line_pointing_to_help(argv, tmp_path):
    case = Case(" ".join(argv), lambda tmp: list(argv), exit_code=2, stderr_has="--help")
    done = run_case(case, tmp_path)
    _one_line(tmp_path, done)
    assert "usage:" not in done.stderr


# --- smaller: after kill -9 of a --dask local run, the re-run leaves no scratch behind --------------

def _dask_commands(tmp: Path) -> dict[str, list[str]]:
    scene_file(tmp, count=40)
    return {"generate-questions": gq("--input_scene_file", "s.json", "--output_questions_file", "q.json",
                                     "--dask", "local", "--num_workers", "2", "--quiet"),
            "clevr-math synth": ["clevr-math", "synth", "--out", str(tmp / "W"), "--num_scenes", "6", "--splits", "val",
                                 "--dask", "local", "--num_proc", "2", "--quiet"]}


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None, reason="needs the dask extra")
@pytest.mark.parametrize("command", ["generate-questions", "clevr-math synth"])
def test_kill_9_of_a_dask_local_run_leaves_no_scratch_after_the_re_run(command, monkeypatch, tmp_path):
    from safety_harness import kill_at

    import tempfile

    # a short temporary folder: under a deep one (pytest-xdist's) the socket folder goes to /tmp
    # itself, where other jobs' folders make its emptiness no proof
    temporary = Path(tempfile.mkdtemp(prefix="t37-", dir="/tmp"))
    run = tmp_path / "run"  # beside the temporary folder: the harness's snapshot reads no socket
    run.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))  # the killed run's and the re-run's
    try:
        argv = _dask_commands(run)[command]
        kill_at(run, argv, point="dask-cluster-up")
        left = sorted(p.name for p in temporary.iterdir())
        assert any(name.startswith("dask-scratch-") for name in left) and any(name.startswith("pymp-") for name in left)
        run_case(Case(f"{command} re-run after kill -9", lambda tmp: argv, exit_code=0), run)
        assert not list(temporary.iterdir()), sorted(p.name for p in temporary.iterdir())
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def test_a_dead_staging_marker_removes_only_declared_scratch_of_ours(monkeypatch, tmp_path):
    """The marker lies in the output folder, where others may write: it can name nothing but a
    scratch-named folder directly in the temporary folder, not a symlink."""
    import json

    from builder_utils.ownership import MARKER, OutputFolder

    temporary, user = tmp_path / "tmp", tmp_path / "user"
    (user / "pymp-mine").mkdir(parents=True)
    (temporary / "dask-scratch-dead" / "x").mkdir(parents=True)
    (temporary / "notes").mkdir()
    (temporary / "pymp-link").symlink_to(user)
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    out = tmp_path / "out"
    (out / ".staging-dead").mkdir(parents=True)
    listed = [str(temporary / "dask-scratch-dead"), str(user), str(user / "pymp-mine"), str(temporary / "notes"),
              str(temporary / "pymp-link"), str(temporary / "x" / ".." / "pymp-link"), "relative/pymp-x"]
    (out / ".staging-dead" / MARKER).write_text(json.dumps({"pid": 1, "command": "x", "scratch": listed}))
    with OutputFolder.open(out, command="x"):
        pass
    assert not (temporary / "dask-scratch-dead").exists() and not (out / ".staging-dead").exists()
    assert (user / "pymp-mine").is_dir() and (temporary / "notes").is_dir() and (temporary / "pymp-link").is_symlink()


def test_cause_5_every_path_option_declares_its_role():
    """Every option checked as a path (``FilePath``), and the template set, names its role, in
    every declaration of the declared-path matrix and in both builders' configurations."""
    import dataclasses

    from test_safety_declared import COMMANDS

    from builder_utils.options import FilePath
    from clevr_math.config import ClevrMathConfig
    from clotho_aqa.config import ClothoAQAConfig

    classes = {cls for command in COMMANDS for cls in command.declarations} | {ClevrMathConfig, ClothoAQAConfig}
    without = [f"{cls.__name__}.{f.name}" for cls in classes for f in dataclasses.fields(cls)
               if "generator_option" in f.metadata and f.metadata["generator_option"]["role"] is None
               and (isinstance(f.metadata["generator_option"]["check"], FilePath) or f.name == "template_set")]
    assert without == []
