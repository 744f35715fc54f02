"""The shared-media layout (``--media shared``) and :func:`attach_media`, the lazy join.

README.md (this package), "Media layouts". The card shows a version of the join with ``datasets``
alone (:func:`join_snippet`), for users without this package.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence

import datasets
import pyarrow as pa
from huggingface_hub import DatasetCard

from builder_utils.datasets_adapter import dataset_from_table
from builder_utils.hub.card import install_hint
from builder_utils.hub.layout import HubLayout
from builder_utils.prompts import MEDIA_KINDS, media_kind_of, media_list_of

logger = logging.getLogger(__name__)


class MediaJoinError(ValueError):
    """Questions and media that cannot be joined; the message says which key or split."""


def question_columns_only(dataset: datasets.Dataset, layout: HubLayout) -> datasets.Dataset:
    """The question rows without the media (and per-file metadata) columns, nor the media the builder
    draws per row (``drawn_media``); no data is copied.

    Example:
        >>> rows = datasets.Dataset.from_dict({"image_filename": ["a.png"], "image": ["a.png"], "q": ["?"]})
        >>> question_columns_only(rows, HubLayout("image", "image_filename", "images")).column_names
        ['image_filename', 'q']
    """
    dropped = (*layout.media_columns, *layout.drawn_media)
    return dataset.remove_columns([c for c in dropped if c in dataset.column_names])


def media_rows(
    configs: Mapping[str, Mapping[str, datasets.Dataset]], layout: HubLayout
) -> dict[str, datasets.Dataset]:
    """Per split, each media file of ``configs`` (config -> split -> rows) once, with its metadata.

    Sorted by key, so the result does not depend on which configurations were exported; a key in
    two splits is an error.

    Example:
        >>> layout = HubLayout("image", "image_filename", "images")
        >>> rows = datasets.Dataset.from_dict({"image_filename": ["b", "a", "b"], "image": ["B", "A", "B"]})
        >>> media_rows({"general": {"train": rows}}, layout)["train"]["image_filename"][:]
        ['a', 'b']
    """
    split_of: dict[str, str] = {}
    picked: dict[str, dict[str, tuple[datasets.Dataset, int]]] = {}
    for config, splits in configs.items():
        for split, rows in splits.items():
            keys = rows.data.column(layout.key).to_pylist()
            if rows._indices is not None:
                keys = [keys[i] for i in rows._indices.column(0).to_pylist()]
            for position, key in enumerate(keys):
                if key is None:
                    raise MediaJoinError(f"{config}/{split} row {position}: no {layout.key}")
                first = split_of.setdefault(key, split)
                if first != split:
                    raise MediaJoinError(
                        f"{layout.key} {key!r} is in split {first} and in {config}/{split}; "
                        "the media configuration puts each file in one split"
                    )
                picked.setdefault(split, {}).setdefault(key, (rows, position))
    result = {}
    for split, chosen in picked.items():
        # Plain Arrow takes: datasets' select/flatten would fingerprint (deep-copy) every step.
        order = sorted(chosen)
        parts, features = [], None
        by_source: dict[int, tuple[datasets.Dataset, list[int], list[str]]] = {}
        for key in order:
            rows, position = chosen[key]
            entry = by_source.setdefault(id(rows), (rows, [], []))
            entry[1].append(position)
            entry[2].append(key)
        keys_in_parts: list[str] = []
        for rows, positions, keys in by_source.values():
            columns = [layout.key, *[c for c in layout.media_columns if c in rows.column_names]]
            if rows._indices is not None:
                positions = rows._indices.column(0).take(pa.array(positions, pa.int64())).to_pylist()
            parts.append(rows.data.table.select(columns).take(pa.array(positions, pa.int64())))
            if features is None:
                known = rows.features  # a deep copy per access: read it once
                features = datasets.Features({c: known[c] for c in columns})
            keys_in_parts += keys
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if len(parts) > 1:
            position_of = {k: i for i, k in enumerate(keys_in_parts)}
            table = table.take(pa.array([position_of[k] for k in order], pa.int64()))
        result[split] = dataset_from_table(table.combine_chunks(), features, split)
    return result


def _media_index(media, key: str) -> tuple[list[datasets.Dataset], dict]:
    tables = list(media.values()) if isinstance(media, datasets.DatasetDict) else [media]
    index: dict = {}
    for number, table in enumerate(tables):
        if key not in table.column_names:
            raise MediaJoinError(f"the media table has no {key!r} column (columns: {', '.join(table.column_names)})")
        # Only the key column is read here; the media bytes stay on disk until a row is read.
        for position, value in enumerate(table.data.column(key).to_pylist() if table._indices is None
                                         else table.select_columns([key])[key]):
            index.setdefault(value, (number, position))
    return tables, index


def _join_key(questions_columns: Sequence[str], media_columns: Sequence[str], key: str | None) -> str:
    if key is not None:
        return key
    common = [c for c in media_columns if c in questions_columns]
    if len(common) != 1:
        raise MediaJoinError(
            f"cannot tell the join key: the tables share {common or 'no column'}; pass key=..."
        )
    return common[0]


def _lookup(tables: list[datasets.Dataset], index: dict, key: str, columns: list[str], as_list: str | None = None):
    tables = [table.select_columns(columns) for table in tables]  # once: each call fingerprints

    def add_media(batch: dict) -> dict:
        if key not in batch:  # a filter/map over other columns (input_columns): no media needed
            return batch
        found = []
        for value in batch[key]:
            if value not in index:
                raise MediaJoinError(f"{key} {value!r} is not in the media table")
            found.append(index[value])
        fetched = {column: [None] * len(found) for column in columns}
        for number, table in enumerate(tables):
            rows = [i for i, (n, _) in enumerate(found) if n == number]
            if not rows:
                continue
            values = table[[found[i][1] for i in rows]]
            for column in columns:
                for i, value in zip(rows, values[column]):
                    fetched[column][i] = value
        if as_list is not None:  # prompt rows: the media as the one-item list TRL reads
            return {**batch, as_list: [[value] for value in fetched[columns[0]]]}
        return {**batch, **fetched}

    return add_media


def attach_media(questions, media, key: str | None = None):
    """The questions with the media columns of ``media`` joined by ``key``, lazily (README.md, "Media layouts").

    ``key`` defaults to the one column both have; every split of ``media`` is searched.
    ``features`` stays the questions' (the media come as the media table decodes them: cast it
    first, e.g. ``Audio(decode=False)``). Prompt rows get the one-item media list of an inline export.

    Example:
        >>> q = datasets.Dataset.from_dict({"image_filename": ["b", "a"], "question": ["?", "!"]})
        >>> m = datasets.Dataset.from_dict({"image_filename": ["a", "b"], "image": ["A", "B"]})
        >>> attach_media(q, m).shuffle(seed=0)[0]
        {'image_filename': 'b', 'question': '?', 'image': 'B'}
    """
    if isinstance(media, (datasets.IterableDataset, datasets.IterableDatasetDict)):
        raise MediaJoinError(
            "media must be a map-style Dataset or DatasetDict (load it without streaming=True): "
            "a stream cannot be looked up by key"
        )
    if not isinstance(media, (datasets.Dataset, datasets.DatasetDict)):
        raise TypeError(f"media must be a Dataset or DatasetDict, got {type(media).__name__}")
    if isinstance(questions, (datasets.DatasetDict, datasets.IterableDatasetDict)):
        joined = {split: attach_media(part, media, key) for split, part in questions.items()}
        return type(questions)(joined)
    media_names = next(iter(media.values())).column_names if isinstance(media, datasets.DatasetDict) else media.column_names
    question_names = list(questions.column_names or (questions.features or {}))
    key = _join_key(question_names, media_names, key)
    tables, index = _media_index(media, key)
    columns = [c for c in media_names if c != key]
    as_list = None
    if media_list_of(questions.features):
        media_features = tables[0].features
        columns = [c for c in columns if isinstance(media_features[c], (datasets.Image, datasets.Audio))][:1]
        if not columns:
            raise MediaJoinError(f"the media table has no Image or Audio column (columns: {', '.join(media_names)})")
        as_list = MEDIA_KINDS[media_kind_of(media_features[columns[0]])]
    add_media = _lookup(tables, index, key, columns, as_list)
    if isinstance(questions, datasets.IterableDataset):
        return questions.map(add_media, batched=True)
    if not isinstance(questions, datasets.Dataset):
        raise TypeError(f"questions must be a Dataset, DatasetDict or IterableDataset, got {type(questions).__name__}")
    return questions.with_transform(add_media)


def join_snippet(layout: HubLayout, config: str, split: str = "train") -> str:
    """Python code that joins a question configuration with its media using ``datasets`` alone.

    Example:
        >>> print(join_snippet(HubLayout("image", "image_filename", "images"), "general").splitlines()[2])
        questions = load_dataset("REPO_ID", "general", split="train")
    """
    return "\n".join([
        "from datasets import load_dataset",
        "",
        f'questions = load_dataset("REPO_ID", "{config}", split="{split}")',
        f'media = load_dataset("REPO_ID", "{layout.media_config}", split="{split}")',
        f'row_of = {{name: i for i, name in enumerate(media["{layout.key}"])}}',
        "",
        "def add_media(batch):",
        f'    rows = media[[row_of[name] for name in batch["{layout.key}"]]]',
        f'    return {{**batch, **{{c: rows[c] for c in rows if c != "{layout.key}"}}}}',
        "",
        "ds = questions.with_transform(add_media)  # media read only when a row is read",
    ])


def card_section(layout: HubLayout, question_configs: Sequence[str]) -> str:
    """The card section of a ``--media shared`` export: the layout and how to join.

    Example:
        >>> card_section(HubLayout("image", "image_filename", "images"), ["general"]).splitlines()[0]
        '## Media stored once: joining questions and images'
    """
    example = question_configs[0] if question_configs else "CONFIG"
    what = "images" if layout.media_config == "images" else "media files"
    moved = ", ".join(f"`{c}`" for c in layout.media_columns)
    return "\n".join([
        f"## Media stored once: joining questions and {what}",
        "",
        f"This export stores every media file once, in the `{layout.media_config}` configuration "
        f"(`{layout.key}`, {moved}; same splits as the questions). The question configurations "
        f"({', '.join(f'`{c}`' for c in question_configs)}) hold no media bytes: each row names its file "
        f"in `{layout.key}`. Join them lazily (nothing is copied; filtering, shuffling and splitting "
        "work on the small question table, and a file is read only when its row is read):",
        "",
        "```python",
        "from datasets import load_dataset",
        f"from builder_utils.hub import attach_media  # {install_hint()}",
        "",
        f'ds = attach_media(load_dataset("REPO_ID", "{example}"), load_dataset("REPO_ID", "{layout.media_config}"))',
        "```",
        "",
        "With `datasets` alone:",
        "",
        "```python",
        join_snippet(layout, example),
        "```",
        "",
        f"Streaming questions (`streaming=True`) join the same way with `.map(add_media, batched=True)`, "
        f"the `{layout.media_config}` configuration loaded without streaming.",
    ])


def with_join_section(card: DatasetCard, layout: HubLayout, question_configs: Sequence[str]) -> DatasetCard:
    r"""The card with :func:`card_section` inserted before its ``## Features`` section (or at the end).

    Example:
        >>> card = DatasetCard("---\nlicense: mit\n---\n# X\n\n## Features\n")
        >>> with_join_section(card, HubLayout("image", "image_filename", "images"), ["general"]).text.split("\n")[2]
        '## Media stored once: joining questions and images'
    """
    return with_section(card, card_section(layout, question_configs))


def with_section(card: DatasetCard, section: str) -> DatasetCard:
    r"""The card with a generated ``section`` inserted before its ``## Features`` section (or at the end).

    Example:
        >>> str(with_section(DatasetCard("---\nlicense: mit\n---\n# X\n"), "## Y")).splitlines()[-1]
        '## Y'
    """
    text = str(card)
    match = re.search(r"^## Features\b", text, flags=re.MULTILINE)
    if match:
        text = text[: match.start()] + section + "\n\n" + text[match.start():]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    return DatasetCard(text)
