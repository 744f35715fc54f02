"""A shared, declarative check for our ``datasets`` builders (in the spirit of TFDS' builder tests).

A test describes *what* a builder must produce from a data folder the test made itself; the
helper does the work: build every listed configuration through the real ``datasets`` code path
(``download_and_prepare`` then ``as_dataset``), check the split names and sizes, the features,
the sizes recorded in the builder's info, a unique key column, splits that share nothing, and
that a second builder with the same arguments reuses the cache (same Arrow files, same rows).

Example::
    spec = BuilderSpec(
        builder_class=ClevrMath,
        data_dir=str(clevr_folder),              # a folder the test generated
        configs={"general": {"train": 120, "validation": 80}},
        unique_column="question_id",
        disjoint_column="image_filename",
    )
    built = check_builder(spec, cache_dir=tmp_path / "cache")
    built["general"]["train"].num_rows           # 120
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from typing import Any

import datasets

# Expected rows per split: an exact count, or a predicate on the count (e.g. `lambda n: n > 0`).
Expected = int | Callable[[int], bool]


@dataclasses.dataclass
class BuilderSpec:
    """What a builder must produce from ``data_dir``.

    Attributes:
        builder_class: the ``datasets.DatasetBuilder`` subclass under test.
        data_dir: the folder the test generated (passed as ``data_dir=``).
        configs: config name -> {split name -> expected rows}; the split names must match
            exactly. ``None`` as the mapping means "every config in BUILDER_CONFIGS, any sizes".
        builder_kwargs: extra keyword arguments for every builder (config overrides).
        unique_column: a column whose values must be unique across all splits of a config.
        disjoint_column: a column whose values must not appear in two splits of a config
            (for example the image or clip a row belongs to).
        num_proc: passed to ``download_and_prepare``.
    """

    builder_class: type
    data_dir: str
    configs: Mapping[str, Mapping[str, Expected]] | None = None
    builder_kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    unique_column: str | None = None
    disjoint_column: str | None = None
    num_proc: int | None = None


def make_builder(spec: BuilderSpec, config_name: str, cache_dir: str | os.PathLike, **overrides):
    """A builder for one configuration of ``spec`` (not yet prepared).

    Example:
        >>> import tempfile
        >>> from clevr_math import ClevrMath
        >>> spec = BuilderSpec(ClevrMath, data_dir="CLEVR_v1.0", builder_kwargs={"seed": 3})
        >>> builder = make_builder(spec, "multihop", tempfile.mkdtemp())
        >>> builder.config.name, builder.config.seed
        ('multihop', 3)
    """
    kwargs = {**spec.builder_kwargs, **overrides}
    return spec.builder_class(config_name=config_name, data_dir=spec.data_dir, cache_dir=str(cache_dir), **kwargs)


def build(spec: BuilderSpec, config_name: str, cache_dir: str | os.PathLike, num_proc: int | None = None, **overrides):
    """Prepare one configuration; return ``(builder, DatasetDict)``.

    Example (``spec`` as in the module's example)::

        builder, ds = build(spec, "general", tmp_path)
    """
    builder = make_builder(spec, config_name, cache_dir, **overrides)
    builder.download_and_prepare(num_proc=num_proc if num_proc is not None else spec.num_proc)
    return builder, builder.as_dataset()


def _check_sizes(name: str, dataset: datasets.DatasetDict, expected: Mapping[str, Expected]) -> None:
    assert sorted(dataset) == sorted(expected), f"{name}: splits {sorted(dataset)} != expected {sorted(expected)}"
    for split, want in expected.items():
        got = dataset[split].num_rows
        if callable(want):
            assert want(got), f"{name}/{split}: {got} rows rejected by the expectation"
        else:
            assert got == want, f"{name}/{split}: {got} rows, expected {want}"


def assert_splits_disjoint(name: str, dataset: datasets.DatasetDict, column: str) -> None:
    """No value of ``column`` appears in two splits.

    Example:
        >>> ds = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"image_filename": ["a.png", "b.png"]}),
        ...                            "test": datasets.Dataset.from_dict({"image_filename": ["b.png"]})})
        >>> try:
        ...     assert_splits_disjoint("general", ds, "image_filename")
        ... except AssertionError as error:
        ...     print(str(error).splitlines()[0])
        general: image_filename='b.png' is in both train and test
    """
    seen: dict[Any, str] = {}
    for split, ds in dataset.items():
        for value in set(ds[column]):
            assert value not in seen, f"{name}: {column}={value!r} is in both {seen[value]} and {split}"
            seen[value] = split


def assert_unique(name: str, dataset: datasets.DatasetDict, column: str) -> None:
    """Every value of ``column`` is unique across all splits.

    Example:
        >>> ds = datasets.DatasetDict({"train": datasets.Dataset.from_dict({"question_id": ["q0", "q1"]}),
        ...                            "test": datasets.Dataset.from_dict({"question_id": ["q2"]})})
        >>> assert_unique("general", ds, "question_id")                  # passes: no duplicate
    """
    values = [v for ds in dataset.values() for v in ds[column]]
    assert len(values) == len(set(values)), f"{name}: {len(values) - len(set(values))} duplicate {column} values"


def assert_same_rows(a: datasets.Dataset, b: datasets.Dataset, what: str) -> None:
    """Same features and the same rows in the same order (images compared by stored path/bytes).

    Example:
        >>> one = datasets.Dataset.from_dict({"question_id": ["q0", "q1"]})
        >>> assert_same_rows(one, datasets.Dataset.from_dict({"question_id": ["q0", "q1"]}), "num_proc=2")
        >>> try:
        ...     assert_same_rows(one, datasets.Dataset.from_dict({"question_id": ["q1", "q0"]}), "num_proc=2")
        ... except AssertionError as error:
        ...     print(str(error).splitlines()[0])
        num_proc=2: rows differ
    """
    assert a.features == b.features, f"{what}: features differ"
    assert a.num_rows == b.num_rows, f"{what}: {a.num_rows} rows != {b.num_rows} rows"
    assert a.data.table.equals(b.data.table), f"{what}: rows differ"


def _cache_stamps(dataset: datasets.DatasetDict) -> dict[str, int]:
    files = [f["filename"] for ds in dataset.values() for f in ds.cache_files]
    return {path: os.stat(path).st_mtime_ns for path in files}


def check_builder(spec: BuilderSpec, cache_dir: str | os.PathLike) -> dict[str, datasets.DatasetDict]:
    """Build and check every configuration of ``spec``; return the built datasets by config.

    Example (``spec`` as in the module's example)::

        built = check_builder(spec, tmp_path / "cache")     # {config: DatasetDict}
    """
    configs = spec.configs
    if configs is None:
        configs = {config.name: None for config in spec.builder_class.BUILDER_CONFIGS}
    built = {}
    for name, expected in configs.items():
        builder, dataset = build(spec, name, cache_dir)
        if expected is not None:
            _check_sizes(name, dataset, expected)
        for split, ds in dataset.items():
            assert ds.features == builder.info.features, f"{name}/{split}: features differ from the builder's info"
            recorded = builder.info.splits[split].num_examples
            assert recorded == ds.num_rows, f"{name}/{split}: info records {recorded} rows, found {ds.num_rows}"
        if spec.unique_column:
            assert_unique(name, dataset, spec.unique_column)
        if spec.disjoint_column:
            assert_splits_disjoint(name, dataset, spec.disjoint_column)

        # A second builder with the same arguments must find the cache, not rebuild it.
        stamps = _cache_stamps(dataset)
        again, reloaded = build(spec, name, cache_dir)
        assert again.cache_dir == builder.cache_dir, f"{name}: a second builder used another cache directory"
        assert _cache_stamps(reloaded) == stamps, f"{name}: the cache was rewritten instead of reused"
        for split in dataset:
            assert_same_rows(dataset[split], reloaded[split], f"{name}/{split} reloaded")
        built[name] = dataset
    return built
