"""Generation and synthetic worlds on a real Dask LocalCluster (2 worker processes), against
the one-process run: byte-identical JSON and Parquet, a worker killed mid-run, bounded client
memory, and the one-line error when the ``[dask]`` extra is missing (issue 16)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from builder_utils.clevr.distributed import LOCAL_CLUSTER_CONFIG, dask_client
from builder_utils.clevr.generate import GeneratorOptions, generate_windows, window_tasks
from builder_utils.clevr.generate_questions import main
from builder_utils.clevr.scenes import load_scenes
from builder_utils.clevr.synth import generate_scenes, write_clevr_folder

distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")

SCENES = 120
COMMON = ["--seed", "4", "--reset_counts_every", "5", "--templates_per_image", "4"]


# The cluster (scheduler and 2 worker processes) lives in a process of its own, as on a real
# cluster: this test process is then only a client, whose memory the tests can measure.
_CLUSTER = """
import sys
from distributed import LocalCluster
with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
    print(cluster.scheduler_address, flush=True)
    sys.stdin.read()  # until the tests close it
"""


@pytest.fixture(scope="module")
def cluster() -> str:
    process = subprocess.Popen([sys.executable, "-c", _CLUSTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    try:
        address = process.stdout.readline().strip()
        assert address.startswith("tcp://"), address
        yield address
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def scene_path(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("scenes")
    path = folder / "CLEVR_val_scenes.json"
    path.write_text(json.dumps({"info": {"split": "val"}, "scenes": generate_scenes(SCENES, seed=2, split="val")}))
    return path


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _run(scene_path: Path, out: Path, *extra: str) -> None:
    assert main(["--input_scene_file", str(scene_path), "--output_questions_file", str(out), *COMMON, *extra]) == 0


def test_json_and_parquet_on_the_cluster_are_byte_identical_to_one_process(cluster, scene_path, tmp_path):
    address = cluster
    _run(scene_path, tmp_path / "one.json")
    _run(scene_path, tmp_path / "dask.json", "--dask", address)
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "dask.json").read_bytes()

    parquet = ["--output_format", "parquet", "--scenes_per_shard", "40"]
    _run(scene_path, tmp_path / "one", *parquet)
    _run(scene_path, tmp_path / "dask", *parquet, "--dask", address)
    _run(scene_path, tmp_path / "pool", *parquet, "--num_workers", "2")
    assert tree(tmp_path / "one") == tree(tmp_path / "dask") == tree(tmp_path / "pool")
    assert sorted(tree(tmp_path / "one")) == [".ownership.json", "index.json"] + [f"questions-0000{k}-of-00003.parquet" for k in range(3)]

    import datasets

    loaded = datasets.load_dataset("parquet", data_files=str(tmp_path / "dask" / "*.parquet"), split="train",
                                   cache_dir=str(tmp_path / "cache"))
    expected = json.loads((tmp_path / "one.json").read_text())["questions"]
    assert loaded.num_rows == len(expected)
    assert loaded[0] == expected[0] and loaded[-1] == expected[-1]
    assert loaded["question_index"] == list(range(len(expected)))
    index = json.loads((tmp_path / "dask" / "index.json").read_text())
    assert [(s["scene_start"], s["scene_stop"]) for s in index["shards"]] == [(0, 40), (40, 80), (80, 120)]
    assert index["num_questions"] == len(expected) and index["info"] == {"split": "val", "generated_by": "builder_utils generate-questions"}


def test_a_worker_killed_mid_run_does_not_change_the_output(cluster, scene_path, tmp_path):
    options = GeneratorOptions(seed=4, reset_counts_every=5, templates_per_image=4)
    scenes = load_scenes(scene_path)
    tasks = window_tasks(0, len(scenes), 5, min_scenes=1)
    reference = [json.loads(q) for _, qs in generate_windows(options, scenes, tasks, output="json") for q in qs]
    with distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        collected, killed = [], []
        for k, (_, questions) in enumerate(generate_windows(options, scenes, tasks, output="json", client=client)):
            if k == 2:
                victim = sorted(pids.values())[0]
                os.kill(victim, signal.SIGKILL)  # the nanny restarts it; its tasks run again elsewhere
                killed.append(victim)
            collected += [json.loads(q) for q in questions]
        client.wait_for_workers(2, timeout=60)
        assert killed and killed[0] not in client.run(os.getpid).values()
    assert collected == reference


def test_the_local_cluster_runs_light_housekeeping_and_gives_the_same_questions(scene_path):
    """`--dask local` starts its workers without the 10 ms stack profiler and the 20 ms tick
    (a tenth of a 2-core machine); the questions are those of one process."""
    import dask

    options = GeneratorOptions(seed=4, reset_counts_every=5, templates_per_image=4)
    scenes = load_scenes(scene_path)
    tasks = window_tasks(0, len(scenes), 5, min_scenes=16)
    reference = [q for _, qs in generate_windows(options, scenes, tasks, output="json") for q in qs]
    with dask_client("local", num_workers=2) as client:
        settings = client.run(lambda: {key: dask.config.get(key) for key in LOCAL_CLUSTER_CONFIG})
        on_cluster = [q for _, qs in generate_windows(options, scenes, tasks, output="json", client=client) for q in qs]
    assert len(settings) == 2 and all(seen == LOCAL_CLUSTER_CONFIG for seen in settings.values())
    assert on_cluster == reference


def test_client_memory_stays_bounded_when_the_output_is_much_larger_than_a_window(cluster, scene_path):
    """The client holds a few tasks' results at a time (the lookahead), not the whole output:
    the futures it holds stay bounded at every step, and so does its traced peak memory."""
    options = GeneratorOptions(seed=4, reset_counts_every=1, templates_per_image=10, instances_per_template=2)
    scenes = load_scenes(scene_path)
    tasks = window_tasks(0, len(scenes), 1, min_scenes=1)  # 120 tasks of one scene
    with distributed.Client(cluster) as client:
        list(generate_windows(options, scenes, tasks[:4], output="json", client=client))  # warm up the workers
        held = []
        tracemalloc.start()
        try:
            total = largest = 0
            for _, questions in generate_windows(options, scenes, tasks, output="json", client=client):
                held.append(len(client.futures))
                size = sum(map(len, questions))
                total += size
                largest = max(largest, size)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    print(f"client peak {peak} B for {total} B of output, largest task {largest} B")
    assert total > 50 * largest  # the output is much larger than one window
    assert max(held) <= 2 * 2 + 1  # the default lookahead (twice the 2 worker threads) and the one consumed
    assert peak < total / 2, (peak, total, largest)


def test_synth_on_the_cluster_is_byte_identical(cluster, tmp_path):
    one = write_clevr_folder(tmp_path / "one", {"val": 70, "test": 3}, seed=3, progress=False)
    on_dask = write_clevr_folder(tmp_path / "dask", {"val": 70, "test": 3}, seed=3, progress=False,
                                 dask=cluster)
    assert tree(one) == tree(on_dask)
    assert len(tree(one)) == 73 + 2 + 1


def test_render_on_the_cluster_is_byte_identical(cluster, tmp_path):
    """`clevr-math render --dask`: the workers draw the chunks into the shared staging folder; the
    images, masks, depth maps and the ownership record equal the one-process run's."""
    from builder_utils.clevr.synth.render_file import DrawOptions, render_scene_file

    world = write_clevr_folder(tmp_path / "world", {"val": 40}, seed=5, render=False, progress=False)
    scenes = world / "scenes" / "CLEVR_val_scenes.json"
    options = DrawOptions(masks=True, depth=True)
    one = render_scene_file(scenes, tmp_path / "one", options)
    on_dask = render_scene_file(scenes, tmp_path / "dask", options, dask=cluster)
    drawn = tree(one)
    assert sum(name.startswith("images/") for name in drawn) == 40
    assert drawn == tree(on_dask)


def test_without_dask_the_flag_is_a_one_line_error_naming_the_extra(scene_path, tmp_path):
    # a `distributed` that fails to import, first on the path: what a machine without the extra sees
    shadow = tmp_path / "shadow" / "distributed"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named distributed')\n")
    env = dict(os.environ, PYTHONPATH=str(shadow.parent))
    for argv in (["-m", "builder_utils.clevr.generate_questions", "--input_scene_file", str(scene_path),
                  "--output_questions_file", str(tmp_path / "q.json"), "--dask", "local"],
                 ["-m", "builder_utils.clevr.synth", "--out", str(tmp_path / "w"), "--num_scenes", "1",
                  "--dask", "local"]):
        done = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and "pip install 'clevr-clotho-qa[dask]'" in done.stderr, done.stderr
    assert not (tmp_path / "q.json").exists() and not (tmp_path / "w").exists()
