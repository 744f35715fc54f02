"""The start-up budget (issue 24): a command that builds no dataset imports none of the heavy
libraries. ``datasets`` alone costs about a second here, half of a 200-scene ``generate-questions``
run. Counted, not timed: the real console script runs with ``-X importtime``
(``PYTHONPROFILEIMPORTTIME``) and the modules it imported are listed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder_utils.clevr.synth import generate_scenes

# What a command that builds no dataset must not import (each costs 0.1-1 s of start-up).
HEAVY = ("datasets", "pyarrow", "PIL", "numpy", "pandas", "huggingface_hub", "soundfile", "distributed", "dask")


def script(name: str) -> str:
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


# Light but not needed by a plain JSON run in one process (together ~12 ms of its start-up):
# Dask's task ids (uuid, which loads platform), package-resource readers (zipfile), secrets.
# (hashlib is needed: the output folder's record holds the sha256 of the file written.)
LAZY = ("uuid", "platform", "importlib.resources", "zipfile", "secrets")


def imported(argv: list[str], cwd: Path) -> set[str]:
    """Top-level names of every module the command imported (it must succeed)."""
    return {name.split(".")[0] for name in imported_modules(argv, cwd)}


def imported_modules(argv: list[str], cwd: Path) -> set[str]:
    """Full names of every module the command imported (it must succeed)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    done = subprocess.run([script(argv[0]), *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    names = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert len(names) > 20, "no -X importtime report: the test would prove nothing"
    return set(names)


@pytest.fixture(scope="module")
def scene_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("startup") / "s.json"
    path.write_text(json.dumps({"info": {"split": "val"}, "scenes": generate_scenes(8, seed=3, split="val")}))
    return path


@pytest.mark.parametrize("templates", ["clevr_math", "clevr"])
def test_generate_questions_imports_no_heavy_library(scene_path, tmp_path, templates):
    found = imported(["generate-questions", "--templates", templates, "--input_scene_file", str(scene_path),
                      "--output_questions_file", str(tmp_path / "q.json")], tmp_path)
    assert (tmp_path / "q.json").exists()
    assert not found & set(HEAVY), sorted(found & set(HEAVY))


def test_a_json_run_in_one_process_leaves_the_light_extras_unimported(scene_path, tmp_path):
    found = imported_modules(["generate-questions", "--templates", "clevr_math", "--input_scene_file", str(scene_path),
                              "--output_questions_file", str(tmp_path / "q.json")], tmp_path)
    assert "builder_utils.clevr.generate" in found and (tmp_path / "q.json").exists()
    assert not found & set(LAZY), sorted(found & set(LAZY))


def test_generate_questions_parquet_needs_pyarrow_only(scene_path, tmp_path):
    """Parquet needs pyarrow (whose ``pa.array`` itself imports numpy and, if installed, pandas)."""
    found = imported(["generate-questions", "--input_scene_file", str(scene_path), "--output_format", "parquet",
                      "--output_questions_file", str(tmp_path / "q")], tmp_path)
    assert "pyarrow" in found
    assert not found & (set(HEAVY) - {"pyarrow", "numpy", "pandas"}), sorted(found & set(HEAVY))


def test_generate_questions_help_imports_no_heavy_library(tmp_path):
    assert not imported(["generate-questions", "--help"], tmp_path) & set(HEAVY)


def test_progress_setting_is_read_without_datasets(tmp_path):
    """The progress-bar switch leaves a library unimported and sets its variable for the block."""
    code = ("import os, sys; from builder_utils.cli_support import progress_bars\n"
            "with progress_bars(False):\n"
            "    inside = os.environ.get('HF_DATASETS_DISABLE_PROGRESS_BARS')\n"
            "print(inside, 'HF_DATASETS_DISABLE_PROGRESS_BARS' in os.environ, 'datasets' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_DISABLE_PROGRESS_BARS")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["1", "False", "False"]


@pytest.mark.parametrize("argv", [["clevr-math", "--help"], ["clotho-aqa", "--help"], ["clotho-aqa", "synth", "--help"],
                                  ["clevr-math", "push", "--help"], ["clotho-aqa", "splits", "--help"]])
def test_a_commands_listing_and_light_subcommands_import_no_heavy_library(argv, tmp_path):
    """Only the subcommand that runs is built: the listing never imports a builder or the hub."""
    found = imported(argv, tmp_path)
    assert not found & set(HEAVY), sorted(found & set(HEAVY))


def test_the_split_search_imports_numpy_but_no_dataset_library(tmp_path):
    """``clotho-aqa splits`` builds no dataset: its options come from ``clotho_aqa.options``, not the builder config."""
    from clotho_aqa.synth import write_synthetic_release

    write_synthetic_release(tmp_path / "rel", num_files=5, seed=0)
    found = imported(["clotho-aqa", "splits", "--data_dir", "rel", "--out", "s.csv", "--candidates", "4", "--quiet"],
                     tmp_path)
    assert (tmp_path / "s.csv").read_text().startswith("file_name,split\n")
    assert found & set(HEAVY) == {"numpy"}, sorted(found & set(HEAVY))
