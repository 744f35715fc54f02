"""Loading CLEVR scene files: the on-demand SceneFile, its pickling, and every malformed case."""

from __future__ import annotations

import json
import os
import pickle
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context

import pytest

from builder_utils.clevr import SceneError, SceneFile, load_scenes, validate_scene
from builder_utils.clevr import scenes as scenes_module
from clevr_scene_factory import SAMPLE_OBJECTS, make_scene, make_scenes, write_scene_file

SHAPES = ["cube", "sphere", "cylinder"]
COLORS = ["gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"]


def varied_scenes(count: int) -> list[dict]:
    """Deterministic scenes with 3 to 10 objects and varied attributes."""
    object_lists = []
    for k in range(count):
        n = 3 + k % 8
        object_lists.append(
            [
                (
                    ("small", "large")[(k + i) % 2],
                    COLORS[(3 * k + i) % 8],
                    ("rubber", "metal")[(k * i) % 2],
                    SHAPES[(k + 2 * i) % 3],
                    ((k + 5 * i) % 7) - 3.0,
                    ((2 * k + 3 * i) % 7) - 3.0,
                )
                for i in range(n)
            ]
        )
    return make_scenes(object_lists, split="val")


@pytest.fixture
def scene_file(tmp_path):
    scenes = varied_scenes(40)
    return write_scene_file(tmp_path / "CLEVR_val_scenes.json", scenes, split="val"), scenes


def test_scene_file_is_a_sequence_equal_to_the_parsed_scenes(scene_file):
    path, scenes = scene_file
    loaded = load_scenes(path)
    assert isinstance(loaded, SceneFile)
    assert len(loaded) == 40
    assert loaded.info == {"split": "val", "license": "CC BY 4.0", "version": "1.0", "date": "1/1/2026"}
    assert loaded.path == str(path)
    assert list(loaded) == scenes
    assert loaded[0] == scenes[0] and loaded[-1] == scenes[-1] and loaded[17] == scenes[17]
    assert loaded[5:12] == scenes[5:12]
    assert loaded[::3] == scenes[::3]
    assert loaded[30:10] == []
    assert loaded.window(8, 16) == scenes[8:16]
    assert loaded.window(3, 3) == []
    with pytest.raises(IndexError, match="scene index 40 out of range"):
        loaded[40]
    with pytest.raises(IndexError, match=r"window \[5, 41\)"):
        loaded.window(5, 41)


@pytest.mark.parametrize("dump_options", [{}, {"indent": 2}, {"indent": "\t", "separators": (",", " : ")}])
def test_any_json_layout_and_key_order(tmp_path, dump_options):
    scenes = varied_scenes(5)
    path = tmp_path / "scenes.json"
    # "scenes" before "info", extra top-level keys, arbitrary whitespace
    document = {"scenes": scenes, "extra": [1, {"a": None}], "info": {"split": "val"}}
    path.write_text("\n  " + json.dumps(document, **dump_options) + "\n\n")
    loaded = load_scenes(path)
    assert list(loaded) == scenes and loaded.info == {"split": "val"}


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1000])
def test_scenes_cut_anywhere_by_the_read_chunks(tmp_path, monkeypatch, chunk):
    """Small read chunks put chunk boundaries inside every kind of token (numbers, strings,
    keys, whitespace, multi-byte characters); the result must not depend on them."""
    scenes = varied_scenes(6)
    scenes[2]["note"] = "café ✓"  # non-ASCII content inside a scene
    scenes[4]["objects"][0]["rotation"] = 123456789.125
    path = write_scene_file(tmp_path / "scenes.json", scenes, indent=1, ensure_ascii=False)
    monkeypatch.setattr(scenes_module, "_CHUNK", chunk)
    loaded = load_scenes(path)
    assert list(loaded) == scenes
    assert loaded[2]["note"] == "café ✓"


def test_utf8_byte_order_mark_and_empty_scene_list(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"info": {}, "scenes": varied_scenes(2)}).encode())
    assert list(load_scenes(path)) == varied_scenes(2)
    path.write_text('{"info": {}, "scenes": [ ]}')
    assert len(load_scenes(path)) == 0


def test_pickling_is_cheap_and_windows_survive_it(tmp_path):
    scenes = varied_scenes(300)
    path = write_scene_file(tmp_path / "scenes.json", scenes)
    loaded = load_scenes(path)
    blob = pickle.dumps(loaded)
    # A handful of bytes per scene, against thousands in the file.
    assert len(blob) < os.path.getsize(path) / 50
    clone = pickle.loads(blob)
    assert clone.window(100, 140) == scenes[100:140]
    part = loaded.part(250, 300)
    assert len(part) == 50 and list(part) == scenes[250:300]
    assert len(pickle.dumps(part)) < len(blob) / 2


def test_a_small_file_hands_out_its_parsed_scenes_once_and_each_caller_gets_its_own(tmp_path):
    """The index pass's scenes are reused (no second parse of a small file), but a caller that
    changes what it got never changes what another caller gets, in this file or in a part."""
    scenes = varied_scenes(40)
    path = write_scene_file(tmp_path / "scenes.json", scenes)
    loaded = load_scenes(path)
    assert loaded._kept == 40  # what the first window will not parse again
    first = loaded.window(0, 40)
    assert first == scenes and loaded._kept == 0
    first[0]["objects"].clear()
    first[1]["image_filename"] = "changed.png"
    again = loaded.window(0, 40)
    assert again == scenes and all(a is not b for a, b in zip(first, again))
    assert loaded[0] == scenes[0] and list(loaded) == scenes

    loaded = load_scenes(path)
    single = loaded[5]  # one scene handed out: the next window over it parses the file
    single["objects"].clear()
    assert loaded.window(0, 10) == scenes[:10]
    part = loaded.part(20, 30)  # the part takes over its range's scenes
    assert part._kept == 10 and loaded._kept == 40 - 10 - 10
    mine = part.window(0, 10)
    mine[0]["relationships"].clear()
    assert loaded.window(20, 30) == scenes[20:30] and part.window(0, 10) == scenes[20:30]
    assert pickle.loads(pickle.dumps(load_scenes(path).part(0, 40)))._kept == 0  # offsets only

    shared = load_scenes(path)  # threads reading the same windows never get the same object
    with ThreadPoolExecutor(max_workers=4) as pool:
        windows = list(pool.map(lambda k: shared.window(0, 40), range(8)))
    assert all(window == scenes for window in windows)
    assert len({id(scene) for window in windows for scene in window}) == 8 * 40


def test_a_file_over_the_keep_budget_is_only_indexed(tmp_path, monkeypatch):
    scenes = varied_scenes(12)
    path = write_scene_file(tmp_path / "scenes.json", scenes)
    monkeypatch.setattr(scenes_module, "KEEP_PARSED_BYTES", os.path.getsize(path) - 1)
    loaded = load_scenes(path)
    assert loaded._kept == 0
    assert loaded.window(0, 12) == scenes and list(loaded.part(3, 9)) == scenes[3:9]


def _first_filenames(scene_file: SceneFile) -> list[str]:
    return [scene["image_filename"] for scene in scene_file.window(0, len(scene_file))]


def test_parts_read_in_worker_processes(tmp_path):
    scenes = varied_scenes(60)
    path = write_scene_file(tmp_path / "scenes.json", scenes)
    loaded = load_scenes(path)
    parts = [loaded.part(k, min(k + 25, len(loaded))) for k in range(0, len(loaded), 25)]
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool:
        results = list(pool.map(_first_filenames, parts))
    assert sum(results, []) == [scene["image_filename"] for scene in scenes]


def test_changed_file_is_detected(tmp_path):
    path = write_scene_file(tmp_path / "scenes.json", varied_scenes(3))
    loaded = load_scenes(path)
    write_scene_file(path, varied_scenes(4))
    os.utime(path, ns=(1, 1))
    with pytest.raises(SceneError, match="changed after load_scenes indexed it"):
        loaded[0]


# -- malformed files: every error names the file, the scene and the field --------------------


def _broken(tmp_path, mutate, count=4):
    scenes = varied_scenes(count)
    mutate(scenes)
    return write_scene_file(tmp_path / "broken_scenes.json", scenes, split="val")


SCENE_CASES = [
    ("missing key", lambda s: s[3].pop("objects"), r"scene 3 \(CLEVR_val_000003\.png\): objects: missing key"),
    ("missing filename", lambda s: s[1].pop("image_filename"), r"scene 1: image_filename: missing key"),
    ("missing relationships", lambda s: s[0].pop("relationships"), r"scene 0 \(CLEVR_val_000000\.png\): relationships: missing key"),
    ("unknown colour", lambda s: s[3]["objects"][2].__setitem__("color", "pink"),
     r"scene 3 \(CLEVR_val_000003\.png\): objects\[2\]\.color: unknown color 'pink' \(expected one of gray, red, blue"),
    ("unknown shape", lambda s: s[2]["objects"][0].__setitem__("shape", "cone"), r"scene 2 \(CLEVR_val_000002\.png\): objects\[0\]\.shape: unknown shape 'cone'"),
    ("attribute not a string", lambda s: s[2]["objects"][1].__setitem__("size", 3), r"scene 2 \(CLEVR_val_000002\.png\): objects\[1\]\.size: unknown size 3"),
    ("object missing material", lambda s: s[1]["objects"][1].pop("material"), r"scene 1 \(CLEVR_val_000001\.png\): objects\[1\]: missing key 'material'"),
    ("object missing coords", lambda s: s[1]["objects"][2].pop("3d_coords"), r"scene 1 \(CLEVR_val_000001\.png\): objects\[2\]: missing key '3d_coords'"),
    ("bad pixel coords", lambda s: s[1]["objects"][0].__setitem__("pixel_coords", [1, "a", 2]), r"objects\[0\]\.pixel_coords: expected a list of 2 or 3 numbers"),
    ("relationship index out of range", lambda s: s[2]["relationships"]["left"][1].append(9),
     r"scene 2 \(CLEVR_val_000002\.png\): relationships\.left\[1\]: object index 9 out of range \(the scene has 5 objects\)"),
    ("negative relationship index", lambda s: s[2]["relationships"]["front"][0].append(-1), r"relationships\.front\[0\]: object index -1 out of range"),
    ("relationship list too short", lambda s: s[3]["relationships"]["behind"].pop(),
     r"scene 3 \(CLEVR_val_000003\.png\): relationships\.behind: expected one list per object \(6\), got 5 entries"),
    ("relationship list too long", lambda s: s[0]["relationships"]["right"].append([]), r"relationships\.right: expected one list per object \(3\), got 4"),
    ("relation missing", lambda s: s[1]["relationships"].pop("front"), r"scene 1 \(CLEVR_val_000001\.png\): relationships: missing relation 'front'"),
    ("relation unknown", lambda s: s[1]["relationships"].__setitem__("above", []), r"relationships: unknown relations \['above'\]"),
    ("object related to itself", lambda s: s[0]["relationships"]["left"][2].append(2), r"relationships\.left\[2\]: object 2 is listed in relation to itself"),
    ("index not an integer", lambda s: s[0]["relationships"]["left"][0].append(1.0), r"relationships\.left\[0\]: object indices must be integers"),
    ("boolean index", lambda s: s[0]["relationships"]["left"][0].append(True), r"relationships\.left\[0\]: object indices must be integers"),
    ("duplicate index", lambda s: s[0]["relationships"]["left"][0].extend([1, 1]), r"relationships\.left\[0\]: duplicate object indices"),
    ("scene not an object", lambda s: s.__setitem__(2, [1, 2]), r"scene 2: scene: expected a JSON object, got list"),
    ("bad image index", lambda s: s[1].__setitem__("image_index", "1"), r"scene 1 \(CLEVR_val_000001\.png\): image_index: expected a non-negative integer"),
    ("objects not a list", lambda s: s[1].__setitem__("objects", {}), r"scene 1 \(CLEVR_val_000001\.png\): objects: expected a list, got dict"),
    ("NaN coordinate", lambda s: s[2]["objects"][1]["3d_coords"].__setitem__(0, float("nan")),
     r"scene 2 \(CLEVR_val_000002\.png\): objects\[1\]\.3d_coords\[0\]: expected a finite number, got nan"),
    ("infinite pixel coordinate", lambda s: s[3]["objects"][0]["pixel_coords"].__setitem__(1, float("-inf")),
     r"scene 3 \(CLEVR_val_000003\.png\): objects\[0\]\.pixel_coords\[1\]: expected a finite number, got -inf"),
    ("repeated image_index", lambda s: s[3].__setitem__("image_index", 1),
     r"scene 3 \(CLEVR_val_000003\.png\): image_index: 1 repeats the image_index of scene 1"),
]


@pytest.mark.parametrize("name, mutate, expected", SCENE_CASES, ids=[case[0] for case in SCENE_CASES])
def test_malformed_scene_names_file_scene_and_field(tmp_path, name, mutate, expected):
    path = _broken(tmp_path, mutate)
    with pytest.raises(SceneError, match=expected) as info:
        load_scenes(path)
    assert str(info.value).startswith(f"{path}: scene ")


FILE_CASES = [
    ("empty file", "", r"empty file"),
    ("only whitespace", "  \n ", r"empty file"),
    ("not JSON", "this is not json", r"top level: expected a JSON object"),
    ("top level a list", "[1, 2]", r"top level: expected a JSON object"),
    ("missing scenes key", '{"info": {}}', r"top level: missing key 'scenes'"),
    ("scenes not a list", '{"info": {}, "scenes": {"a": 1}}', r"scenes: expected a list of scenes, got dict"),
    ("info not an object", '{"info": 3, "scenes": []}', r"info: expected a JSON object, got int"),
    ("duplicate scenes", '{"scenes": [], "scenes": []}', r"duplicate key 'scenes'"),
    ("trailing comma", '{"info": {}, "scenes": [],}', r"line 1 column 27: not valid JSON \(expected a key string"),
    ("trailing data", '{"info": {}, "scenes": []} x', r"line 1 column 28: not valid JSON \(unexpected data"),
    ("unterminated", '{"info": {}, "scenes": [', r"not valid JSON"),
]


@pytest.mark.parametrize("name, text, expected", FILE_CASES, ids=[case[0] for case in FILE_CASES])
def test_malformed_file_names_the_file(tmp_path, name, text, expected):
    path = tmp_path / "scenes.json"
    path.write_text(text)
    with pytest.raises(SceneError, match=expected) as info:
        load_scenes(path)
    assert str(info.value).startswith(f"{path}: ")


def test_broken_json_inside_a_scene_names_scene_line_and_column(tmp_path):
    path = write_scene_file(tmp_path / "scenes.json", varied_scenes(3), indent=1)
    lines = path.read_text().split("\n")
    target = next(k for k, line in enumerate(lines) if '"image_filename": "CLEVR_val_000001.png"' in line)
    lines[target] = lines[target].replace('"image_filename":', '"image_filename"')
    path.write_text("\n".join(lines))
    with pytest.raises(SceneError, match=rf"scenes\.json: scene 1: line {target + 1} column \d+: not valid JSON \(Expecting ':'"):
        load_scenes(path)


def test_truncated_file(tmp_path):
    path = write_scene_file(tmp_path / "scenes.json", varied_scenes(3))
    path.write_bytes(path.read_bytes()[:-500])
    with pytest.raises(SceneError, match=r"scenes\.json: scene 2: line 1 column \d+: not valid JSON"):
        load_scenes(path)


def test_invalid_utf8_names_the_scene(tmp_path):
    path = write_scene_file(tmp_path / "scenes.json", varied_scenes(3))
    data = path.read_bytes().replace(b'"CLEVR_val_000002.png"', b'"CLEVR_val_\xff00002.png"')
    path.write_bytes(data)
    with pytest.raises(SceneError, match=r"scenes\.json: scene 2: not UTF-8 text at byte \d+"):
        load_scenes(path)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        load_scenes(tmp_path / "nope.json")


def test_relationship_lists_need_not_be_sorted(tmp_path):
    scenes = varied_scenes(3)
    for per_object in scenes[2]["relationships"].values():
        for related in per_object:
            related.reverse()
    path = write_scene_file(tmp_path / "scenes.json", scenes)
    assert load_scenes(path)[2] == scenes[2]


def test_validate_scene_on_a_dict():
    scene = make_scene(SAMPLE_OBJECTS)
    validate_scene(scene)
    scene["relationships"]["right"][0] = [7]
    with pytest.raises(SceneError, match=r"^scene: relationships\.right\[0\]: object index 7 out of range"):
        validate_scene(scene)
    with pytest.raises(SceneError, match=r"^my scene: objects: missing key"):
        validate_scene({"image_index": 1, "image_filename": "a.png"}, where="my scene")


def test_deeply_nested_json_is_a_scene_error_not_a_recursion_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"info": {}, "scenes": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    with pytest.raises(SceneError, match=r"deep\.json: scene 0: line 1 column 25: not valid JSON \(nested too deeply\)"):
        load_scenes(path)


def test_a_scene_of_another_split_is_loaded_with_a_warning(tmp_path, caplog):
    scenes = varied_scenes(4)
    scenes[2]["split"] = scenes[3]["split"] = "train"
    path = write_scene_file(tmp_path / "mixed.json", scenes, split="val")
    with caplog.at_level("WARNING", logger="builder_utils.clevr.scenes"):
        assert len(load_scenes(path)) == 4
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: 2 scene(s) have split 'train' but the file's info says 'val' (first: scene 2 (CLEVR_val_000002.png))"
    ]
    caplog.clear()
    load_scenes(write_scene_file(tmp_path / "plain.json", varied_scenes(4), split="val"))
    assert not caplog.records


def _crowded_scene(n: int, image_index: int = 0) -> dict:
    """A valid scene of ``n`` objects with empty relationship lists: input size linear in n."""
    scene = make_scene(SAMPLE_OBJECTS[:1], image_index=image_index, split="val")
    scene["objects"] = [dict(scene["objects"][0]) for _ in range(n)]
    scene["relationships"] = {rel: [[] for _ in range(n)] for rel in scene["relationships"]}
    return scene


def _check_peak(scene: dict) -> int:
    """Peak bytes allocated by checking ``scene`` (the scene itself is built beforehand)."""
    import tracemalloc

    validate_scene(_crowded_scene(1))  # the metadata and vocabulary, parsed once per process
    tracemalloc.start()
    try:
        validate_scene(scene)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_scene_check_takes_memory_linear_in_the_objects():
    """Four times the objects, about four times the memory (a table per object of the other
    objects, as before, made it sixteen: 2.8 GB for one 6,000-object scene)."""
    small, large = _check_peak(_crowded_scene(31)), _check_peak(_crowded_scene(124))
    assert large < 6 * small, (small, large)


def test_a_scene_over_max_objects_is_one_error_naming_it(tmp_path):
    n = scenes_module.MAX_OBJECTS + 1
    path = write_scene_file(tmp_path / "s.json", [_crowded_scene(n)], split="val")
    with pytest.raises(SceneError, match=rf"s.json: scene 0 \(CLEVR_val_000000.png\): objects: {n} objects, "
                                         rf"more than the {n - 1} a scene may hold"):
        load_scenes(path)
    validate_scene(_crowded_scene(n - 1))  # the limit itself is legal


def test_a_6000_object_scene_file_is_refused_in_memory_linear_in_its_size(tmp_path):
    """The issue's case: 6,000 objects in about 1.3 MB."""
    import tracemalloc

    path = write_scene_file(tmp_path / "s.json", [_crowded_scene(6000)], split="val")
    tracemalloc.start()
    try:
        with pytest.raises(SceneError, match="6000 objects, more than"):
            load_scenes(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * path.stat().st_size, (peak, path.stat().st_size)


def test_huge_integers_in_a_scene_name_the_file_and_place(tmp_path):
    path = write_scene_file(tmp_path / "s.json", [_crowded_scene(3)], split="val")
    path.write_text(path.read_text().replace('"image_index": 0', '"image_index": ' + "7" * 5000))
    with pytest.raises(SceneError, match=r"s.json: scene 0: line \d+ column \d+: not valid JSON \(an integer of 5000"):
        load_scenes(path)


def test_values_in_scene_errors_are_shown_bounded():
    """A hostile value (a 900-level list where a coordinate belongs) gives a short message, not a
    RecursionError from repr or a megabyte of text."""
    scene = _crowded_scene(3)
    deep: list = []
    for _ in range(900):
        deep = [deep]
    scene["objects"][1]["3d_coords"] = deep
    scene["objects"][0]["color"] = "x" * 1_000_000
    with pytest.raises(SceneError) as caught:
        validate_scene(scene)
    assert len(str(caught.value)) < 300
