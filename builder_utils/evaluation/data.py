"""Where the evaluated questions come from (``--data``): an export, a ``data_dir`` or a Hub repository;
from Python also a ``datasets`` object in memory (:func:`given_splits`).

Only the columns the evaluation needs are kept, so images and audio are never decoded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["EvaluationError", "data_kind", "given_splits", "is_in_memory", "load_splits"]

_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


class EvaluationError(ValueError):
    """The evaluation cannot run on these inputs; the message says which input and why."""


def data_kind(data: str | os.PathLike) -> str:
    """``"export"`` (a card and Parquet files one level down), ``"data_dir"`` or ``"hub"``: how ``data`` is read.

    Example:
        >>> data_kind("someone/clevr-math")
        'hub'
    """
    path = Path(data).expanduser()
    if path.is_dir():
        exported = (path / "README.md").is_file() and next(path.glob("*/*.parquet"), None) is not None
        return "export" if exported else "data_dir"
    if path.exists():
        raise EvaluationError(f"{data}: a file; --data takes an exported folder, a data_dir or a Hub repository id")
    if _REPO_ID.match(str(data)):
        return "hub"
    raise EvaluationError(f"{data}: no such folder, and not a Hub repository id (owner/name)")


def is_in_memory(data) -> bool:
    """Whether ``data`` is already loaded (a ``Dataset``, ``IterableDataset`` or a dict of them), not a place.

    Example:
        >>> is_in_memory("my-name/clevr-math"), is_in_memory({"test": []})
        (False, True)
    """
    return not isinstance(data, (str, os.PathLike))


def given_splits(data, split: str, columns: Sequence[str]) -> dict[str, "datasets.Dataset"]:
    """The splits of in-memory ``data``, restricted to ``columns``: a ``DatasetDict``'s (or any dict of
    datasets), or ``{split: data}`` for one ``Dataset`` or ``IterableDataset``. An ``IterableDataset`` is
    read to its end (only those columns): give a finite one (``stream(num_questions=N)``, ``.take(N)``).

    Example::

        given_splits(problems(size=8, seed=0), "test", ["question_id", "label"])["test"].num_rows   # -> 8
    """
    import datasets  # data in memory: datasets is imported already

    named = dict(data) if isinstance(data, Mapping) else {split: data}
    splits = {}
    for name, dataset in named.items():
        if not isinstance(dataset, (datasets.Dataset, datasets.IterableDataset)):
            raise EvaluationError(f"split {name!r}: a {type(dataset).__name__}; evaluate takes a path, a Hub "
                                  "repository id, a datasets.Dataset or IterableDataset, or a dict of them")
        names = dataset.column_names
        kept = [c for c in columns if names is None or c in names]
        dataset = dataset.select_columns(kept)
        if isinstance(dataset, datasets.IterableDataset):
            # Read once into memory; the features (ClassLabel names) come along when the stream knows them.
            dataset = datasets.Dataset.from_list(list(dataset), features=dataset.features)
        splits[str(name)] = dataset
    return splits


def load_splits(data: str | os.PathLike, config: str, builder_class: type, columns: Sequence[str],
                cache_dir: str | os.PathLike | None = None,
                builder_kwargs: dict | None = None) -> dict[str, "datasets.Dataset"]:
    """Every split of ``config`` in ``data``, restricted to ``columns``; ``builder_kwargs``: a ``data_dir``'s only.

    Example::

        load_splits("my-name/clevr-math", "multihop", ClevrMath, ["label"])["test"]
    """
    import datasets  # here: scoring a reward or a dict of predictions needs no datasets import

    kind = data_kind(data)
    cache = None if cache_dir is None else os.fspath(cache_dir)
    if kind == "export":
        from builder_utils.hub import load_exported

        loaded = load_exported(data, config, cache_dir=cache)
    elif kind == "hub":
        from builder_utils.datasets_adapter import DatasetNotFoundError

        try:
            loaded = datasets.load_dataset(str(data), config, cache_dir=cache)
        except (ConnectionError, OSError, DatasetNotFoundError) as exc:
            raise EvaluationError(f"{data}: cannot load config {config!r} from the Hub ({exc})") from None
    else:
        builder = builder_class(config_name=config, data_dir=os.fspath(Path(data).expanduser().resolve()),
                                cache_dir=cache, **dict(builder_kwargs or {}))
        builder.download_and_prepare()
        loaded = builder.as_dataset()
    return {split: ds.select_columns([c for c in columns if c in ds.column_names]) for split, ds in loaded.items()}
