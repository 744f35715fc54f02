"""Template loading and validation (builder_utils/clevr/templates.py) and --question_types.

Bad templates are written to tmp_path one mutation at a time; each must fail with a message
that names the file, the template index and the node / param / constraint / text at fault.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.metadata import load_metadata
from builder_utils.clevr.question_types import (
    COARSE_TYPES,
    QuestionTypeError,
    coarse_types,
    parse_question_types,
    select_templates,
)
from builder_utils.clevr.templates import (
    SHIPPED_TEMPLATE_SETS,
    TemplateError,
    load_synonyms,
    load_template_file,
    load_template_set,
    slot_synonyms,
)

REFERENCE = Path(__file__).parent / "data" / "templates" / "reference"
META = load_metadata()
SYNONYMS = load_synonyms()

ATTRS = [("Size", "<Z>"), ("Color", "<C>"), ("Material", "<M>"), ("Shape", "<S>")]


def one_hop_count() -> dict:
    """A valid template: how many <Z2>.. things are <R> the unique <Z>.. thing?"""
    params = [{"type": t, "name": n} for t, n in ATTRS]
    params += [{"type": "Relation", "name": "<R>"}]
    params += [{"type": t, "name": n[:-1] + "2>"} for t, n in ATTRS]
    return {
        "params": params,
        "text": [
            "How many <Z2> <C2> <M2> <S2>s can be found <R> the <Z> <C> <M> <S>?",
            "Counting the <Z2> <C2> <M2> <S2>s [that are] <R> the <Z> <C> <M> <S>, what do you get?",
        ],
        "nodes": [
            {"type": "scene", "inputs": []},
            {"type": "filter_unique", "inputs": [0], "side_inputs": ["<Z>", "<C>", "<M>", "<S>"]},
            {"type": "relate_filter_count", "inputs": [1], "side_inputs": ["<R>", "<Z2>", "<C2>", "<M2>", "<S2>"]},
        ],
        "constraints": [{"type": "NULL", "params": ["<Z2>"]}],
    }


def write(tmp_path: Path, templates: list, name: str = "family.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(templates), encoding="utf-8")
    return path


def load_error(tmp_path: Path, template: dict) -> str:
    path = write(tmp_path, [one_hop_count(), template])
    with pytest.raises(TemplateError) as info:
        load_template_file(path, META, SYNONYMS)
    return str(info.value)


def test_a_valid_template_loads_with_types_bound_and_answer_type(tmp_path):
    template = one_hop_count()
    template["category"] = "counting"
    (loaded,) = load_template_file(write(tmp_path, [template]), META, SYNONYMS)
    assert loaded.family == "family" and loaded.index == 0 and loaded.key == "family:0"
    assert loaded.params["<R>"] == "Relation"
    assert loaded.answer_type == "Integer"
    assert loaded.category == "counting"
    assert loaded.nodes[2].side_inputs == ("<R>", "<Z2>", "<C2>", "<M2>", "<S2>")
    assert coarse_types(loaded) == {"count", "relation"}


def _mutate(fn):
    template = one_hop_count()
    fn(template)
    return template


BAD = {
    "unknown function": (
        lambda t: t["nodes"][1].update(type="filter_colour"),
        ["template 1: node 1 (filter_colour)", "unknown function"],
    ),
    "input not earlier": (
        lambda t: t["nodes"][1].update(inputs=[2]),
        ["template 1: node 1 (filter_unique)", "not an earlier node"],
    ),
    "input of the wrong type": (
        lambda t: t["nodes"][2].update(inputs=[0]),
        ["template 1: node 2 (relate_filter_count)", "outputs ObjectSet; expected Object"],
    ),
    "wrong number of inputs": (
        lambda t: t["nodes"][2].update(inputs=[1, 0]),
        ["node 2 (relate_filter_count)", "expects 1 inputs, got 2"],
    ),
    "undeclared side input": (
        lambda t: t["nodes"][1]["side_inputs"].append("<Q>"),
        ["template 1: node 1 (filter_unique)", "side input '<Q>' is not a declared param"],
    ),
    "side input of a type the function does not take": (
        lambda t: t["nodes"][1]["side_inputs"].append("<R>"),
        ["node 1 (filter_unique)", "side input <R> has type Relation"],
    ),
    "two side inputs of one type": (
        lambda t: t["nodes"][1]["side_inputs"].__setitem__(0, "<C2>"),
        ["node 1 (filter_unique)", "both have type Color"],
    ),
    "relate without a relation": (
        lambda t: t["nodes"][2]["side_inputs"].remove("<R>"),
        ["node 2 (relate_filter_count)", "needs a Relation side input"],
    ),
    "param missing from a text variant": (
        lambda t: t["text"].__setitem__(1, "Counting the <Z2> <C2> <M2> <S2>s <R> the <Z> <M> <S>, what do you get?"),
        ["template 1: text 1", "param <C> does not appear in this text variant"],
    ),
    "undeclared placeholder in text": (
        lambda t: t["text"].__setitem__(0, t["text"][0] + " <Q>"),
        ["template 1: text 0", "placeholder <Q> is not a declared param"],
    ),
    "unbalanced optional bracket": (
        lambda t: t["text"].__setitem__(0, t["text"][0].replace("How many", "[How many")),
        ["template 1: text 0", "unbalanced or nested"],
    ),
    "unknown word slot": (
        lambda t: t["text"].__setitem__(0, "{Frobnicate} " + t["text"][0]),
        ["template 1: text 0", "word slot {Frobnicate} has no entry"],
    ),
    "unknown constraint type": (
        lambda t: t["constraints"].append({"type": "SAME", "params": ["<Z>"]}),
        ["template 1: constraint 1 (SAME)", "unknown constraint type"],
    ),
    "constraint on an undeclared param": (
        lambda t: t["constraints"].append({"type": "NEQ", "params": ["<Z>", "<Q>"]}),
        ["template 1: constraint 1 (NEQ)", "param '<Q>' is not declared"],
    ),
    "NEQ over params of different types": (
        lambda t: t["constraints"].append({"type": "NEQ", "params": ["<Z>", "<C>"]}),
        ["constraint 1 (NEQ)", "different types"],
    ),
    "OUT_NEQ on a missing node": (
        lambda t: t["constraints"].append({"type": "OUT_NEQ", "nodes": [1, 9]}),
        ["template 1: constraint 1 (OUT_NEQ)", "node 9 does not exist"],
    ),
    "allow_both_empty on an Object": (
        lambda t: t["constraints"].append({"type": "OUT_NEQ", "nodes": [1, 2], "allow_both_empty": True}),
        ["template 1: constraint 1 (OUT_NEQ)", "node 1 outputs Object; allow_both_empty needs two ObjectSets"],
    ),
    "allow_both_empty not a boolean": (
        lambda t: t["constraints"].append({"type": "OUT_NEQ", "nodes": [0, 2], "allow_both_empty": "yes"}),
        ["constraint 1 (OUT_NEQ)", "allow_both_empty must be true or false"],
    ),
    "OUT_RANGE without bounds": (
        lambda t: t["constraints"].append({"type": "OUT_RANGE", "node": 2}),
        ["constraint 1 (OUT_RANGE)", "give min, max or both"],
    ),
    "OUT_RANGE on an Object": (
        lambda t: t["constraints"].append({"type": "OUT_RANGE", "node": 1, "min": 1}),
        ["constraint 1 (OUT_RANGE)", "node 1 outputs Object"],
    ),
    "NULL on a relation": (
        lambda t: t["constraints"].append({"type": "NULL", "params": ["<R>"]}),
        ["constraint 1 (NULL)", "param <R> has type Relation, which is never null"],
    ),
    "NULL and NOT_NULL on one param": (
        lambda t: t["constraints"].append({"type": "NOT_NULL", "params": ["<Z2>"]}),
        ["param <Z2>", "both NULL and NOT_NULL"],
    ),
    "param bound by no node": (
        lambda t: t["params"].append({"type": "Color", "name": "<C9>"})
        or [t["text"].__setitem__(i, x + " <C9>") for i, x in enumerate(t["text"])],
        ["template 1: param <C9>", "is not a side input of any node"],
    ),
    "final node without an answer": (
        lambda t: t["nodes"].__setitem__(
            2, {"type": "relate_filter", "inputs": [1], "side_inputs": ["<R>", "<Z2>", "<C2>", "<M2>", "<S2>"]}
        ),
        ["template 1: node 2 (relate_filter)", "the final node outputs ObjectSet"],
    ),
    "param type unknown": (
        lambda t: t["params"][0].update(type="Colour"),
        ["template 1: param <Z>", "unknown type 'Colour'"],
    ),
    "duplicate param": (
        lambda t: t["params"].append({"type": "Size", "name": "<Z>"}),
        ["template 1: param <Z>", "declared twice"],
    ),
    "missing nodes": (lambda t: t.pop("nodes"), ["template 1", "missing key 'nodes'"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_templates_name_file_template_and_place(tmp_path, case):
    mutation, fragments = BAD[case]
    message = load_error(tmp_path, _mutate(mutation))
    assert message.startswith(str(tmp_path / "family.json") + ": template 1: "), message
    for fragment in fragments:
        assert fragment in message, message


def test_unreadable_template_files_name_the_file_and_position(tmp_path):
    bad_json = tmp_path / "broken.json"
    bad_json.write_text('[{"params": [}]', encoding="utf-8")
    with pytest.raises(TemplateError, match=r"broken\.json: line 1 column \d+: not valid JSON"):
        load_template_file(bad_json, META)
    not_list = write(tmp_path, {"params": []}, "object.json")
    with pytest.raises(TemplateError, match=r"object\.json: expected a non-empty JSON list"):
        load_template_file(not_list, META)
    with pytest.raises(TemplateError, match=r"missing\.json: template file not found"):
        load_template_file(tmp_path / "missing.json", META)


def test_the_generator_refuses_a_folder_with_a_bad_template(tmp_path):
    write(tmp_path, [one_hop_count(), _mutate(BAD["unknown function"][0])])
    with pytest.raises(TemplateError, match=r"family\.json: template 1: node 1 \(filter_colour\)"):
        QuestionGenerator(GeneratorOptions(template_dir=str(tmp_path)))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TemplateError, match="no \\*.json template files"):
        QuestionGenerator(GeneratorOptions(template_dir=str(empty)))


def test_shipped_sets_load_with_global_family_indices():
    for name in SHIPPED_TEMPLATE_SETS:
        tset = load_template_set(name, META, SYNONYMS)
        assert [t.family_index for t in tset.templates] == list(range(len(tset.templates)))
        assert list(tset.families) == sorted(tset.families, key=lambda stem: stem + ".json")
        assert len({t.key for t in tset.templates}) == len(tset.templates)
    clevr = load_template_set("clevr", META, SYNONYMS)
    assert set(clevr.families) == {
        "zero_hop", "one_hop", "two_hop", "three_hop", "same_relate",
        "comparison", "compare_integer", "single_and", "single_or",
    }


def test_reference_format_files_load_unchanged():
    """Files in the reference's own schema: OUT_NEQ under "params", extra keys, a metadata
    file without CLEVR-Math functions, relate_filter_count declared non-terminal."""
    metadata = load_metadata(REFERENCE / "metadata.json")
    synonyms = load_synonyms(REFERENCE / "synonyms.json")
    tset = load_template_set(REFERENCE / "templates", metadata, synonyms)
    assert [t.key for t in tset.templates] == [
        "counting:0", "counting:1", "counting:2", "counting:3",
        "relating:0", "relating:1", "relating:2", "relating:3",
    ]
    as_many = tset.templates[3]
    assert as_many.constraints[0].type == "OUT_NEQ" and as_many.constraints[0].nodes == (1, 3)
    assert tset.templates[4].answer_type == "Integer"
    assert tset.templates[0].category == "counting"


def test_word_slots_share_one_entry_across_capitalisation():
    synonyms = {"remove": ["remove", "take away"], "Add": ["Add"]}
    assert slot_synonyms(synonyms, "Remove") == ["remove", "take away"]
    assert slot_synonyms(synonyms, "add") == ["Add"]
    assert slot_synonyms(synonyms, "Insert") is None


def test_synonym_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "syn.json"
    bad.write_text('{"cube": "block"}', encoding="utf-8")
    with pytest.raises(TemplateError, match=r"syn\.json: entry 'cube': expected a non-empty list"):
        load_synonyms(bad)


# -- --question_types --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clevr_templates():
    return load_template_set("clevr", META, SYNONYMS).templates


def test_question_type_tokens_are_normalised():
    assert parse_question_types("Zero-Hop.json,  ONE_HOP count") == ["zero_hop", "one_hop", "count"]
    assert parse_question_types(["three_hop:2", "exist,query"]) == ["three_hop:2", "exist", "query"]
    assert parse_question_types(None) == []


def test_selection_by_family_coarse_type_and_exact_index(clevr_templates):
    assert {t.family for t in select_templates(clevr_templates, "zero_hop")} == {"zero_hop"}
    exact = select_templates(clevr_templates, "three_hop:2")
    assert [t.key for t in exact] == ["three_hop:2"]
    counts = select_templates(clevr_templates, "count")
    assert counts and all(t.answer_type == "Integer" and "count" in coarse_types(t) for t in counts)
    both = select_templates(clevr_templates, "logical_and, logical_or")
    assert {t.family for t in both} == {"single_and", "single_or"}
    relation = select_templates(clevr_templates, "relation")
    assert {t.family for t in relation} >= {"one_hop", "two_hop", "three_hop", "single_and"}
    assert "zero_hop" not in {t.family for t in relation}
    compare = select_templates(clevr_templates, "attribute_compare integer_compare")
    assert {t.family for t in compare} == {"comparison", "compare_integer"}
    assert select_templates(clevr_templates, None) == list(clevr_templates)
    # Set order is kept, whatever the token order.
    mixed = select_templates(clevr_templates, "zero_hop:1 zero_hop:0")
    assert [t.key for t in mixed] == ["zero_hop:0", "zero_hop:1"]


def test_unknown_question_type_lists_the_valid_ones(clevr_templates):
    with pytest.raises(QuestionTypeError) as info:
        select_templates(clevr_templates, "zero_hop,four_hop")
    message = str(info.value)
    assert "'four_hop'" in message
    for valid in ("zero_hop", "single_or", *COARSE_TYPES, "family:index"):
        assert valid in message
    with pytest.raises(QuestionTypeError, match="'zero_hop:99'"):
        select_templates(clevr_templates, "zero_hop:99")


def test_a_selection_matching_no_template_is_an_error():
    math = load_template_set("clevr_math", META, SYNONYMS).templates
    with pytest.raises(QuestionTypeError, match="matches no template"):
        select_templates(math, "relation")
    # family stems with a hyphen are matched through the normalised token
    assert [t.family for t in select_templates(math, "subtraction-multihop")] == ["subtraction-multihop"]


def test_every_coarse_type_occurs_in_the_clevr_set(clevr_templates):
    seen = set().union(*(coarse_types(t) for t in clevr_templates))
    assert seen == set(COARSE_TYPES)


def test_templates_are_immutable_snapshots(tmp_path):
    template = one_hop_count()
    path = write(tmp_path, [template])
    (loaded,) = load_template_file(path, META, SYNONYMS)
    raw = copy.deepcopy(template)
    with pytest.raises(TypeError):
        loaded.params["<Q>"] = "Color"  # type: ignore[index]
    assert json.loads(path.read_text()) == [raw]
