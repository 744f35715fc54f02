"""The Clotho-AQA builder: the official release under every labelling in use.

An ``ArrowBasedBuilder`` on purpose: ``datasets`` 5.x imports torch and torchcodec as soon
as a ``GeneratorBasedBuilder`` writes an ``Audio`` column, while Arrow tables cast to the
features are written without them. The audio column stores each clip's path (like the
packaged ``audiofolder``); ``save_to_disk`` and ``push_to_hub`` embed the bytes.
Decoding: see :mod:`clotho_aqa.audio`.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

import datasets
import pyarrow as pa
from datasets.table import table_cast

from clotho_aqa.release import (
    AUDIO_DIR,
    AUDIO_ZIP,
    METADATA_CSV,
    SAMPLING_RATE,
    SPLIT_CSVS,
    YES_NO,
    ClipMetadata,
    Question,
    Release,
    ReleaseError,
    file_answer_sets,
    find_release_files,
    load_release,
)

logger = logging.getLogger(__name__)

_HOMEPAGE = "https://zenodo.org/records/6473207"
_LICENSE = "Annotations: MIT, (c) 2022 Tampere University. Audio: each clip's own Freesound license (see `license`)."
_CITATION = """\
@inproceedings{lipping2022clothoaqa,
  title     = {Clotho-AQA: A Crowdsourced Dataset for Audio Question Answering},
  author    = {Lipping, Samuel and Sudarsanam, Parthasaarathy and Drossos, Konstantinos and Virtanen, Tuomas},
  booktitle = {30th European Signal Processing Conference (EUSIPCO)},
  year      = {2022}
}
"""
_DESCRIPTION = (
    "Clotho-AQA: crowdsourced audio question answering over 1,991 Clotho clips, six questions per "
    "clip (four yes/no, two single-word), three annotator answers per question with a confidence."
)

#: Config name -> what one row is. The names are fixed; they are the labellings in use.
CONFIG_DESCRIPTIONS: dict[str, str] = {
    "all": "One row per annotator answer (3 per question), both question types.",
    "questions": "One row per question: its 3 answers and confidences, the majority answer, unanimity.",
    "yes_no_unfiltered": "Yes/no questions, one row per annotator answer (the paper's unfiltered setting).",
    "yes_no_unanimous": "Yes/no questions whose 3 annotators agree, one row per question.",
    "yes_no_majority": "Yes/no questions, one row per question labelled by majority vote.",
    "single_word": "Single-word questions, one row per annotator answer (the authors' multiclass baseline).",
    "single_word_majority": "Single-word questions where at least 2 of 3 annotators agree, one row per question.",
}
CONFIG_NAMES = tuple(CONFIG_DESCRIPTIONS)
SPLIT_STRATEGIES = ("official", "recomputed")
_VERSION = datasets.Version("1.0.0")
ZENODO_URL = "https://zenodo.org/records/6473207/files/{}"
# Each split becomes shards of this many clips so that num_proc has something to share out.
FILES_PER_SHARD = 256


def _list_of(feature):
    # datasets >= 4 has List; 3.x (the legacy script mode) only Sequence.
    return datasets.List(feature) if hasattr(datasets, "List") else datasets.Sequence(feature)


@dataclass
class ClothoAQAConfig(datasets.BuilderConfig):
    """Options of the Clotho-AQA builder.

    Args:
        split_strategy: ``"official"`` (the release's split) or ``"recomputed"`` (our multilabel
            stratified 60/20/20 search over each clip's set of answer words).
        seed, candidates, keep: the recomputed search's seed, number of 60/40 candidates, and
            how many of the best are split again (the paper: 2,000 and 50; keep is capped at
            candidates).
        skip_missing_audio: drop the questions of clips whose WAV is missing (with a warning
            giving the count) instead of raising an error that lists them.

    Example:
        >>> ClothoAQA(config_name="questions", data_dir="release", split_strategy="recomputed", seed=3)  # doctest: +SKIP
    """

    split_strategy: str = "official"
    seed: int = 0
    candidates: int = 2000
    keep: int = 50
    skip_missing_audio: bool = False

    def __post_init__(self):
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Raise ValueError for an unknown config name or an unusable option."""
        if self.name not in CONFIG_NAMES:
            raise ValueError(f"unknown Clotho-AQA config {self.name!r}; choose one of: {', '.join(CONFIG_NAMES)}")
        if self.split_strategy not in SPLIT_STRATEGIES:
            raise ValueError(
                f"split_strategy {self.split_strategy!r} is not one of: {', '.join(SPLIT_STRATEGIES)}"
            )
        for option in ("seed", "candidates", "keep"):
            value = getattr(self, option)
            if not isinstance(value, int) or isinstance(value, bool) or value < (0 if option == "seed" else 1):
                raise ValueError(f"{option} must be a {'non-negative' if option == 'seed' else 'positive'} integer, got {value!r}")


def config_features(config_name: str, with_metadata: bool, vocabulary: Iterable[str] = ()) -> datasets.Features:
    """The features of one config; ``vocabulary`` names the classes of the single_word configs.

    Example:
        >>> list(config_features("yes_no_majority", with_metadata=False)["label"].names)
        ['yes', 'no']
    """
    string = datasets.Value("string")
    strings = _list_of(string)
    columns: dict[str, Any] = {
        "file_name": string,
        "audio": datasets.Audio(sampling_rate=SAMPLING_RATE),
        "question_id": string,
        "question": string,
    }
    per_answer = {"confidence": string, "annotator": datasets.Value("int8")}
    per_question = {"answers": strings, "confidences": strings}
    yes_no = datasets.ClassLabel(names=list(YES_NO))
    words = datasets.ClassLabel(names=list(vocabulary))
    columns |= {
        "all": {"answer": string, **per_answer, "answer_type": string},
        "questions": {
            **per_question,
            "majority_answer": string,
            "unanimous": datasets.Value("bool"),
            "answer_type": string,
        },
        "yes_no_unfiltered": {"label": yes_no, **per_answer},
        "yes_no_unanimous": {"label": yes_no, **per_question},
        "yes_no_majority": {"label": yes_no, **per_question},
        "single_word": {"label": words, "answer": string, **per_answer},
        "single_word_majority": {"label": words, **per_question},
    }[config_name]
    if with_metadata:
        columns |= {
            "keywords": strings,
            "sound_link": string,
            "license": string,
            "manufacturer": string,
            "start_end_samples": _list_of(datasets.Value("int64")),
        }
    return datasets.Features(columns)


def config_rows(config_name: str, question: Question, label_of: dict[str, int]) -> list[dict[str, Any]]:
    """The config-specific columns of the rows one question contributes (possibly none).

    ``label_of`` maps an answer to its class index (yes/no or the single-word vocabulary);
    an answer outside it gets -1 (no label).

    Example:
        >>> q = Question("a.wav", 0, "Any rain?", ("yes", "no", "yes"), ("yes", "yes", "maybe"), "train", 2)
        >>> config_rows("yes_no_majority", q, {"yes": 0, "no": 1})[0]["label"]
        0
    """
    lists = {"answers": list(question.answers), "confidences": list(question.confidences)}
    per_answer = [
        {"answer": a, "confidence": c, "annotator": k}
        for k, (a, c) in enumerate(zip(question.answers, question.confidences))
    ]
    kind = question.answer_type
    if config_name == "all":
        return [row | {"answer_type": kind} for row in per_answer]
    if config_name == "questions":
        return [
            lists
            | {"majority_answer": question.majority_answer, "unanimous": question.unanimous, "answer_type": kind}
        ]
    wanted = "yes_no" if config_name.startswith("yes_no") else "single_word"
    if kind != wanted:
        return []
    if config_name in ("yes_no_unfiltered", "single_word"):
        rows = [row | {"label": label_of.get(row["answer"], -1)} for row in per_answer]
        if config_name == "yes_no_unfiltered":
            for row in rows:
                del row["answer"]
        return rows
    if config_name == "yes_no_unanimous" and not question.unanimous:
        return []
    majority = question.majority_answer
    if majority is None:
        return []
    return [lists | {"label": label_of.get(majority, -1)}]


def _metadata_columns(meta: ClipMetadata | None) -> dict[str, Any]:
    if meta is None:
        return {"keywords": [], "sound_link": None, "license": None, "manufacturer": None, "start_end_samples": None}
    return {
        "keywords": list(meta.keywords),
        "sound_link": meta.sound_link,
        "license": meta.license,
        "manufacturer": meta.manufacturer,
        "start_end_samples": None if meta.start_end_samples is None else list(meta.start_end_samples),
    }


def single_word_vocabulary(questions: Iterable[Question], split: str = "train") -> list[str]:
    """Sorted distinct answers to the single-word questions of one split (828 for the official train).

    Example:
        >>> q = Question("a.wav", 0, "What?", ("rain", "water", "rain"), ("yes",) * 3, "train", 2)
        >>> single_word_vocabulary([q])
        ['rain', 'water']
    """
    return sorted({a for q in questions if q.split == split and q.answer_type == "single_word" for a in q.answers})


def recompute_splits(
    questions: list[Question],
    seed: int = 0,
    candidates: int = 2000,
    keep: int = 50,
    progress: bool = False,
):
    """Assign clips to train/validation/test by the stratified 60/20/20 search of :mod:`builder_utils.splits`.

    Labels are each clip's set of answer words (yes/no included), as in the paper. Returns
    ``(clip name -> split name, search result)``.

    Example:
        >>> assignment, result = recompute_splits(release.questions, seed=0, candidates=200, keep=10)  # doctest: +SKIP
        >>> sorted(set(assignment.values()))  # doctest: +SKIP
        ['test', 'train', 'validation']
    """
    from builder_utils.splits import search_split  # imported late: only this strategy needs it

    file_names, vocabulary, labels = file_answer_sets(questions)
    result = search_split(
        labels,
        ratios=(0.6, 0.2, 0.2),
        candidates=candidates,
        keep=keep,
        seed=seed,
        progress=progress,
        label_names=vocabulary,
    )
    names = list(SPLIT_CSVS)
    assignment = {name: names[int(fold)] for name, fold in zip(file_names, result.folds)}
    return assignment, result


def _read_checksums() -> dict[str, tuple[int | None, str | None]]:
    """url -> (size, sha256) from checksums.tsv beside this module; empty cells are unknown."""
    table = {}
    for raw in (Path(__file__).with_name("checksums.tsv")).read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        url, size, sha256 = (raw.split("\t") + ["", ""])[:3]
        table[url] = (int(size) if size.strip() else None, sha256.strip() or None)
    return table


def verify_download(path: str | os.PathLike, url: str) -> None:
    """Check a downloaded file against checksums.tsv (size, and sha256 where it is recorded).

    Example:
        >>> verify_download("/cache/clotho_aqa_val.csv", ZENODO_URL.format("clotho_aqa_val.csv"))  # doctest: +SKIP
    """
    expected_size, expected_sha = _read_checksums().get(url, (None, None))
    size = os.path.getsize(path)
    if expected_size is not None and size != expected_size:
        raise ReleaseError(f"downloaded from {url}: {size} bytes, expected {expected_size}", path)
    if expected_sha is not None:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != expected_sha:
            raise ReleaseError(f"downloaded from {url}: sha256 {digest.hexdigest()}, expected {expected_sha}", path)


class ClothoAQA(datasets.ArrowBasedBuilder):
    """Clotho-AQA from the official release (a local ``data_dir`` or the Zenodo files).

    ``data_dir`` holds the official CSV names and ``audio_files/`` (or ``audio_files.zip``);
    without it the Zenodo record is downloaded (about 3.1 GB). Splits: train, validation,
    test; see :class:`ClothoAQAConfig` for the options and ``CONFIG_DESCRIPTIONS`` for the
    configs.

    Example:
        >>> builder = ClothoAQA(config_name="yes_no_majority", data_dir="release", cache_dir="cache")  # doctest: +SKIP
        >>> builder.download_and_prepare()  # doctest: +SKIP
        >>> builder.as_dataset(split="train").features["label"].names  # doctest: +SKIP
        ['yes', 'no']
    """

    VERSION = _VERSION
    BUILDER_CONFIG_CLASS = ClothoAQAConfig
    BUILDER_CONFIGS = [
        ClothoAQAConfig(name=name, version=_VERSION, description=text) for name, text in CONFIG_DESCRIPTIONS.items()
    ]
    DEFAULT_CONFIG_NAME = "all"
    #: Where the release files are downloaded from when no data_dir is given; a mirror can
    #: subclass and override it (checksums.tsv is keyed by URL, so mirrors go unchecked).
    BASE_URL = ZENODO_URL
    # Read by builder_utils.hub (--media shared, the conversations configuration). A turn is a
    # question with its majority answer; questions without a majority have no turn.
    HUB_LAYOUT = {
        "media_column": "audio",
        "key": "file_name",
        "media_config": "clips",
        "media_metadata": ["keywords", "sound_link", "license", "manufacturer", "start_end_samples"],
        "conversations_from": "questions",
        "conversation_media": "audios",
        "turn": {"user": "question", "assistant": "majority_answer"},
        "turn_fields": ["question_id", "answer_type", "answers", "confidences", "unanimous"],
    }

    def __init__(self, *args, **kwargs):
        # datasets reuses a cache until the version or hash changes; hashing our own reading
        # code means an edited builder never serves tables written by an older one.
        kwargs.setdefault("hash", _code_hash())
        # The cache is keyed by the data_dir string; an absolute path keeps two folders that
        # share a relative name from sharing a cache.
        if kwargs.get("data_dir"):
            kwargs["data_dir"] = os.path.abspath(kwargs["data_dir"])
        super().__init__(*args, **kwargs)
        # Options passed as keyword arguments are set on a copy of a predefined config
        # without running __post_init__, so they are checked here.
        self.config.validate()

    def _info(self) -> datasets.DatasetInfo:
        # Features depend on the data (metadata present or not, the train vocabulary),
        # so they are set in _split_generators, as the packaged folder builders do.
        return datasets.DatasetInfo(
            description=_DESCRIPTION, homepage=_HOMEPAGE, license=_LICENSE, citation=_CITATION
        )

    def _locate(self, dl_manager) -> tuple[dict[str, Path], Path | None, Path]:
        if self.config.data_dir:
            files = find_release_files(self.config.data_dir)
            audio_dir = files["audio_dir"]
            if audio_dir is None and files["audio_zip"] is not None:
                audio_dir = _audio_root(dl_manager.extract(str(files["audio_zip"])))
            if audio_dir is None:
                raise FileNotFoundError(
                    f"data_dir {self.config.data_dir} has neither {AUDIO_DIR}/ nor {AUDIO_ZIP}"
                )
            return files["csv"], files["metadata"], Path(audio_dir)
        names = dict(SPLIT_CSVS) | {"metadata": METADATA_CSV}
        urls = {key: self.BASE_URL.format(name) for key, name in names.items()}
        paths = dl_manager.download(urls)
        zip_url = self.BASE_URL.format(AUDIO_ZIP)
        zip_path = dl_manager.download(zip_url)
        for key, url in urls.items():
            verify_download(paths[key], url)
        verify_download(zip_path, zip_url)
        audio_dir = _audio_root(dl_manager.extract(zip_path))
        csvs = {split: Path(paths[split]) for split in SPLIT_CSVS}
        return csvs, Path(paths["metadata"]), audio_dir

    def _split_generators(self, dl_manager):
        csvs, metadata_path, audio_dir = self._locate(dl_manager)
        release = load_release(csvs, audio_dir, metadata_path, skip_missing_audio=self.config.skip_missing_audio)
        questions = release.questions
        if self.config.split_strategy == "recomputed":
            assignment, result = recompute_splits(
                questions, seed=self.config.seed, candidates=self.config.candidates, keep=self.config.keep
            )
            logger.info("recomputed split: allocation error %s", result.error)
            if result.violations:
                logger.warning(
                    "recomputed split: %d answer(s) break the rule 'in train and in validation or test': %s",
                    len(result.violations), result.violations[:5],
                )
            questions = [replace(q, split=assignment[q.file_name]) for q in questions]
        vocabulary = single_word_vocabulary(questions, "train")
        self.info.features = config_features(self.config.name, release.metadata is not None, vocabulary)
        label_of = {w: i for i, w in enumerate(YES_NO if self.config.name.startswith("yes_no") else vocabulary)}
        # The shards carry the questions to the workers; the release goes without them.
        slim = replace(release, questions=[])
        generators = []
        for split in SPLIT_CSVS:
            split_questions = [q for q in questions if q.split == split]
            if not any(config_rows(self.config.name, q, label_of) for q in split_questions):
                # datasets cannot read back a split of zero rows, so an empty one is left out.
                logger.warning("config %s: the %s split has no rows and is left out", self.config.name, split)
                continue
            _warn_unlabelled(self.config.name, split, split_questions, label_of)
            generators.append(
                datasets.SplitGenerator(
                    name=split,
                    gen_kwargs={"shards": _shards(split_questions), "release": slim, "label_of": label_of},
                )
            )
        return generators

    def _generate_tables(
        self, shards: list[list[Question]], release: Release, label_of: dict[str, int]
    ) -> Iterator[tuple[Any, pa.Table]]:
        schema = self.info.features.arrow_schema
        with_metadata = release.metadata is not None
        key_class = getattr(datasets.builder, "Key", None)
        for shard_index, shard in enumerate(shards):
            rows = []
            for q in shard:
                common = {
                    "file_name": q.file_name,
                    "audio": {"bytes": None, "path": str(release.audio[q.file_name])},
                    "question_id": q.question_id,
                    "question": q.question,
                }
                extra = _metadata_columns(release.metadata.get(q.file_name)) if with_metadata else {}
                for row in config_rows(self.config.name, q, label_of):
                    rows.append(common | row | extra)
            table = pa.Table.from_pylist(rows, schema=schema)
            key = key_class(shard_index, 0) if key_class else shard_index
            yield key, table_cast(table, schema)


def hashed_sources() -> list[Path]:
    """The source files whose content keys the builder's cache (see ``ClothoAQA.__init__``).

    The split search is among them: a recomputed split is only as current as its code.

    Example:
        >>> {"release.py", "search.py", "stratify.py"} <= {p.name for p in hashed_sources()}
        True
    """
    import builder_utils.splits

    ours = [Path(__file__).with_name(module) for module in ("clotho_aqa.py", "release.py")]
    return ours + sorted(Path(builder_utils.splits.__file__).parent.glob("*.py"))


def _code_hash() -> str:
    digest = hashlib.sha256()
    for path in hashed_sources():
        digest.update(path.name.encode("utf-8") + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _audio_root(extracted: str | os.PathLike) -> Path:
    # The Zenodo zip holds a top-level audio_files/ folder; accept a flat zip too.
    extracted = Path(extracted)
    return extracted / AUDIO_DIR if (extracted / AUDIO_DIR).is_dir() else extracted


def _shards(questions: list[Question]) -> list[list[Question]]:
    shards: list[list[Question]] = []
    files_in_shard: set[str] = set()
    for q in questions:
        if q.file_name not in files_in_shard and len(files_in_shard) >= FILES_PER_SHARD:
            files_in_shard = set()
        if not files_in_shard:
            shards.append([])
        files_in_shard.add(q.file_name)
        shards[-1].append(q)
    return shards


def _warn_unlabelled(config_name: str, split: str, questions: list[Question], label_of: dict[str, int]) -> None:
    if not config_name.startswith("single_word"):
        return
    unknown = sorted({a for q in questions if q.answer_type == "single_word" for a in q.answers} - set(label_of))
    if unknown:
        logger.warning(
            "%s: %d single-word answer(s) of the %s split never occur in train and get label -1, e.g. %r",
            config_name, len(unknown), split, unknown[:5],
        )
