"""Our lmms-eval tasks inside lmms-eval itself, on the demo export (``make test-harness``).

Skipped unless lmms-eval is installed (``make test-harness`` builds ``.venv-harness`` with it,
builds the demo export, and runs this file). The tasks are written with ``write_tasks`` under one
parent folder, loaded through lmms-eval's ``TaskManager`` and run with ``--model dummy --limit 4``
(the command line and ``simple_evaluate``). lmms-eval ships no chat-type dummy model, so the chat
path runs with ``ccqa_fixed_chat`` (``tests/lmms_eval_plugin/ccqa_chat``): a deterministic chat
model that validates each ``doc_to_messages`` result against ``lmms_eval.protocol.ChatMessages``.
It runs in-process, and from the command line registered the way lmms-eval 0.7.3 supports for
chat models, an installed distribution with an ``lmms_eval.models`` entry point, on both
datasets' tasks, its figures equal to ``evaluate``'s on the answers it gave; the deprecated
``LMMS_EVAL_PLUGINS`` route is shown to fail for it (and to exit 0).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

# The demo export is local; lmms-eval and datasets must never reach for the Hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
lmms_eval = pytest.importorskip("lmms_eval")

from lmms_eval.evaluator import simple_evaluate  # noqa: E402
from lmms_eval.tasks import TaskManager  # noqa: E402

from clevr_math import evaluation as math_eval  # noqa: E402
from clevr_math import lmms_eval as math_tasks  # noqa: E402
from clotho_aqa import evaluation as aqa_eval  # noqa: E402
from clotho_aqa import lmms_eval as aqa_tasks  # noqa: E402
from clotho_aqa.lmms_eval import utils as aqa_utils  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "lmms_eval_plugin"
sys.path.insert(0, str(PLUGIN))
from ccqa_chat.models.ccqa_fixed_chat import FixedChat  # noqa: E402

DEMO = Path(os.environ.get("CCQA_DEMO_OUTPUT", ROOT / "demo_output"))
BUILTIN = ROOT / "tests" / "data" / "lmms_eval" / "builtin_tasks_0.7.3.json"
OURS = {"clevr_math_general", "clevr_math_multihop", "clotho_aqa_questions", math_tasks.TAG, aqa_tasks.TAG}
TASKS = ["clevr_math_general", "clevr_math_multihop", "clotho_aqa_questions"]


@pytest.fixture(scope="module")
def task_root(tmp_path_factory):
    exports = {"clevr_math": DEMO / "clevr_math" / "hub", "clotho_aqa": DEMO / "clotho_aqa" / "hub"}
    if not all(path.is_dir() for path in exports.values()):
        pytest.skip(f"no demo export under {DEMO}: `make test-harness` builds it")
    root = tmp_path_factory.mktemp("tasks")
    math_tasks.write_tasks(root / "clevr_math", exports["clevr_math"])
    aqa_tasks.write_tasks(root / "clotho_aqa", exports["clotho_aqa"])
    return root


@pytest.fixture(scope="module")
def manager(task_root):
    return TaskManager(verbosity="ERROR", include_path=str(task_root))


def test_task_manager_indexes_our_tasks_and_none_shadows_or_is_shadowed(task_root, manager):
    index = manager.task_index
    assert OURS <= set(index)
    for name in OURS - {math_tasks.TAG, aqa_tasks.TAG}:
        assert index[name]["type"] == "task" and Path(index[name]["yaml_path"]).is_relative_to(task_root)
    assert index[math_tasks.TAG]["type"] == index[aqa_tasks.TAG]["type"] == "tag"
    assert sorted(index[math_tasks.TAG]["task"]) == ["clevr_math_general", "clevr_math_multihop"]
    assert index[aqa_tasks.TAG]["task"] == ["clotho_aqa_questions"]
    # `clotho_aqa` is still lmms-eval's own group, untouched by our folder
    assert index["clotho_aqa"]["type"] == "group"
    assert not Path(index["clotho_aqa"]["yaml_path"]).is_relative_to(task_root)
    builtin = TaskManager(verbosity="ERROR")
    assert not OURS & set(builtin.all_tasks)
    fixture = json.loads(BUILTIN.read_text(encoding="utf-8"))
    if importlib.metadata.version("lmms-eval") == fixture["lmms_eval"]:
        assert set(builtin.all_tasks) == set(fixture["names"])  # the offline fixture is this index


def _metric(results: dict, task: str, metric: str):
    return results["results"][task][f"{metric},none"]


@pytest.fixture(scope="module")
def dummy_run(manager):
    """``--model dummy --model_args response=2 --limit 4`` on every task."""
    return simple_evaluate(model="dummy", model_args="response=2", tasks=TASKS, limit=4, task_manager=manager,
                           log_samples=True, bootstrap_iters=0)


def test_dummy_model_runs_every_task_with_clustered_standard_errors(dummy_run):
    results = dummy_run
    assert set(TASKS) <= set(results["results"])
    for task in TASKS:
        assert len(results["samples"][task]) == 4
    # "2" on the first 4 multihop questions, scored like `clevr-math evaluate` (the others: missing)
    ids = [s["doc"]["question_id"] for s in results["samples"]["clevr_math_multihop"]]
    report = math_eval.evaluate(DEMO / "clevr_math" / "hub", "multihop", predictions=dict.fromkeys(ids, "2"),
                                resamples=10)
    assert _metric(results, "clevr_math_multihop", "accuracy") == report["overall"]["correct"] / 4
    # one question per image in multihop: 4 clusters, a clustered standard error
    assert isinstance(_metric(results, "clevr_math_multihop", "accuracy_stderr_clustered"), float)
    assert _metric(results, "clevr_math_general", "unparseable") == 0.0
    # "2" is no yes/no answer: every yes/no metric of the 4 Clotho-AQA questions is 0
    for metric in aqa_utils.METRICS:
        if metric.startswith("yes_no"):
            assert _metric(results, "clotho_aqa_questions", metric) == 0.0, metric


def test_clotho_aqa_in_lmms_eval_equals_evaluate_on_the_same_answers(manager):
    """Every demo test question (2 clips), "yes" for each: the harness's figures are the command's."""
    results = simple_evaluate(model="dummy", model_args="response=yes", tasks=["clotho_aqa_questions"], limit=12,
                              task_manager=manager, log_samples=True, bootstrap_iters=0)
    ids = [s["doc"]["question_id"] for s in results["samples"]["clotho_aqa_questions"]]
    report = aqa_eval.evaluate(DEMO / "clotho_aqa" / "hub", "questions", predictions=dict.fromkeys(ids, "yes"),
                               resamples=10)
    assert len(ids) == report["num_questions"] == 12
    for metric, labelling in aqa_utils.METRICS.items():
        assert _metric(results, "clotho_aqa_questions", metric) == report["by_labelling"][labelling]["accuracy"], metric
    assert isinstance(_metric(results, "clotho_aqa_questions", "yes_no_majority_stderr_clustered"), float)


def test_a_chat_model_gets_image_and_audio_content_parts(manager, dummy_run):
    model = FixedChat(response="2")
    results = simple_evaluate(model=model, tasks=["clevr_math_multihop", "clotho_aqa_questions"], limit=4,
                              task_manager=manager, log_samples=False, bootstrap_iters=0)
    math_seen, aqa_seen = model.seen["clevr_math_multihop"], model.seen["clotho_aqa_questions"]
    assert len(math_seen) == len(aqa_seen) == 4
    for parts, images, audios in math_seen:
        assert parts == ["image", "text"] and audios == []
        assert isinstance(images[0], Image.Image) and images[0].mode == "RGB"
    for parts, images, audios in aqa_seen:
        assert parts == ["audio", "text"] and images == []
        assert isinstance(audios[0], np.ndarray) and audios[0].dtype == np.float32 and audios[0].ndim == 1
    # the chat path scores like the simple one
    for task, metric in (("clevr_math_multihop", "accuracy"), ("clotho_aqa_questions", "yes_no_majority")):
        assert _metric(results, task, metric) == _metric(dummy_run, task, metric)


def test_the_lmms_eval_command_runs_our_tags(task_root, tmp_path):
    command = [sys.executable, "-m", "lmms_eval", "--model", "dummy", "--model_args", "response=2",
               "--tasks", f"{math_tasks.TAG},{aqa_tasks.TAG}",
               "--include_path", str(task_root), "--limit", "4", "--output_path", str(tmp_path / "out")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    table = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert "Stderr_Clustered" in table[0]
    for task in TASKS:
        assert any(line.startswith(f"|{task}") for line in table), task
    print("\n".join(table))


# --- a chat model from an installed distribution: the entry-point route --------------------

def _install(site: Path) -> Path:
    """``ccqa_chat`` as an installed distribution in ``site`` (a folder for ``PYTHONPATH``): the
    ``.dist-info`` an installer writes, whose entry point registers ``ccqa_fixed_chat`` with lmms-eval."""
    info = site / "ccqa_chat-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ccqa-chat\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lmms_eval.models]\nccqa_fixed_chat = ccqa_chat.models:manifest\n",
                                           encoding="utf-8")
    return site


def _lmms_eval(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", **env}
    return subprocess.run([sys.executable, "-m", "lmms_eval", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=900)


def _responses(count: int) -> list[str]:
    """One answer per document (doc_id i gets the i-th): numbers, yes/no and single words in
    sentences, among them the demo test split's own single-word answers ("It is <answer>.").
    No commas: lmms-eval splits ``--model_args`` at each one."""
    from builder_utils.hub import load_exported

    rows = load_exported(DEMO / "clotho_aqa" / "hub", "questions")["test"].remove_columns("audio")
    styles = ["2", "Yes it is.", "<answer>no</answer>", "It is metal.", "There are 3 of them.", "\\boxed{1}"]
    out = []
    for i in range(count):
        row = rows[i % len(rows)]
        word = row["majority_answer"] or row["answers"][0]
        out.append(f"It is {word}." if row["answer_type"] == "single_word" else styles[i % len(styles)])
    return out


def test_a_chat_model_installed_with_an_entry_point_runs_both_datasets_like_evaluate(task_root, tmp_path):
    """``lmms-eval --model ccqa_fixed_chat`` with the model found through the ``lmms_eval.models``
    entry point of an installed distribution: every task of both datasets, run as a chat model
    (ChatMessages-validated content parts), and every metric equal to ``evaluate``'s on the same
    answers."""
    site = _install(tmp_path / "site")
    limit = 12  # every demo Clotho-AQA test question (2 clips)
    responses = _responses(limit)
    done = _lmms_eval(["--model", "ccqa_fixed_chat", "--model_args", "responses=" + "|".join(responses),
                       "--tasks", f"{math_tasks.TAG},{aqa_tasks.TAG}", "--include_path", str(task_root),
                       "--limit", str(limit), "--log_samples", "--output_path", str(tmp_path / "out")],
                      tmp_path, PYTHONPATH=os.pathsep.join([str(site), str(PLUGIN), str(ROOT)]))
    assert done.returncode == 0, done.stderr[-3000:]
    found = list((tmp_path / "out").rglob("*_results.json"))
    assert len(found) == 1, done.stderr[-3000:]  # lmms-eval exits 0 after an error: no results then
    results_file = found[0]
    results = json.loads(results_file.read_text(encoding="utf-8"))
    assert results["config"]["model"] == "ccqa_fixed_chat", results["config"]
    assert set(TASKS) <= set(results["results"])

    def answered(task):
        [samples] = (tmp_path / "out").rglob(f"*_samples_{task}.jsonl")
        lines = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
        given = {line["doc_id"]: line["filtered_resps"] for line in lines}
        assert len(given) == limit and all(given[i] in (responses[i], [responses[i]]) for i in given), task
        # the samples file holds no doc; each metric's record names its question (sample_record)
        return {next(v["question_id"] for v in line.values() if isinstance(v, dict) and "question_id" in v):
                responses[line["doc_id"]] for line in lines}

    for task, config in (("clevr_math_general", "general"), ("clevr_math_multihop", "multihop")):
        report = math_eval.evaluate(DEMO / "clevr_math" / "hub", config, predictions=answered(task), resamples=10)
        assert _metric(results, task, "accuracy") == report["overall"]["correct"] / limit, task
    report = aqa_eval.evaluate(DEMO / "clotho_aqa" / "hub", "questions", predictions=answered("clotho_aqa_questions"),
                               resamples=10)
    assert report["num_questions"] == limit
    for metric, labelling in aqa_utils.METRICS.items():
        assert _metric(results, "clotho_aqa_questions", metric) == report["by_labelling"][labelling]["accuracy"], metric
    # single words answered in a sentence count, in lmms-eval as in evaluate
    assert _metric(results, "clotho_aqa_questions", "single_word_majority_top1") > 0
    print("\n".join(line for line in done.stdout.splitlines() if line.startswith("|")))


def test_the_plugin_route_cannot_register_a_chat_model_and_still_exits_0(task_root, tmp_path):
    """``LMMS_EVAL_PLUGINS`` (deprecated) registers every model it finds as a simple one, so
    lmms-eval 0.7.3 refuses a chat model, prints the error and exits with status 0: the reason
    the README names the entry-point route."""
    done = _lmms_eval(["--model", "ccqa_fixed_chat", "--tasks", "clevr_math_multihop", "--include_path",
                       str(task_root), "--limit", "1", "--output_path", str(tmp_path / "out")],
                      tmp_path, LMMS_EVAL_PLUGINS="ccqa_chat", PYTHONPATH=os.pathsep.join([str(PLUGIN), str(ROOT)]))
    output = done.stdout + done.stderr
    assert done.returncode == 0
    assert "resolved as simple but FixedChat.is_simple is False" in output, output[-3000:]
    assert not list((tmp_path / "out").rglob("*_results.json"))
