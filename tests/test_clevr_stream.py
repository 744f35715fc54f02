"""clevr_math.stream: fresh CLEVR-Math problems as a datasets.IterableDataset.

Determinism, resume from state_dict, disjoint ranks and workers, the curriculum followed, no
leakage (held-out images, evaluation problems, seed spaces), every answer re-checked by the
independent executor of tests/test_clevr_executor.py (answers above 10, chains of 6+
operations), confounded worlds, and one-line errors."""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from itertools import islice

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datasets.distributed import split_dataset_by_node
from PIL import Image

import clevr_math
from builder_utils.clevr import SceneIndex, load_scenes
from builder_utils.clevr import scenes as scene_checks
from builder_utils.clevr.synth import DEFAULT_MIN_PIXELS_PER_OBJECT, draw_scene, write_clevr_folder
from builder_utils.clevr.synth.scenes import MAX_WORLD_OBJECTS, generate_scene
from clevr_math import Curriculum, Difficulty, StreamError, stream
from pixels_shown import shown_pixels
from test_clevr_executor import reference_execute


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A rendered CLEVR_v1.0-shaped folder: 40 train, 6 val and 6 test scenes."""
    root = tmp_path_factory.mktemp("clevr") / "CLEVR_v1.0"
    return write_clevr_folder(root, {"train": 40, "val": 6, "test": 6}, seed=3, progress=False)


def rows(ds, n=None, *, decoded=False):
    """The rows as comparable plain data (images as their bytes' sha256)."""
    out = []
    for row in islice(ds if decoded else ds.decode(False), n):
        row = dict(row)
        row["images"] = [hashlib.sha256(image["bytes"]).hexdigest() for image in row["images"]]
        out.append(row)
    return out


def ids(ds, n=None):
    return [row["question_id"] for row in islice(ds.decode(False).select_columns(["question_id"]), n)]


# -- determinism ----------------------------------------------------------------------------


def test_same_seed_same_stream_byte_for_byte(folder):
    for source in (None, folder):
        first = rows(stream(source, seed=5, num_questions=30, num_shards=4))
        assert first == rows(stream(source, seed=5, num_questions=30, num_shards=4))
        assert len(first) == 30 and len({r["question_id"] for r in first}) == 30
        other = rows(stream(source, seed=6, num_questions=30, num_shards=4))
        assert [r["question"] for r in other] != [r["question"] for r in first]
    row = first[0]
    assert row["answer"] == str(row["label"]) == row["reward_model"]["ground_truth"]
    assert row["prompt"][-1]["content"][0]["type"] == "image"
    assert row["prompt"][-1]["content"][1]["text"] == row["question"]
    assert row["cot"].endswith(f"Answer: {row['label']}.")
    assert json.loads(row["scene"])["image_filename"] == row["image_filename"]


def test_endless_stream_and_folder_passes(folder):
    # 40 scenes, one shard: the stream goes over the folder again with new questions (pass 1).
    seen = ids(stream(folder, num_shards=1), 600)
    assert len(seen) == len(set(seen)) == 600
    assert any(i.endswith("_p1") for i in seen)


# -- resume ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cut", [1, 7, 23, 61])
def test_state_dict_resumes_exactly(cut):
    whole = rows(stream(seed=2, num_questions=80, num_shards=3))
    ds = stream(seed=2, num_questions=80, num_shards=3).decode(False)
    iterator = iter(ds)
    for _ in range(cut):
        next(iterator)
    state = ds.state_dict()
    json.dumps(state)  # a checkpoint can store it as it is
    resumed = stream(seed=2, num_questions=80, num_shards=3).decode(False)
    resumed.load_state_dict(state)  # on the dataset iterated: decode() etc. make new ones, without it
    assert rows(resumed, decoded=True) == whole[cut:]


@pytest.mark.parametrize("world_size", [2, 3])  # whole shards, and every 3rd problem of 4 shards
def test_a_rank_resumes_its_own_sub_stream(world_size):
    def rank_stream():
        return split_dataset_by_node(stream(seed=1, num_questions=40, num_shards=4), 1, world_size).decode(False)

    whole = [row["question_id"] for row in rank_stream()]
    ds = rank_stream()
    iterator = iter(ds)
    for _ in range(5):
        next(iterator)
    resumed = rank_stream()
    resumed.load_state_dict(ds.state_dict())
    assert [row["question_id"] for row in resumed] == whole[5:]


def test_resume_follows_the_recorded_curriculum_levels():
    """A live curriculum (by step) moved in the middle of a block: the resumed stream replays
    the block with the levels it had, then follows the curriculum's current step."""
    curriculum = Curriculum.raising("num_operations", [1, 3], every=10)
    ds = stream(seed=4, curriculum=curriculum, num_shards=1).decode(False)
    iterator = iter(ds)
    before = [next(iterator)["num_operations"] for _ in range(6)]
    curriculum.step = 10
    after = [next(iterator)["num_operations"] for _ in range(30)]
    assert set(before) == {1} and after[-1] == 3
    state = ds.state_dict()
    expected = [next(iterator)["question_id"] for _ in range(10)]
    again = Curriculum.raising("num_operations", [1, 3], every=10)
    again.step = 10
    resumed = stream(seed=4, curriculum=again, num_shards=1).decode(False)
    resumed.load_state_dict(state)
    assert [row["question_id"] for row in islice(resumed, 10)] == expected


# -- ranks and workers ----------------------------------------------------------------------


@pytest.mark.parametrize("world_size", [2, 4, 5])
def test_ranks_get_disjoint_deterministic_sub_streams(world_size):
    full = set(ids(stream(seed=1, num_questions=60, num_shards=8)))
    parts = [ids(split_dataset_by_node(stream(seed=1, num_questions=60, num_shards=8), rank, world_size))
             for rank in range(world_size)]
    assert parts[0] == ids(split_dataset_by_node(stream(seed=1, num_questions=60, num_shards=8), 0, world_size))
    assert sum(map(len, parts)) == 60 and set().union(*parts) == full
    for a in range(world_size):
        for b in range(a + 1, world_size):
            assert not set(parts[a]) & set(parts[b])


def test_workers_get_disjoint_shards():
    # A DataLoader worker iterates shard_data_sources(num_workers, worker_id, contiguous=False) of
    # its (rank's) stream, which IterableDataset.shard(..., contiguous=False) applies too.
    ds = stream(seed=1, num_questions=60, num_shards=8)
    workers = [ids(ds.shard(num_shards=3, index=w, contiguous=False)) for w in range(3)]
    assert [len(w) for w in workers] == [23, 22, 15]  # shards 0,3,6 / 1,4,7 / 2,5 of 8 (8, 8, 8, 8, 7, 7, 7, 7 problems)
    assert not set(workers[0]) & set(workers[1]) and set().union(*workers) == set(ids(ds))


def test_endless_stream_in_dataloader_workers_of_each_rank():
    torch = pytest.importorskip("torch")

    def loaded(rank):
        ds = split_dataset_by_node(stream(seed=1, num_shards=8), rank, 2).select_columns(["question_id"])
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
        return [row["question_id"] for row in islice(loader, 30)]

    first, second = loaded(0), loaded(1)
    assert len(set(first)) == len(set(second)) == 30 and not set(first) & set(second)
    assert first == loaded(0)


# -- curriculum -----------------------------------------------------------------------------


def test_curriculum_by_problems_is_followed_per_shard():
    curriculum = Curriculum([(0, {"num_operations": 2}), (20, {"num_operations": 3, "operations": "same_sign"})],
                            by="problems")
    got = [(r["num_operations"], r["template"]) for r in islice(stream(seed=0, curriculum=curriculum, num_shards=1).decode(False), 70)]
    assert {t for n, t in got[:20]} == {"chain_2"}
    assert got[-1] == (3, "same_sign_3")
    # the same position-keyed schedule in every rank's shard
    rank = split_dataset_by_node(stream(seed=0, curriculum=curriculum, num_shards=2), 1, 2)
    assert {r["num_operations"] for r in islice(rank.decode(False), 20)} == {2}


@pytest.mark.parametrize("questions_per_image", [1, 3, 4])
def test_curriculum_level_changes_at_its_threshold_whatever_questions_per_image(questions_per_image):
    """The level is read for every problem: a scene whose level changed is cut short, so the
    first problem after the change is at the new level, by problems and by step."""
    by_problems = Curriculum([(0, {"num_operations": 2}), (6, {"num_operations": 3})], by="problems")
    rows = islice(stream(seed=0, curriculum=by_problems, num_shards=1, questions_per_image=questions_per_image)
                  .decode(False), 12)
    assert [r["num_operations"] for r in rows] == [2] * 6 + [3] * 6
    by_step = Curriculum.raising("num_operations", [1, 2], every=1)
    iterator = iter(stream(seed=0, curriculum=by_step, num_shards=1, questions_per_image=questions_per_image)
                    .decode(False))
    before = [next(iterator)["num_operations"] for _ in range(5)]
    by_step.step = 1
    assert before + [next(iterator)["num_operations"] for _ in range(5)] == [1] * 5 + [2] * 5


def test_curriculum_callback_raises_with_global_step():
    pytest.importorskip("transformers")
    from transformers import TrainerControl, TrainerState, TrainingArguments

    curriculum = Curriculum.raising("num_operations", [1, 2, 3], every=1)
    callback = curriculum.trainer_callback()
    state = TrainerState()
    state.global_step = 2
    callback.on_step_begin(TrainingArguments(output_dir="unused", report_to=[]), state, TrainerControl())
    assert curriculum.difficulty().num_operations == 3


# -- no leakage -----------------------------------------------------------------------------


def test_folder_stream_uses_only_its_split_images(folder):
    for split, clevr in (("train", "train"), ("validation", "val"), ("test", "test")):
        got = list(stream(folder, split=split, num_questions=40, num_shards=2).decode(False))
        assert {r["image_filename"].split("_")[1] for r in got} == {clevr}
        for r in got[:5]:
            assert r["images"][0]["bytes"] == (folder / "images" / clevr / r["image_filename"]).read_bytes()


def test_a_folder_stream_reads_only_its_split_scene_file(tmp_path):
    # A val-only folder: split="val" needs no train scene file (issue 40), and a split that is
    # missing is one line naming the stream's own options, not the builder's download advice.
    root = write_clevr_folder(tmp_path / "CLEVR_v1.0", {"val": 4}, seed=5, splits=("val",), progress=False)
    assert not (root / "scenes" / "CLEVR_train_scenes.json").exists()
    rows = list(stream(root, split="val", num_questions=6, num_shards=1).decode(False))
    assert len(rows) == 6 and all(r["question_id"].startswith("val_") for r in rows)
    with pytest.raises(StreamError) as info:
        stream(root, split="train")
    message = str(info.value)
    assert message.startswith(f"{root / 'scenes' / 'CLEVR_train_scenes.json'}: scene file not found")
    assert "no data_dir for synthetic worlds" in message and "download" not in message and "\n" not in message
    with pytest.raises(StreamError, match=r"CLEVR data folder .*nowhere does not exist\. Options: data_dir="):
        stream(tmp_path / "nowhere")


def test_excluded_evaluation_problems_never_come(tmp_path, folder):
    evaluation = list(islice(stream(folder, seed=0, num_shards=2).decode(False), 120))
    table = pa.table({"question": [r["question"] for r in evaluation],
                      "image": [{"bytes": r["images"][0]["bytes"], "path": None} for r in evaluation]})
    pq.write_table(table, tmp_path / "test-00000-of-00001.parquet")
    keys = {(r["question"], hashlib.sha256(r["images"][0]["bytes"]).hexdigest()) for r in evaluation}
    kept = list(islice(stream(folder, seed=0, num_shards=2, exclude=tmp_path).decode(False), 300))
    assert not {(r["question"], hashlib.sha256(r["images"][0]["bytes"]).hexdigest()) for r in kept} & keys
    assert len(kept) == 300
    with pytest.raises(StreamError, match="needs a question column"):
        pq.write_table(pa.table({"q": ["x"]}), tmp_path / "bad.parquet")
        stream(exclude=tmp_path / "bad.parquet")


def test_held_out_synthetic_streams_share_no_scene_with_training():
    def worlds(split):
        got = stream(seed=0, split=split, num_questions=60, num_shards=3, questions_per_image=1).decode(False)
        return {hashlib.sha256(r["scene"].encode()).hexdigest(): r["images"][0]["bytes"] for r in got}

    train, test, val = worlds("train"), worlds("test"), worlds("validation")
    assert len(train) == 60
    assert not set(train) & set(test) and not set(train) & set(val)
    assert not {hashlib.sha256(b).digest() for b in train.values()} & {hashlib.sha256(b).digest() for b in test.values()}


# -- verified answers -----------------------------------------------------------------------


def test_a_thousand_answers_recheck_with_the_independent_executor():
    mixes = [({}, 400), ({"num_operations": 6}, 100), ({"num_operations": 8}, 50),
             ({"num_operations": 3, "operations": "same_sign", "max_answer": 30}, 300),
             ({"max_objects": MAX_WORLD_OBJECTS, "max_answer": MAX_WORLD_OBJECTS}, 150)]
    answers, operations = Counter(), Counter()
    for seed, (difficulty, count) in enumerate(mixes):
        ds = stream(seed=seed, num_questions=count, num_shards=2, **difficulty)
        for row in ds.select_columns(["program", "scene", "label", "num_operations"]):
            scene = json.loads(row["scene"])
            assert reference_execute(row["program"], scene)[-1] == row["label"]
            answers[row["label"]] += 1
            operations[row["num_operations"]] += 1
    assert sum(answers.values()) == 1000
    assert sum(c for a, c in answers.items() if a > 10) >= 100
    assert operations[6] == 100 and operations[8] == 50


def test_crowded_worlds_render_and_pass_the_scene_checks(tmp_path):
    assert MAX_WORLD_OBJECTS <= scene_checks.MAX_OBJECTS  # the scene files' own limit
    scenes = [generate_scene(0, "train", index, max_objects=MAX_WORLD_OBJECTS) for index in range(5)]
    for scene in scenes:
        SceneIndex(scene)  # validated
        assert draw_scene(scene).size == (480, 320)  # CLEVR v1.0's size
    path = tmp_path / "CLEVR_train_scenes.json"
    path.write_text(json.dumps({"info": {"split": "train"}, "scenes": scenes}))
    assert [s["objects"] for s in load_scenes(path)] == [s["objects"] for s in scenes]
    counts = [len(generate_scene(0, "train", i, max_objects=MAX_WORLD_OBJECTS)["objects"]) for i in range(40)]
    assert max(counts) > 10


def test_every_object_of_the_streams_worlds_shows_the_floor_on_the_image():
    # the on-the-fly worlds keep CLEVR's visibility floor too, measured on the rows' own PNGs:
    # 80 worlds of 3-10 objects and 40 crowded ones (up to 14), one problem each
    seen = 0
    for difficulty, count in (({}, 80), ({"max_objects": MAX_WORLD_OBJECTS, "max_answer": 14}, 40)):
        ds = stream(seed=4, num_questions=count, num_shards=1, questions_per_image=1, **difficulty)
        for row in ds.decode(False):
            scene = json.loads(row["scene"])
            with Image.open(io.BytesIO(row["images"][0]["bytes"])) as im:
                pixels = np.asarray(im.convert("RGB"))
            assert pixels.shape == (320, 480, 3)
            shown = shown_pixels(scene, image=pixels)
            assert min(shown) >= DEFAULT_MIN_PIXELS_PER_OBJECT, (row["question_id"], shown)
            seen += 1
    assert seen == 120


# -- confounder -----------------------------------------------------------------------------


def test_confounder_fixes_a_colour_per_shape_in_training_only():
    def colours(split):
        per_shape: dict[str, set] = {}
        for row in stream(seed=9, split=split, num_questions=80, num_shards=2, confounder=True).select_columns(["scene"]):
            for obj in json.loads(row["scene"])["objects"]:
                per_shape.setdefault(obj["shape"], set()).add(obj["color"])
        return per_shape

    train = colours("train")
    assert len(train) == 3 and all(len(c) == 1 for c in train.values())
    assert len({next(iter(c)) for c in train.values()}) == 3
    assert all(len(c) > 1 for c in colours("test").values())


def test_adversarial_share_and_categories(folder):
    def categories(**difficulty):
        got = stream(folder, seed=2, num_questions=96, num_shards=2, **difficulty).decode(False)
        names = got.features["category"].names
        return Counter(names[row["category"]] for row in got.select_columns(["category"]))

    assert set(categories(adversarial=0.0)) - {"adversarial"} and "adversarial" not in categories(adversarial=0.0)
    assert set(categories(adversarial=1.0)) == {"adversarial"}
    half = categories(adversarial=0.5, categories=["adversarial", "insertion"])
    assert set(half) == {"adversarial", "insertion"} and 0.25 <= half["adversarial"] / 96 <= 0.75


# -- options --------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, message", [
    ({"num_operations": 9}, "num_operations must be an integer in 1..8 or None, got 9"),
    ({"operations": "mixed"}, "operations must be one of alternating, same_sign"),
    ({"categories": "addition"}, "categories: unknown 'addition'"),
    ({"adversarial": 2}, "adversarial must be a number in"),
    ({"max_objects": 30}, "max_objects must be an integer in 3..14"),
    ({"confounder": True, "num_operations": 5}, "num_operations must be <= 3"),
    ({"split": "dev"}, "split must be one of"),
    ({"num_questions": -1}, "num_questions must be an integer in 0.."),
    ({"num_shards": 10**8}, "num_shards must be an integer in 1..4096, got 100000000"),
    ({"questions_per_image": 10**6}, "questions_per_image must be an integer in 1..1000"),
    ({"max_answer": 10**7}, "max_answer must be an integer in 0..1000, got 10000000"),
    ({"colour": "red"}, "unknown stream option colour"),
])
def test_bad_options_are_one_line_errors(kwargs, message):
    with pytest.raises(StreamError, match=message.replace("(", r"\(").replace(".", r"\.")) as info:
        stream(**kwargs)
    assert "\n" not in str(info.value)


def test_an_unreachable_difficulty_stops_after_bounded_work(monkeypatch):
    import clevr_math.streaming as streaming

    monkeypatch.setattr(streaming, "MAX_BARREN_SCENES", 12)
    # 8 insertions onto at least 3 objects pass 10; 8 removals need 8 colours among 3 objects.
    impossible = stream(seed=0, num_operations=8, operations="same_sign", max_objects=3)
    with pytest.raises(StreamError, match="12 scenes in a row gave no problem"):
        next(iter(impossible))


def test_rows_name_the_split_asked_for(folder):
    row = next(iter(stream(folder, split="validation", num_shards=1).decode(False)))
    assert row["extra_info"]["split"] == "validation" and row["question_id"].startswith("val_")


def test_folder_streams_refuse_world_knobs(folder):
    with pytest.raises(StreamError, match="max_objects and confounder shape synthetic worlds"):
        stream(folder, confounder=True)
    assert Difficulty(num_operations=3).templates()[0][2] == ("chain_3",)
    assert clevr_math.stream is stream


# -- export ---------------------------------------------------------------------------------


def test_export_writes_the_stream_rows_as_parquet(tmp_path, capsys):
    from clevr_math.cli import main

    out = tmp_path / "hub"
    assert main(["export", "--config", "prompts", "--stream_questions", "24", "--num_operations", "2",
                 "--stream_seed", "3", "--out", str(out), "--quiet"]) == 0
    written = pq.read_table(sorted((out / "prompts").glob("train-*.parquet"))[0]).to_pylist()
    streamed = list(stream(seed=3, num_questions=24, num_operations=2).decode(False))
    assert [r["question_id"] for r in written] == [r["question_id"] for r in streamed]
    assert [r["images"][0]["bytes"] for r in written] == [r["images"][0]["bytes"] for r in streamed]
    assert {r["num_operations"] for r in written} == {2}
    assert (out / ".ownership.json").is_file()  # written through the ownership module, as every export
    capsys.readouterr()
    for argv, message in ((["--stream_questions", "5"], "pass --config prompts"),
                          (["--config", "prompts", "--stream_questions", "5", "--num_operations", "12"],
                           "num_operations must be an integer in 1..8"),
                          (["--config", "prompts", "--num_operations", "3"], "add --stream_questions")):
        assert main(["export", "--out", str(tmp_path / "bad"), *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err


# -- rows without datasets' per-example encoding --------------------------------------------


def _exact(value):
    """A value as comparable plain data that keeps what == does not: types and key order (an
    image decoded to PIL as its mode, size and pixels)."""
    if isinstance(value, dict):
        return ("dict", tuple((key, _exact(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("list", tuple(_exact(item) for item in value))
    if hasattr(value, "tobytes"):
        return ("image", value.mode, value.size, value.tobytes())
    return (type(value).__name__, value)


def _reference(row: dict, features, style: str, split: str) -> dict:
    """The row as datasets' own path makes it: the stream's raw row (question_row's fields, then
    prompt_row, then the stream's columns: what the stream yielded before it built encoded rows)
    through ``features.encode_example`` then ``decode_example``."""
    from builder_utils.prompts import prompt_row, prompt_spec_of

    spec = prompt_spec_of(clevr_math.ClevrMath)
    names = clevr_math.streaming.stream_features()["category"].names
    source = {name: row[name] for name in ("question", "label", "template", "num_operations", "question_id",
                                           "image_filename")}
    source |= {"category": names[row["category"]], "image": {"bytes": row["images"][0]["bytes"], "path": None}}
    raw = prompt_row(source, dataset=spec, style=style, split=split, index=row["extra_info"]["index"])
    raw |= {name: row[name] for name in ("question", "program", "cot", "scene", "steps")}
    raw = {name: raw[name] for name in features}  # a select_columns keeps the columns it names
    return features.decode_example(features.encode_example(raw))


@pytest.mark.parametrize("style", ["think_answer", "plain"])  # a system turn first, or the user's (see _EncodedPieces)
def test_rows_are_what_datasets_encode_then_decode_makes_of_them(folder, style):
    import datasets

    def check(ds, count, split="train"):
        whole = stream(folder, seed=7, num_shards=3, prompt_style_name=style, split=split).decode(False)
        got = [_exact(row) for row in islice(ds, count)]
        assert len(got) == count
        assert got == [_exact(_reference(row, ds.features, style, split)) for row in islice(whole, count)]

    undecoded = stream(folder, seed=7, num_shards=3, prompt_style_name=style).decode(False)
    # The fast path: the stream's own iterable yields the rows, datasets adds no per-example step.
    assert type(undecoded._prepare_ex_iterable_for_iteration()).__name__ == "_StreamExamples"
    check(undecoded, 300)
    check(stream(folder, seed=7, num_shards=3, prompt_style_name=style, split="validation").decode(False), 40,
          split="validation")
    decoded = stream(folder, seed=7, num_shards=3, prompt_style_name=style)  # PIL images: datasets' own path
    check(decoded, 40)
    check(decoded.cast_column("images", datasets.List(datasets.Image(decode=False))), 100)
    check(undecoded.cast_column("cot", datasets.Value("large_string")), 100)  # other features: datasets' path
    check(undecoded.select_columns(["images", "category", "prompt"]), 100)
    check(decoded.select_columns(["images", "prompt"]).decode(False), 100)


@pytest.mark.parametrize("source", ["synthetic", "folder"])
def test_a_resumed_fast_path_stream_gives_the_same_rows(folder, source):
    def make():
        return stream(None if source == "synthetic" else folder, seed=3, num_questions=90, num_shards=2).decode(False)

    whole = [_exact(row) for row in make()]
    ds = make()
    iterator = iter(ds)
    for _ in range(37):  # in the middle of the first block (16 scenes, up to 4 problems each)
        next(iterator)
    resumed = make()
    resumed.load_state_dict(ds.state_dict())
    assert [_exact(row) for row in resumed] == whole[37:]
    assert len(whole) == 90


def test_a_stream_mixed_with_other_sources_leaves_their_rows_to_datasets():
    """interleave_datasets takes its first source's features for all: the stream's rows need no
    encoding, another generator's may (a category as its name), and datasets still encodes them."""
    import datasets

    first = stream(seed=0, num_questions=6, num_shards=2).decode(False)
    names = first.features["category"].names
    raw = [dict(row, category=names[row["category"]]) for row in stream(seed=1, num_questions=6).decode(False)]
    other = datasets.IterableDataset.from_generator(lambda: iter(raw), features=first.features)
    for mixed in (datasets.interleave_datasets([first, other]), datasets.concatenate_datasets([first, other]),
                  datasets.interleave_datasets([first.shuffle(seed=1, buffer_size=3), other])):
        got = list(mixed)
        assert got and all(type(row["category"]) is int for row in got)
    assert [_exact(row) for row in islice(datasets.interleave_datasets([first, other]), 0, None, 2)] == \
        [_exact(row) for row in first]
