"""The lmms-eval task folders without lmms-eval: names, written copies, imports, per-sample records.

Real exports of both datasets (the real builders, Parquet read back with ``datasets``); the
records of ``process_results`` are compared with ``evaluate`` and the rewards on the same
predictions. The run inside lmms-eval itself is tests/test_lmms_eval_harness.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from builder_utils.evaluation.lmms import mean_score, task_files
from builder_utils.hub import load_exported
from builder_utils.ownership import RECORD
from clevr_math import evaluation as math_eval
from clevr_math import lmms_eval as math_tasks
from clevr_math import rewards as math_rewards
from clevr_math.lmms_eval import utils as math_utils
from clotho_aqa import evaluation as aqa_eval
from clotho_aqa import lmms_eval as aqa_tasks
from clotho_aqa import rewards as aqa_rewards
from clotho_aqa.lmms_eval import utils as aqa_utils
from evaluation_exports import make_exports
from evaluation_exports import media_free_rows as _rows  # the test rows without their media

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = ROOT / "tests" / "data" / "lmms_eval" / "builtin_tasks_0.7.3.json"
PACKAGES = [(math_tasks, math_utils), (aqa_tasks, aqa_utils)]


class _TaskLoader(yaml.SafeLoader):
    """Reads lmms-eval YAML: ``!function utils.name`` becomes ``("function", "utils.name")``."""


_TaskLoader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))


def _yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_TaskLoader)


def _task_configs(package) -> list[dict]:
    template = _yaml(package.TASK_DIR / "_default_template_yaml")
    return [{**template, **_yaml(p)} for p in task_files(package.TASK_DIR) if p.suffix == ".yaml"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_exports(tmp_path_factory.mktemp("lmms"))


# --- names -------------------------------------------------------------------------------

def test_no_task_or_tag_of_ours_is_a_builtin_lmms_eval_name():
    builtin = json.loads(BUILTIN.read_text(encoding="utf-8"))
    taken = set(builtin["task_folders"]) | set(builtin["names"])
    # the fixture is lmms-eval's real index: its own clotho_aqa group, the name our tag had
    assert {"clotho_aqa", "clotho_aqa_test", "mmmu"} <= taken and len(builtin["task_folders"]) > 300
    ours = {}
    for package, _ in PACKAGES:
        for config in _task_configs(package):
            ours[config["task"]] = "task"
            ours[config["tag"]] = "tag"
        assert {c["tag"] for c in _task_configs(package)} == {package.TAG}
    assert set(ours) == {"clevr_math_general", "clevr_math_multihop", "clotho_aqa_questions",
                         "ccqa_clevr_math", "ccqa_clotho_aqa"}
    assert not set(ours) & taken, sorted(set(ours) & taken)


# --- the shipped YAML and the written copies ---------------------------------------------

@pytest.mark.parametrize("package, utils", PACKAGES)
def test_yaml_names_functions_that_exist_a_cluster_key_and_no_working_folder(package, utils):
    functions = []

    def collect(value):
        if isinstance(value, tuple) and value[0] == "function":
            functions.append(value[1])
        elif isinstance(value, dict):
            for v in value.values():
                collect(v)
        elif isinstance(value, list):
            for v in value:
                collect(v)

    for config in _task_configs(package):
        collect(config)
        # no relative folder: the shipped tasks read nothing until write_tasks names the data
        assert config["dataset_path"].startswith("write-tasks-sets-this/")
        assert not (ROOT / config["dataset_path"]).exists()
        assert config["cluster_key"] in {"image_filename", "file_name"}
        assert callable(getattr(utils, config["doc_to_messages"][1].split(".", 1)[1]))
    assert functions and all(f.startswith("utils.") and callable(getattr(utils, f[len("utils."):])) for f in functions)


@pytest.mark.parametrize("package, utils", PACKAGES)
def test_write_tasks_makes_an_export_path_absolute_and_refuses_a_missing_folder(tmp_path, monkeypatch, package, utils):
    export = tmp_path / "exports" / "my export: #1"
    export.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    copy = package.write_tasks(tmp_path / "tasks", os.path.join("exports", "my export: #1"))
    monkeypatch.chdir(ROOT)  # read from elsewhere: nothing in the copy depends on the working folder
    template = _yaml(copy / "_default_template_yaml")
    assert template["dataset_path"] == str(export.resolve())
    assert (copy / "utils.py").read_text() == (package.TASK_DIR / "utils.py").read_text()
    assert sorted(p.name for p in copy.iterdir()) == sorted([".ownership.json",
                                                              *(p.name for p in task_files(package.TASK_DIR))])
    hub = package.write_tasks(tmp_path / "hub_tasks", "someone/some-dataset")
    assert _yaml(hub / "_default_template_yaml")["dataset_path"] == "someone/some-dataset"
    with pytest.raises(ValueError, match="neither an existing folder nor a Hub repository id"):
        package.write_tasks(tmp_path / "never", "demo_output/clevr_math/hub-that-is-not-there")
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("package", [math_tasks, aqa_tasks])
def test_write_tasks_replaces_only_its_own_unchanged_files(tmp_path, package):
    out = tmp_path / "tasks"
    package.write_tasks(out, "someone/first")
    # what it wrote is in the folder's record, the one the README names
    assert (out / RECORD).is_file() and not (out / ".write_tasks.json").exists()
    assert f"`{RECORD}`" in (ROOT / "builder_utils" / "evaluation" / "README.md").read_text(encoding="utf-8")
    package.write_tasks(out, "someone/second")  # its own copy: replaced
    template = out / "_default_template_yaml"
    assert _yaml(template)["dataset_path"] == "someone/second"
    # a file edited since, or one it never wrote: refused, nothing written
    template.write_text(template.read_text() + "# my edit\n")
    with pytest.raises(ValueError, match="_default_template_yaml: exists and .*changed since write_tasks wrote it"):
        package.write_tasks(out, "someone/third")
    assert template.read_text().endswith("# my edit\n")
    other = tmp_path / "mine"
    other.mkdir()
    (other / "utils.py").write_text("# my own utils\n")
    with pytest.raises(ValueError, match="utils.py: exists and was not written by write_tasks"):
        package.write_tasks(other, "someone/third")
    assert sorted(p.name for p in other.iterdir()) == ["utils.py"]
    assert (other / "utils.py").read_text() == "# my own utils\n"


# --- imports -----------------------------------------------------------------------------

def test_task_utils_import_neither_datasets_nor_the_builders(tmp_path):
    """lmms-eval runs each task folder's utils.py from its file: do that on written copies, in a
    fresh interpreter, and count what it imported."""
    for package, _ in PACKAGES:
        package.write_tasks(tmp_path / package.__name__.split(".")[0], "someone/some-dataset")
    script = (
        "import importlib.util, json, sys\n"
        "before = set(sys.modules)\n"
        "for name in sys.argv[1:]:\n"
        "    spec = importlib.util.spec_from_file_location('utils', name)\n"
        "    spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    files = [str(tmp_path / folder / "utils.py") for folder in ("clevr_math", "clotho_aqa")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True, env=env, check=True)
    imported = json.loads(done.stdout)
    heavy = [m for m in imported if m.split(".")[0] in {"datasets", "pyarrow", "pandas", "matplotlib", "torch", "PIL"}
             or m in {"clevr_math.clevr_math", "clevr_math.config", "clotho_aqa.clotho_aqa", "clotho_aqa.config",
                      "builder_utils.builder", "builder_utils.hub", "builder_utils.clevr"}]
    assert heavy == []
    # numpy (for the audio) and the scoring spec with its extraction: about 230 modules here;
    # importing the builder adds over 800
    assert len(imported) < 400, len(imported)


# --- per-sample records agree with evaluate and the rewards ------------------------------

CLEVR_STYLES = ["{n}", "Answer: {n}", "\\boxed{{{n}}}", "There are {n} objects left.", "I cannot tell.",
                "Answer: {wrong}"]


def test_clevr_math_records_score_like_evaluate_and_the_rewards(data):
    images = {}
    for config in ("general", "multihop"):
        rows = _rows(data, "hub_clevr", config)
        texts = [CLEVR_STYLES[i % len(CLEVR_STYLES)].format(n=row["label"], wrong=row["label"] + 1)
                 for i, row in enumerate(rows)]
        records = [math_utils.clevr_math_process_results(row, [text]) for row, text in zip(rows, texts)]
        predictions = {row["question_id"]: text for row, text in zip(rows, texts)}
        report = math_eval.evaluate(data["hub_clevr"], config, predictions=predictions, cache_dir=data["cache"])
        accuracy = [r["accuracy"] for r in records]
        assert math_utils.clevr_math_accuracy(accuracy) == report["overall"]["accuracy"]
        assert mean_score(r["unparseable"] for r in records) == report["overall"]["unparseable"] / len(rows)
        rewards = math_rewards.accuracy_reward(texts, answer=[str(row["label"]) for row in rows])
        assert [r["score"] for r in accuracy] == rewards
        # the cluster key: every record names its question's image
        assert [r["image_filename"] for r in accuracy] == [row["image_filename"] for row in rows]
        images[config] = (len({r["image_filename"] for r in accuracy}), len(rows))
    assert images["general"][0] < images["general"][1]  # several questions per image: clusters


def _clotho_texts(rows):
    """Yes/no: the majority answer, then the other; single words: an annotator's answer in
    several spellings, or a wrong one."""
    texts = []
    for i, row in enumerate(rows):
        answers = row["answers"]
        if row["answer_type"] == "yes_no":
            majority = max(set(answers), key=answers.count)
            texts.append(f"{majority.capitalize()}, it is." if i % 2 == 0 else ("no" if majority == "yes" else "yes"))
        else:
            texts.append([f"{answers[i % 3].upper()}.", f"The answer is {answers[0]}", "zzz"][i % 3])
    return texts


def test_clotho_records_score_every_labelling_like_evaluate_and_the_rewards(data):
    rows = _rows(data, "hub_clotho", "questions")
    texts = _clotho_texts(rows)
    records = [aqa_utils.clotho_aqa_process_results(row, [text]) for row, text in zip(rows, texts)]
    predictions = {row["question_id"]: text for row, text in zip(rows, texts)}
    report = aqa_eval.evaluate(data["hub_clotho"], "questions", predictions=predictions, cache_dir=data["cache"])
    assert set(aqa_utils.METRICS.values()) <= set(report["by_labelling"])
    for metric, labelling in aqa_utils.METRICS.items():
        assert mean_score(r[metric] for r in records) == report["by_labelling"][labelling]["accuracy"], metric
        scored = [r[metric] for r in records if "score" in r[metric]]
        assert sum(r["targets"] for r in scored) == report["by_labelling"][labelling]["total"], metric
        assert all(r["file_name"] == row["file_name"] for r, row in zip((r[metric] for r in records), rows))
    for name in ("majority", "any_of_3", "unanimous", "unfiltered"):
        reward = aqa_rewards.make_accuracy_reward(name)
        given = reward(texts, answers=[row["answers"] for row in rows], answer_type=[row["answer_type"] for row in rows])
        for kind in ("yes_no", "single_word"):
            metric = next((m for m, lab in aqa_utils.METRICS.items() if lab == f"{kind}/{name}"), None)
            if metric is None:
                continue
            mine = [r[metric].get("score") for r, row in zip(records, rows) if row["answer_type"] == kind]
            assert mine == [g for g, row in zip(given, rows) if row["answer_type"] == kind], metric


# --- chat messages -----------------------------------------------------------------------

def test_doc_to_messages_gives_chat_content_parts(data):
    row = load_exported(data["hub_clevr"], "multihop", cache_dir=data["cache"])["test"][0]
    kwargs = {"pre_prompt": "", "post_prompt": "\nAnswer with a single number."}
    [turn] = math_utils.clevr_math_doc_to_messages(row, kwargs)
    assert turn["role"] == "user" and [p["type"] for p in turn["content"]] == ["image", "text"]
    assert isinstance(turn["content"][0]["url"], Image.Image) and turn["content"][0]["url"].mode == "RGB"
    assert turn["content"][1]["text"] == math_utils.clevr_math_doc_to_text(row, kwargs)

    from builder_utils.audio import decode_audio

    split = aqa_utils.clotho_aqa_process_docs(load_exported(data["hub_clotho"], "questions",
                                                            cache_dir=data["cache"])["test"])
    row = split[0]
    assert set(row["audio"]) == {"bytes", "path"}  # undecoded: no torchcodec needed
    kwargs = {"pre_prompt": "", "yes_no_post_prompt": " yes/no", "single_word_post_prompt": " one word",
              "audio_sampling_rate": 16000}
    [turn] = aqa_utils.clotho_aqa_doc_to_messages(row, kwargs)
    assert [p["type"] for p in turn["content"]] == ["audio", "text"]
    samples = turn["content"][0]["url"]
    native, rate = decode_audio(row, mono=True)
    assert samples.dtype == np.float32 and samples.ndim == 1
    assert abs(len(samples) - round(len(native) * 16000 / rate)) <= 1
    [clip] = aqa_utils.clotho_aqa_doc_to_audio(row)
    assert clip["sampling_rate"] == rate and np.array_equal(clip["array"], native)
