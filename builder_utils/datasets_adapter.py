"""Every part of ``datasets`` below its top-level API that this package uses, in one place.

So a release that moves or changes one fails here and in ``tests/datasets_adapter_checks.py``
(5.x and 3.6), not inside an export. Each import says why no public API does the job; names 3.6
lacks are ``None`` (it serves only the loading-script mode).

Example:
    >>> import pyarrow as pa
    >>> features = datasets.Features({"n": datasets.Value("int32")})
    >>> dataset_from_table(pa.table({"n": [1, 2]}), features, "train").features["n"].dtype
    'int32'
"""

from __future__ import annotations

import os

import datasets

# Arrow tables: builds yield typed batches and the export rebuilds configurations from tables.
# `table_cast` is the cast datasets applies itself (nested structs, Image/Audio storage), which
# pyarrow's cast is not; `embed_array_storage` embeds the media of the features that
# hub/shard_writer.py does not embed itself (it does Image and Audio, faster).
from datasets.table import InMemoryTable, embed_array_storage, table_cast

# Which columns hold media files to embed or decode: the top level has no such test.
from datasets.features.features import require_decoding, require_storage_embed

# The card's YAML (`configs`, `dataset_info`) written and read with the classes push_to_hub and
# load_dataset use, so the card is what the Hub expects; its data_files patterns as load_dataset
# normalises them; the lists of known values (languages ...) the card checks read.
from datasets.data_files import sanitize_patterns
from datasets.info import DatasetInfosDict
from datasets.utils import metadata as card_metadata_module
from datasets.utils.metadata import MetadataConfigs

CARD_METADATA_RESOURCES = "datasets.utils.resources"

# "500MB" as push_to_hub's `max_shard_size` reads it; the rows per batch where 3.6 cannot size them.
from datasets.config import DEFAULT_MAX_BATCH_SIZE
from datasets.utils.py_utils import convert_file_size_to_int

# A media path that is a URL is left to datasets' own embedding.
from datasets.utils.file_utils import is_local_path

# The errors load_dataset raises (a checked load of an export, a missing Hub repository), reported as ours.
from datasets.exceptions import (DatasetGenerationError, DatasetNotFoundError, ExpectedMoreSplitsError,
                                 NonMatchingSplitsSizesError, UnexpectedSplitsError)

# The stream (clevr_math/streaming.py) is an IterableDataset whose state records the block it
# is in, so that a resumed stream regenerates one block, not its shard: IterableDataset.from_generator
# takes no state of ours, so it subclasses the examples iterable (StatefulExamples: the private
# `_init_state_dict` hook) and shards gen_kwargs with datasets' own (private) split and merge.
from datasets.iterable_dataset import ExamplesIterable
from datasets.utils.sharding import _merge_gen_kwargs as merge_gen_kwargs
from datasets.utils.sharding import _split_gen_kwargs as split_gen_kwargs

# 5.x: push_to_hub's batch sizes and Parquet writer options, so that a shard written by
# hub/shard_writer.py is the bytes `Dataset.to_parquet` writes (tests/test_hub_shard_writer.py).
try:
    from datasets.arrow_writer import get_writer_batch_size_from_data_size, get_writer_batch_size_from_features
except ImportError:  # 3.6
    get_writer_batch_size_from_data_size = get_writer_batch_size_from_features = None
try:
    from datasets.arrow_writer import get_parquet_column_options
    from datasets.config import DEFAULT_CDC_OPTIONS
except ImportError:  # 3.6
    get_parquet_column_options = DEFAULT_CDC_OPTIONS = None


def default_cache_dir() -> str:
    """The cache ``datasets`` writes into without a ``cache_dir`` (``HF_DATASETS_CACHE``, else under
    ``HF_HOME``): ``datasets.config`` holds it, read at call time (the top level has no accessor).

    Example:
        >>> default_cache_dir().endswith("datasets") or "HF_DATASETS_CACHE" in os.environ
        True
    """
    from datasets import config

    return str(config.HF_DATASETS_CACHE)


def dataset_from_table(table, features: datasets.Features, split, *, description: str = "",
                       fingerprint: str | None = None) -> datasets.Dataset:
    """An in-memory ``datasets.Dataset`` of a pyarrow table cast to ``features`` as datasets casts."""
    table = table_cast(table, features.arrow_schema)
    info = datasets.DatasetInfo(features=features, description=description)
    return datasets.Dataset(InMemoryTable(table), info=info, split=split, fingerprint=fingerprint)


class StatefulExamples(ExamplesIterable):
    """datasets' examples iterable whose state a subclass gives in :meth:`initial_state` (datasets
    makes it through the private ``_init_state_dict`` hook, which must set ``_state_dict``)."""

    def initial_state(self) -> dict:
        raise NotImplementedError

    def _init_state_dict(self) -> dict:
        self._state_dict = self.initial_state()
        return self._state_dict
