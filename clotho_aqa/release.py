"""Reading and validating the official Clotho-AQA release (Zenodo record 6473207): one reader, one set of errors.

The release's quirks are handled on purpose (README, "Options and checks"); ``&#39;``/``&amp;`` stay in
file names because the audio files carry them too, and text is UTF-8 only, so upstream mojibake stays.
"""

from __future__ import annotations

import csv
import io
import logging
import os
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from builder_utils.json_input import shown_path
from builder_utils.media_check import check_all, check_wav, summarize
from clotho_aqa.answers import normalize_answer

logger = logging.getLogger(__name__)

#: Official split name -> official CSV file name.
SPLIT_CSVS: dict[str, str] = {
    "train": "clotho_aqa_train.csv",
    "validation": "clotho_aqa_val.csv",
    "test": "clotho_aqa_test.csv",
}
METADATA_CSV = "clotho_aqa_metadata.csv"
AUDIO_DIR = "audio_files"
AUDIO_ZIP = "audio_files.zip"

QA_COLUMNS = ("file_name", "QuestionText", "answer", "confidence")
METADATA_COLUMNS = ("file_name", "keywords", "sound_link", "start_end_samples", "manufacturer", "license")
ANNOTATORS_PER_QUESTION = 3
CONFIDENCES = ("yes", "maybe", "no")
YES_NO = ("yes", "no")
SAMPLING_RATE = 44_100  # every official clip is 44.1 kHz mono
CHANNELS = 1
#: Where the Zenodo record's files are; ``checksums.tsv`` beside this module records them.
ZENODO_URL = "https://zenodo.org/records/6473207/files/{}"
CHECKSUMS_FILE = Path(__file__).with_name("checksums.tsv")


class ReleaseError(ValueError):
    """A release file that cannot be used as it is; the message names the file and the line.

    Example:
        >>> str(ReleaseError("empty answer", "clotho_aqa_val.csv", 12))
        'clotho_aqa_val.csv, line 12: empty answer'
    """

    def __init__(self, message: str, path: str | os.PathLike | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        where = self.path or ""
        if line is not None:
            where = f"{where}, line {line}" if where else f"line {line}"
        super().__init__(f"{where}: {message}" if where else message)


class MissingAudioError(FileNotFoundError):
    """Clips referenced by the QA tables that are not in the audio folder.

    Example:
        >>> err = MissingAudioError(["a.wav"], "/data/audio_files")
        >>> err.missing
        ['a.wav']
    """

    def __init__(self, missing: list[str], audio_dir: str | os.PathLike, shown: int = 5):
        self.missing = list(missing)
        self.audio_dir = str(audio_dir)
        # One line, as every error of a command: the first names (quoted: names hold commas), a count.
        listed = ", ".join(repr(name) for name in self.missing[:shown])
        more = f" and {len(self.missing) - shown} more" if len(self.missing) > shown else ""
        super().__init__(
            f"{shown_path(self.audio_dir)}: {len(self.missing)} audio file(s) referenced by the QA CSVs are missing: "
            f"{listed}{more}; pass skip_missing_audio=True (on the command line: --skip_missing_audio) to build without them (their questions are dropped "
            "with a warning)"
        )


@dataclass(frozen=True)
class Question:
    """One question about one clip with its three annotator answers, as read from a QA CSV.

    ``position`` (index among the clip's questions) keeps ``question_id`` unique when a clip asks twice.

    Example:
        >>> q = Question("a.wav", 0, "Is it raining?", ("yes", "yes", "no"), ("yes", "maybe", "no"), "train", 2)
        >>> q.answer_type, q.majority_answer, q.unanimous, q.question_id
        ('yes_no', 'yes', False, 'a.wav#0')
    """

    file_name: str
    position: int
    question: str
    answers: tuple[str, ...]
    confidences: tuple[str, ...]
    split: str
    line: int

    @property
    def question_id(self) -> str:
        return f"{self.file_name}#{self.position}"

    @property
    def answer_type(self) -> str:
        """``yes_no`` when every annotator answered yes or no, otherwise ``single_word``."""
        return "yes_no" if all(a in YES_NO for a in self.answers) else "single_word"

    @property
    def majority_answer(self) -> str | None:
        """The answer given by at least 2 of the 3 annotators, or None when all three differ."""
        answer, votes = Counter(self.answers).most_common(1)[0]
        return answer if votes * 2 > len(self.answers) else None

    @property
    def unanimous(self) -> bool:
        return len(set(self.answers)) == 1


@dataclass(frozen=True)
class ClipMetadata:
    """One row of ``clotho_aqa_metadata.csv``; empty cells are None (keywords: empty tuple).

    Example:
        >>> ClipMetadata(("rain", "roof"), None, (0, 44100), None, "CC0").start_end_samples
        (0, 44100)
    """

    keywords: tuple[str, ...]
    sound_link: str | None
    start_end_samples: tuple[int, int] | None
    manufacturer: str | None
    license: str | None


def _decode_utf8(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise ReleaseError(
            f"not valid UTF-8 (byte {err.start}: {data[err.start:err.start + 1]!r}); "
            "the release is UTF-8 and is never read with another encoding",
            path,
            line,
        ) from None
    # A BOM added by a spreadsheet program would otherwise hide the first column name.
    return text.removeprefix("\ufeff")


def _records(path: Path, required: Iterable[str]) -> Iterable[tuple[int, dict[str, str]]]:
    """Yield (first line number, row dict) for each data record, after checking the header."""
    text = _decode_utf8(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise ReleaseError("the file is empty; expected a header row", path, 1) from None
    missing = [name for name in required if name not in header]
    if missing:
        raise ReleaseError(
            f"missing column(s) {', '.join(repr(m) for m in missing)} in header {header!r}", path, 1
        )
    index = {name: header.index(name) for name in required}
    line = reader.line_num + 1
    for record in reader:
        first_line, line = line, reader.line_num + 1
        if not record:
            continue
        if len(record) != len(header):
            raise ReleaseError(f"{len(record)} fields where the header has {len(header)}", path, first_line)
        yield first_line, {name: record[i] for name, i in index.items()}


def _group_key(row: dict[str, str]) -> tuple[str, str]:
    return row["file_name"], row["QuestionText"]


def read_qa_csv(path: str | os.PathLike, split: str) -> list[Question]:
    """Read one official QA table into questions, grouping annotators by position.

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> questions = read_qa_csv(root / "clotho_aqa_val.csv", "validation")
        >>> questions[0].answers, questions[0].line
        (('yes', 'yes', 'yes'), 2)
    """
    path = Path(path)
    rows = list(_records(path, QA_COLUMNS))
    questions: list[Question] = []
    per_file: Counter[str] = Counter()
    n = ANNOTATORS_PER_QUESTION
    # Runs of consecutive rows about the same clip and text must come in whole groups of 3;
    # a run of 6 is a question asked twice, which the release does once.
    run_start = 0
    respelt: list[int] = []
    for i in range(1, len(rows) + 1):
        if i < len(rows) and _group_key(rows[i][1]) == _group_key(rows[run_start][1]):
            continue
        if (i - run_start) % n:
            line, row = rows[run_start]
            raise ReleaseError(
                f"the question {row['QuestionText']!r} about {row['file_name']!r} starting here has "
                f"{i - run_start} consecutive row(s); every question needs exactly {n} annotator rows",
                path,
                line,
            )
        run_start = i
    for start in range(0, len(rows), n):
        group = rows[start : start + n]
        first_line, first = group[0]
        answers, confidences = [], []
        for line, row in group:
            for column in ("file_name", "QuestionText"):
                if not row[column].strip():
                    raise ReleaseError(f"empty {column}", path, line)
            answer = normalize_answer(row["answer"])
            if not answer:
                raise ReleaseError(f"empty answer for {row['file_name']!r} / {row['QuestionText']!r}", path, line)
            if answer != row["answer"]:
                respelt.append(line)
            confidence = row["confidence"].strip().lower()
            if confidence not in CONFIDENCES:
                raise ReleaseError(
                    f"confidence {row['confidence']!r} is not one of {', '.join(CONFIDENCES)} (any case)", path, line
                )
            answers.append(answer)
            confidences.append(confidence)
        name = first["file_name"]
        questions.append(
            Question(
                file_name=name,
                position=per_file[name],
                question=first["QuestionText"],
                answers=tuple(answers),
                confidences=tuple(confidences),
                split=split,
                line=first_line,
            )
        )
        per_file[name] += 1
    if respelt:
        logger.warning(
            "%s: normalised the spelling (case, surrounding and repeated whitespace) of %d answer(s), "
            "first at line %d", path, len(respelt), respelt[0],
        )
    return questions


def _parse_start_end(cell: str, path: Path, line: int) -> tuple[int, int] | None:
    cell = cell.strip()
    if not cell:
        return None
    inner = cell.removeprefix("[").removesuffix("]")
    try:
        values = tuple(int(v) for v in inner.split(","))
    except ValueError:
        values = ()
    if len(values) != 2 or not cell.startswith("["):
        raise ReleaseError(f"start_end_samples {cell!r} is not of the form '[start, end]'", path, line)
    return values  # type: ignore[return-value]


def read_metadata_csv(path: str | os.PathLike) -> dict[str, ClipMetadata]:
    """Read ``clotho_aqa_metadata.csv`` into a dict keyed by file name as written there.

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> meta = read_metadata_csv(root / "clotho_aqa_metadata.csv")
        >>> meta["Crickets at the market 03.wav"].keywords[:2]
        ('engine', 'birds')
    """
    path = Path(path)
    result: dict[str, ClipMetadata] = {}
    for line, row in _records(path, METADATA_COLUMNS):
        name = row["file_name"]
        if not name.strip():
            raise ReleaseError("empty file_name", path, line)
        if name in result:
            raise ReleaseError(f"file {name!r} is listed twice", path, line)
        result[name] = ClipMetadata(
            keywords=tuple(k.strip() for k in row["keywords"].split(";") if k.strip()),
            sound_link=row["sound_link"].strip() or None,
            start_end_samples=_parse_start_end(row["start_end_samples"], path, line),
            manufacturer=row["manufacturer"].strip() or None,
            license=row["license"].strip() or None,
        )
    return result


def spelling_key(file_name: str) -> str:
    """A key under which the release's ``_``/``.`` spellings of one file name coincide (the extension kept).

    Example:
        >>> spelling_key("souffle_me.tallique.wav") == spelling_key("souffle_me_tallique.wav")
        True
    """
    name = unicodedata.normalize("NFC", file_name)
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return name
    return f"{stem.replace('.', '_')}.{ext}"


def _by_spelling(names: Iterable[str]) -> dict[str, list[str]]:
    """Names grouped under their :func:`spelling_key`, in the order given."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(spelling_key(name), []).append(name)
    return groups


class AudioIndex:
    """The audio files present in one folder, looked up by exact name or alternative spelling.

    Only names listed in the folder resolve, so a CSV cell like ``../x.wav`` never points outside it.

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> index = AudioIndex(root / "audio_files")     # holds tin_can_da.nce.wav, as the zip spells it
        >>> index.resolve("tin_can_da_nce.wav").name
        'tin_can_da.nce.wav'
    """

    def __init__(self, audio_dir: str | os.PathLike):
        self.audio_dir = Path(audio_dir)
        if not self.audio_dir.is_dir():
            raise FileNotFoundError(f"audio folder {self.audio_dir} does not exist (expected {AUDIO_DIR}/ of the release)")
        with os.scandir(self.audio_dir) as entries:
            self.names = {e.name for e in entries if e.is_file()}
        self._by_key = _by_spelling(sorted(self.names))

    def resolve(self, file_name: str) -> Path | None:
        """Path of the file spelt ``file_name`` (or an alternative spelling), None if absent."""
        if file_name in self.names:
            return self.audio_dir / file_name
        candidates = self._by_key.get(spelling_key(file_name), [])
        if len(candidates) > 1:
            raise ReleaseError(
                f"{file_name!r} is ambiguous: it could be any of {candidates}", self.audio_dir
            )
        return self.audio_dir / candidates[0] if candidates else None


def match_metadata(file_names: Iterable[str], metadata: Mapping[str, ClipMetadata]) -> dict[str, ClipMetadata]:
    """Metadata per QA file name, matching exact names first, then alternative spellings.

    Example:
        >>> meta = {"gulls 18_44.wav": ClipMetadata((), None, None, None, "CC0")}
        >>> match_metadata(["gulls 18.44.wav"], meta)["gulls 18.44.wav"].license
        'CC0'
    """
    by_key = _by_spelling(metadata)
    matched = {}
    for name in file_names:
        if name in metadata:
            matched[name] = metadata[name]
        elif len(spellings := by_key.get(spelling_key(name), [])) == 1:
            matched[name] = metadata[spellings[0]]
    return matched


@dataclass
class Release:
    """Everything the builder needs from one release; ``questions`` in official order (train, validation, test)."""

    questions: list[Question]
    audio: dict[str, Path]
    metadata: dict[str, ClipMetadata] | None = None
    skipped_files: list[str] = field(default_factory=list)

    def file_names(self) -> list[str]:
        """Distinct clip names in official order."""
        return list(dict.fromkeys(q.file_name for q in self.questions))


def read_questions(csv_paths: Mapping[str, str | os.PathLike]) -> list[Question]:
    """Read several QA tables (split name -> path) and check that no clip is in two splits.

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> questions = read_questions(find_release_files(root)["csv"])
        >>> len(questions)                               # 5 clips, 6 questions each
        30
    """
    questions: list[Question] = []
    first_seen: dict[str, tuple[str, Path, int]] = {}
    for split, csv_path in csv_paths.items():
        csv_path = Path(csv_path)
        split_questions = read_qa_csv(csv_path, split)
        for q in split_questions:
            seen = first_seen.setdefault(q.file_name, (split, csv_path, q.line))
            if seen[0] != split:
                raise ReleaseError(
                    f"clip {q.file_name!r} is also in split {seen[0]!r} ({seen[1]}, line {seen[2]}); "
                    "a clip must belong to one split",
                    csv_path,
                    q.line,
                )
        questions.extend(split_questions)
    return questions


def load_release(
    csv_paths: Mapping[str, str | os.PathLike],
    audio_dir: str | os.PathLike,
    metadata_path: str | os.PathLike | None = None,
    skip_missing_audio: bool = False,
    check_audio: bool = True,
) -> Release:
    """Read and cross-check a release: QA tables, audio folder and optional metadata.

    Missing audio raises :class:`MissingAudioError` unless ``skip_missing_audio`` (questions dropped, warned).

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> release = load_release(find_release_files(root)["csv"], root / "audio_files")
        >>> len(release.file_names())
        5
    """
    questions = read_questions(csv_paths)
    index = AudioIndex(audio_dir)
    audio: dict[str, Path] = {}
    missing: list[str] = []
    for name in dict.fromkeys(q.file_name for q in questions):
        path = index.resolve(name)
        if path is None:
            missing.append(name)
        else:
            audio[name] = path
    if missing and not skip_missing_audio:
        raise MissingAudioError(missing, audio_dir)
    if missing:
        dropped = set(missing)
        n_dropped = sum(q.file_name in dropped for q in questions)
        logger.warning(
            "skip_missing_audio: %d audio file(s) missing from %s; dropped their %d question(s)",
            len(missing), audio_dir, n_dropped,
        )
        questions = [q for q in questions if q.file_name not in dropped]
    if check_audio:
        check_clips(audio)

    metadata = None
    if metadata_path is not None:
        table = read_metadata_csv(metadata_path)
        metadata = match_metadata(audio, table)
        unmatched = [name for name in audio if name not in metadata]
        if unmatched:
            logger.warning(
                "%d clip(s) have no row in %s (metadata columns are empty for them), e.g. %r",
                len(unmatched), metadata_path, unmatched[0],
            )
    return Release(questions=questions, audio=audio, metadata=metadata, skipped_files=missing)


def check_clips(audio: Mapping[str, Path]) -> None:
    """Read every clip's header; raise for a broken file, warn about an unexpected format.

    Example:
        >>> check_clips({})
    """
    formats = check_all(list(audio.values()), check_wav)
    count, examples = summarize(zip(audio, formats), (SAMPLING_RATE, CHANNELS))
    if count:
        logger.warning(
            "%d clip(s) are not %d Hz mono as the audio feature declares (sample rate, channels), e.g. %s; "
            "decoders resample or mix them down on reading",
            count, SAMPLING_RATE, "; ".join(examples),
        )


def find_release_files(data_dir: str | os.PathLike) -> dict:
    """Locate the official files in a local folder laid out like the Zenodo record.

    Returns ``{"csv": {split: path}, "metadata", "audio_dir", "audio_zip"}`` (None when absent).

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> files = find_release_files(root)
        >>> sorted(files["csv"]), files["audio_zip"]
        (['test', 'train', 'validation'], None)
    """
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"data_dir {root} does not exist")
    csvs = {split: root / name for split, name in SPLIT_CSVS.items()}
    absent = [str(p) for p in csvs.values() if not p.is_file()]
    if absent:
        raise FileNotFoundError(
            f"data_dir {root} lacks the official QA table(s) {absent}; expected "
            f"{', '.join(SPLIT_CSVS.values())} next to {AUDIO_DIR}/"
        )
    metadata = root / METADATA_CSV
    audio_dir = root / AUDIO_DIR
    audio_zip = root / AUDIO_ZIP
    return {
        "csv": csvs,
        "metadata": metadata if metadata.is_file() else None,
        "audio_dir": audio_dir if audio_dir.is_dir() else None,
        "audio_zip": audio_zip if audio_zip.is_file() else None,
    }


def file_answer_sets(questions: Iterable[Question]) -> tuple[list[str], list[str], list[list[int]]]:
    """Per clip, the set of answer words (yes/no included) as indices into a sorted vocabulary.

    What the paper stratifies on: (file names in first-seen order, vocabulary, per-file label indices).

    Example:
        >>> qs = [Question("a.wav", 0, "Q?", ("yes", "no", "yes"), ("yes",) * 3, "train", 2)]
        >>> file_answer_sets(qs)
        (['a.wav'], ['no', 'yes'], [[0, 1]])
    """
    words: dict[str, set[str]] = {}
    for q in questions:
        words.setdefault(q.file_name, set()).update(q.answers)
    vocabulary = sorted(set().union(*words.values())) if words else []
    position = {w: i for i, w in enumerate(vocabulary)}
    labels = [sorted(position[w] for w in ws) for ws in words.values()]
    return list(words), vocabulary, labels
