"""Fixed-size CLEVR-Math problem sets: :func:`problems`, the first ``size`` rows of a one-shard
:func:`clevr_math.stream` as a map-style ``datasets.Dataset`` (README, "Fixed-size problem sets").

Mixtures: ``datasets.interleave_datasets``, each source with a seed of its own (its own worlds),
each problem once (``"all_exhausted"`` would repeat the smaller set's); with a stream, the set goes
in as ``one_op.to_iterable_dataset()``:

>>> import datasets
>>> one_op = problems(size=7, seed=0, num_operations=1)
>>> chains = problems(size=3, seed=1, num_operations=3)
>>> mixed = datasets.interleave_datasets([one_op, chains], probabilities=[0.7, 0.3], seed=0,
...                                      stopping_strategy="all_exhausted_without_replacement")
>>> len(one_op), one_op[0]["num_operations"], len(mixed), sorted(set(mixed["num_operations"]))
(7, 1, 10, [1, 3])
"""

from __future__ import annotations

import hashlib
import os
from itertools import islice
from typing import Any

import datasets
import pyarrow as pa

from builder_utils.datasets_adapter import dataset_from_table
from builder_utils.options import Integer
from builder_utils.prompts import DEFAULT_PROMPT_STYLE
from clevr_math.streaming import (StreamError, check_trainer_format, encoded_row_features, in_format, stream,
                                  stream_features)

__all__ = ["MAX_PROBLEMS", "problems"]

#: The most problems one set holds (in memory: about 2.5 GB over synthetic worlds). Larger pools:
#: iterate :func:`clevr_math.stream`, or write them with ``clevr-math export --stream_questions``.
MAX_PROBLEMS = 100_000
#: Rows turned into Arrow at a time: bounds the Python objects alive while a set is built.
_CHUNK = 512


def problems(data_dir: str | os.PathLike | None = None, *, size: int, seed: int = 0, split: str = "train",
             trainer_format: str | None = None, **difficulty: Any) -> datasets.Dataset:
    """``size`` CLEVR-Math problems as a ``datasets.Dataset`` (the stream's features); a smaller set is a prefix.
    ``trainer_format``: in a trainer's own layout instead (``r1v``, ``easyr1``, ...: README, "Which trainer").
    ``difficulty``: :func:`~clevr_math.stream`'s knobs, and its ``step_scenes`` / ``render_steps``.

    ``difficulty`` also takes the stream's ``cogent=`` (``"A"``, ``"B"`` or shape -> colours): a
    CoGenT train set is ``problems(size=n, cogent="A")``, its test set ``problems(size=n, split="test", cogent="B")``.

    >>> ds = problems(size=5, seed=3, num_operations=2)
    >>> len(ds), ds[4]["extra_info"]["index"], ds[0]["num_operations"], ds[0]["images"][0].size
    (5, 4, 2, (480, 320))
    >>> ds["question_id"] == problems(size=5, seed=3, num_operations=2)["question_id"]
    True
    >>> problems(size=0)
    Traceback (most recent call last):
    ...
    clevr_math.streaming.StreamError: size must be an integer in 1..100000, got 0
    """
    try:
        Integer(1, maximum=MAX_PROBLEMS)("size", size)
    except ValueError as exc:
        raise StreamError(str(exc)) from None
    check_trainer_format(trainer_format)  # before the problems are made
    rows = iter(stream(data_dir, seed=seed, num_questions=size, split=split, num_shards=1, **difficulty).decode(False))
    # The stream's rows are already in the encoded form of its undecoded features, so they go to
    # Arrow as they are, chunk by chunk (datasets' from_list would encode them again: twice the
    # memory at the peak); the stream's own features then decode the images on access (same types).
    schema = encoded_row_features().arrow_schema
    chunks = []
    while chunk := list(islice(rows, _CHUNK)):
        chunks.append(pa.Table.from_pylist(chunk, schema=schema))
    table = pa.concat_tables(chunks)
    built = dataset_from_table(table, stream_features(), datasets.NamedSplit(split),
                               description=f"{size} CLEVR-Math problems (clevr_math.problems, seed {seed}"
                                           + (f", shape-colour rule {_rule_name(difficulty['cogent'])})"
                                              if difficulty.get("cogent") is not None else ")"),
                               fingerprint=_fingerprint(table))
    if trainer_format is None:
        return built
    return in_format(built, trainer_format, difficulty.get("prompt_style_name", DEFAULT_PROMPT_STYLE), split)


def _rule_name(cogent) -> str:
    return f"CoGenT {cogent}" if isinstance(cogent, str) else str(dict(cogent))


def _fingerprint(table: pa.Table) -> str:
    # Of the rows themselves, hashed buffer by buffer (no copy): datasets' default would pickle the
    # whole table to hash it, tripling the memory of a set at its peak.
    digest = hashlib.blake2b(str(table.schema).encode(), digest_size=16)
    for column in table.columns:
        for chunk in column.chunks:
            for buffer in chunk.buffers():
                if buffer is not None:
                    digest.update(memoryview(buffer))
    return digest.hexdigest()
