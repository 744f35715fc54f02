"""Load an exported folder back with ``datasets.load_dataset``, checked against its card."""

from __future__ import annotations

import os
from pathlib import Path

import datasets

from builder_utils.datasets_adapter import (DatasetInfosDict, ExpectedMoreSplitsError, MetadataConfigs,
                                            NonMatchingSplitsSizesError, UnexpectedSplitsError)
from builder_utils.hub.card import read_card
from builder_utils.hub.export import README, ExportError


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
    name = config or MetadataConfigs.from_dataset_card_data(card.data).get_default_config_name()
    try:
        loaded = datasets.load_dataset(str(root), config, cache_dir=None if cache_dir is None else os.fspath(cache_dir))
    except (NonMatchingSplitsSizesError, ExpectedMoreSplitsError, UnexpectedSplitsError) as exc:
        # datasets checks the files against the card's dataset_info; say which folder and config.
        raise ExportError(f"{root / README}: config {name!r} records other rows than its files hold: {exc}") from None
    info = infos.get(name) if name else None
    if info is not None and info.splits:
        expected = {split: s.num_examples for split, s in info.splits.items()}
        got = {split: ds.num_rows for split, ds in loaded.items()}
        if expected != got:
            raise ExportError(f"{root / README}: config {name!r} records rows {expected}, its files hold {got}")
    return loaded
