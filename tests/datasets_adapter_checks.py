"""One check per name of ``builder_utils.datasets_adapter``: what this package relies on it doing.

Plain functions (no pytest), so that both ``datasets`` lines run them: ``tests/test_datasets_adapter.py``
under 5.x, ``tests/legacy/check_legacy_script.py`` under 3.6. A ``datasets`` upgrade that breaks one
of the internals fails here, by name. ``FIVE_ONLY`` names those 3.6 does not have (``None`` there).
"""

from __future__ import annotations

import io
import os
import tempfile

import datasets
import pyarrow as pa

from builder_utils import datasets_adapter as adapter

FIVE_ONLY = ("get_parquet_column_options", "DEFAULT_CDC_OPTIONS", "get_writer_batch_size_from_data_size",
             "get_writer_batch_size_from_features")


def _png(folder: str) -> str:
    from PIL import Image

    path = os.path.join(folder, "a.png")
    Image.new("RGB", (2, 2), (255, 0, 0)).save(path)
    return path


def check_table_cast_and_dataset_from_table():
    features = datasets.Features({"n": datasets.Value("int32"), "s": {"a": datasets.Value("string")}})
    table = adapter.table_cast(pa.table({"s": [{"a": "x"}], "n": [1]}).select(["n", "s"]), features.arrow_schema)
    assert table.schema == features.arrow_schema
    dataset = adapter.dataset_from_table(table, features, "train")
    assert dataset.features == features and dataset[0] == {"n": 1, "s": {"a": "x"}} and str(dataset.split) == "train"


def check_media_features_and_embedding():
    assert adapter.require_storage_embed(datasets.Image()) and not adapter.require_storage_embed(datasets.Value("string"))
    assert adapter.require_decoding(datasets.Audio()) and not adapter.require_decoding(datasets.Value("int32"))
    with tempfile.TemporaryDirectory() as folder:
        path = _png(folder)
        storage = pa.array([{"bytes": None, "path": path}], datasets.Image().pa_type)
        embedded = adapter.embed_array_storage(storage, datasets.Image())
        with open(path, "rb") as fh:
            assert embedded.field("bytes")[0].as_py() == fh.read()
    assert adapter.is_local_path("/tmp/x.png") and not adapter.is_local_path("https://example.org/x.png")


def check_card_yaml_classes():
    from huggingface_hub import DatasetCardData

    card_data = DatasetCardData()
    adapter.MetadataConfigs({"general": {"data_files": [{"split": "train", "path": "general/train-*"}]}}
                            ).to_dataset_card_data(card_data)
    infos = adapter.DatasetInfosDict({"general": datasets.DatasetInfo(features=datasets.Features(
        {"q": datasets.Value("string")}), config_name="general")})
    infos.to_dataset_card_data(card_data)
    assert adapter.MetadataConfigs.from_dataset_card_data(card_data).get_default_config_name() == "general"  # the only one
    assert list(adapter.MetadataConfigs.from_dataset_card_data(card_data)) == ["general"]
    assert adapter.DatasetInfosDict.from_dataset_card_data(card_data)["general"].features == infos["general"].features
    assert adapter.sanitize_patterns({"train": "general/train-*"}) == {"train": ["general/train-*"]}


def check_card_metadata_lists():
    import importlib.resources
    import json

    languages = json.loads((importlib.resources.files(adapter.CARD_METADATA_RESOURCES) / "languages.json").read_text())
    assert "en" in languages
    assert hasattr(adapter.card_metadata_module, "MetadataConfigs")


def check_sizes_and_batches():
    assert adapter.convert_file_size_to_int("500MB") == 500 * 10**6
    assert adapter.convert_file_size_to_int("1GiB") == 2**30
    assert isinstance(adapter.DEFAULT_MAX_BATCH_SIZE, int)
    if adapter.get_writer_batch_size_from_features is not None:
        # as hub/export.py sizes a shard's batches: the features' own size, else one from the bytes
        size = adapter.get_writer_batch_size_from_features(datasets.Features({"i": datasets.Image()}))
        assert size is None or size >= 1
        assert adapter.get_writer_batch_size_from_data_size(10, 10**9) >= 1


def check_load_errors():
    for error in (adapter.DatasetNotFoundError, adapter.ExpectedMoreSplitsError,
                  adapter.NonMatchingSplitsSizesError, adapter.UnexpectedSplitsError, adapter.DatasetGenerationError):
        assert issubclass(error, Exception), error


def check_default_cache_dir():
    # the cache load_dataset writes into without a cache_dir: what evaluate declares as its default
    from datasets import config

    assert adapter.default_cache_dir() == str(config.HF_DATASETS_CACHE) and os.path.isabs(adapter.default_cache_dir())


def check_gen_kwargs_shards():
    kwargs = {"shards": [0, 1, 2, 3, 4], "seed": 5}
    parts = adapter.split_gen_kwargs(kwargs, max_num_jobs=2)
    assert parts == [{"shards": [0, 1, 2], "seed": 5}, {"shards": [3, 4], "seed": 5}]
    assert adapter.merge_gen_kwargs(parts) == kwargs


class _Counting(adapter.StatefulExamples):
    def initial_state(self):
        return {"shard_idx": 0, "shard_example_idx": 0, "type": self.__class__.__name__}

    def __iter__(self):
        for key, example in self.generate_examples_fn(**self.kwargs):
            if self._state_dict:
                self._state_dict["shard_example_idx"] += 1
            yield key, example


def _count(shards):
    for shard in shards:
        yield shard, {"n": shard}


def check_stateful_examples():
    iterable = datasets.IterableDataset(_Counting(_count, {"shards": [0, 1, 2]}))
    iterator = iter(iterable)
    assert next(iterator) == {"n": 0}
    state = iterable.state_dict()
    found = state.get("examples_iterable", state)  # where the library keeps our state
    assert found["type"] == "_Counting" and found["shard_example_idx"] == 1, state


def check_parquet_writer_options():
    """5.x: push_to_hub's Parquet options (tests/test_hub_shard_writer.py compares the bytes)."""
    if datasets.__version__.startswith("3."):
        assert all(getattr(adapter, name) is None for name in FIVE_ONLY)
        return
    features = datasets.Features({"i": datasets.Image(), "q": datasets.Value("string")})
    options = adapter.get_parquet_column_options(features, features.arrow_schema)
    assert isinstance(options, dict) and adapter.DEFAULT_CDC_OPTIONS
    buffer = io.BytesIO()
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"i": pa.array([None], features.arrow_schema.field("i").type), "q": ["x"]}), buffer,
                   **options, use_content_defined_chunking=adapter.DEFAULT_CDC_OPTIONS)


CHECKS = {name: check for name, check in sorted(globals().items()) if name.startswith("check_")}


def run_all() -> list[str]:
    """Run every check; the names of those that failed, each with its error."""
    failed = []
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # noqa: BLE001 - each failure is reported by name
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    return failed
