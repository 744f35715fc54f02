"""The shipped CLEVR question families (templates/clevr/*.json) and synonyms.json.

Static checks run every template against the functional language of metadata.json; the
generation checks instantiate every template on synthetic scenes with the real engine.
"""

from __future__ import annotations

import collections
import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from builder_utils.clevr.metadata import load_metadata

CLEVR_DIR = resources.files("builder_utils.clevr").joinpath("templates", "clevr")
SYNONYMS = resources.files("builder_utils.clevr").joinpath("synonyms.json")

FAMILY_SIZES = {
    "compare_integer": 9,
    "comparison": 16,
    "one_hop": 6,
    "same_relate": 20,
    "single_and": 6,
    "single_or": 8,
    "three_hop": 6,
    "two_hop": 6,
    "zero_hop": 6,
}
DATA = Path(__file__).parent / "data" / "templates"
ATTRIBUTE_TYPES = {"size": "Size", "color": "Color", "material": "Material", "shape": "Shape"}
META = load_metadata()


def _load(family: str) -> list[dict]:
    return json.loads(CLEVR_DIR.joinpath(f"{family}.json").read_text(encoding="utf-8"))


def _all_templates():
    for family in sorted(FAMILY_SIZES):
        for index, template in enumerate(_load(family)):
            yield pytest.param(family, index, template, id=f"{family}:{index}")


ALL = list(_all_templates())


def test_the_folder_holds_exactly_the_nine_families():
    names = sorted(p.name for p in CLEVR_DIR.iterdir() if p.name.endswith(".json"))
    assert names == sorted(f"{f}.json" for f in FAMILY_SIZES)


@pytest.mark.parametrize("family", sorted(FAMILY_SIZES))
def test_family_file_is_a_json_list_of_the_expected_size(family):
    templates = _load(family)
    assert isinstance(templates, list)
    assert len(templates) == FAMILY_SIZES[family]
    assert all(t["category"] == family for t in templates)


def _param_types(template) -> dict[str, str]:
    return {p["name"]: p["type"] for p in template["params"]}


def _output_types(template) -> list[str]:
    return [META.functions[n["type"]].output for n in template["nodes"]]


@pytest.mark.parametrize("family,index,template", ALL)
def test_program_is_well_typed_against_metadata(family, index, template):
    params = _param_types(template)
    assert len(params) == len(template["params"]), "duplicate param names"
    assert set(template) <= {"category", "params", "text", "nodes", "constraints"}
    outputs = []
    used_params = []
    consumed = set()
    for i, node in enumerate(template["nodes"]):
        spec = META.functions.get(node["type"])
        assert spec is not None, f"node {i}: unknown function {node['type']!r}"
        assert all(0 <= k < i for k in node["inputs"]), f"node {i}: inputs must come earlier"
        assert [outputs[k] for k in node["inputs"]] == list(spec.inputs), f"node {i}: input types"
        side = node.get("side_inputs", [])
        assert all(name in params for name in side), f"node {i}: undeclared side input"
        # side inputs bind by type, so the multiset of types is what must match
        assert sorted(params[name] for name in side) == sorted(spec.side_inputs), f"node {i}"
        used_params += side
        consumed.update(node["inputs"])
        outputs.append(spec.output)
    last = len(template["nodes"]) - 1
    assert META.functions[template["nodes"][last]["type"]].terminal
    assert consumed | {last} == set(range(last + 1)), "every node but the last feeds a later one"
    assert sorted(used_params) == sorted(params), "each param is the side input of exactly one node"
    for value_type in params.values():
        assert META.values(value_type), f"param type {value_type} has no values in metadata"


@pytest.mark.parametrize("family,index,template", ALL)
def test_every_text_variant_uses_every_param_and_is_well_formed(family, index, template):
    params = set(_param_types(template))
    texts = template["text"]
    assert 4 <= len(texts) <= 8
    assert len(set(texts)) == len(texts), "duplicate text variants"
    for text in texts:
        assert set(re.findall(r"<[A-Z]\d?>", text)) == params, text
        assert re.fullmatch(r"[^\[\]]*(\[[^\[\]]+\][^\[\]]*)*", text), f"unbalanced brackets: {text}"
        assert "{" not in text and "}" not in text, "family texts use no word slots"
        assert text[0].isupper() and text[-1] in "?.", text
        assert "  " not in text, text


@pytest.mark.parametrize("family,index,template", ALL)
def test_constraints_name_existing_params_and_nodes(family, index, template):
    params = _param_types(template)
    outputs = _output_types(template)
    for c in template["constraints"]:
        if c["type"] == "NULL":
            assert c["params"] and all(p in params for p in c["params"])
        elif c["type"] == "NEQ":
            a, b = c["params"]
            assert params[a] == params[b]
        elif c["type"] == "OUT_NEQ":
            a, b = c["nodes"]
            assert 0 <= a < len(outputs) and 0 <= b < len(outputs) and a != b
            assert outputs[a] == outputs[b]
            # differing counts would forbid "yes" to "as many A as B?": compare the sets instead
            assert outputs[a] in ("Object", "ObjectSet"), "OUT_NEQ compares objects or object sets"
        else:
            pytest.fail(f"unexpected constraint type {c['type']!r}")


def _null_params(template) -> set[str]:
    return {p for c in template["constraints"] if c["type"] == "NULL" for p in c["params"]}


def _param_of_type(template, node, type_name) -> str:
    params = _param_types(template)
    (name,) = [p for p in node.get("side_inputs", []) if params[p] == type_name]
    return name


@pytest.mark.parametrize("family,index,template", ALL)
def test_the_text_never_states_the_answer(family, index, template):
    """A queried, compared or matched attribute is never also given as a filter value."""
    nodes = template["nodes"]
    nulls = _null_params(template)
    for node in nodes:
        kind, _, attribute = node["type"].partition("_")
        if kind in ("query", "same") and attribute in ATTRIBUTE_TYPES:
            type_name = ATTRIBUTE_TYPES[attribute]
            if kind == "query":
                filtered = [nodes[node["inputs"][0]]]
            else:  # the filter applied to the same_<attribute> set
                me = nodes.index(node)
                filtered = [n for n in nodes if me in n["inputs"]]
            for f in filtered:
                assert _param_of_type(template, f, type_name) in nulls, node


def _wording(text: str, keep_optional: bool = True) -> str:
    """A text reduced to its wording: lower case, punctuation gone, every param a placeholder,
    every "<Z> <C> <M> <S>" group (with the relations chaining groups) one object ``O``, so that
    "What size is the O?" is the same wording whatever the object phrase and the hop count."""
    t = re.sub(r"<[a-z]+\d*>", "<x>", text.lower())
    t = t.replace("[", "").replace("]", "") if keep_optional else re.sub(r"\[[^\]]*\]", "", t)
    t = re.sub(r"(<x> ){3}<x>s?", "O", " ".join(re.sub(r"[^a-z0-9<>]+", " ", t).split()))
    previous = None
    while previous != t:
        previous = t
        t = re.sub(r"O (?:(?:that|which) (?:is|are) |located |standing )?<x> the O", "O", t)
    return t


def _our_texts():
    for family in sorted(FAMILY_SIZES):
        for index, template in enumerate(_load(family)):
            for text in template["text"]:
                yield f"{family}:{index}", text


def test_no_text_repeats_the_original_generators_wording():
    """Our texts are our own: none has the wording of an original CLEVR template text (known
    only by digest, see the data file), with or without its optional segments."""
    lines = (DATA / "clevr_original_wording.sha256").read_text(encoding="utf-8").splitlines()
    originals = {line for line in lines if line and not line.startswith("#")}
    assert len(originals) > 500
    copies = [
        (key, text)
        for key, text in _our_texts()
        for keep in (True, False)
        if hashlib.sha256(_wording(text, keep).encode()).hexdigest()[:16] in originals
    ]
    assert copies == []
    # The check itself catches a copy whatever its object phrase or optional segments.
    copy = "What shape is the <Z3> <C3> <M3> <S3> [that is] <R2> the <Z2> <C2> <M2> <S2> <R> the <Z> <C> <M> <S>?"
    assert _wording(copy, False) == "what shape is the O"
    assert hashlib.sha256(_wording(copy, False).encode()).hexdigest()[:16] in originals


def test_no_text_repeats_a_reference_format_example():
    examples = {
        _wording(text)
        for path in sorted((DATA / "reference" / "templates").glob("*.json"))
        for template in json.loads(path.read_text(encoding="utf-8"))
        for text in template["text"]
    }
    assert len(examples) >= 8
    assert [(key, text) for key, text in _our_texts() if _wording(text) in examples] == []


def test_families_cover_every_final_function_and_hop_structure():
    finals = collections.defaultdict(set)
    for family, _, template in (p.values for p in ALL):
        finals[family].add(template["nodes"][-1]["type"])
    queries = {f"query_{a}" for a in ATTRIBUTE_TYPES}
    for hop, count in (("zero_hop", "filter_"), ("one_hop", "relate_filter_"),
                       ("two_hop", "relate_filter_"), ("three_hop", "relate_filter_")):
        assert finals[hop] == {count + "count", count + "exist"} | queries
    assert finals["same_relate"] == {"filter_count", "filter_exist"} | queries
    assert finals["single_and"] == {"filter_count", "filter_exist"} | queries
    assert finals["single_or"] == {"count", "exist", "filter_count", "filter_exist"}
    assert finals["comparison"] == {f"equal_{a}" for a in ATTRIBUTE_TYPES}
    assert finals["compare_integer"] == {"equal_integer", "less_than", "greater_than"}
    for hops, family in enumerate(("zero_hop", "one_hop", "two_hop", "three_hop")):
        for template in _load(family):
            assert sum(n["type"].startswith("relate") for n in template["nodes"]) == hops
    same = {(n["type"], t["nodes"][-1]["type"]) for t in _load("same_relate") for n in t["nodes"]
            if n["type"].startswith("same_")}
    assert len(same) == 4 * 5, "each same_<attribute> with count, exist and the three other queries"


def test_synonyms_cover_vocabulary_relations_and_verb_slots():
    synonyms = json.loads(SYNONYMS.read_text(encoding="utf-8"))
    assert all(isinstance(v, list) and v and all(isinstance(s, str) and s for s in v)
               for v in synonyms.values())
    assert synonyms["thing"] == ["thing", "object"]
    assert {"ball", "sphere"} <= set(synonyms["sphere"]) and "block" in synonyms["cube"]
    assert "big" in synonyms["large"] and "tiny" in synonyms["small"]
    assert {"metal", "metallic", "shiny"} <= set(synonyms["metal"]) and "matte" in synonyms["rubber"]
    # a Relation value is its own synonym key, so "<R>" renders as a full phrase ("left of")
    assert {r: synonyms[r] for r in META.values("Relation")} == {
        "left": ["left of", "to the left of", "on the left side of"],
        "right": ["right of", "to the right of", "on the right side of"],
        "behind": ["behind"],
        "front": ["in front of"],
    }
    assert synonyms["Remove"][0] == "Remove" and len(synonyms["remove"]) == len(synonyms["removed"]) == 4
    assert synonyms["Add"][0] == "Add" and len(synonyms["add"]) == len(synonyms["added"]) == 3
    vocabulary = {v for t in ("Size", "Color", "Material", "Shape") for v in META.values(t)}
    assert set(synonyms) - {"thing"} - set(META.values("Relation")) - vocabulary == {
        "Remove", "remove", "removed", "Add", "add", "added"}


def test_the_project_loader_accepts_the_whole_set():
    from builder_utils.clevr.templates import load_synonyms, load_template_set

    tset = load_template_set("clevr", META, load_synonyms())
    assert tset.families == tuple(sorted(FAMILY_SIZES))
    assert len(tset.templates) == sum(FAMILY_SIZES.values())
    assert [t.family_index for t in tset.templates] == list(range(len(tset.templates)))
    assert {t.category for t in tset.templates} == set(FAMILY_SIZES)


# -- generation with the real engine on synthetic scenes ---------------------------------------


@pytest.fixture(scope="module")
def generated():
    from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
    from builder_utils.clevr.synth.scenes import generate_scenes

    scenes = generate_scenes(50, seed=0, split="val")
    generator = QuestionGenerator(GeneratorOptions(templates="clevr", seed=0, templates_per_image=20))
    by_template = collections.defaultdict(list)
    for q in generator.generate(scenes):
        by_template[(q["template_filename"], q["template_index"])].append(q)
    return by_template


def test_every_template_is_instantiated_with_varied_answers(generated):
    expected = {(family, index) for family, index, _ in (p.values for p in ALL)}
    assert set(generated) == expected
    for key, questions in generated.items():
        assert len({q["answer"] for q in questions}) >= 2, f"{key} always answers {questions[0]['answer']!r}"
        assert all(q["category"] == key[0] for q in questions)


def test_equal_count_questions_can_answer_yes(generated):
    equal = [(f, i) for f, i, t in (p.values for p in ALL) if t["nodes"][-1]["type"] == "equal_integer"]
    assert len(equal) == 3
    for key in equal:
        assert {"yes", "no"} <= {q["answer"] for q in generated[key]}, key


def test_rendered_questions_read_cleanly(generated):
    bare_relation = re.compile(r"\b(?:left|right|front)\s+(?:the|it|that)\b")
    for key, questions in generated.items():
        for q in questions:
            text = q["question"]
            assert not re.search(r"[<>\[\]{}]|\s{2}|\s[?.,;:]", text), (key, text)
            assert text[0].isupper() and text[-1] in "?.", (key, text)
            assert not bare_relation.search(text), (key, text)  # relations render as phrases
            assert not re.search(r"\ba [aeiou]", text), (key, text)
