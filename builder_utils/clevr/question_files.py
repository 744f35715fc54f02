"""Writing generated questions: one CLEVR-style JSON file, or a folder of Parquet shards.

JSON (the default, what the released CLEVR question files look like)::

    {"info": <the scene file's info>, "questions": [{..., "question_index": 0}, ...]}

Parquet (for large outputs, one shard per group of balancing windows)::

    DIR/questions-00000-of-00003.parquet ...    the questions, ``question_index`` last
    DIR/index.json                               info, and per shard its scenes and questions

The shards load with ``datasets.load_dataset("parquet", data_files="DIR/*.parquet")``, in
order (the names sort). Every file appears complete or not at all: JSON goes through
:func:`builder_utils.atomic.atomic_output`; shards are written in a hidden ``.staging-*``
folder inside ``DIR`` (removed on any failure or interrupt) and moved into place, the index
last. A folder is only written into when it holds nothing but our own files (the index and
files named like our shards); stale shards of our previous run are removed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from builder_utils.atomic import atomic_output, write_atomic

__all__ = [
    "INDEX_NAME",
    "QUESTION_FIELDS",
    "check_parquet_folder",
    "question_schema",
    "questions_table",
    "shard_name",
    "write_questions",
    "write_questions_parquet",
]

INDEX_NAME = "index.json"
_SHARD = re.compile(r"questions-\d{5}-of-\d{5}\.parquet")
QUESTION_FIELDS = (
    "image_filename", "image_index", "split", "question", "program", "answer", "template_filename",
    "question_family_index", "template_index", "category", "cot", "num_operations", "intermediate_counts",
)


def shard_name(k: int, n: int) -> str:
    """The file name of shard ``k`` of ``n``.

    >>> shard_name(0, 3)
    'questions-00000-of-00003.parquet'
    """
    return f"questions-{k:05d}-of-{n:05d}.parquet"


def question_schema(with_index: bool = True):
    """The Arrow schema of a question row (fixed, so that every shard, even an empty one,
    has the same columns and types).

    >>> question_schema().names[-2:]
    ['intermediate_counts', 'question_index']
    """
    import pyarrow as pa

    node = pa.struct([("function", pa.string()), ("inputs", pa.list_(pa.int64())),
                      ("value_inputs", pa.list_(pa.string()))])
    fields = [
        ("image_filename", pa.string()), ("image_index", pa.int64()), ("split", pa.string()),
        ("question", pa.string()), ("program", pa.list_(node)), ("answer", pa.string()),
        ("template_filename", pa.string()), ("question_family_index", pa.int64()),
        ("template_index", pa.int64()), ("category", pa.string()), ("cot", pa.string()),
        ("num_operations", pa.int64()), ("intermediate_counts", pa.list_(pa.int64())),
    ]
    if with_index:
        fields.append(("question_index", pa.int64()))
    return pa.schema(fields)


def questions_table(questions: list[dict]):
    """Question dicts (without ``question_index``) as a :class:`pyarrow.Table`.

    >>> questions_table([]).num_rows
    0
    """
    import pyarrow as pa

    return pa.Table.from_pylist(questions, schema=question_schema(with_index=False))


def write_questions(path: str | os.PathLike, info: dict, questions: Iterable[dict | str]) -> int:
    """Stream ``{"info": info, "questions": [...]}`` to ``path`` atomically (temporary file
    in the same folder, renamed when complete), adding each question's ``question_index``
    (last key). Questions are dicts or their ``json.dumps`` text. The bytes equal
    ``json.dumps`` of the whole document. Returns the number written.

    >>> folder = tempfile.mkdtemp()
    >>> write_questions(os.path.join(folder, "q.json"), {"split": "val"}, [{"question": "Q?"}])
    1
    """
    count = 0
    with atomic_output(path) as fh:
        fh.write('{"info": ' + json.dumps(info) + ', "questions": [')
        for question in questions:
            if isinstance(question, str):
                # '{..."cot": ...}' -> '{..., "question_index": n}', as json.dumps would write it
                text = f'{question[:-1]}, "question_index": {count}}}'
            else:
                question["question_index"] = count
                text = json.dumps(question)
            fh.write((", " if count else "") + text)
            count += 1
        fh.write("]}")
    return count


def _our_files(folder: Path) -> set[str]:
    """Names in ``folder`` that a previous Parquet run wrote: the index, the shards it lists,
    and files named like our shards (written before an interrupted run could list them)."""
    ours = {INDEX_NAME}
    try:
        index = json.loads((folder / INDEX_NAME).read_text(encoding="utf-8"))
        ours.update(shard["file"] for shard in index.get("shards", []) if isinstance(shard, dict))
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        pass
    return ours | {p.name for p in folder.iterdir() if _SHARD.fullmatch(p.name)}


def check_parquet_folder(folder: str | os.PathLike) -> None:
    """Refuse an output folder we may not write into: a file, or a folder holding anything
    but our own earlier output. Raises :class:`FileExistsError` naming it.

    >>> check_parquet_folder(tempfile.mkdtemp())     # an empty folder is fine
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(f"{folder}: --output_format parquet writes a folder, and this is a file")
    if not folder.is_dir():
        return
    foreign = sorted(p.name for p in folder.iterdir() if p.name not in _our_files(folder))
    if foreign:
        shown = ", ".join(foreign[:3]) + (" ..." if len(foreign) > 3 else "")
        raise FileExistsError(f"{folder}: the folder holds files this command did not write ({shown}); "
                              "give a new or empty folder")


def write_questions_parquet(
    folder: str | os.PathLike,
    info: dict,
    shards: Iterable[tuple[tuple[int, int], object]],
    num_shards: int,
) -> int:
    """Write ``num_shards`` Parquet shards and ``index.json`` into ``folder``; returns the
    number of questions. ``shards`` yields ``((scene_start, scene_stop), table)`` in order,
    each table from :func:`questions_table`; ``question_index`` is added here.

    >>> folder = tempfile.mkdtemp()
    >>> write_questions_parquet(folder, {"split": "val"}, [((0, 1), questions_table([]))], 1)
    0
    >>> sorted(os.listdir(folder))
    ['index.json', 'questions-00000-of-00001.parquet']
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    check_parquet_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    previous = _our_files(folder) - {INDEX_NAME}
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
    try:
        entries, count = [], 0
        for k, ((start, stop), table) in enumerate(shards):
            name = shard_name(k, num_shards)
            table = table.append_column("question_index", pa.array(range(count, count + table.num_rows), pa.int64()))
            pq.write_table(table, staging / name)
            entries.append({"file": name, "scene_start": start, "scene_stop": stop,
                            "num_questions": table.num_rows, "first_question_index": count})
            count += table.num_rows
        if len(entries) != num_shards:
            raise ValueError(f"{folder}: expected {num_shards} shards, got {len(entries)}")
        for entry in entries:
            os.replace(staging / entry["file"], folder / entry["file"])
        index = {"format": "clevr-questions-parquet", "version": 1, "info": info, "num_questions": count,
                 "shards": entries}
        write_atomic(folder / INDEX_NAME, json.dumps(index, indent=1) + "\n")
        for stale in previous - {entry["file"] for entry in entries}:
            (folder / stale).unlink(missing_ok=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return count
