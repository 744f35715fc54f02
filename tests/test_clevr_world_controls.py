"""CLEVR's render_images.py controls in `clevr-math synth` and the world API (issue 36).

Each control changes the world as it should; each meaningless combination is one error line and
exit 2; the stream and `problems` honour `cogent=`; re-runs never lose a world.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from pathlib import Path

import pytest

import clevr_math
from builder_utils.clevr import load_scenes
from builder_utils.clevr.synth import WorldOptions, WorldRules, cogent_combos, generate_scene, write_clevr_folder
from builder_utils.clevr.synth.folder import ImageOptions, build_parser, main
from builder_utils.options import options_from_args
from clevr_math.streaming import StreamError

CLEVR_COLOURS = {"gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"}


def tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the record included) with its sha256."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def scenes_of(rules: WorldRules, count: int, split: str = "train", seed: int = 0) -> list[dict]:
    return [generate_scene(seed, split, k, rules=rules) for k in range(count)]


# -- the world-deciding controls ---------------------------------------------------------------


def test_cogent_conditions_are_clevrs_over_500_scenes():
    a = scenes_of(WorldOptions(cogent="A").rules(), 500, seed=1)
    b = scenes_of(WorldOptions(cogent="B").rules(), 500, seed=1)
    pairs_a = {(o["shape"], o["color"]) for s in a for o in s["objects"]}
    pairs_b = {(o["shape"], o["color"]) for s in b for o in s["objects"]}
    assert ("cube", "red") not in pairs_a and ("cube", "gray") not in pairs_b
    # CLEVR-CoGenT exactly: cubes gray/blue/brown/yellow in A, cylinders the other four; B swaps them
    first, second = {"gray", "blue", "brown", "yellow"}, {"red", "green", "purple", "cyan"}
    for pairs, cube, cylinder in ((pairs_a, first, second), (pairs_b, second, first)):
        assert {c for s, c in pairs if s == "cube"} == cube
        assert {c for s, c in pairs if s == "cylinder"} == cylinder
        assert {c for s, c in pairs if s == "sphere"} == CLEVR_COLOURS
    assert cogent_combos("A")["cube"] == sorted(first)


def test_a_combos_file_restricts_shapes_and_colours(tmp_path):
    path = tmp_path / "combos.json"
    path.write_text(json.dumps({"sphere": ["red", "blue"], "cube": ["green"]}))
    scenes = scenes_of(WorldOptions(shape_color_combos_json=str(path)).rules(), 60)
    pairs = {(o["shape"], o["color"]) for s in scenes for o in s["objects"]}
    assert pairs == {("sphere", "red"), ("sphere", "blue"), ("cube", "green")}  # no cylinder: not listed


def test_object_counts_stay_in_range_and_reach_both_ends():
    counts = [len(s["objects"]) for s in scenes_of(WorldOptions(min_objects=5, max_objects=7).rules(), 80)]
    assert set(counts) == {5, 6, 7}
    assert {len(s["objects"]) for s in scenes_of(WorldOptions(min_objects=12, max_objects=12).rules(), 5)} == {12}


def test_min_dist_and_margin_hold_between_every_pair():
    rules = WorldOptions(min_dist=0.8, margin=0.6, min_objects=3, max_objects=5).rules()
    radius = {"large": 0.7, "small": 0.35}
    for scene in scenes_of(rules, 40):
        right, behind = scene["directions"]["right"], scene["directions"]["behind"]
        for a, b in itertools.combinations(scene["objects"], 2):
            (xa, ya, _), (xb, yb, _) = a["3d_coords"], b["3d_coords"]
            gap = math.hypot(xa - xb, ya - yb) - radius[a["size"]] - radius[b["size"]]
            assert gap >= 0.8 - 1e-9
            assert abs((xa - xb) * right[0] + (ya - yb) * right[1]) >= 0.6 - 1e-9
            assert abs((xa - xb) * behind[0] + (ya - yb) * behind[1]) >= 0.6 - 1e-9


def test_defaults_are_clevrs_and_give_the_worlds_of_before():
    options = WorldOptions()
    assert (options.min_objects, options.max_objects, options.min_dist, options.margin, options.max_retries) == \
        (3, 10, 0.25, 0.4, 50)
    assert generate_scene(3, "val", 4, rules=options.rules()) == generate_scene(3, "val", 4)


def test_a_properties_file_sets_the_vocabulary_of_the_scene_graphs(tmp_path):
    path = tmp_path / "properties.json"
    path.write_text(json.dumps({"shapes": {"cube": "SmoothCube_v2", "sphere": "Sphere"},
                                "colors": {"red": [173, 35, 35], "blue": [42, 75, 215]},
                                "materials": {"rubber": "Rubber"}, "sizes": {"large": 0.7}}))
    scenes = scenes_of(WorldOptions(properties_json=str(path)).rules(), 30)
    objects = [o for s in scenes for o in s["objects"]]
    assert {o["color"] for o in objects} == {"red", "blue"} and {o["shape"] for o in objects} == {"cube", "sphere"}
    assert {o["material"] for o in objects} == {"rubber"} and {o["size"] for o in objects} == {"large"}
    (tmp_path / "bad.json").write_text(json.dumps({"shapes": {"torus": "T"}, "colors": {"red": [1, 2, 3]},
                                                   "materials": {"rubber": "R"}, "sizes": {"large": 0.7}}))
    with pytest.raises(ValueError, match="bad.json: torus: the synthetic worlds have shapes"):
        WorldOptions(properties_json=str(tmp_path / "bad.json")).rules()


def test_start_idx_and_filename_prefix_write_clevrs_names(tmp_path):
    world = WorldOptions(start_idx=5, filename_prefix="CLEVR_CoGenT", cogent="A")
    root = write_clevr_folder(tmp_path / "w", {"val": 3}, seed=2, progress=False, world=world)
    names = sorted(p.name for p in (root / "images" / "val").iterdir())
    assert names == [f"CLEVR_CoGenT_val_{k:06d}.png" for k in (5, 6, 7)]
    scenes = load_scenes(root / "scenes" / "CLEVR_val_scenes.json")
    assert [s["image_index"] for s in scenes] == [5, 6, 7]
    assert [s["image_filename"] for s in scenes] == names


def test_two_jobs_split_by_start_idx_equal_one_job(tmp_path):
    one = write_clevr_folder(tmp_path / "one", {"train": 6}, seed=4, progress=False)
    first = write_clevr_folder(tmp_path / "a", {"train": 4}, seed=4, progress=False)
    second = write_clevr_folder(tmp_path / "b", {"train": 2}, seed=4, progress=False, world=WorldOptions(start_idx=4))
    whole = load_scenes(one / "scenes" / "CLEVR_train_scenes.json")
    parts = [*load_scenes(first / "scenes" / "CLEVR_train_scenes.json"),
             *load_scenes(second / "scenes" / "CLEVR_train_scenes.json")]
    assert list(whole) == parts
    for k in range(6):
        name = f"images/train/CLEVR_train_{k:06d}.png"
        assert (one / name).read_bytes() == ((first if k < 4 else second) / name).read_bytes()


def test_camera_jitter_moves_the_pillow_camera_per_scene_from_the_seed():
    from builder_utils.clevr.synth.folder import _make_chunk

    images = ImageOptions()
    plain = _make_chunk(1, "val", 0, 3, None, images)
    moved = _make_chunk(1, "val", 0, 3, None, images, WorldRules(), 0.5)
    assert moved == _make_chunk(1, "val", 0, 3, None, images, WorldRules(), 0.5)
    assert plain == [generate_scene(1, "val", k) for k in range(3)]
    assert all(a["directions"] != b["directions"] for a, b in zip(plain, moved))
    assert moved[0]["directions"] != moved[1]["directions"]  # a draw per scene


@pytest.mark.parametrize("camera_jitter", [None, 0.5], ids=["default", "clevrs-0.5"])
def test_a_blender_job_keeps_the_pillow_world_of_the_same_seed(camera_jitter):
    # issue 35: the world (objects, 3d_coords, relations, pixel_coords) is decided once, by the seed and
    # the controls; the Blender job's scene graphs are decided before any Blender runs, so no Blender here
    from builder_utils.clevr.synth.blender import BlenderRenderer, BlenderSettings
    from builder_utils.clevr.synth.folder import _make_chunk

    world = WorldOptions(camera_jitter=camera_jitter)
    rules, vocab = world.rules(), world.rules().vocab()
    assert world.jitter("pillow")["camera_jitter"] == world.jitter("blender")["camera_jitter"]
    pillow = _make_chunk(0, "val", 0, 6, None, ImageOptions(), rules, world.jitter("pillow")["camera_jitter"])
    # the settings folder.py gives a Blender job: the world's vocabulary (CLEVR's) always named
    renderer = BlenderRenderer(["/nonexistent/blender"], BlenderSettings(colours=vocab.rgb, radii=vocab.radius))
    blender = [renderer.scene_for(0, "val", k, min_pixels_per_object=ImageOptions().min_pixels_per_object,
                                  scratch=Path("/nonexistent"), rules=rules, jitter=world.jitter("blender"))
               for k in range(6)]
    assert [{k: v for k, v in scene.items() if k != "_studio"} for scene in blender] == pillow


def test_the_scene_files_info_records_what_made_the_world(tmp_path):
    world = WorldOptions(cogent="B", min_objects=4, version="2.0", license="CC0", date="2026-12-03")
    root = write_clevr_folder(tmp_path / "w", {"val": 2}, seed=7, progress=False, world=world)
    info = load_scenes(root / "scenes" / "CLEVR_val_scenes.json").info
    assert (info["version"], info["license"], info["date"], info["seed"]) == ("2.0", "CC0", "2026-12-03", 7)
    assert info["shape_color_rule"] == {"name": "CoGenT B", "combos": cogent_combos("B")}
    assert info["controls"]["min_objects"] == 4 and info["controls"]["num_images"] == 2
    assert info["renderer"] == "pillow" and info["images"]["width"] == 480


# -- meaningless or refused combinations: one line, exit 2 --------------------------------------


def _properties(tmp: Path) -> str:
    path = tmp / "properties.json"
    path.write_text(json.dumps({"shapes": {"cube": "SmoothCube_v2"}, "colors": {"pink": [255, 100, 200]},
                                "materials": {"rubber": "Rubber"}, "sizes": {"large": 0.7}}))
    return str(path)


REFUSED = [
    (["--key_light_jitter", "0.5"], "--key_light_jitter: the pillow renderer has one fixed light"),
    (["--back_light_jitter", "0"], "--back_light_jitter: the pillow renderer"),
    (["--render_max_bounces", "8"], "--render_max_bounces: a Blender control, meaningless for --renderer pillow"),
    (["--render_tile_size", "256"], "--render_tile_size: a Blender control"),
    (["--samples", "64"], "--samples: a Blender control"),
    (["--device", "gpu"], "--device: a Blender control"),
    (["--save_blendfiles"], "--save_blendfiles: a Blender control"),
    (["--base_scene_blendfile", "base_scene.blend"], "--base_scene_blendfile: a Blender control"),
    (["--shape_dir", "shapes"], "--shape_dir: a Blender control"),
    (["--cogent", "A", "--shape_color_combos_json", "c.json"], "--cogent and --shape_color_combos_json"),
    (["--min_objects", "8", "--max_objects", "4"], "--min_objects 8 is above --max_objects 4"),
    (["--min_dist", "-1"], "min_dist must be a finite number >= 0 and <= 2.0"),
    (["--output_image_dir", "x"], "--output_image_dir: images go to OUT/images/<split>/"),
    (["--output_scene_file", "x.json"], "--output_scene_file: each split's scenes go to"),
    (["--output_blend_dir", "x"], "--output_blend_dir: with --save_blendfiles"),
    (["--renderer", "blender", "--save_blendfiles", "--no_render"], "--save_blendfiles with --no_render"),
    (["--properties_json", "{properties}"], "the pillow renderer draws CLEVR's own colours and sizes only"),
]


@pytest.mark.parametrize("extra, message", REFUSED, ids=[" ".join(e) for e, _ in REFUSED])
def test_a_meaningless_combination_is_one_line_and_exit_2(extra, message, tmp_path, capsys):
    extra = [e.replace("{properties}", _properties(tmp_path)) for e in extra]
    code = main(["--out", str(tmp_path / "w"), "--num_scenes", "1", "--quiet", *extra], prog="clevr-math synth")
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("clevr-math synth: error: ") and message in err, err
    assert not (tmp_path / "w").exists()


# -- re-runs never lose a world -------------------------------------------------------------------


def test_a_rerun_with_other_arguments_refuses_and_changes_nothing(tmp_path, capsys):
    out = str(tmp_path / "W")
    assert main(["--out", out, "--num_scenes", "6", "--splits", "train,val", "--quiet"]) == 0
    before = tree(tmp_path / "W")
    capsys.readouterr()
    # the case: a later run of val alone used to delete the train split
    assert main(["--out", out, "--num_scenes", "2", "--splits", "val", "--quiet"], prog="clevr-math synth") == 2
    err = capsys.readouterr().err
    assert "its val split was made with other arguments (num_images 6 -> 2)" in err
    assert "would replace 6 val image(s) and their scene file" in err and "--overwrite" in err
    assert tree(tmp_path / "W") == before
    assert main(["--out", out, "--num_scenes", "6", "--splits", "val", "--seed", "1", "--quiet"]) == 2
    assert "seed 0 -> 1" in capsys.readouterr().err
    # the same command again: nothing to do, nothing changed
    assert main(["--out", out, "--num_scenes", "6", "--splits", "train,val", "--quiet"]) == 0
    assert tree(tmp_path / "W") == before
    # --overwrite replaces that split only; train is kept byte for byte
    assert main(["--out", out, "--num_scenes", "2", "--splits", "val", "--overwrite", "--quiet"]) == 0
    after = tree(tmp_path / "W")
    assert {k: v for k, v in after.items() if "train" in k} == {k: v for k, v in before.items() if "train" in k}
    assert sorted(p.name for p in (tmp_path / "W" / "images" / "val").iterdir()) == \
        ["CLEVR_val_000000.png", "CLEVR_val_000001.png"]


def test_a_missing_split_is_added_keeping_every_other_file(tmp_path):
    root = write_clevr_folder(tmp_path / "W", {"train": 3, "val": 2}, seed=0, progress=False)
    before = tree(root)
    write_clevr_folder(root, {"test": 2}, seed=5, progress=False, world=WorldOptions(cogent="B"))
    after = tree(root)
    assert {k: v for k, v in after.items() if k in before and k != ".ownership.json"} == \
        {k: v for k, v in before.items() if k != ".ownership.json"}
    assert sorted(k for k in after if "test" in k) == ["images/test/CLEVR_test_000000.png",
                                                     "images/test/CLEVR_test_000001.png",
                                                     "scenes/CLEVR_test_scenes.json"]


def test_a_clevr_folder_the_user_made_is_never_written_into(tmp_path, capsys):
    real = tmp_path / "CLEVR_v1.0"
    write_clevr_folder(tmp_path / "made", {"val": 2}, seed=0, progress=False)
    (real / "scenes").mkdir(parents=True)
    (real / "images" / "val").mkdir(parents=True)
    (real / "scenes" / "CLEVR_val_scenes.json").write_bytes(
        (tmp_path / "made" / "scenes" / "CLEVR_val_scenes.json").read_bytes())
    for png in (tmp_path / "made" / "images" / "val").iterdir():
        (real / "images" / "val" / png.name).write_bytes(png.read_bytes())
    before = tree(real)
    for extra in ([], ["--overwrite"]):
        code = main(["--out", str(real), "--num_scenes", "test=2", "--quiet", *extra], prog="clevr-math synth")
        err = capsys.readouterr().err
        assert code == 2 and "a CLEVR folder that clevr-math synth did not write" in err
        assert "test_data_dir" in err and err.count("\n") == 1
        assert tree(real) == before


# -- the stream and problems honour cogent= --------------------------------------------------


def _pairs(rows) -> set[tuple[str, str]]:
    return {(o["shape"], o["color"]) for row in rows for o in json.loads(row["scene"])["objects"]}


def test_the_stream_and_problems_honour_cogent():
    train = clevr_math.stream(seed=2, split="train", num_questions=60, num_shards=2, cogent="A")
    pairs = _pairs(train.select_columns(["scene"]))
    assert ("cube", "red") not in pairs and {c for s, c in pairs if s == "cube"} <= {"gray", "blue", "brown", "yellow"}
    assert "CoGenT A" in train.info.description
    test = clevr_math.problems(size=40, seed=2, split="test", cogent="B")
    pairs = _pairs(test)
    assert ("cube", "gray") not in pairs and {c for s, c in pairs if s == "cylinder"} <= {"gray", "blue", "brown",
                                                                                        "yellow"}
    assert "CoGenT B" in test.info.description
    mapping = _pairs(clevr_math.problems(size=10, seed=2, cogent={"sphere": ["red"], "cube": ["red"]}))
    assert mapping <= {("sphere", "red"), ("cube", "red")}


@pytest.mark.parametrize("kwargs, message", [
    ({"cogent": "C"}, "cogent must be 'A', 'B' or a mapping"),
    ({"cogent": {"torus": ["red"]}}, "cogent: 'torus'"),
    ({"cogent": "A", "confounder": True}, "cogent and confounder both set the shape-colour rule"),
])
def test_a_bad_cogent_is_one_stream_error(kwargs, message):
    with pytest.raises(StreamError, match=message):
        clevr_math.stream(num_questions=1, **kwargs)


def test_cogent_over_a_folder_is_refused(tmp_path):
    root = write_clevr_folder(tmp_path / "w", {"train": 2, "val": 1}, seed=0, progress=False)
    with pytest.raises(StreamError, match="cogent shapes synthetic worlds"):
        clevr_math.stream(root, cogent="A")


# -- the multihop test split and the cards of worlds built with a rule ------------------------


def test_cards_describe_the_built_splits_and_their_snippets_run(tmp_path):
    from test_cards import AFTER_EXAMPLES, run_card_examples

    from builder_utils.hub import export_builder
    from clevr_math import ClevrMath

    world = write_clevr_folder(tmp_path / "W", {"train": 3, "val": 2}, seed=0, progress=False,
                               world=WorldOptions(cogent="A"))
    tests = write_clevr_folder(tmp_path / "T", {"test": 3}, seed=1, progress=False, world=WorldOptions(cogent="B"))
    common = dict(card_template="clevr_math", data_dir=world, progress=False, cache_dir=tmp_path / "cache")
    # a world of train and val only: general has no test split, and its card's snippets still run
    export_builder(ClevrMath, tmp_path / "general", configs=["general"], **common)
    done = run_card_examples(tmp_path / "general", AFTER_EXAMPLES["clevr_math"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    card = (tmp_path / "general" / "README.md").read_text(encoding="utf-8")
    assert "Shape-colour rule of the scenes: train: CoGenT A; val: CoGenT A" in card
    # multihop without test scenes: refused, nothing written
    with pytest.raises(ValueError, match="no test scenes .* test_data_dir=DIR"):
        export_builder(ClevrMath, tmp_path / "multihop", configs=["multihop"], **common)
    assert not (tmp_path / "multihop").exists()
    # with the test world beside it: only multihop questions in test, the card says where they come from
    export_builder(ClevrMath, tmp_path / "multihop", configs=["multihop"],
                   builder_kwargs={"test_data_dir": str(tests)}, **common)
    card = (tmp_path / "multihop" / "README.md").read_text(encoding="utf-8")
    assert "(`test_data_dir`)" in card and "test: CoGenT B" in card
    done = run_card_examples(tmp_path / "multihop", AFTER_EXAMPLES["clevr_math"], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    import datasets

    loaded = datasets.load_dataset(str(tmp_path / "multihop"), "multihop", cache_dir=str(tmp_path / "hf"))
    names = loaded["test"].features["category"].names
    assert sorted(loaded) == ["test", "train", "validation"]
    assert {names[c] for c in loaded["test"]["category"]} == {"multihop"}


def test_export_stream_cogent_reaches_the_stream():
    import argparse

    from clevr_math.streaming import StreamExport

    parser = argparse.ArgumentParser()
    StreamExport().add_arguments(parser)
    args = parser.parse_args(["--stream_questions", "4", "--stream_cogent", "B"])
    assert StreamExport().stream_kwargs(args)["cogent"] == "B"
    args.config = None
    with pytest.raises(ValueError, match="--stream_questions writes the prompts configuration only"):
        StreamExport().given(args)
    bare = parser.parse_args(["--stream_cogent", "A"])
    with pytest.raises(ValueError, match="add --stream_questions N --config prompts"):
        StreamExport().given(bare)


def test_export_multihop_without_test_scenes_is_one_line_and_exit_2(tmp_path, capsys):
    from clevr_math.cli import main as clevr_math_main

    world = write_clevr_folder(tmp_path / "W", {"train": 2, "val": 1}, seed=0, progress=False)
    code = clevr_math_main(["export", "--data_dir", str(world), "--out", str(tmp_path / "E"), "--config", "multihop",
                            "--quiet"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert code == 2 and len(errors) == 1 and "test_data_dir=DIR" in errors[0], err
    assert not (tmp_path / "E").exists()


# -- CLEVR's rendering names: aliases of our options, CLEVR's meaning ----------------------------


def _images(argv: list[str]) -> ImageOptions:
    args = build_parser().parse_args(["--out", "x", "--num_scenes", "1", *argv])
    return options_from_args(args, ImageOptions)


def test_use_gpu_is_clevrs_0_1_for_device():
    assert _images(["--use_gpu", "1"]).device == "gpu"
    assert _images(["--use_gpu", "0"]).device == "cpu"
    assert _images([]).device == "cpu"
    assert _images(["--device", "gpu"]).device == "gpu"


def test_render_num_samples_is_clevrs_name_for_samples():
    assert _images(["--render_num_samples", "64"]).samples == 64
    assert _images(["--render_num_samples", "64"]) == _images(["--samples", "64"])
    assert _images([]).samples == ImageOptions().samples


@pytest.mark.parametrize("extra, message", [(["--use_gpu", "2"], "--use_gpu: expected one of 0, 1, got '2'"),
                                            (["--render_num_samples", "0"], "samples must be an integer in 1..4096, got 0")])
def test_a_bad_clevr_rendering_value_is_one_line_and_exit_2(extra, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["--out", str(tmp_path / "w"), "--num_scenes", "1", "--quiet", *extra], prog="clevr-math synth")
    err = capsys.readouterr().err
    assert raised.value.code == 2
    assert err.count("\n") == 1 and err.startswith("clevr-math synth: error: ") and message in err, err
    assert not (tmp_path / "w").exists()
