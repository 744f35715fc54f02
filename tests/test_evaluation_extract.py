"""Answer extraction on tables of real-looking model outputs, and reading prediction files."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from builder_utils.evaluation.extract import (
    answer_span,
    extract,
    extract_integer,
    extract_ranked,
    extract_word,
    extract_yes_no,
)
from builder_utils.evaluation.predictions import PredictionsError, read_predictions
from clevr_math.evaluation import SPEC as MATH_SPEC, math_question
from clotho_aqa.answers import normalize_answer
from clotho_aqa.evaluation import SPEC as AQA_SPEC, aqa_question
from builder_utils.clevr.evaluate import attribute_synonyms, answer_kind

INTEGERS = [
    ("3", 3),
    ("3.", 3),
    (" 7 \n", 7),
    ("three", 3),
    ("Zero", 0),
    ("none", 0),
    ("twenty-one", 21),
    ("twenty one", 21),
    ("Answer: 3", 3),
    ("answer: three", 3),
    ("The answer is 4.", 4),
    ("Final answer = 10", 10),
    ("\\boxed{3}", 3),
    ("So we get $\\boxed{ 6 }$.", 6),
    ("{5}", 5),
    ("<answer>2</answer>", 2),
    ("There are 3 cubes left.", 3),
    ("There are three cubes left.", 3),
    # several numbers: the last one of the answer span
    ("Removing 2 of the 5 cubes leaves 3.", 3),
    ("10 - 4 = 6", 6),
    ("Step 1: There are 8 objects.\nStep 2: Removing 3 gives 8 - 3 = 5 objects.\nAnswer: 5.", 5),
    ("I count 4 spheres, so the answer is \\boxed{2} after removing 2... wait 4 - 2 = 2", 2),
    ("The answer is 4, not 5", 5),  # the stated rule, even where a reader would say 4
    # digits win over number words
    ("There are 3 cubes; one of them is red.", 3),
    ("1,000 objects", 1000),
    ("3.0", 3),
    ("-1", -1),
    # unparseable
    ("2.5", None),
    ("I cannot answer that.", None),
    ("", None),
    ("There are no cubes left.", None),
    ("Answer: many", None),
]


@pytest.mark.parametrize("text, expected", INTEGERS)
def test_integer_extraction_table(text, expected):
    assert extract_integer(text) == expected


YES_NO = [
    ("yes", "yes"), ("Yes", "yes"), ("YES.", "yes"), ("y", "yes"), ("Y", "yes"), ("true", "yes"), ("True.", "yes"),
    ("Yes, there is.", "yes"), ("Yes, there is a dog barking.", "yes"), ("yeah", "yes"), ("Yep!", "yes"),
    ("Answer: yes", "yes"), ("\\boxed{yes}", "yes"), ("<answer>Yes</answer>", "yes"),
    ("no", "no"), ("No", "no"), ("n", "no"), ("false", "no"), ("No, there isn't.", "no"),
    ("No, there is no dog.", "no"), ("nope", "no"), ("The answer is no.", "no"),
    # the first yes/no word
    ("Yes, but no cat.", "yes"), ("There is no dog, so yes... I mean no", "no"),
    ("maybe", None), ("I am not sure", None), ("", None), ("yesterday", None), ("nobody knows", None),
]


@pytest.mark.parametrize("text, expected", YES_NO)
def test_yes_no_extraction_table(text, expected):
    assert extract_yes_no(text) == expected


def _clevr_word(text, kind):
    vocabulary, synonyms = attribute_synonyms(kind)
    return extract_word(text, vocabulary, synonyms)


CLEVR_WORDS = [
    ("red", "color", "red"), ("Red.", "color", "red"), ("It is red.", "color", "red"),
    ("The cube is purple", "color", "purple"), ("grey", "color", None), ("gray", "color", "gray"),
    ("sphere", "shape", "sphere"), ("ball", "shape", "sphere"), ("A ball.", "shape", "sphere"),
    ("balls", "shape", "sphere"), ("block", "shape", "cube"), ("cubes", "shape", "cube"),
    ("It's a small cylinder.", "shape", "cylinder"),
    ("big", "size", "large"), ("Large", "size", "large"), ("tiny", "size", "small"),
    ("It is a large red metal sphere.", "size", "large"),
    ("metallic", "material", "metal"), ("shiny", "material", "metal"), ("matte", "material", "rubber"),
    ("Answer: rubber", "material", "rubber"), ("The material is metal.", "material", "metal"),
    ("It is a large red metal sphere.", "material", "metal"), ("wood", "material", None),
]


@pytest.mark.parametrize("text, kind, expected", CLEVR_WORDS)
def test_clevr_attribute_words_with_synonyms(text, kind, expected):
    assert _clevr_word(text, kind) == expected


def test_clevr_answer_kinds_follow_the_gold_answer():
    assert [answer_kind(a) for a in ("yes", "no", "3", "red", "sphere", "large", "metal")] == [
        "yes_no", "yes_no", "integer", "color", "shape", "size", "material"]


#: Read against the spec's own vocabulary (the release's 828 single-word answers), as every scorer reads.
CLOTHO_WORDS = [
    ("water", "water"), ("Water.", "water"), ("  WATER  ", "water"), ("The rain", "rain"), ("rain!", "rain"),
    ("Answer: birds", "birds"), ("\\boxed{dog}", "dog"), ("Two", "two"), ("2", "two"), ("3.", "three"),
    ("It is rain falling on a street.", "rain"), ("A dog barking", "dog"),
    ("I hear a few birds.", "birds"), ("dogs", "dog"), ("thunder", "thunder"),
    # "sounds" is one of the release's answers: the first known word wins (the rule's known limit)
    ("It sounds like rain.", "sounds"),
    ("kazoo", "kazoo"), ("I do not know.", None), ("", None), ("...", None),
]


@pytest.mark.parametrize("text, expected", CLOTHO_WORDS)
def test_clotho_single_words_are_normalised_like_the_builder(text, expected):
    question = aqa_question("q", "What is heard?", ("water",) * 3, "single_word")
    assert AQA_SPEC.answers(question, text)[:1] == ([] if expected is None else [expected])


def test_clotho_normalisation_is_the_builders_function():
    # the same rule on both sides: an answer written as the builder stores it always matches
    for raw in ("Rain", " rain ", "RAIN"):
        word = normalize_answer(raw)
        assert AQA_SPEC.answers(aqa_question("q", "What?", (word,) * 3, "single_word"), raw, {word}) == [word]


def test_ranked_predictions_keep_their_order_and_drop_repeats_and_unparseable():
    assert extract_ranked(["Rain.", "rain", "???", "The water", "birds", "dog", "two", "three"], "word",
                          limit=5) == ["rain", "water", "birds", "dog", "two"]
    assert extract_ranked(["no", "yes"], "yes_no") == ["no"]          # yes/no: the first item only
    assert extract(["four", "3"], "integer") == "4"
    assert extract(None, "integer") is None


def test_answer_span_rules():
    assert answer_span("Answer: 3. Then answer: 4") == "4"
    assert answer_span("\\boxed{1} and \\boxed{2}") == "2"
    assert answer_span("I cannot answer that") == "I cannot answer that"
    with pytest.raises(ValueError, match="unknown answer kind"):
        extract_ranked("3", "float")


def test_clevr_math_scoring_uses_the_integer_rule():
    question = math_question("q", "3", "insertion", "addition[0]", 1)
    assert [MATH_SPEC.correct(question, p) for p in ("three", "Answer: 3", "4 - 1 = 3", "3 or 4")] == [
        True, True, True, False]


# --- prediction files -----------------------------------------------------------------

ROWS = [("q1", "Answer: 3"), ("q2", ["rain", "water"]), ("q3", None), ("q4", 7)]


def test_jsonl_csv_and_parquet_give_the_same_predictions(tmp_path):
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"question_id": q, "prediction": p}) + "\n" for q, p in ROWS)
                                      + "\n", encoding="utf-8")
    (tmp_path / "p.csv").write_text('question_id,prediction\nq1,Answer: 3\nq2,"[""rain"", ""water""]"\nq3,\nq4,7\n',
                                    encoding="utf-8")
    pq.write_table(pa.table({"question_id": ["q1", "q2", "q3", "q4"],
                             "prediction": ["Answer: 3", json.dumps(["rain", "water"]), None, "7"]}),
                   tmp_path / "text.parquet")
    pq.write_table(pa.table({"question_id": ["q1", "q2"], "prediction": [["Answer: 3"], ["rain", "water"]]}),
                   tmp_path / "lists.parquet")
    expected = {"q1": "Answer: 3", "q2": ["rain", "water"], "q3": None, "q4": "7"}
    assert read_predictions(tmp_path / "p.jsonl") == expected
    csv_read = read_predictions(tmp_path / "p.csv")
    assert csv_read == {**expected, "q3": ""}   # CSV has no null: an empty cell, unparseable all the same
    assert read_predictions(tmp_path / "text.parquet")["q1"] == "Answer: 3"
    assert read_predictions(tmp_path / "lists.parquet") == {"q1": ["Answer: 3"], "q2": ["rain", "water"]}


@pytest.mark.parametrize("name, content, message", [
    ("p.jsonl", '{"question_id": "a", "prediction": "3"}\n{"question_id": "a", "prediction": "4"}\n',
     "line 2: question_id 'a' again (first at line 1)"),
    ("p.jsonl", '{"question_id": "a", "prediction": "3"}\nnot json\n', "line 2 column 1: not valid JSON"),
    ("p.jsonl", '{"question_id": "a"}\n', "line 1: expected an object with keys question_id, prediction"),
    ("p.jsonl", '{"question_id": "a", "prediction": {"x": 1}}\n', "line 1: prediction must be text"),
    ("p.jsonl", '{"question_id": "a", "prediction": true}\n', "line 1: prediction is a boolean"),
    ("p.csv", "id,prediction\na,3\n", "line 1: missing column(s) question_id"),
    ("p.csv", "question_id,prediction\n,3\n", "line 2: empty question_id"),
    ("p.txt", "a 3\n", "unknown predictions format '.txt'"),
    ("p.parquet", "not parquet", "not a readable Parquet file"),
])
def test_bad_prediction_files_name_the_file_and_line(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PredictionsError) as error:
        read_predictions(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_a_missing_or_non_utf8_file_is_a_clear_error(tmp_path):
    with pytest.raises(PredictionsError, match="no such predictions file"):
        read_predictions(tmp_path / "absent.jsonl")
    (tmp_path / "latin.csv").write_bytes("question_id,prediction\na,caf\xe9\n".encode("latin-1"))
    with pytest.raises(PredictionsError, match="not UTF-8"):
        read_predictions(tmp_path / "latin.csv")
