"""The CLEVR-Math builder on a synthetic CLEVR_v1.0 folder, through the real ``datasets`` paths."""

from __future__ import annotations

import json
import logging
import os
import shutil

import datasets
import pytest
from builder_test_helpers import BuilderSpec, assert_same_rows, build, check_builder

from builder_utils.checksums import DownloadError
from builder_utils.clevr import answer, execute, load_scenes
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.clevr.templates import template_set_dir
from clevr_math import CATEGORIES, ClevrMath, ConfigError
from clevr_math.clevr_folder import ClevrDataError
from clevr_math.released import ReleasedQuestionsError

SCENES_PER_SPLIT = 16
SPLITS = ("train", "validation", "test")
CLEVR_SPLIT = {"train": "train", "validation": "val", "test": "test"}


@pytest.fixture(scope="module")
def clevr_dir(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("clevr") / "CLEVR_v1.0"
    write_clevr_folder(root, SCENES_PER_SPLIT, seed=0, splits=("train", "val", "test"), progress=False)
    return str(root)


@pytest.fixture(scope="module")
def built(clevr_dir, tmp_path_factory) -> dict[str, datasets.DatasetDict]:
    """Every config built and checked once by the shared declarative helper."""
    spec = BuilderSpec(
        builder_class=ClevrMath,
        data_dir=clevr_dir,
        configs={
            "general": {split: _generated_count(clevr_dir, split) for split in SPLITS},
            # One held-out template: at most one multihop question per test image.
            "multihop": {"train": _positive, "validation": _positive, "test": _at_most(SCENES_PER_SPLIT)},
            "chains": {split: _positive for split in SPLITS},
        },
        unique_column="question_id",
        disjoint_column="image_filename",
    )
    return check_builder(spec, cache_dir=tmp_path_factory.mktemp("cache"))


def _positive(n: int) -> bool:
    return n > 0


def _at_most(limit: int):
    return lambda n: 0 < n <= limit


def _split_scenes(clevr_dir: str, split: str):
    return load_scenes(os.path.join(clevr_dir, "scenes", f"CLEVR_{CLEVR_SPLIT[split]}_scenes.json"))


def _generated_count(clevr_dir: str, split: str) -> int:
    """Questions the generator library itself makes for a split (the builder must keep all)."""
    generator = QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=0, max_answer=10))
    return sum(1 for _ in generator.generate(_split_scenes(clevr_dir, split)))


def _scenes_by_file(clevr_dir: str, split: str) -> dict[str, dict]:
    return {scene["image_filename"]: scene for scene in _split_scenes(clevr_dir, split)}


def test_every_config_builds_with_expected_splits(built):
    assert sorted(built) == ["chains", "general", "multihop"]
    for config, dataset in built.items():
        assert sorted(dataset) == sorted(SPLITS), config


def test_features_and_types(built):
    features = built["general"]["train"].features
    assert features["template"] == datasets.Value("string")
    assert features["id"] == datasets.Value("string")
    assert features["question"] == datasets.Value("string")
    assert isinstance(features["image"], datasets.Image)
    assert features["label"] == datasets.Value("int64")
    assert features["question_id"] == datasets.Value("string")
    assert features["image_filename"] == datasets.Value("string")
    assert features["category"].names == list(CATEGORIES)
    assert features["question_family_index"] == datasets.Value("int32")
    assert features["cot"] == datasets.Value("string")
    assert features["num_operations"] == datasets.Value("int32")
    assert features["intermediate_counts"] == datasets.List(datasets.Value("int32"))
    node = features["program"].feature
    assert set(node) == {"function", "inputs", "value_inputs"}

    row = built["general"]["train"][0]
    assert row["image"].size == (480, 320)  # synthetic images are CLEVR v1.0's size
    assert row["id"] == row["image_filename"] == "CLEVR_train_000000.png"
    assert row["question_id"] == "train_000000_0"
    assert isinstance(row["label"], int) and 0 <= row["label"] <= 10
    assert row["template"] in {"addition", "adversarial", "subtraction", "subtraction-multihop"}
    assert row["program"][0] == {"function": "scene", "inputs": [], "value_inputs": []}
    assert row["cot"].strip().endswith(f"Answer: {row['label']}.")


def test_every_category_and_template_occurs_in_general(built):
    general = built["general"]
    names = general["train"].features["category"].names
    seen = {names[c] for ds in general.values() for c in ds["category"]}
    assert seen == set(CATEGORIES) - {"changes"}  # the changes configuration's own category
    templates = {t for ds in general.values() for t in ds["template"]}
    assert templates == {"addition", "adversarial", "subtraction", "subtraction-multihop"}


def test_multihop_rule(built):
    multihop = built["multihop"]
    names = multihop["train"].features["category"].names
    for split in ("train", "validation"):
        categories = {names[c] for c in multihop[split]["category"]}
        assert "multihop" not in categories and categories, split
    test = multihop["test"]
    assert {names[c] for c in test["category"]} == {"multihop"}
    assert set(test["template"]) == {"subtraction-multihop"}
    # The general config does have multihop questions in training: the rule is the config's.
    assert "multihop" in {names[c] for c in built["general"]["train"]["category"]}


def test_labels_match_reexecuted_programs(built, clevr_dir):
    checked = 0
    for config in ("general", "chains"):
        for split, ds in built[config].items():
            scenes = _scenes_by_file(clevr_dir, split)
            for row in ds.remove_columns("image"):
                scene = scenes[row["image_filename"]]
                assert answer(row["program"], scene) == str(row["label"]), row["question_id"]
                outputs = execute(row["program"], scene)
                arithmetic = [out for node, out in zip(row["program"], outputs) if node["function"] in ("addition", "subtraction")]
                assert row["intermediate_counts"] == arithmetic, row["question_id"]
                checked += 1
    assert checked > 500


def test_chains_keep_every_intermediate_count_within_max_answer(built, clevr_dir):
    lengths = set()
    for split, ds in built["chains"].items():
        scenes = _scenes_by_file(clevr_dir, split)
        for row in ds.remove_columns("image"):
            outputs = execute(row["program"], scenes[row["image_filename"]])
            counts = [out for node, out in zip(row["program"], outputs) if node["function"] in ("addition", "subtraction")]
            assert len(counts) == row["num_operations"] and all(0 <= c <= 10 for c in counts), row["question_id"]
            assert row["intermediate_counts"] == counts, row["question_id"]
            lengths.add(row["num_operations"])
    assert lengths <= {2, 3, 4, 5} and len(lengths) > 1


def test_question_ids_follow_images(built):
    for split, ds in built["general"].items():
        for row in ds.remove_columns(["image", "program", "cot"]):
            prefix, index, k = row["question_id"].rsplit("_", 2)
            assert prefix == CLEVR_SPLIT[split]
            assert row["image_filename"] == f"CLEVR_{prefix}_{index}.png"
            assert int(k) < 10  # templates_per_image


def test_num_proc_2_gives_the_rows_of_num_proc_1(clevr_dir, tmp_path):
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir, builder_kwargs={"reset_counts_every": 4})
    one_builder, one = build(spec, "general", tmp_path / "one", num_proc=1)
    two_builder, two = build(spec, "general", tmp_path / "two", num_proc=2)
    # Four balancing windows per split, so both workers really ran.
    assert len(two_builder.info.splits["train"].shard_lengths or []) == 2
    for split in SPLITS:
        assert_same_rows(one[split], two[split], f"{split}: num_proc=2 vs num_proc=1")


def test_config_override_rebuilds_with_the_new_value(clevr_dir, tmp_path):
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir)
    default_builder, default = build(spec, "general", tmp_path)
    small_builder, small = build(spec, "general", tmp_path, templates_per_image=2)
    assert small_builder.cache_dir != default_builder.cache_dir
    per_image = max(int(qid.rsplit("_", 1)[1]) for qid in small["train"]["question_id"]) + 1
    assert per_image == 2 < default["train"].num_rows / SCENES_PER_SPLIT


def test_add_post_prompt_option_appends_the_integer_sentence(clevr_dir, tmp_path):
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir)
    _, plain = build(spec, "multihop", tmp_path)
    _, prompted = build(spec, "multihop", tmp_path, add_post_prompt=True)
    sentence = " Answer with only the number in curly braces, e.g. {1}."
    for split in plain:
        assert prompted[split]["question"] == [q + sentence for q in plain[split]["question"]]
        assert prompted[split]["label"] == plain[split]["label"]


def test_edited_predefined_config_is_not_served_from_a_stale_cache(clevr_dir, tmp_path, monkeypatch):
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir)
    before_builder, before = build(spec, "general", tmp_path)
    # Someone edits the shipped `general` config in the code: same name, same config id.
    monkeypatch.setattr(ClevrMath.builder_configs["general"], "seed", 7)
    after_builder, after = build(spec, "general", tmp_path)
    assert after_builder.config_id == before_builder.config_id
    assert after_builder.cache_dir != before_builder.cache_dir
    assert before["train"]["question"] != after["train"]["question"]


def test_edited_template_file_rebuilds(clevr_dir, tmp_path):
    templates = tmp_path / "my_templates"
    shutil.copytree(template_set_dir("clevr_math"), templates)
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir, builder_kwargs={"template_set": str(templates)})
    first_builder, first = build(spec, "general", tmp_path / "cache")
    path = templates / "addition.json"
    doc = json.loads(path.read_text())
    for template in doc:
        template["text"] = [t.replace("How many", "Count: how many") for t in template["text"]]
    path.write_text(json.dumps(doc))
    second_builder, second = build(spec, "general", tmp_path / "cache")
    assert second_builder.cache_dir != first_builder.cache_dir
    assert not any("Count: how many" in q for q in first["train"]["question"])
    assert any("Count: how many" in q for q in second["train"]["question"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"config_name": "singlehop"}, "valid: general, multihop, chains"),
        ({"config_name": "general", "templates_per_image": 0}, "templates_per_image must be an integer in 1..1000"),
        ({"config_name": "general", "max_answer": 10**8}, "max_answer must be an integer in 0..1000 or None"),
        ({"config_name": "general", "seed": -1}, "seed must be an integer in 0..18446744073709551615"),
        ({"config_name": "general", "holdout_category": "division"}, "must be None or one of remove_group"),
        ({"config_name": "general", "template_set": "clevr"}, "valid: clevr_math, clevr_math_chains"),
        ({"config_name": "general", "seeds": 3}, "unknown CLEVR-Math config option(s) seeds; valid:"),
        ({"config_name": "general", "question_types": ["division"]}, "unknown question type 'division'"),
        ({"config_name": "multihop", "question_types": ["subtraction-multihop"]}, "no template of set"),
    ],
)
def test_bad_config_names_the_valid_choices(kwargs, message, clevr_dir, tmp_path):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ClevrMath(data_dir=clevr_dir, cache_dir=str(tmp_path), **kwargs)


def test_longer_chains_than_the_set_holds_warn_and_a_written_set_serves_them(clevr_dir, tmp_path, caplog):
    """max_operations filters a template set; asking for more than it holds says how to get them,
    and a chain set written by builder_utils.clevr.chain_templates gives the longer chains."""
    from builder_utils.clevr import chain_templates as chains

    with caplog.at_level(logging.WARNING, logger="clevr_math.clevr_math"):
        ClevrMath(config_name="chains", data_dir=clevr_dir, cache_dir=str(tmp_path), max_operations=6)
    assert any("max_operations=6" in r.getMessage() and "chain_templates --max-operations 6" in r.getMessage()
               for r in caplog.records)

    longer = tmp_path / "chains_6"
    chains.write_chain_set(longer, max_operations=6)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="clevr_math.clevr_math"):
        _, built = build(BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir), "chains", tmp_path / "cache",
                         template_set=str(longer), max_operations=6, bound_intermediate_counts=False, max_answer=40)
    assert not [r for r in caplog.records if "max_operations" in r.getMessage()]
    assert 6 in set(built["train"]["num_operations"])


def test_a_new_category_is_a_template_file(clevr_dir, tmp_path):
    """What "a new CLEVR-Math category" touches: a template file that declares it (here in a
    folder of its own, passed as template_set). The builder gives it the next ClassLabel id
    after the paper's six and writes its rows; no module changes. (Holding it out with
    holdout_category, or fixing its id in the shipped sets, is one line in clevr_math/categories.py.)"""
    shipped = json.loads((template_set_dir("clevr_math") / "subtraction.json").read_text())
    custom = tmp_path / "with_new_category"
    custom.mkdir()
    (custom / "remove_colour.json").write_text(json.dumps([{**shipped[0], "category": "remove_colour"}]))
    _, built = build(BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir), "general", tmp_path / "cache",
                     template_set=str(custom))
    names = built["train"].features["category"].names
    assert names == [*CATEGORIES, "remove_colour"]
    categories = set(built["train"]["category"]) | set(built["validation"]["category"])
    assert categories == {names.index("remove_colour")}


def test_missing_image_names_the_file_and_leaves_no_cache(clevr_dir, tmp_path):
    data = tmp_path / "CLEVR_v1.0"
    shutil.copytree(clevr_dir, data)
    (data / "images" / "val" / "CLEVR_val_000005.png").unlink()
    builder = ClevrMath(config_name="general", data_dir=str(data), cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ClevrDataError, match=r"CLEVR_val_scenes.json: scene 5 .*CLEVR_val_000005.png not found"):
        builder.download_and_prepare()
    assert not os.path.exists(builder.cache_dir)


def test_missing_scene_file_names_the_path_and_the_options(tmp_path):
    (tmp_path / "scenes").mkdir()
    builder = ClevrMath(config_name="general", data_dir=str(tmp_path), cache_dir=str(tmp_path / "cache"))
    with pytest.raises(ClevrDataError, match=r"CLEVR_train_scenes.json: scene file not found.*clevr-math demo"):
        builder.download_and_prepare()


def test_no_data_dir_and_no_network_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    builder = ClevrMath(config_name="general", cache_dir=str(tmp_path))
    with pytest.raises(DownloadError) as raised:
        builder.download_and_prepare()
    message = str(raised.value)
    assert "Offline mode is enabled" in message  # the reason, not only the URL
    for option in ("data_dir=", "CLEVR_v1.0.zip", "clevr-math synth", "clevr-math demo"):
        assert option in message


def test_failed_download_without_offline_mode_is_a_clear_error(tmp_path, monkeypatch):
    """Without HF_HUB_OFFLINE the download really starts: it fails either because fsspec's HTTP
    support (aiohttp) is missing, which datasets 5.x does not install, or because nothing
    listens at the address. The archive's URL is pointed at a closed local port, so this test
    never downloads the real 19 GB zip, even on a machine with network."""
    import importlib.util

    import clevr_math.clevr_math as module
    from builder_utils.checksums import Download

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", False, raising=False)
    closed = Download("http://127.0.0.1:9/CLEVR_v1.0.zip", 1, "0" * 64, "CLEVR_v1.0.zip")
    monkeypatch.setattr(module, "CLEVR_ZIP", closed)
    builder = ClevrMath(config_name="general", cache_dir=str(tmp_path))
    with pytest.raises(DownloadError) as raised:
        builder.download_and_prepare()
    message = str(raised.value)
    assert "http://127.0.0.1:9/CLEVR_v1.0.zip" in message
    for option in ("data_dir=", "clevr-math synth", "clevr-math demo"):
        assert option in message
    if importlib.util.find_spec("aiohttp") is None:
        assert "pip install 'fsspec[http]'" in message


def test_no_test_scenes_means_no_test_split(clevr_dir, tmp_path):
    data = tmp_path / "CLEVR_v1.0"
    shutil.copytree(clevr_dir, data)
    (data / "scenes" / "CLEVR_test_scenes.json").unlink()  # like the official archive
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=str(data))
    _, dataset = build(spec, "general", tmp_path / "cache")
    assert sorted(dataset) == ["train", "validation"]
    # multihop's questions live only in test: without test scenes it is refused, naming the ways
    with pytest.raises(ConfigError, match=r"no test scenes .*test_data_dir=DIR .*--num_scenes test=1000"):
        build(spec, "multihop", tmp_path / "cache")


def test_test_data_dir_gives_the_multihop_test_split(clevr_dir, tmp_path):
    data = tmp_path / "CLEVR_v1.0"
    shutil.copytree(clevr_dir, data)
    (data / "scenes" / "CLEVR_test_scenes.json").unlink()
    shutil.rmtree(data / "images" / "test")
    tests = write_clevr_folder(tmp_path / "test_world", {"test": 6}, seed=11, progress=False)
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=str(data))
    _, dataset = build(spec, "multihop", tmp_path / "cache", test_data_dir=str(tests))
    assert sorted(dataset) == ["test", "train", "validation"]
    names = dataset["test"].features["category"].names
    assert {names[c] for c in dataset["test"]["category"]} == {"multihop"} and len(dataset["test"]) > 0
    assert {f.split("_")[1] for f in dataset["test"]["image_filename"]} == {"test"}
    # a test split in data_dir and another in test_data_dir: one must go
    with pytest.raises(ConfigError, match="data_dir has a test split already"):
        build(BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir), "multihop", tmp_path / "c2",
              test_data_dir=str(tests))


def test_streaming_yields_the_prepared_rows(clevr_dir, tmp_path):
    spec = BuilderSpec(builder_class=ClevrMath, data_dir=clevr_dir)
    builder, dataset = build(spec, "multihop", tmp_path)
    streamed = list(builder.as_streaming_dataset(split="test"))
    assert [r["question_id"] for r in streamed] == dataset["test"]["question_id"]


def _released_file(path, split: str, questions: list[dict]) -> None:
    path.write_text(json.dumps({"info": {"split": split}, "questions": questions}))


def test_released_question_files(clevr_dir, tmp_path):
    """The public generator's format: template file names with .json, per-file indices,
    `type`/`side_inputs` program nodes, integer answers."""
    program = [
        {"type": "scene", "inputs": [], "side_inputs": [], "_output": [0, 1]},
        {"type": "filter_color", "inputs": [0], "side_inputs": ["red"]},
        {"type": "count", "inputs": [1]},
        {"type": "scene", "inputs": []},
        {"type": "count", "inputs": [3]},
        {"type": "subtraction", "inputs": [4, 2]},
    ]

    def question(split, image_index, family, index, answer_value):
        return {
            "image_index": image_index,
            "image_filename": f"CLEVR_{split}_{image_index:06d}.png",
            "split": split,
            "question": f"{family} {index} on {image_index}?",
            "answer": answer_value,
            "template_filename": f"{family}.json",
            "question_family_index": index,
            "program": program,
        }

    released = tmp_path / "released"
    released.mkdir()
    for split in ("train", "val", "test"):
        _released_file(
            released / f"clevr-math-{split}.json",
            split,
            [
                question(split, 0, "subtraction", 3, "2"),
                question(split, 0, "subtraction-multihop", 0, 1),
                question(split, 1, "addition", 2, "7"),
            ],
        )
    spec = BuilderSpec(
        builder_class=ClevrMath,
        data_dir=clevr_dir,
        builder_kwargs={"released_questions_dir": str(released)},
        configs={
            "general": {"train": 3, "validation": 3, "test": 3},
            "multihop": {"train": 2, "validation": 2, "test": 1},
        },
        unique_column="question_id",
        disjoint_column="image_filename",
    )
    built = check_builder(spec, tmp_path / "cache")
    rows = built["general"]["validation"].remove_columns("image").to_list()
    names = built["general"]["validation"].features["category"].names
    assert [r["question_id"] for r in rows] == ["val_000000_0", "val_000000_1", "val_000001_0"]
    assert [names[r["category"]] for r in rows] == ["count_backwards", "multihop", "insertion"]
    assert [r["template"] for r in rows] == ["subtraction", "subtraction-multihop", "addition"]
    assert [r["label"] for r in rows] == [2, 1, 7]
    # Family indices count across the set, files sorted: addition 0-2, adversarial 3-5, ...
    assert [r["question_family_index"] for r in rows] == [9, 12, 2]
    assert rows[0]["program"][1] == {"function": "filter_color", "inputs": [0], "value_inputs": ["red"]}
    assert rows[0]["num_operations"] == 1 and rows[0]["cot"] is None and rows[0]["intermediate_counts"] is None
    assert [r["template"] for r in built["multihop"]["test"]] == ["subtraction-multihop"]


def test_released_file_with_unknown_template_names_the_question(clevr_dir, tmp_path):
    released = tmp_path / "released"
    released.mkdir()
    bad = {"image_index": 0, "image_filename": "CLEVR_train_000000.png", "question": "?", "answer": "1",
           "template_filename": "division.json", "question_family_index": 0, "program": []}
    for split in ("train", "val"):
        _released_file(released / f"clevr-math-{split}.json", split, [bad])
    data = tmp_path / "CLEVR_v1.0"
    shutil.copytree(clevr_dir, data)
    (data / "scenes" / "CLEVR_test_scenes.json").unlink()
    builder = ClevrMath(config_name="general", data_dir=str(data), cache_dir=str(tmp_path / "c"),
                        released_questions_dir=str(released))
    with pytest.raises(ReleasedQuestionsError, match=r"clevr-math-train.json: question 0: unknown template_filename"):
        builder.download_and_prepare()
