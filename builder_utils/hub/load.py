"""Load an exported folder back with ``datasets.load_dataset``, checked against its card."""

from __future__ import annotations

import os
from pathlib import Path

import datasets

from builder_utils.datasets_adapter import (DatasetGenerationError, DatasetInfosDict, ExpectedMoreSplitsError,
                                            MetadataConfigs, NonMatchingSplitsSizesError, UnexpectedSplitsError)
from builder_utils.hub.card import read_card
from builder_utils.hub.export import README, ExportError, split_files


def load_exported(
    folder: str | os.PathLike, config: str | None = None, cache_dir: str | os.PathLike | None = None
) -> datasets.DatasetDict:
    """``datasets.load_dataset(folder, config)`` (as users load it), rows per split checked against the card.

    Example::

        sorted(load_exported("demo_output/hub/clevr_math", "multihop"))   # ['test', 'train', 'validation']
    """
    root = Path(folder).expanduser().resolve()
    card = read_card(root / README)
    if card is None:
        raise ExportError(f"{root / README}: missing; {root} is not an exported folder")
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    name = config or configs.get_default_config_name()
    if name in configs:
        for files in split_files(root, configs[name]).values():
            for path in files:
                _check_shard(path)
    try:
        loaded = datasets.load_dataset(str(root), config, cache_dir=None if cache_dir is None else os.fspath(cache_dir))
    except (NonMatchingSplitsSizesError, ExpectedMoreSplitsError, UnexpectedSplitsError) as exc:
        # datasets checks the files against the card's dataset_info; say which folder and config.
        raise ExportError(f"{root / README}: config {name!r} records other rows than its files hold: {exc}") from None
    except DatasetGenerationError as exc:  # a shard whose pages are corrupt behind a sound footer
        raise ExportError(f"{root}: config {name!r}: a Parquet shard cannot be read ({_first_line(exc)}); "
                          "re-export the folder") from None
    info = infos.get(name) if name else None
    if info is not None and info.splits:
        expected = {split: s.num_examples for split, s in info.splits.items()}
        got = {split: ds.num_rows for split, ds in loaded.items()}
        if expected != got:
            raise ExportError(f"{root / README}: config {name!r} records rows {expected}, its files hold {got}")
    return loaded


def _check_shard(path: str) -> None:
    """Refuse a shard whose footer cannot be read (a truncated or overwritten file): one line naming it."""
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(path)
    except Exception as exc:  # pyarrow raises several types for a file that is not Parquet
        raise ExportError(f"{path}: not a readable Parquet shard ({_first_line(exc)}); re-export the folder") from None


def _first_line(exc: BaseException) -> str:
    """The innermost cause's first line (datasets wraps pyarrow's error in its own)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
