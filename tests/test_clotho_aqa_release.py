"""Reading the official Clotho-AQA files: layout, quirks and every bad-input error."""

from __future__ import annotations

import csv
import logging
import shutil

import pytest

from clotho_aqa.release import (
    AUDIO_DIR,
    METADATA_CSV,
    SPLIT_CSVS,
    AudioIndex,
    ClipMetadata,
    MissingAudioError,
    ReleaseError,
    file_answer_sets,
    find_release_files,
    load_release,
    match_metadata,
    read_metadata_csv,
    read_qa_csv,
    read_questions,
    spelling_key,
)
from clotho_aqa.synth import DUPLICATED_QUESTION, MOJIBAKE_QUESTION, write_synthetic_release

HEADER = "file_name,QuestionText,answer,confidence\n"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_synthetic_release(tmp_path_factory.mktemp("clotho") / "release", num_files=10, seed=4)


def _write(path, text: str | bytes):
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def _raw_rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))[1:]


def test_questions_group_three_rows_by_position(release):
    path = release.root / SPLIT_CSVS["train"]
    questions = read_qa_csv(path, "train")
    rows = _raw_rows(path)
    assert len(questions) * 3 == len(rows) == release.num_rows["train"]
    for i, q in enumerate(questions):
        group = rows[3 * i : 3 * i + 3]
        assert q.line == 3 * i + 2  # header is line 1
        assert {r[0] for r in group} == {q.file_name} and {r[1] for r in group} == {q.question}
        assert list(q.answers) == [r[2] for r in group]
        assert list(q.confidences) == [r[3].lower() for r in group]
    # every clip has 6 questions numbered 0..5, so question ids are unique
    assert len({q.question_id for q in questions}) == len(questions)
    assert {q.position for q in questions} == set(range(6))


def test_question_asked_twice_gives_two_questions(release):
    questions = read_qa_csv(release.root / SPLIT_CSVS["train"], "train")
    clip = release.quirk_names["apostrophe_entity"]
    repeated = [q for q in questions if q.file_name == clip and q.question == DUPLICATED_QUESTION]
    assert [q.position for q in repeated] == [2, 3]
    assert repeated[1].line == repeated[0].line + 3


def test_confidence_lower_cased_and_text_kept_verbatim(release):
    path = release.root / SPLIT_CSVS["train"]
    raw = {r[3] for r in _raw_rows(path)}
    assert raw & {"Yes", "Maybe", "No"}, "the synthetic release should carry capitalised confidences"
    questions = read_qa_csv(path, "train")
    assert {c for q in questions for c in q.confidences} <= {"yes", "maybe", "no"}
    names = {q.file_name for q in questions}
    assert release.quirk_names["apostrophe_entity"] in names  # '&#39;' not unescaped
    assert release.quirk_names["ampersand_entity"] in names  # '&amp;' not unescaped
    assert MOJIBAKE_QUESTION in {q.question for q in questions}


def test_majority_unanimous_and_answer_type():
    from clotho_aqa.release import Question

    def q(*answers):
        return Question("a.wav", 0, "Q?", answers, ("yes",) * 3, "train", 2)

    assert (q("yes", "yes", "yes").unanimous, q("yes", "yes", "yes").majority_answer) == (True, "yes")
    assert (q("no", "yes", "no").unanimous, q("no", "yes", "no").majority_answer) == (False, "no")
    assert q("rain", "water", "wind").majority_answer is None
    assert q("yes", "no", "no").answer_type == "yes_no"
    assert q("rain", "rain", "water").answer_type == "single_word"


def test_missing_column_names_file_and_line(tmp_path):
    path = _write(tmp_path / "clotho_aqa_train.csv", "file_name,QuestionText,answer\na.wav,Q?,yes\n")
    with pytest.raises(ReleaseError) as err:
        read_qa_csv(path, "train")
    assert str(path) in str(err.value) and "line 1" in str(err.value) and "'confidence'" in str(err.value)


def test_empty_answer_names_file_and_line(tmp_path):
    text = HEADER + "a.wav,Q?,yes,yes\na.wav,Q?,,yes\na.wav,Q?,yes,yes\n"
    path = _write(tmp_path / "clotho_aqa_val.csv", text)
    with pytest.raises(ReleaseError, match="empty answer") as err:
        read_qa_csv(path, "validation")
    assert (err.value.path, err.value.line) == (str(path), 3)
    assert f"{path}, line 3" in str(err.value)


@pytest.mark.parametrize("count", [2, 4])
def test_group_that_is_not_three_rows(tmp_path, count):
    rows = "".join("a.wav,First?,yes,yes\n" for _ in range(count)) + "".join("a.wav,Second?,no,no\n" for _ in range(3))
    path = _write(tmp_path / "clotho_aqa_test.csv", HEADER + rows)
    with pytest.raises(ReleaseError, match=f"has {count} consecutive row") as err:
        read_qa_csv(path, "test")
    assert err.value.line == 2 and "'First?'" in str(err.value)


@pytest.mark.parametrize(
    "body, split, message, line",
    [
        pytest.param(
            HEADER + "a.wav,Q?,yes,yes\n" * 3 + "a.wav,R?,no,no\n", "test", "has 1 consecutive row", 5,
            id="truncated_last_group",
        ),
        pytest.param(
            HEADER + "a.wav,Q?,yes,yes\na.wav,Q?,yes,sure\na.wav,Q?,yes,yes\n", "train", "'sure'", 3,
            id="unknown_confidence",
        ),
        pytest.param(
            HEADER.encode() + "a.wav,Is it a café?,yes,yes\n".encode("latin-1"), "train", "UTF-8", 2,
            id="not_utf8",
        ),
        pytest.param(HEADER + "a.wav,Q?,yes\n", "train", "3 fields", 2, id="wrong_number_of_fields"),
    ],
)
def test_bad_row_names_its_line(tmp_path, body, split, message, line):
    path = _write(tmp_path / "t.csv", body)
    with pytest.raises(ReleaseError, match=message) as err:
        read_qa_csv(path, split)
    assert err.value.line == line


def test_clip_in_two_splits(tmp_path):
    group = "a.wav,Q?,yes,yes\n" * 3
    train = _write(tmp_path / "train.csv", HEADER + group)
    test = _write(tmp_path / "test.csv", HEADER + "b.wav,Q?,no,no\n" * 3 + group)
    with pytest.raises(ReleaseError, match="also in split 'train'") as err:
        read_questions({"train": train, "test": test})
    assert err.value.path == str(test) and err.value.line == 5


def test_spelling_key_and_audio_index(tmp_path):
    assert spelling_key("souffle_me.tallique.wav") == spelling_key("souffle_me_tallique.wav")
    assert spelling_key("gulls 18.44 05.10.wav") == spelling_key("gulls 18_44 05_10.wav")
    assert spelling_key("a.wav") != spelling_key("a.flac")
    for name in ("x.y.wav", "plain.wav", "p.q_r.wav", "p_q.r.wav"):
        (tmp_path / name).write_bytes(b"")
    index = AudioIndex(tmp_path)
    assert index.resolve("plain.wav") == tmp_path / "plain.wav"
    assert index.resolve("x_y.wav") == tmp_path / "x.y.wav"
    assert index.resolve("absent.wav") is None
    assert index.resolve("../plain.wav") is None  # only listed names resolve
    with pytest.raises(ReleaseError, match="ambiguous"):
        index.resolve("p_q_r.wav")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        AudioIndex(tmp_path / "nowhere")


def test_synthetic_release_resolves_underscore_spelling(release):
    files = find_release_files(release.root)
    loaded = load_release(files["csv"], files["audio_dir"], files["metadata"])
    clip = release.quirk_names["underscore_for_dot"]
    assert loaded.audio[clip].name == "tin_can_da.nce.wav"
    assert loaded.audio[clip].is_file()
    # the unused extra clip of audio_files/ is not selected
    assert len(loaded.audio) == sum(len(f) for f in release.files.values())


def test_metadata_reading_and_spelling_match(release):
    table = read_metadata_csv(release.root / METADATA_CSV)
    clip = release.quirk_names["metadata_underscore"]
    assert clip not in table and clip.replace("07.15", "07_15") in table
    matched = match_metadata([clip], table)
    assert matched[clip] == table[clip.replace("07.15", "07_15")]
    values = list(table.values())
    assert all(isinstance(m.keywords, tuple) and len(m.keywords) == 3 for m in values)
    assert any(m.start_end_samples is None for m in values)
    assert all(m.start_end_samples is None or m.start_end_samples[0] < m.start_end_samples[1] for m in values)
    assert any(m.license is None for m in values)


def test_metadata_errors(tmp_path):
    header = ",file_name,keywords,sound_link,start_end_samples,manufacturer,license\n"
    missing = _write(tmp_path / "m1.csv", ",file_name,keywords,sound_link,start_end_samples,manufacturer\n")
    with pytest.raises(ReleaseError, match="'license'") as err:
        read_metadata_csv(missing)
    assert err.value.line == 1
    bad = _write(tmp_path / "m2.csv", header + '0,a.wav,rain,,"[1, 2]",,CC0\n1,b.wav,rain,,"1, 2",,CC0\n')
    with pytest.raises(ReleaseError, match="start_end_samples") as err:
        read_metadata_csv(bad)
    assert err.value.line == 3
    twice = _write(tmp_path / "m3.csv", header + "0,a.wav,,,,,\n1,a.wav,,,,,\n")
    with pytest.raises(ReleaseError, match="listed twice"):
        read_metadata_csv(twice)
    ok = read_metadata_csv(_write(tmp_path / "m4.csv", header + '0,a.wav,rain; roof,https://x,"[5, 9]",Zoom,CC0\n'))
    assert ok["a.wav"] == ClipMetadata(("rain", "roof"), "https://x", (5, 9), "Zoom", "CC0")


def test_missing_audio_lists_files(tmp_path, release):
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    gone = release.files["validation"][0]
    (root / AUDIO_DIR / gone).unlink()
    files = find_release_files(root)
    with pytest.raises(MissingAudioError) as err:
        load_release(files["csv"], files["audio_dir"])
    assert err.value.missing == [gone] and gone in str(err.value) and "skip_missing_audio" in str(err.value)


def test_skip_missing_audio_warns_with_count(tmp_path, release, caplog):
    root = tmp_path / "rel"
    shutil.copytree(release.root, root)
    for clip in release.files["test"][:1] + release.files["train"][-1:]:
        (root / AUDIO_DIR / clip).unlink()
    files = find_release_files(root)
    with caplog.at_level(logging.WARNING, logger="clotho_aqa.release"):
        loaded = load_release(files["csv"], files["audio_dir"], skip_missing_audio=True)
    assert "2 audio file(s) missing" in caplog.text and "dropped their 12 question(s)" in caplog.text
    assert len(loaded.file_names()) == sum(len(f) for f in release.files.values()) - 2
    assert sorted(loaded.skipped_files) == sorted(release.files["test"][:1] + release.files["train"][-1:])


def test_find_release_files_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_release_files(tmp_path / "nope")
    (tmp_path / SPLIT_CSVS["train"]).write_text(HEADER)
    with pytest.raises(FileNotFoundError, match="clotho_aqa_val.csv"):
        find_release_files(tmp_path)


def test_file_answer_sets(release):
    questions = read_questions(find_release_files(release.root)["csv"])
    names, vocabulary, labels = file_answer_sets(questions)
    assert names == list(dict.fromkeys(q.file_name for q in questions))
    assert vocabulary == sorted({a for q in questions for a in q.answers})
    for name, label in zip(names, labels):
        assert {vocabulary[i] for i in label} == {a for q in questions if q.file_name == name for a in q.answers}
