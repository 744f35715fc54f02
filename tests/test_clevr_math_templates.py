"""The CLEVR-Math template sets (``clevr_math``, ``clevr_math_chains``) through the real engine.

Every generated question is checked three ways on synthetic scenes:
1. its program, re-executed by the executor, gives the stored answer;
2. an independent oracle, written here from the paper's definitions, reads the parameter values
   back from the question *text* (so every attribute the text promises must be there) and
   counts the answer directly from the scene's objects;
3. no question removes or adds 0 objects, and the math CoT states the same counts.
"""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import pytest

from builder_utils.clevr import answer as execute_answer
from builder_utils.clevr import chain_templates
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth import generate_scenes

CLEVR_DIR = Path(__file__).resolve().parents[1] / "builder_utils" / "clevr"
TEMPLATE_ROOT = CLEVR_DIR / "templates"
MATH_DIR = TEMPLATE_ROOT / "clevr_math"
CHAIN_DIR = TEMPLATE_ROOT / "clevr_math_chains"
CATEGORIES = {"remove_group", "remove_subset", "insertion", "count_backwards", "adversarial", "multihop"}
SYNONYMS = json.loads((CLEVR_DIR / "synonyms.json").read_text(encoding="utf-8"))

SIZES = ("small", "large")
COLORS = ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
MATERIALS = ("rubber", "metal")
SHAPES = ("cube", "sphere", "cylinder")
ATTRIBUTE_OF_LETTER = {"Z": ("size", SIZES), "C": ("color", COLORS), "M": ("material", MATERIALS), "S": ("shape", SHAPES)}


def _words(canonical: str) -> list[str]:
    return SYNONYMS.get(canonical, [canonical])


# ---------------------------------------------------------------------------------------------
# Reading parameter values back from a question's text.


def _word_alternatives(values) -> dict[str, str]:
    """Surface word -> canonical value (e.g. 'ball' -> 'sphere')."""
    return {w.lower(): v for v in values for w in _words(v)}


def _text_pattern(text: str) -> tuple[re.Pattern, dict[str, list[str]]]:
    """A regex for one template text variant, and param name -> its regex groups.

    Null Size/Color/Material params render as nothing and a null Shape as "thing" (or its
    synonyms), so those slots are optional or accept "thing"; "<S>s" may lose its "s" after a
    count of 1.
    """
    groups: dict[str, list[str]] = collections.defaultdict(list)
    parts = []
    tokens = text.split(" ")
    for k, token in enumerate(tokens):
        last = k == len(tokens) - 1
        m = re.fullmatch(r"<([ZCMSX])(\d*)>", token)
        slot = re.fullmatch(r"(.*?)\{(\w+)\}(.*)", token)
        if m and m.group(1) in "ZCM":
            letter, suffix = m.groups()
            group = f"p{letter}{suffix}_{len(groups[token])}"
            groups[token].append(group)
            alternatives = "|".join(sorted(map(re.escape, _word_alternatives(ATTRIBUTE_OF_LETTER[letter][1])), key=len, reverse=True))
            parts.append(f"(?:(?P<{group}>{alternatives})\\s+)?")
            continue
        m = re.match(r"^(.*?)<([SX])(\d*)>(.*)$", token)
        if m:
            before, letter, suffix, after = m.groups()
            name = f"<{letter}{suffix}>"
            group = f"p{letter}{suffix}_{len(groups[name])}"
            groups[name].append(group)
            if letter == "X":
                body = f"(?P<{group}>\\d+)"
            else:
                words = _word_alternatives(SHAPES + ("thing",))
                body = f"(?P<{group}>{'|'.join(sorted(map(re.escape, words), key=len, reverse=True))})"
            if after.startswith("s"):
                after = "s?" + re.escape(after[1:])
            else:
                after = re.escape(after)
            parts.append(re.escape(before) + body + after + ("" if last else "\\s+"))
            continue
        if slot:
            before, word, after = slot.groups()
            verbs = "|".join(sorted(map(re.escape, _words(word)), key=len, reverse=True))
            parts.append(f"{re.escape(before)}(?:{verbs}){re.escape(after)}" + ("" if last else "\\s+"))
            continue
        parts.append(re.escape(token) + ("" if last else "\\s+"))
    return re.compile("".join(parts), re.IGNORECASE), dict(groups)


class TextReader:
    """Finds which variant of a template produced a question and reads its parameter values."""

    def __init__(self, template: dict):
        self.variants = [_text_pattern(t) for t in template["text"]]
        self.shapes = _word_alternatives(SHAPES + ("thing",))
        self.values = {letter: _word_alternatives(vals) for letter, (_, vals) in ATTRIBUTE_OF_LETTER.items()}

    def read(self, question: str) -> dict[str, object]:
        question = " ".join(question.split())
        for pattern, groups in self.variants:
            match = pattern.fullmatch(question)
            if match is None:
                continue
            params: dict[str, object] = {}
            for name, names in groups.items():
                raw = {match.group(g).lower() if match.group(g) is not None else None for g in names}
                assert len(raw) == 1 or name.startswith("<S"), f"{name} read as {raw} in {question!r}"
                letter = name[1]
                found = [r for r in raw]
                if letter == "X":
                    params[name] = int(found[0])
                elif letter == "S":
                    canon = {self.shapes[r] for r in found}
                    assert len(canon) == 1, f"{name} names different shapes in {question!r}"
                    value = canon.pop()
                    params[name] = None if value == "thing" else value
                else:
                    params[name] = None if found[0] is None else self.values[letter][found[0]]
            return params
        raise AssertionError(f"question matches no text variant of its template: {question!r}")


# ---------------------------------------------------------------------------------------------
# The oracle: each template's answer from the paper's definition, counted on the scene objects.


def _matching(objects, size=None, color=None, material=None, shape=None) -> set[int]:
    wanted = {"size": size, "color": color, "material": material, "shape": shape}
    return {
        i for i, obj in enumerate(objects)
        if all(value is None or obj[attr] == value for attr, value in wanted.items())
    }


def _named(p, *names):
    for name in names:
        assert p[name] is not None, f"the text does not name {name}"


def oracle(family: str, index: int, p: dict, objects: list[dict]) -> tuple[int, list[int], list[int] | None]:
    """(answer, amounts moved by each operation, counts after each operation or None) for one
    clevr_math template, from the paper's definition of the template."""
    n = len(objects)
    if family == "subtraction":
        if index in (0, 4):
            _named(p, "<C>", "<S>")
            removed = len(_matching(objects, color=p["<C>"], shape=p["<S>"]))
            before = len(_matching(objects, shape=p["<S>"])) if index == 0 else n
            return before - removed, [removed], [before - removed]
        if index == 1:
            _named(p, "<S>")
            assert any(p[k] is not None for k in ("<Z>", "<C>", "<M>")), "removes a whole shape class"
            removed = len(_matching(objects, p["<Z>"], p["<C>"], p["<M>"], p["<S>"]))
            before = len(_matching(objects, shape=p["<S>"]))
            return before - removed, [removed], [before - removed]
        if index == 2:
            _named(p, "<S>")
            group = len(_matching(objects, color=p["<C>"], shape=p["<S>"]))
            assert 1 <= p["<X>"] <= group and group >= 2, "not a subset of a group"
            return n - p["<X>"], [p["<X>"]], [n - p["<X>"]]
        if index == 3:
            _named(p, "<S>")
            group = len(_matching(objects, color=p["<C>"], shape=p["<S>"]))
            assert p["<X>"] >= 1
            return group - p["<X>"], [group - p["<X>"]], [group - p["<X>"]]
        if index == 5:
            _named(p, "<S>")
            group = len(_matching(objects, shape=p["<S>"]))
            assert 1 <= p["<X>"] <= group and group >= 2, "not a subset of a group"
            return group - p["<X>"], [p["<X>"]], [group - p["<X>"]]
    if family == "addition":
        _named(p, "<S>")
        group = len(_matching(objects, p["<Z>"], p["<C>"], p["<M>"], p["<S>"]))
        if index == 0:
            assert group >= 1, "'more' of a group that is not in the scene"
        result = (n if index == 2 else group) + p["<X>"]
        return result, [p["<X>"]], [result]
    if family == "adversarial":
        _named(p, "<C1>", "<S1>", "<C2>", "<S2>")
        assert p["<S1>"] != p["<S2>"], "the action touches the asked-about group"
        acted = len(_matching(objects, color=p["<C1>"], shape=p["<S1>"]))
        other = len(_matching(objects, color=p["<C2>"], shape=p["<S2>"]))
        assert acted >= 1, "adversarial action on objects that are not in the image"
        if index == 0:
            # both removals act on objects of the image; the second never touches <S1>
            left = len(_matching(objects, shape=p["<S1>"])) - acted
            return left, [acted, other], [left]
        if index == 1:
            return other, [acted], []
        if index == 2:
            assert p["<X>"] <= acted
            return other, [p["<X>"]], []
    if family == "subtraction-multihop":
        first = _matching(objects, p["<Z>"], p["<C>"], p["<M>"], p["<S>"])
        second = _matching(objects, p["<Z2>"], p["<C2>"], p["<M2>"], p["<S2>"])
        for names in (("<Z>", "<C>", "<M>", "<S>"), ("<Z2>", "<C2>", "<M2>", "<S2>")):
            assert any(p[k] is not None for k in names), "removes every object"
        return n - len(first | second), [len(first), len(second - first)], [n - len(first), n - len(first | second)]
    raise AssertionError(f"no oracle for {family}[{index}]")


def chain_oracle(ops: list[str], p: dict, objects: list[dict], max_insert: int = 3) -> tuple[int, list[int], list[int]]:
    """(answer, count after each operation, amounts) for one chain, counted on the scene."""
    colors = [p[f"<C{i}>"] for i in range(1, len(ops) + 1)]
    assert None not in colors and len(set(colors)) == len(colors), f"colours must differ: {colors}"
    state, states, amounts = len(objects), [], []
    for i, op in enumerate(ops, start=1):
        _named(p, f"<C{i}>", *([f"<S{i}>"] if op == "add" else []))
        group = len(_matching(objects, color=p[f"<C{i}>"], shape=p[f"<S{i}>"]))
        if op == "remove_all":
            amount = group
            state -= amount
        elif op == "remove_some":
            amount = p[f"<X{i}>"]
            assert amount <= group and group >= 2
            state -= amount
        else:
            amount = p[f"<X{i}>"]
            assert amount <= min(len(objects), max_insert)
            state += amount
        assert state >= 0
        amounts.append(amount)
        states.append(state)
    return state, states, amounts


# ---------------------------------------------------------------------------------------------
# Fixtures: synthetic scenes and generated questions (generated once per module: seconds).




def _load_templates(folder: Path) -> dict[tuple[str, int], dict]:
    out = {}
    for path in sorted(folder.glob("*.json")):
        for i, template in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            out[(path.stem, i)] = template
    return out


def _family(question: dict) -> str:
    return Path(question["template_filename"]).stem


@pytest.fixture(scope="module")
def scenes():
    return generate_scenes(60, seed=7, split="val")


@pytest.fixture(scope="module")
def math_questions(scenes):
    options = GeneratorOptions(templates="clevr_math", seed=11)
    return list(QuestionGenerator(options).generate(scenes))


@pytest.fixture(scope="module")
def chain_questions(scenes):
    options = GeneratorOptions(templates="clevr_math_chains", seed=5, max_answer=30)
    return list(QuestionGenerator(options).generate(scenes))


def _scene_of(question, scenes):
    by_index = {s["image_index"]: s for s in scenes}
    return by_index[question["image_index"]]


# ---------------------------------------------------------------------------------------------
# Tests.


def test_template_files_declare_categories_and_word_slots():
    templates = _load_templates(MATH_DIR)
    counts = collections.Counter(family for family, _ in templates)
    assert counts == {"subtraction": 6, "addition": 3, "adversarial": 3, "subtraction-multihop": 1}
    assert {t["category"] for t in templates.values()} == CATEGORIES
    for key, template in templates.items():
        names = {p["name"] for p in template["params"]}
        assert len(template["text"]) >= 3, key
        for text in template["text"]:
            assert re.search(r"\{(Remove|remove|removed|Add|add|added)\}", text), (key, text)
            assert set(re.findall(r"<[A-Z]\d*>", text)) == names, (key, text)
            for slot in re.findall(r"\{(\w+)\}", text):
                assert slot in SYNONYMS, f"{key}: word slot {{{slot}}} has no synonyms.json entry"
        choose_nodes = [n for n in template["nodes"] if n["type"] == "choose"]
        assert [n["side_inputs"] for n in choose_nodes] == [[p] for p in sorted(names) if p.startswith("<X")], key
        assert all(not n.get("allow_zero") for n in choose_nodes), key


def test_committed_chain_set_is_what_the_script_writes(tmp_path):
    assert chain_templates.main(["--check", "--output-dir", str(CHAIN_DIR)]) == 0
    written = chain_templates.write_chain_set(tmp_path, max_operations=7)
    assert [p.name for p in written] == [f"chain_{k}.json" for k in range(2, 8)]
    longest = json.loads((tmp_path / "chain_7.json").read_text(encoding="utf-8"))
    assert all(t["category"] == "multihop" for t in longest)
    assert chain_templates.operation_sequence(7, "add", chain_templates.REMOVE_ALL) == [
        "add", "remove_all", "add", "remove_some", "add", "remove_all", "add"]
    with pytest.raises(ValueError, match="each operation needs its own colour"):
        chain_templates.chain_files(9)
    uncapped = chain_templates.chain_template(["add", "remove_all"], max_insert=None)
    assert not [c for c in uncapped["constraints"] if c.get("max")]
    assert chain_templates.main(["--max-operations", "2", "--max-insert", "0", "--output-dir", str(tmp_path / "u")]) == 0
    assert "max" not in (tmp_path / "u" / "chain_2.json").read_text(encoding="utf-8")


def test_math_answers_match_program_and_independent_count(math_questions, scenes):
    templates = _load_templates(MATH_DIR)
    readers = {key: TextReader(t) for key, t in templates.items()}
    seen_templates, seen_categories = set(), set()
    for q in math_questions:
        key = (_family(q), q["template_index"])
        scene = _scene_of(q, scenes)
        assert q["category"] == templates[key]["category"]
        assert execute_answer(q["program"], scene) == str(q["answer"])
        params = readers[key].read(q["question"])
        expected, amounts, states = oracle(*key, params, scene["objects"])
        assert str(expected) == str(q["answer"]), (q["question"], scene["image_index"])
        assert all(a >= 1 for a in amounts), f"moves 0 objects: {q['question']!r}"
        assert list(q["intermediate_counts"]) == states, (q["question"], q["intermediate_counts"])
        assert 0 <= int(q["answer"]) <= 10
        seen_templates.add(key)
        seen_categories.add(q["category"])
    assert seen_templates == set(templates)
    assert seen_categories == CATEGORIES


def test_choose_value_is_in_text_and_program(math_questions):
    with_x = [q for q in math_questions if any(n.get("function", n.get("type")) == "choose" for n in q["program"])]
    assert with_x
    for q in with_x:
        values = [n.get("value_inputs", n.get("side_inputs")) for n in q["program"] if n.get("function", n.get("type")) == "choose"]
        for (x,) in values:
            assert int(x) >= 1
            assert re.search(rf"\b{x}\b", q["question"]), (x, q["question"])


def test_verbs_vary_over_the_paper_synonyms(math_questions):
    text = " ".join(q["question"].lower() for q in math_questions)
    for verb in ("remove", "subtract", "take away", "withdraw", "add", "introduce", "insert"):
        assert verb in text, verb


def test_math_cot_states_counts_and_arithmetic(math_questions):
    for q in math_questions:
        cot = q["cot"]
        assert cot.endswith(f"Answer: {q['answer']}."), cot
        equations = re.findall(r"(\d+) ([+-]) (\d+) = (\d+)", cot)
        for a, op, b, result in equations:
            assert (int(a) + int(b) if op == "+" else int(a) - int(b)) == int(result), cot
        # every count after an operation is the result of a stated equation
        assert [int(r) for *_, r in equations] == list(q["intermediate_counts"]), cot
        if q["category"] == "adversarial":
            assert "does not change the number of" in cot, cot


def _choose_value(question) -> int:
    (x,) = [int(n["value_inputs"][0]) for n in question["program"] if n["function"] == "choose"]
    return x


def test_math_cot_words_subset_removal_and_counting_backwards_by_category(math_questions):
    subset = [q for q in math_questions if q["category"] == "remove_subset"]
    backwards = [q for q in math_questions if q["category"] == "count_backwards"]
    assert subset and backwards
    for q in subset:
        x, answer = _choose_value(q), int(q["answer"])
        assert re.search(rf"Step \d+: Removing {x} of the ", q["cot"]), q["cot"]
        assert not re.search(r", and \d+ - \d+ =", q["cot"]), q["cot"]  # not the neutral wording
    own_group = [q for q in subset if q["program"][-2]["function"] == "choose"
                 and q["program"][q["program"][-1]["inputs"][0]]["function"] == "count"
                 and q["program"][q["program"][-1]["inputs"][0]]["inputs"] == q["program"][-2]["inputs"]]
    assert own_group  # "Remove X of the cubes. How many cubes are left?"
    for q in own_group:
        x, answer = _choose_value(q), int(q["answer"])
        assert re.search(rf"Removing {x} of the {answer + x} [a-z ]+ leaves {answer + x} - {x} = {answer} [a-z ]+\.",
                         q["cot"]), q["cot"]
    for q in backwards:
        x, answer = _choose_value(q), int(q["answer"])
        n = answer + x
        assert re.search(rf"There (is|are) {n} [a-z ]+; to be left with {x} of them, remove {n} - {x} = {answer}\.",
                         q["cot"]), q["cot"]


def test_multihop_cot_names_the_second_group_in_the_right_number(math_questions, scenes):
    from builder_utils.clevr.executor import execute

    multihop = [q for q in math_questions if q["category"] == "multihop"]
    assert multihop
    numbers = set()
    for q in multihop:
        outputs = execute(q["program"], _scene_of(q, scenes))
        (union,) = [n for n in q["program"] if n["function"] == "union"]
        n = len(outputs[union["inputs"][1]])
        noun = re.search(r"Removing the ([a-z ]+) as well", q["cot"]).group(1).split()[-1]
        assert noun.endswith("s") == (n != 1), (n, q["cot"])
        numbers.add(n == 1)
    assert numbers == {True, False}


def test_max_answer_can_also_bound_intermediate_counts(scenes):
    def run(bound: bool):
        options = GeneratorOptions(templates="clevr_math_chains", seed=5, max_answer=10, bound_intermediate_counts=bound)
        return list(QuestionGenerator(options).generate(scenes[:20]))

    unbounded, bounded = run(False), run(True)
    assert any(max(q["intermediate_counts"]) > 10 for q in unbounded)  # the default: only the answer is capped
    assert bounded and all(max(q["intermediate_counts"]) <= 10 for q in bounded)
    for q in bounded:
        assert execute_answer(q["program"], _scene_of(q, scenes)) == q["answer"]
    with pytest.raises(ValueError, match="bound_intermediate_counts needs max_answer"):
        GeneratorOptions(templates="clevr_math_chains", bound_intermediate_counts=True)


def test_chains_alternate_and_keep_intermediate_counts(chain_questions, scenes):
    templates = _load_templates(CHAIN_DIR)
    readers = {key: TextReader(t) for key, t in templates.items()}
    lengths, above_ten = set(), False
    for q in chain_questions:
        family, index = _family(q), q["template_index"]
        k = int(family.split("_")[1])
        start, first = [(s, f) for s in ("remove", "add") for f in (chain_templates.REMOVE_ALL, chain_templates.REMOVE_SOME)][index]
        ops = chain_templates.operation_sequence(k, start, first)
        assert all((a == "add") != (b == "add") for a, b in zip(ops, ops[1:])), ops
        scene = _scene_of(q, scenes)
        assert execute_answer(q["program"], scene) == str(q["answer"])
        expected, states, amounts = chain_oracle(ops, readers[(family, index)].read(q["question"]), scene["objects"])
        assert str(expected) == str(q["answer"]), q["question"]
        assert list(q["intermediate_counts"]) == states, (q["question"], q["intermediate_counts"], states)
        assert all(a >= 1 for a in amounts), q["question"]
        assert q["category"] == "multihop" and q["num_operations"] == k
        results = [int(r) for r in re.findall(r"\d+ [+-] \d+ = (\d+)", q["cot"])]
        assert results == states, q["cot"]
        assert q["cot"].endswith(f"Answer: {q['answer']}.")
        lengths.add(k)
        above_ten |= int(q["answer"]) > 10
    assert lengths == {2, 3, 4, 5}
    assert above_ten, "max_answer=30 should let some chains go above 10"


def test_same_sign_chains_of_the_long_set_follow_their_text(scenes):
    """clevr_math_long_chains' same_sign_k: removals only (either removal form first) or
    insertions only, checked by the chain oracle from the question text."""
    long_dir = TEMPLATE_ROOT / "clevr_math_long_chains"
    templates = _load_templates(long_dir)
    readers = {key: TextReader(t) for key, t in templates.items()}
    options = GeneratorOptions(templates="clevr_math_long_chains", seed=5, max_answer=30,
                               question_types=("same_sign_2", "same_sign_3", "same_sign_4"))
    seen, above_ten = set(), False
    for q in QuestionGenerator(options).generate(scenes[:30]):
        family, index = _family(q), q["template_index"]
        k = int(family.rsplit("_", 1)[1])
        ops = (chain_templates.same_sign_sequence(k, "remove", chain_templates.REMOVE_ALL),
               chain_templates.same_sign_sequence(k, "remove", chain_templates.REMOVE_SOME),
               chain_templates.same_sign_sequence(k, "add"))[index]
        scene = _scene_of(q, scenes)
        expected, states, amounts = chain_oracle(ops, readers[(family, index)].read(q["question"]), scene["objects"])
        assert str(expected) == str(q["answer"]) == execute_answer(q["program"], scene), q["question"]
        assert list(q["intermediate_counts"]) == states and all(a >= 1 for a in amounts), q["question"]
        seen.add((k, index))
        above_ten |= int(q["answer"]) > 10
    assert {index for _, index in seen} == {0, 1, 2} and {k for k, _ in seen} == {2, 3, 4}
    assert above_ten
    assert chain_templates.main(["--long", "--check"]) == 0  # the committed set is what --long writes


def test_max_answer_ten_keeps_chains_within_the_paper_range(scenes):
    options = GeneratorOptions(templates="clevr_math_chains", seed=5, max_answer=10)
    questions = list(QuestionGenerator(options).generate(scenes[:20]))
    assert questions
    assert all(0 <= int(q["answer"]) <= 10 for q in questions)


def test_post_prompt_appends_the_integer_sentence_of_seed_001(math_questions, scenes):
    """--add_post_prompt on CLEVR-Math: every answer is an Integer, so every question gets the
    Integer sentence of seed 001 and nothing else changes (same programs, answers, cot)."""
    sentence = "Answer with only the number in curly braces, e.g. {1}."
    prompted = list(QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=11, add_post_prompt=True))
                    .generate(scenes))
    assert len(prompted) == len(math_questions)
    for plain, q in zip(math_questions, prompted):
        assert q["question"] == f"{plain['question']} {sentence}"
        assert (q["program"], q["answer"], q["cot"]) == (plain["program"], plain["answer"], plain["cot"])


def test_same_seed_same_questions(scenes):
    def run():
        return list(QuestionGenerator(GeneratorOptions(templates="clevr_math", seed=3)).generate(scenes[:8]))

    assert json.dumps(run(), sort_keys=True) == json.dumps(run(), sort_keys=True)


def test_generate_questions_command_serves_both_math_sets(tmp_path, scenes):
    from builder_utils.clevr.generate_questions import main as generate_questions

    scene_file = tmp_path / "scenes.json"
    scene_file.write_text(json.dumps({"info": {"split": "val"}, "scenes": scenes[:6]}), encoding="utf-8")
    longer = tmp_path / "chains_up_to_6"
    chain_templates.write_chain_set(longer, max_operations=6)
    runs = {
        "clevr_math": ["--templates", "clevr_math"],
        "clevr_math_chains": ["--templates", "clevr_math_chains", "--max_answer", "10"],
        "bounded": ["--templates", "clevr_math_chains", "--max_answer", "10", "--bound_intermediate_counts"],
        "template_dir": ["--template_dir", str(longer)],
    }
    for name, flags in runs.items():
        out = tmp_path / f"{name}.json"
        status = generate_questions(["--input_scene_file", str(scene_file), "--output_questions_file", str(out),
                                     "--seed", "2", *flags])
        assert status == 0, name
        questions = json.loads(out.read_text(encoding="utf-8"))["questions"]
        assert questions, name
        by_index = {s["image_index"]: s for s in scenes}
        for q in questions:
            assert execute_answer(q["program"], by_index[q["image_index"]]) == q["answer"]
            assert q["category"] in CATEGORIES
        if name != "template_dir":
            assert all(int(q["answer"]) <= 10 for q in questions), name
        if name == "bounded":
            assert all(max(q["intermediate_counts"]) <= 10 for q in questions)
