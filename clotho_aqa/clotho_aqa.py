"""The Clotho-AQA builder: the official release under every labelling in use (clotho_aqa/README.md).

An ``ArrowBasedBuilder`` on purpose: a ``GeneratorBasedBuilder`` writing an ``Audio`` column imports torch
and torchcodec under ``datasets`` 5.x. It doubles as the < 4 loading script, copied alone into a modules
cache: so it imports only installed packages, absolutely, and never looks for files beside itself.
"""

import logging
import os
from dataclasses import replace
from pathlib import Path

import datasets
import pyarrow as pa

from builder_utils.builder import CheckedConfigBuilder
from builder_utils.checksums import download, read_checksums
from builder_utils.datasets_adapter import table_cast
from builder_utils.media_check import check_zip
from clotho_aqa.columns import (
    FILES_PER_SHARD,
    config_features,
    config_rows,
    label_names,
    metadata_columns,
    shards,
    single_word_vocabulary,
    warn_unlabelled,
)
from clotho_aqa.config import BUILDER_CONFIGS, DEFAULT_CONFIG_NAME, VERSION, ClothoAQAConfig
from clotho_aqa.recompute import recompute_release_splits
from clotho_aqa.release import (
    AUDIO_DIR,
    AUDIO_ZIP,
    CHECKSUMS_FILE,
    METADATA_CSV,
    SPLIT_CSVS,
    ZENODO_URL,
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
# How to get data, repeated in every "no data" error so the user never has to search.
_DATA_OPTIONS = (
    "Options: data_dir=<a folder with the official files: clotho_aqa_train.csv, clotho_aqa_val.csv, "
    "clotho_aqa_test.csv, audio_files/ or audio_files.zip, optionally clotho_aqa_metadata.csv, downloaded "
    f"from {_HOMEPAGE}>, or `clotho-aqa synth --out DIR` then data_dir=DIR for a small synthetic release."
)


class ClothoAQA(CheckedConfigBuilder, datasets.ArrowBasedBuilder):
    """Clotho-AQA from the official release (a local ``data_dir`` or the Zenodo files).

    Example::

        builder = ClothoAQA(config_name="yes_no_majority", data_dir="release", cache_dir="cache")
        builder.download_and_prepare()
        builder.as_dataset(split="train").features["label"].names   # ['yes', 'no']
    """

    DATASET_NAME = "Clotho-AQA"
    VERSION = VERSION
    BUILDER_CONFIG_CLASS = ClothoAQAConfig
    BUILDER_CONFIGS = BUILDER_CONFIGS
    DEFAULT_CONFIG_NAME = DEFAULT_CONFIG_NAME
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
        "data_source": "clotho_aqa",  # the_cauldron's turn `source`, verl's `data_source`
        "rewards": "clotho_aqa.rewards",  # accuracy_reward, format_reward (TRL), compute_score (verl)
        # builder_utils.prompts: `answer` is the majority answer (None without one); the rewards'
        # ground truth is the three annotator answers.
        "prompts": {
            "media_kind": "audio",
            "answer": "majority_answer",
            "ground_truth": "answers",
            "columns": ["answers", "confidences", "unanimous", "answer_type", "question_id", "file_name"],
        },
        # The multiple-choice layouts (swift_choices, r1_aqa): the majority answer among options drawn
        # from the release's single-word answers (yes/no questions: yes and no), by seed.
        "choices": {"vocabulary": "clotho_aqa.scoring:ANSWER_VOCABULARY", "binary": ["yes", "no"], "seed": 0},
        # The trainer layouts' `difficulty`: how many annotators gave the majority answer.
        "difficulty": {"function": "clotho_aqa.answers:row_difficulty", "columns": ["answers"],
                       "features": {"agreement": "float32", "annotators": "int32"}},
    }
    #: What the Hub card describes (builder_utils.hub.stats): the answer column (``answer``, or
    #: ``label`` / ``majority_answer`` in the per-question configurations), then the groups.
    CARD_ANSWER_COLUMNS = ("answer", "label", "majority_answer")
    CARD_GROUP_COLUMNS = ("answer_type", "confidence")
    #: Clips per shard, so that num_proc has something to share out.
    FILES_PER_SHARD = FILES_PER_SHARD

    def cache_inputs(self, config: ClothoAQAConfig) -> dict:
        # The split search is hashed too: a recomputed split is only as current as its code.
        # The CSVs by content; the audio (a folder or a 7 GB zip) by size and modification time:
        # a clip changed behind a cached build is caught when the export embeds it.
        tables: list[str] = []
        media: list[str] = []
        if config.data_dir:
            root = Path(config.data_dir)
            tables = [str(root / name) for name in (*SPLIT_CSVS.values(), METADATA_CSV)]
            media = [str(root / name) for name in (AUDIO_DIR, AUDIO_ZIP)]
        return {
            "packages": ["clotho_aqa", "builder_utils.splits"],
            "content_files": tables,
            "input_files": media,
            "content": {"base_url": None if config.data_dir else self.BASE_URL},
        }

    def _info(self) -> datasets.DatasetInfo:
        # Features depend on the data (metadata present or not, the train vocabulary),
        # so they are set in _split_generators, as the packaged folder builders do.
        return datasets.DatasetInfo(description=_DESCRIPTION, homepage=_HOMEPAGE, license=_LICENSE, citation=_CITATION)

    def data_source(self) -> str:
        """One sentence for the card: the official release, or a synthetic one written by ``clotho-aqa synth``.

        Example:
            >>> ClothoAQA(config_name="questions").data_source().startswith("Read from the official release")
            True
        """
        from builder_utils.ownership import RecordError, read_record
        from clotho_aqa.synth import OWNER

        try:
            record = read_record(self.config.data_dir)[0] if self.config.data_dir else {}
        except RecordError:
            record = {}  # a record we cannot trust claims nothing
        if any(entry.command == OWNER for entry in record.values()):
            return ("Built from a synthetic release written by `clotho-aqa synth` (generated clips with "
                    "template questions and answers), not from the Clotho-AQA release: use it to try the "
                    "pipeline, not to report results.")
        split = ("the official train/validation/test split" if self.config.split_strategy == "official"
                 else "a recomputed stratified 60/20/20 split")
        return f"Read from the official release (Zenodo record 6473207), with {split}."

    def _locate(self, dl_manager) -> tuple[dict[str, Path], Path | None, Path]:
        if self.config.data_dir:
            files = find_release_files(self.config.data_dir)
            audio_dir = files["audio_dir"]
            if audio_dir is None and files["audio_zip"] is not None:
                check_zip(files["audio_zip"])  # a zip bomb is refused before anything is extracted
                audio_dir = _audio_root(dl_manager.extract(str(files["audio_zip"])))
            if audio_dir is None:
                raise FileNotFoundError(f"data_dir {self.config.data_dir} has neither {AUDIO_DIR}/ nor {AUDIO_ZIP}")
            return files["csv"], files["metadata"], Path(audio_dir)
        recorded = read_checksums(CHECKSUMS_FILE)
        names = dict(SPLIT_CSVS) | {"metadata": METADATA_CSV, "audio": AUDIO_ZIP}
        paths = {}
        for key, name in names.items():
            url = self.BASE_URL.format(name)
            paths[key] = download(dl_manager, url, recorded.get(url), self.DATASET_NAME, _DATA_OPTIONS)
        check_zip(paths["audio"])
        audio_dir = _audio_root(dl_manager.extract(paths["audio"]))
        csvs = {split: Path(paths[split]) for split in SPLIT_CSVS}
        return csvs, Path(paths["metadata"]), audio_dir

    def _split_generators(self, dl_manager):
        csvs, metadata_path, audio_dir = self._locate(dl_manager)
        release = load_release(csvs, audio_dir, metadata_path, skip_missing_audio=self.config.skip_missing_audio)
        questions = release.questions
        if self.config.split_strategy == "recomputed":
            # Over every clip of the tables, as `clotho-aqa splits` does; clips dropped for
            # missing audio leave the others where that command puts them.
            assignment, result = recompute_release_splits(
                csvs, seed=self.config.seed, candidates=self.config.candidates, keep=self.config.keep,
                refine_rounds=self.config.refine_rounds,
            )
            logger.info("recomputed split: label error %.1f (floor %.1f)", result.label_error, result.label_error_floor)
            if result.violations:
                logger.warning(
                    "recomputed split: %d answer(s) break the rule 'in train and in validation or test': %s",
                    len(result.violations), result.violations[:5],
                )
            questions = [replace(q, split=assignment[q.file_name]) for q in questions]
        vocabulary = single_word_vocabulary(questions, "train")
        rows = self.config.rows
        self.info.features = config_features(rows, release.metadata is not None, vocabulary)
        label_of = {w: i for i, w in enumerate(label_names(rows, vocabulary))}
        # The shards carry the questions to the workers; the release goes without them.
        slim = replace(release, questions=[])
        generators = []
        for split in SPLIT_CSVS:
            split_questions = [q for q in questions if q.split == split]
            if not any(config_rows(rows, q, label_of) for q in split_questions):
                # datasets cannot read back a split of zero rows, so an empty one is left out.
                logger.warning("config %s: the %s split has no rows and is left out", self.config.name, split)
                continue
            warn_unlabelled(self.config, split, split_questions, label_of)
            generators.append(
                datasets.SplitGenerator(
                    name=split,
                    gen_kwargs={
                        "shards": shards(split_questions, self.FILES_PER_SHARD),
                        "release": slim,
                        "label_of": label_of,
                    },
                )
            )
        return generators

    def _generate_tables(self, shards, release, label_of):
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
                extra = metadata_columns(release.metadata.get(q.file_name)) if with_metadata else {}
                for row in config_rows(self.config.rows, q, label_of):
                    rows.append(common | row | extra)
            table = pa.Table.from_pylist(rows, schema=schema)
            key = key_class(shard_index, 0) if key_class else shard_index
            yield key, table_cast(table, schema)


def _audio_root(extracted: str | os.PathLike) -> Path:
    # The Zenodo zip holds a top-level audio_files/ folder; accept a flat zip too.
    extracted = Path(extracted)
    return extracted / AUDIO_DIR if (extracted / AUDIO_DIR).is_dir() else extracted
