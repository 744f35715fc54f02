"""The ``conversations`` configurations: one row per image or clip, its questions as chat turns.

Columns and readers: README.md (this package), "Training layouts". ``texts`` is the_cauldron's
format, so our rows concatenate with its subsets; its turns keep the ``turn_fields`` typed, so
single-hop and multi-hop turns can be told apart. Rows and turns keep the source's order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import datasets
import pyarrow as pa

from builder_utils.datasets_adapter import dataset_from_table
from builder_utils.hub.layout import HubLayout
from builder_utils.prompts import conversation_messages, media_kind_of, messages_feature, reasoning_messages

logger = logging.getLogger(__name__)

TEXTS = "texts"
MESSAGES = "messages"
REASONING_MESSAGES = "reasoning_messages"


def _reasoning_column(source: datasets.Features, layout: HubLayout) -> str | None:
    return layout.reasoning if layout.reasoning and layout.reasoning in source else None


def conversation_features(source: datasets.Features, layout: HubLayout) -> datasets.Features:
    """The features of ``conversations`` built from a source configuration's features.

    Example:
        >>> source = datasets.Features({"image_filename": datasets.Value("string"), "image": datasets.Image(),
        ...                             "question": datasets.Value("string"), "label": datasets.Value("int64")})
        >>> layout = HubLayout("image", "image_filename", "images", conversations_from="general",
        ...                    conversation_media="images", turn={"user": "question", "assistant": "label"})
        >>> list(conversation_features(source, layout))
        ['image_filename', 'images', 'texts', 'messages']
    """
    string = datasets.Value("string")
    turn = {"user": string, "assistant": string, "source": string}
    turn |= {name: source[name] for name in layout.turn_fields if name in source}
    features = datasets.Features({
        layout.key: source[layout.key],
        layout.conversation_media: datasets.List(source[layout.media_column]),
        TEXTS: datasets.List(turn),
        MESSAGES: messages_feature(),
    })
    if _reasoning_column(source, layout):
        features[REASONING_MESSAGES] = messages_feature()
    return features


def _answer_text(value) -> str | None:
    return None if value is None else str(value)


def conversations_split(rows: datasets.Dataset, layout: HubLayout, split: str | None = None) -> datasets.Dataset:
    """Group one split of the source configuration into conversation rows (media as in ``rows``).

    A question without an answer (no majority) gives no turn; a file without turns, no row.

    Example:
        >>> rows = datasets.Dataset.from_dict({"f": ["a", "a", "b"], "m": ["A", "A", "B"],
        ...                                    "q": ["1?", "2?", "3?"], "ans": [1, 2, None]})
        >>> layout = HubLayout("m", "f", "media", conversations_from="x", conversation_media="ms",
        ...                    turn={"user": "q", "assistant": "ans"})
        >>> row = conversations_split(rows.cast_column("m", datasets.Image(decode=False)), layout)[0]
        >>> row["texts"][1]
        {'user': '2?', 'assistant': '2', 'source': None}
        >>> [m["role"] for m in row["messages"]], row["messages"][0]["content"][0]
        (['user', 'assistant', 'user', 'assistant'], {'type': 'image', 'text': None})
    """
    if rows._indices is not None:
        rows = rows.flatten_indices(keep_in_memory=True)
    features = conversation_features(rows.features, layout)
    fields = [name for name in layout.turn_fields if name in rows.features]
    user, assistant = layout.turn["user"], layout.turn["assistant"]
    reasoning = _reasoning_column(rows.features, layout)
    table = rows.data.table
    wanted = [layout.key, user, assistant, *fields, *([reasoning] if reasoning else [])]
    columns = {name: table.column(name).to_pylist() for name in dict.fromkeys(wanted)}
    thoughts: dict = {}
    first: dict = {}
    turns: dict = {}
    skipped = 0
    for position, key in enumerate(columns[layout.key]):
        first.setdefault(key, position)
        answer = _answer_text(columns[assistant][position])
        if answer is None:
            skipped += 1
            continue
        turn = {"user": columns[user][position], "assistant": answer, "source": layout.data_source}
        turn |= {name: columns[name][position] for name in fields}
        turns.setdefault(key, []).append(turn)
        if reasoning:
            thoughts.setdefault(key, []).append(columns[reasoning][position])
    if skipped:
        logger.info("conversations%s: %d question(s) without %s give no turn", f" {split}" if split else "",
                    skipped, assistant)
    keys = [k for k in first if k in turns]
    media = table.column(layout.media_column).take(pa.array([first[k] for k in keys], pa.int64())).combine_chunks()
    offsets = pa.array(range(len(keys) + 1), pa.int32())
    kind = media_kind_of(features[layout.conversation_media])
    messages = [conversation_messages([(t["user"], t["assistant"]) for t in turns[k]], kind) for k in keys]
    schema = features.arrow_schema
    built = {
        layout.key: pa.array(keys, table.schema.field(layout.key).type),
        layout.conversation_media: pa.ListArray.from_arrays(offsets, media),
        TEXTS: pa.array([turns[k] for k in keys], schema.field(TEXTS).type),
        MESSAGES: pa.array(messages, schema.field(MESSAGES).type),
    }
    if reasoning:
        targets = [reasoning_messages([(t["user"], cot, t["assistant"]) for t, cot in zip(turns[k], thoughts[k])], kind)
                   for k in keys]
        built[REASONING_MESSAGES] = pa.array(targets, schema.field(REASONING_MESSAGES).type)
    return dataset_from_table(pa.table(built), features, split)


def conversations(source: Mapping[str, datasets.Dataset], layout: HubLayout) -> dict[str, datasets.Dataset]:
    """The ``conversations`` configuration of every split of the source configuration.

    Example:
        >>> rows = datasets.Dataset.from_dict({"f": ["a", "b", "a"], "m": ["A", "B", "A"], "q": ["1?", "2?", "3?"],
        ...                                    "ans": ["x", "y", "z"]}).cast_column("m", datasets.Image(decode=False))
        >>> layout = HubLayout("m", "f", "media", conversations_from="x", turn={"user": "q", "assistant": "ans"})
        >>> [len(row["texts"]) for row in conversations({"train": rows}, layout)["train"]]
        [2, 1]
    """
    return {split: conversations_split(rows, layout, split) for split, rows in source.items()}
