"""The CLEVR functional language: metadata, every function, both program spellings, errors,
and a property test against a plain list-based evaluator."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder_utils.clevr import (
    InvalidProgram,
    MalformedProgram,
    MetadataError,
    SceneError,
    SceneIndex,
    answer,
    compile_program,
    execute,
    execute_raw,
    load_metadata,
    normalize_program,
)
from builder_utils.clevr.executor import FUNCTIONS, answer_text
from clevr_scene_factory import make_scene, sample_scene

META = load_metadata()
SCENE = sample_scene()


def prog(*nodes):
    """Released spelling from compact tuples: (function, inputs, value_inputs...)."""
    return [{"function": f, "inputs": list(ins), "value_inputs": list(vals)} for f, ins, *vals in nodes]


def run(*nodes, scene=SCENE):
    return execute(prog(*nodes), scene)


# -- metadata ---------------------------------------------------------------------------------

CLEVR_FUNCTIONS = """scene filter_size filter_color filter_material filter_shape unique relate union
intersect count exist query_size query_color query_material query_shape equal_size equal_color
equal_material equal_shape equal_integer less_than greater_than equal_object same_size same_color
same_material same_shape""".split()
TEMPLATE_ONLY = """filter filter_unique filter_count filter_exist relate_filter relate_filter_unique
relate_filter_count relate_filter_exist""".split()
MATH_FUNCTIONS = ["addition", "subtraction", "choose"]


def test_metadata_declares_every_function_with_the_clevr_vocabulary():
    assert set(META.functions) == set(CLEVR_FUNCTIONS + TEMPLATE_ONLY + MATH_FUNCTIONS)
    assert {name for name, spec in META.functions.items() if spec.template_only} == set(TEMPLATE_ONLY)
    assert META.types["Size"] == ("small", "large")
    assert META.types["Color"] == ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
    assert META.types["Material"] == ("rubber", "metal")
    assert META.types["Shape"] == ("cube", "sphere", "cylinder")
    assert set(META.types["Relation"]) == {"left", "right", "behind", "front"}
    for name in ("Object", "ObjectSet", "Integer", "Bool"):
        assert META.types[name] is None
    assert META.functions["filter_unique"].side_inputs == ("Size", "Color", "Material", "Shape")
    assert META.functions["relate_filter_count"].output == "Integer"
    assert META.functions["subtraction"].inputs == ("Integer", "Integer")
    assert META.functions["choose"].side_inputs == ("Integer",)


def test_registry_implements_exactly_the_executable_functions():
    executable = {name for name, spec in META.functions.items() if not spec.template_only}
    assert set(FUNCTIONS) == executable


def test_default_metadata_loads_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_metadata().functions["count"].terminal is True


def _metadata_file(tmp_path, mutate):
    from importlib import resources

    doc = json.loads(resources.files("builder_utils.clevr").joinpath("metadata.json").read_text())
    mutate(doc)
    path = tmp_path / "metadata.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda d: d["functions"][2]["inputs"].__setitem__(0, "Colour"), r"functions\[2\] \('filter_color'\).*'Colour'"),
        (lambda d: d["functions"][5].pop("output"), r"functions\[5\] \('unique'\): missing key 'output'"),
        (lambda d: d["functions"][6].__setitem__("terminal", "yes"), r"functions\[6\] \('relate'\)\.terminal"),
        (lambda d: d["functions"].append(dict(d["functions"][0])), r"\('scene'\): duplicate function name"),
        (lambda d: d["functions"][1].__setitem__("templat_only", True), r"\('filter_size'\): unknown keys"),
        (lambda d: d.pop("types"), r"top level: missing key 'types'"),
        (lambda d: d["types"].__setitem__("Color", "red"), r"types\.Color"),
    ],
)
def test_malformed_metadata_names_file_and_entry(tmp_path, mutate, expected):
    path = _metadata_file(tmp_path, mutate)
    with pytest.raises(MetadataError, match=expected) as info:
        load_metadata(path)
    assert str(path) in str(info.value)


def test_metadata_that_is_not_json_names_file_and_line(tmp_path):
    path = tmp_path / "meta.json"
    path.write_text('{"dataset": "x",\n "types": }')
    with pytest.raises(MetadataError, match=r"meta\.json: line 2 column 11: not valid JSON"):
        load_metadata(path)


# -- SceneIndex -------------------------------------------------------------------------------


def test_scene_index_tables():
    index = SceneIndex(SCENE)
    assert index.num_objects == 4
    assert index.all_mask == 0b1111
    assert index.attribute_masks["color"]["red"] == 0b0011
    assert index.attribute_masks["color"]["yellow"] == 0
    assert index.attribute_masks["shape"]["sphere"] == 0b1010
    assert index.attribute_masks["size"]["large"] == 0b0101
    assert index.objects[2] == {"size": "large", "color": "blue", "material": "rubber", "shape": "cylinder"}
    # relation_masks[rel][i] = objects j standing in rel to object i
    assert index.relation_masks["right"][0] == 0b0010
    assert index.relation_masks["left"][1] == 0b1101
    assert index.relation_masks["behind"][3] == 0b0111
    assert index.relation_masks["front"][2] == 0b1011


def test_scene_index_validates_unless_told_not_to():
    bad = make_scene([("large", "red", "metal", "cube", 0, 0)])
    bad["objects"][0]["color"] = "pink"
    with pytest.raises(SceneError, match=r"scene \(CLEVR_test_000000\.png\): objects\[0\]\.color: unknown color 'pink'"):
        SceneIndex(bad)
    with pytest.raises(SceneError, match="objects"):
        execute(prog(("scene", [])), {"image_index": 0, "image_filename": "x.png", "relationships": {}})


# -- every function ---------------------------------------------------------------------------

S = ("scene", [])


def test_scene_and_filters_keep_index_order():
    assert run(S)[-1] == [0, 1, 2, 3]
    assert run(S, ("filter_color", [0], "red"))[-1] == [0, 1]
    assert run(S, ("filter_size", [0], "small"))[-1] == [1, 3]
    assert run(S, ("filter_material", [0], "rubber"))[-1] == [1, 2]
    assert run(S, ("filter_shape", [0], "sphere"))[-1] == [1, 3]
    assert run(S, ("filter_shape", [0], "sphere"), ("filter_color", [1], "green"))[-1] == [3]
    assert run(S, ("filter_color", [0], "purple"))[-1] == []


def test_unique_and_queries():
    out = run(S, ("filter_color", [0], "blue"), ("unique", [1]), ("query_shape", [2]))
    assert out[2:] == [2, "cylinder"]
    obj = [S, ("filter_color", [0], "green"), ("unique", [1])]
    assert run(*obj, ("query_size", [2]))[-1] == "small"
    assert run(*obj, ("query_color", [2]))[-1] == "green"
    assert run(*obj, ("query_material", [2]))[-1] == "metal"
    assert run(*obj, ("query_shape", [2]))[-1] == "sphere"


@pytest.mark.parametrize("color, found", [("red", 2), ("purple", 0)])
def test_unique_over_zero_or_several_objects_is_invalid(color, found):
    with pytest.raises(InvalidProgram, match=rf"node 2 \(unique\): expected exactly one object, found {found}") as info:
        run(S, ("filter_color", [0], color), ("unique", [1]), ("query_shape", [2]))
    assert (info.value.node, info.value.function) == (2, "unique")
    assert not isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "relation, subject, expected",
    [("right", "red cube", [1]), ("left", "red sphere", [0, 2, 3]), ("behind", "green", [0, 1, 2]), ("front", "blue", [0, 1, 3])],
)
def test_relate_reads_the_relationships(relation, subject, expected):
    color = subject.split()[0]
    nodes = [S, ("filter_color", [0], color)]
    if " " in subject:
        nodes.append(("filter_shape", [1], subject.split()[1]))
    nodes += [("unique", [len(nodes) - 1]), ("relate", [len(nodes)], relation)]
    assert run(*nodes)[-1] == expected


def test_union_intersect_count_exist():
    base = [S, ("filter_color", [0], "red"), ("filter_shape", [0], "sphere")]
    assert run(*base, ("union", [1, 2]))[-1] == [0, 1, 3]
    assert run(*base, ("intersect", [1, 2]))[-1] == [1]
    assert run(*base, ("union", [1, 2]), ("count", [3]))[-1] == 3
    assert run(*base, ("intersect", [1, 2]), ("exist", [3]))[-1] is True
    assert run(S, ("filter_color", [0], "cyan"), ("exist", [1]))[-1] is False
    assert run(S, ("filter_color", [0], "cyan"), ("count", [1]))[-1] == 0


def test_same_attribute_excludes_the_object_itself():
    cube = [S, ("filter_shape", [0], "cube"), ("unique", [1])]
    assert run(*cube, ("same_color", [2]))[-1] == [1]
    assert run(*cube, ("same_size", [2]))[-1] == [2]
    assert run(*cube, ("same_material", [2]))[-1] == [3]
    assert run(*cube, ("same_shape", [2]))[-1] == []


def test_comparisons():
    two = [S, ("filter_color", [0], "blue"), ("unique", [1]), ("filter_color", [0], "green"), ("unique", [3])]
    assert run(*two, ("query_size", [2]), ("query_size", [4]), ("equal_size", [5, 6]))[-1] is False
    assert run(*two, ("query_material", [2]), ("query_material", [4]), ("equal_material", [5, 6]))[-1] is False
    assert run(*two, ("query_color", [2]), ("query_color", [4]), ("equal_color", [5, 6]))[-1] is False
    assert run(*two, ("query_shape", [2]), ("query_shape", [4]), ("equal_shape", [5, 6]))[-1] is False
    assert run(*two, ("query_size", [2]), ("query_size", [2]), ("equal_size", [5, 6]))[-1] is True
    assert run(*two, ("equal_object", [2, 4]))[-1] is False
    assert run(*two, ("equal_object", [2, 2]))[-1] is True
    counts = [S, ("filter_color", [0], "red"), ("count", [1]), ("filter_size", [0], "large"), ("count", [3])]
    assert run(*counts, ("equal_integer", [2, 4]))[-1] is True
    assert run(*counts, ("less_than", [2, 4]))[-1] is False
    assert run(*counts, ("greater_than", [2, 4]))[-1] is False
    spheres = [S, ("filter_shape", [0], "sphere"), ("count", [1]), ("count", [0])]
    assert run(*spheres, ("less_than", [2, 3]))[-1] is True
    assert run(*spheres, ("greater_than", [3, 2]))[-1] is True


def test_arithmetic_and_choose():
    counts = [S, ("count", [0]), ("filter_color", [0], "red"), ("count", [2])]
    assert run(*counts, ("subtraction", [1, 3]))[-1] == 2
    assert run(*counts, ("addition", [1, 3]))[-1] == 6
    assert run(*counts, ("subtraction", [3, 3]))[-1] == 0
    with pytest.raises(InvalidProgram, match=r"node 4 \(subtraction\): 2 - 4 is negative"):
        run(*counts, ("subtraction", [3, 1]))
    chosen = [S, ("filter_color", [0], "red"), ("choose", [1], "2"), ("count", [0]), ("subtraction", [3, 2])]
    assert run(*chosen)[2:] == [2, 4, 2]
    assert run(S, ("filter_color", [0], "red"), ("choose", [1], "0"))[-1] == 0
    for x in ("3", "-1"):
        with pytest.raises(InvalidProgram, match=rf"node 2 \(choose\): cannot choose {x} out of a set of 2"):
            run(S, ("filter_color", [0], "red"), ("choose", [1], x))


# -- spellings and answers --------------------------------------------------------------------


def test_both_program_spellings_give_the_same_outputs():
    released = prog(
        S, ("filter_color", [0], "red"), ("filter_shape", [1], "cube"), ("unique", [2]), ("relate", [3], "left"), ("count", [4])
    )
    generated = [
        {"type": n["function"], "inputs": n["inputs"], "side_inputs": n["value_inputs"], "_output": "stale cache"}
        for n in released
    ]
    mixed = [dict(n, type=n["function"]) for n in released]  # both keys, agreeing
    assert normalize_program(generated) == released
    assert execute(released, SCENE) == execute(generated, SCENE) == execute(mixed, SCENE)
    assert execute(released, SCENE)[-1] == 1
    assert answer(released, SCENE) == answer(generated, SCENE) == "1"


def test_value_inputs_may_be_omitted_and_integers_written_as_numbers():
    nodes = [{"type": "scene", "inputs": []}, {"type": "choose", "inputs": [0], "side_inputs": [3]}]
    assert normalize_program(nodes)[1]["value_inputs"] == ["3"]
    assert execute(nodes, SCENE)[-1] == 3


@pytest.mark.parametrize(
    "nodes, expected",
    [
        ([S, ("exist", [0])], "yes"),
        ([S, ("filter_color", [0], "gray"), ("exist", [1])], "no"),
        ([S, ("count", [0])], "4"),
        ([S, ("filter_shape", [0], "cube"), ("unique", [1]), ("query_material", [2])], "metal"),
        ([S, ("filter_shape", [0], "cube"), ("unique", [1]), ("query_size", [2])], "large"),
    ],
)
def test_answers_are_released_strings(nodes, expected):
    assert answer(prog(*nodes), SCENE) == expected
    assert answer(prog(*nodes), SceneIndex(SCENE)) == expected


def test_answer_text_and_raw_execution():
    assert [answer_text(v) for v in (True, False, 0, 10, "cube")] == ["yes", "no", "0", "10", "cube"]
    compiled = compile_program(prog(S, ("filter_color", [0], "red"), ("count", [1])))
    assert execute_raw(compiled, SceneIndex(SCENE)) == [0b1111, 0b0011, 2]
    assert compiled.output_types == ("ObjectSet", "ObjectSet", "Integer")
    assert compile_program(compiled) is compiled


def test_answer_needs_an_answer_value_at_the_end():
    with pytest.raises(MalformedProgram, match=r"node 1 \(filter_color\): the last node gives an ObjectSet"):
        answer(prog(S, ("filter_color", [0], "red")), SCENE)


def test_a_new_function_is_one_metadata_entry_plus_one_registry_entry(tmp_path, monkeypatch):
    path = _metadata_file(
        tmp_path,
        lambda d: d["functions"].append(
            {"name": "median3", "inputs": ["Integer"] * 3, "side_inputs": [], "output": "Integer", "terminal": True}
        ),
    )
    meta = load_metadata(path)
    monkeypatch.setitem(FUNCTIONS, "median3", lambda index, inputs, values: sorted(inputs)[1])
    nodes = prog(S, ("count", [0]), ("filter_color", [0], "red"), ("count", [2]), ("filter_color", [0], "cyan"),
                 ("count", [4]), ("median3", [1, 3, 5]))
    assert execute(nodes, SCENE, metadata=meta)[-1] == 2
    assert answer(nodes, SCENE, metadata=meta) == "2"
    with pytest.raises(MalformedProgram, match=r"node 6 \(median3\): unknown function"):
        execute(nodes, SCENE)


def test_invalid_program_survives_pickling():
    with pytest.raises(InvalidProgram) as info:
        run(S, ("unique", [0]))
    clone = pickle.loads(pickle.dumps(info.value))
    assert (clone.node, clone.function, str(clone)) == (1, "unique", str(info.value))


# -- malformed programs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "nodes, expected",
    [
        ([{"function": "scene", "inputs": []}, {"function": "paint", "inputs": [0]}], r"node 1 \(paint\): unknown function"),
        (prog(S, ("filter_unique", [0], "large", "red", "metal", "cube")), r"node 1 \(filter_unique\): template-only"),
        (prog(S, ("count", [0, 0])), r"node 1 \(count\): expected 1 inputs, got 2"),
        (prog(S, ("union", [0])), r"node 1 \(union\): expected 2 inputs, got 1"),
        (prog(S, ("count", [1])), r"node 1 \(count\): input 1 is not an earlier node"),
        (prog(S, ("count", [-1])), r"node 1 \(count\): input -1 is not an earlier node"),
        (prog(S, ("query_color", [0])), r"node 1 \(query_color\): input 0 \(node 0, scene\) gives ObjectSet, expected Object"),
        (prog(S, ("count", [0]), ("exist", [1])), r"node 2 \(exist\): input 0 \(node 1, count\) gives Integer"),
        (prog(S, ("filter_color", [0], "pink")), r"node 1 \(filter_color\): unknown Color value 'pink'"),
        (prog(S, ("filter_color", [0], "large")), r"node 1 \(filter_color\): unknown Color value 'large'"),
        (prog(S, ("filter_color", [0])), r"node 1 \(filter_color\): expected 1 value inputs, got 0"),
        (prog(S, ("count", [0], "red")), r"node 1 \(count\): expected 0 value inputs, got 1"),
        (prog(S, ("choose", [0], "two")), r"node 1 \(choose\): unknown Integer value 'two'"),
        (prog(S, ("filter_color", [0], "red"), ("unique", [1]), ("relate", [2], "above")), r"node 3 \(relate\): unknown Relation value 'above'"),
        ([{"function": "scene", "inputs": []}, {"inputs": [0]}], r"node 1: missing the function name"),
        ([{"function": "scene"}], r"node 0 \(scene\): missing key 'inputs'"),
        ([{"function": "scene", "inputs": [True]}], r"node 0 \(scene\): inputs must be a list of node indices"),
        ([{"function": "scene", "type": "count", "inputs": []}], r"node 0 \(scene\): 'function' and 'type' disagree"),
        ([{"function": "scene", "inputs": [], "value_inputs": [None]}], r"node 0 \(scene\): value inputs must be strings"),
        (["scene"], r"node 0: expected a JSON object, got str"),
        ([], r"empty program"),
        ({"function": "scene"}, r"expected a list of program nodes"),
    ],
)
def test_malformed_programs_name_node_and_function(nodes, expected):
    with pytest.raises(MalformedProgram, match=expected):
        execute(nodes, SCENE)
    assert issubclass(MalformedProgram, ValueError)


@pytest.mark.parametrize("good, bad, expected", [
    (("filter_color", [0], "red"), ("filter_color", [0], "pink"), r"node 1 \(filter_color\): unknown Color value 'pink'"),
    (("choose", [0], "2"), ("choose", [0], "two"), r"node 1 \(choose\): unknown Integer value 'two'"),
    (("filter_color", [0], "red"), ("filter_color", [0]), r"node 1 \(filter_color\): expected 1 value inputs, got 0"),
])
def test_a_structure_checked_before_still_has_every_value_checked(good, bad, expected):
    """The shape of a program (functions, inputs, types) is checked once per structure; its
    values every time, with the error a first compile gives."""
    from builder_utils.clevr.executor import _STRUCTURES

    first = compile_program(prog(S, good))
    again = compile_program(prog(S, good))
    assert again is not first and again.steps == first.steps and again.output_types == first.output_types
    assert (("scene", ()), (good[0], (0,))) in _STRUCTURES
    with pytest.raises(MalformedProgram, match=expected):
        compile_program(prog(S, bad))


# -- property test against a plain evaluator --------------------------------------------------


class _Invalid(Exception):
    pass


def reference_execute(nodes, scene):
    """The language's semantics written directly over the scene's lists (no bitsets)."""
    objs, rels = scene["objects"], scene["relationships"]
    outputs = []
    for node in nodes:
        f, v = node["function"], node["value_inputs"]
        a = [outputs[j] for j in node["inputs"]]
        if f == "scene":
            r = list(range(len(objs)))
        elif f.startswith("filter_"):
            r = [i for i in a[0] if objs[i][f[len("filter_"):]] == v[0]]
        elif f == "unique":
            if len(a[0]) != 1:
                raise _Invalid(len(outputs))
            r = a[0][0]
        elif f == "relate":
            r = list(rels[v[0]][a[0]])
        elif f == "union":
            r = sorted(set(a[0]) | set(a[1]))
        elif f == "intersect":
            r = sorted(set(a[0]) & set(a[1]))
        elif f == "count":
            r = len(a[0])
        elif f == "exist":
            r = len(a[0]) > 0
        elif f.startswith("query_"):
            r = objs[a[0]][f[len("query_"):]]
        elif f.startswith("equal_") or f == "equal_object":
            r = a[0] == a[1]
        elif f == "less_than":
            r = a[0] < a[1]
        elif f == "greater_than":
            r = a[0] > a[1]
        elif f.startswith("same_"):
            attr = f[len("same_"):]
            r = [j for j in range(len(objs)) if j != a[0] and objs[j][attr] == objs[a[0]][attr]]
        elif f == "addition":
            r = a[0] + a[1]
        elif f == "subtraction":
            r = a[0] - a[1]
            if r < 0:
                raise _Invalid(len(outputs))
        elif f == "choose":
            r = int(v[0])
            if not 0 <= r <= len(a[0]):
                raise _Invalid(len(outputs))
        else:
            raise AssertionError(f)
        outputs.append(r)
    return outputs


def _objects():
    grid = st.integers(-3, 3).map(lambda k: k * 0.9)
    return st.tuples(
        st.sampled_from(META.types["Size"]),
        st.sampled_from(META.types["Color"][:4]),  # few colours, so filters often match
        st.sampled_from(META.types["Material"]),
        st.sampled_from(META.types["Shape"]),
        grid,
        grid,
    )


scenes = st.lists(_objects(), min_size=0, max_size=8).map(make_scene)
EXECUTABLE = sorted(name for name, spec in META.functions.items() if not spec.template_only)


@st.composite
def scenes_and_programs(draw):
    """A scene and a type-correct program for it. Objects are often singled out by their
    attributes, and ``unique`` mostly gets sets of one object (known from the plain
    evaluator), so that programs reach the Object functions as well as the invalid cases."""
    scene = draw(scenes)
    nodes, types = [], []
    for _ in range(draw(st.integers(1, 10))):
        if scene["objects"] and draw(st.integers(0, 3)) == 0:
            # Describe one object by its attributes, as templates do, then take it as unique.
            target = scene["objects"][draw(st.integers(0, len(scene["objects"]) - 1))]
            nodes.append({"function": "scene", "inputs": [], "value_inputs": []})
            for attr in draw(st.permutations(["size", "color", "material", "shape"])):
                nodes.append({"function": f"filter_{attr}", "inputs": [len(nodes) - 1], "value_inputs": [target[attr]]})
            nodes.append({"function": "unique", "inputs": [len(nodes) - 1], "value_inputs": []})
            types += ["ObjectSet"] * 5 + ["Object"]
        else:
            candidates = [n for n in EXECUTABLE if all(t in types for t in META.functions[n].inputs)]
            spec = META.functions[draw(st.sampled_from(candidates))]
            inputs = []
            for need in spec.inputs:
                options = [j for j, t in enumerate(types) if t == need]
                if spec.name == "unique" and draw(st.integers(0, 4)) > 0:
                    outputs = reference_execute(nodes, scene)
                    options = [j for j in options if len(outputs[j]) == 1] or options
                inputs.append(draw(st.sampled_from(options)))
            values = [
                str(draw(st.integers(0, 4))) if t == "Integer" else draw(st.sampled_from(META.types[t]))
                for t in spec.side_inputs
            ]
            nodes.append({"function": spec.name, "inputs": inputs, "value_inputs": values})
            types.append(spec.output)
        try:
            reference_execute(nodes, scene)
        except _Invalid:
            break  # the program ends at its first invalid node
    return scene, nodes


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=scenes_and_programs())
def test_executor_matches_the_plain_evaluator(case):
    scene, nodes = case
    try:
        expected = reference_execute(nodes, scene)
    except _Invalid as invalid:
        with pytest.raises(InvalidProgram) as info:
            execute(nodes, scene)
        assert info.value.node == invalid.args[0] == len(nodes) - 1
        return
    assert execute(nodes, scene) == expected
    if compile_program(nodes).output_types[-1] not in ("Object", "ObjectSet"):
        assert answer(nodes, scene) == answer_text(expected[-1])
