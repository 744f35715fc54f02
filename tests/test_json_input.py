"""The one reader of JSON input (builder_utils/json_input.py): hostile text costs bounded work
and fails in one line naming the file and the place."""

from __future__ import annotations

import pytest

from builder_utils.json_input import MAX_DEPTH, JSONInputError, json_lines, load_json, loads_json, shown_path


def test_nesting_at_the_limit_is_read_and_one_more_level_is_refused():
    at_limit = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads_json(at_limit, where="ok.json") is not None
    with pytest.raises(JSONInputError, match=rf"^x.json: line 1 column {MAX_DEPTH + 1}: nested more than"):
        loads_json("[" + at_limit + "]", where="x.json")


def test_deep_objects_inside_strings_do_not_count():
    text = '{"text": "' + "[" * 5000 + '"}'
    assert loads_json(text, where="s.json") == {"text": "[" * 5000}


def test_mixed_nesting_is_located_on_its_line(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{\n  "a": 1,\n  "b": ' + '{"k": [' * 40 + "0" + "]}" * 40 + "\n}")
    with pytest.raises(JSONInputError, match=r"m.json: line 3 column \d+: nested more than 64"):
        load_json(path)


def test_a_huge_integer_names_the_line_and_column(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{\n "n": ' + "1" * 5000 + "}")
    with pytest.raises(JSONInputError, match=r"p.json: line 2 column 7: an integer of 5000 digits"):
        load_json(path)


def test_json_lines_number_their_lines_and_stream(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"a": 1}\n\n' + "[" * 100_000 + "\n")
    rows = json_lines(path)
    assert next(rows) == (1, {"a": 1})
    with pytest.raises(JSONInputError, match=r"p.jsonl: line 3 column 65: nested more than"):
        next(rows)


def test_files_that_cannot_be_read_are_named(tmp_path):
    with pytest.raises(JSONInputError, match=r"gone.json: metadata file not found"):
        load_json(tmp_path / "gone.json", what="metadata file")
    (tmp_path / "latin.json").write_bytes(b'{"caf\xe9": 1}')
    with pytest.raises(JSONInputError, match=r"latin.json: line 1: not UTF-8 text"):
        load_json(tmp_path / "latin.json")
    with pytest.raises(JSONInputError, match=r"expected a file, found a folder"):
        load_json(tmp_path)


def test_the_caller_chooses_the_error_class(tmp_path):
    class TemplateError(ValueError):
        pass

    with pytest.raises(TemplateError, match="t.json: line 1 column 2"):
        loads_json("[,]", where="t.json", error=TemplateError)


def test_a_byte_order_mark_is_accepted(tmp_path):
    (tmp_path / "b.json").write_bytes(b'\xef\xbb\xbf{"a": 2}')
    assert load_json(tmp_path / "b.json") == {"a": 2}


def test_names_with_control_characters_are_escaped():
    assert shown_path("a\nb\r\x1b.json") == "a\\nb\\r\\x1b.json"

