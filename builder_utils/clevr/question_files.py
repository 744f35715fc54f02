"""Writing generated questions: one CLEVR-style JSON file, or a folder of Parquet shards.

Formats: README, "generate-questions" and "On a Dask cluster"; through :mod:`builder_utils.ownership`
(a question file corrected by hand is refused without ``overwrite``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from builder_utils.ownership import OutputFolder
from builder_utils.wait_points import wait_point

__all__ = [
    "GENERATED_BY",
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
COMMAND = "generate-questions"
#: Provenance in an output's ``info`` (never a claim: only the folder's record says a file is ours).
GENERATED_BY = "builder_utils generate-questions"
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
    """The Arrow schema of a question row (fixed: every shard, even an empty one, has the same).

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


def write_questions(path: str | os.PathLike, info: dict, questions: Iterable[dict | str], *,
                    overwrite: bool = False, out: OutputFolder | None = None) -> int:
    """Stream the questions (dicts or their ``json.dumps`` texts) to ``path`` with their
    ``question_index``: the bytes of ``json.dumps`` of the whole document.

    >>> folder = tempfile.mkdtemp()
    >>> write_questions(os.path.join(folder, "q.json"), {"split": "val"}, [{"question": "Q?"}])
    1
    """
    path = Path(path)
    if out is None:
        with OutputFolder.open(path, command=COMMAND, overwrite=overwrite, file=True) as out:
            return write_questions(path, info, questions, out=out)
    count = 0
    with open(out.stage / path.name, "w", encoding="utf-8") as fh:
        fh.write('{"info": ' + json.dumps(info) + ', "questions": [')
        for question in questions:
            if isinstance(question, str):
                # '{..."cot": ...}' -> '{..., "question_index": n}', as json.dumps would write it
                text = f'{question[:-1]}, "question_index": {count}}}'
            else:
                question["question_index"] = count
                text = json.dumps(question)
            fh.write((", " if count else "") + text)
            wait_point("question-written")
            count += 1
        fh.write("]}")
    out.add([path.name])
    return count


def check_parquet_folder(out: OutputFolder) -> None:
    """Refuse, before any work, an ``index.json`` or shard-named file in ``out`` that is not ours.

    >>> with OutputFolder.open(tempfile.mkdtemp(), command=COMMAND) as out:
    ...     check_parquet_folder(out)     # an empty folder is fine
    """
    for name in [INDEX_NAME] + sorted(p.name for p in out.root.glob("questions-*-of-*.parquet")):
        out.check(name)


def write_questions_parquet(
    folder: str | os.PathLike,
    info: dict,
    shards: Iterable[tuple[tuple[int, int], object]],
    num_shards: int,
    *,
    overwrite: bool = False,
    out: OutputFolder | None = None,
) -> int:
    """Write ``num_shards`` Parquet shards of ``((scene_start, scene_stop), table)`` and ``index.json``.

    >>> folder = tempfile.mkdtemp()
    >>> write_questions_parquet(folder, {"split": "val"}, [((0, 1), questions_table([]))], 1)
    0
    >>> sorted(os.listdir(folder))     # with the folder's record of what we wrote
    ['.ownership.json', 'index.json', 'questions-00000-of-00001.parquet']
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if out is None:
        with OutputFolder.open(folder, command=COMMAND, overwrite=overwrite) as out:
            return write_questions_parquet(folder, info, shards, num_shards, out=out)
    check_parquet_folder(out)
    entries, count = [], 0
    for k, ((start, stop), table) in enumerate(shards):
        name = shard_name(k, num_shards)
        table = table.append_column("question_index", pa.array(range(count, count + table.num_rows), pa.int64()))
        pq.write_table(table, out.stage / name)
        wait_point("shard-written")
        entries.append({"file": name, "scene_start": start, "scene_stop": stop,
                        "num_questions": table.num_rows, "first_question_index": count})
        count += table.num_rows
    if len(entries) != num_shards:
        raise ValueError(f"{folder}: expected {num_shards} shards, got {len(entries)}")
    index = {"format": "clevr-questions-parquet", "version": 1, "info": info, "num_questions": count,
             "shards": entries}
    (out.stage / INDEX_NAME).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    stale = [path for path, entry in out.record.items() if entry.command == COMMAND]
    out.add([entry["file"] for entry in entries] + [INDEX_NAME], remove=stale)
    return count
