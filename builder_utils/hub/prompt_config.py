"""The ``prompts`` configurations (RL): one row per question of the configuration they follow,
as :func:`builder_utils.prompts.prompt_row` makes it.

Inline, each row carries its media as a one-item list (``images`` / ``audios``), which is what
TRL's ``GRPOTrainer`` and verl read; shared, a row names its file by the key only and
:func:`builder_utils.hub.attach_media` adds the list lazily from the media configuration.
"""

from __future__ import annotations

from collections.abc import Mapping

import datasets
import pyarrow as pa

from builder_utils.datasets_adapter import dataset_from_table
from builder_utils.prompts import PromptSpec, PromptStyle, prompt_features, prompt_row


def prompts_split(
    rows: datasets.Dataset, spec: PromptSpec, style: str | PromptStyle, split: str, *, media: bool = True
) -> datasets.Dataset:
    """The prompt rows of one split of question rows (media as paths, as built), in their order.

    Example:
        >>> rows = datasets.Dataset.from_dict({"question": ["How many?"], "label": [2], "question_id": ["q0"],
        ...                                    "image_filename": ["a.png"], "image": ["a.png"]})
        >>> rows = rows.cast_column("image", datasets.Image())
        >>> spec = PromptSpec("toy", "image", "image", "image_filename", answer="label",
        ...                   columns=("label", "question_id", "image_filename"))
        >>> row = prompts_split(rows, spec, "plain", "train").cast_column("images", datasets.List(datasets.Image(decode=False)))[0]
        >>> row["images"], row["answer"], row["extra_info"]["index"]
        ([{'bytes': None, 'path': 'a.png'}], '2', 0)
    """
    if rows._indices is not None:
        rows = rows.flatten_indices(keep_in_memory=True)
    source = rows.features
    features = prompt_features(source, spec, media=media)
    table = rows.data.table
    # Only the text columns go through Python; the media column stays Arrow (paths or bytes).
    questions = table.select(list(spec.source_columns())).to_pylist()
    built = [prompt_row(row, dataset=spec, style=style, split=split, index=i) for i, row in enumerate(questions)]
    text_features = prompt_features(source, spec, media=False)
    text = pa.Table.from_pylist(built, schema=text_features.arrow_schema) if built else text_features.arrow_schema.empty_table()
    if media:
        offsets = pa.array(range(len(rows) + 1), pa.int32())
        column = pa.ListArray.from_arrays(offsets, table.column(spec.media_column).combine_chunks())
        text = text.add_column(list(features).index(spec.media_list), spec.media_list, column)
    return dataset_from_table(text, features, split)


def prompts(
    source: Mapping[str, datasets.Dataset], spec: PromptSpec, style: str | PromptStyle, *, media: bool = True
) -> dict[str, datasets.Dataset]:
    """A ``prompts`` configuration: :func:`prompts_split` of every split of ``source``.

    Example::

        prompts(built["general"], prompt_spec_of(ClevrMath), "think_answer", media=False)["train"][0]["prompt"]
    """
    return {split: prompts_split(rows, spec, style, split, media=media) for split, rows in source.items()}
