"""Writing generated questions: one CLEVR-style JSON file, or a folder of Parquet shards.

JSON (the default, what the released CLEVR question files look like)::

    {"info": <the scene file's info>, "questions": [{..., "question_index": 0}, ...]}

Parquet (for large outputs, one shard per group of balancing windows)::

    DIR/questions-00000-of-00003.parquet ...    the questions, ``question_index`` last
    DIR/index.json                               info, and per shard its scenes and questions

The shards load with ``datasets.load_dataset("parquet", data_files="DIR/*.parquet")``, in
order (the names sort). Every file goes through :mod:`builder_utils.ownership` and appears
complete or not at all: written in a hidden staging folder and moved into place (a killed run's
staging is removed by the next one). JSON: the file's ``info`` records our generator
(:data:`GENERATED_BY`), and only such a file is replaced without ``overwrite``. Parquet: the
folder's record lists the shards and the index we wrote; a user's ``index.json`` or a file at a
shard name is refused unless ``overwrite``, and stale shards of our previous run are removed
while unchanged. Nothing else in the folder is touched.
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
    "written_by_generator",
    "question_schema",
    "questions_table",
    "shard_name",
    "write_questions",
    "write_questions_parquet",
]

INDEX_NAME = "index.json"
COMMAND = "generate-questions"
#: The mark our generator puts in a JSON output's ``info`` (issue 24: a file carrying it is
#: replaced without ``--overwrite``, as the original generator replaces its output).
GENERATED_BY = "builder_utils generate-questions"
_HEAD = 1 << 16
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


def written_by_generator(path: str | os.PathLike) -> bool:
    """Whether the JSON file at ``path`` is a question file our generator wrote (its ``info``
    carries :data:`GENERATED_BY`); only the start of the file is read.

    >>> folder = tempfile.mkdtemp()
    >>> _ = write_questions(os.path.join(folder, "q.json"), {"generated_by": GENERATED_BY}, [])
    >>> written_by_generator(os.path.join(folder, "q.json")), written_by_generator(folder)
    (True, False)
    """
    prefix = '{"info": '
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(_HEAD)
        if not head.startswith(prefix):
            return False
        info, _ = json.JSONDecoder().raw_decode(head, len(prefix))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(info, dict) and info.get("generated_by") == GENERATED_BY


def write_questions(path: str | os.PathLike, info: dict, questions: Iterable[dict | str], *,
                    overwrite: bool = False) -> int:
    """Stream ``{"info": info, "questions": [...]}`` to ``path`` through a staging folder beside
    it (moved into place when complete), adding each question's ``question_index`` (last key).
    Questions are dicts or their ``json.dumps`` text. The bytes equal ``json.dumps`` of the
    whole document. An existing file is replaced only when our generator wrote it
    (:func:`written_by_generator`) or with ``overwrite``. Returns the number written.

    >>> folder = tempfile.mkdtemp()
    >>> write_questions(os.path.join(folder, "q.json"), {"split": "val"}, [{"question": "Q?"}])
    1
    """
    path = Path(path)
    count = 0
    with OutputFolder(path.parent, COMMAND, single_file=True) as out:
        out.check_target(path.name, overwrite, ours=written_by_generator)
        staging = out.staging()
        with out.writing(), open(staging / path.name, "w", encoding="utf-8") as fh:
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
        out.commit(staging, {path.name: None}, overwrite=overwrite, ours=written_by_generator)
    return count


def check_parquet_folder(folder: str | os.PathLike, overwrite: bool = False) -> None:
    """Refuse an output folder we may not write into: a file, a symlink, a folder whose record
    cannot be trusted, or (unless ``overwrite``) one holding an ``index.json`` or a file at a
    shard name that we did not write. Raises an ``OSError`` or ``ValueError`` naming it.

    >>> check_parquet_folder(tempfile.mkdtemp())     # an empty folder is fine
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise FileExistsError(f"{folder}: --output_format parquet writes a folder, and this is a file")
    if not folder.is_dir():
        return
    out = OutputFolder(folder, COMMAND)
    out.read()
    for name in [INDEX_NAME] + sorted(p.name for p in folder.glob("questions-*-of-*.parquet")):
        out.check_target(name, overwrite)


def write_questions_parquet(
    folder: str | os.PathLike,
    info: dict,
    shards: Iterable[tuple[tuple[int, int], object]],
    num_shards: int,
    *,
    overwrite: bool = False,
) -> int:
    """Write ``num_shards`` Parquet shards and ``index.json`` into ``folder``; returns the
    number of questions. ``shards`` yields ``((scene_start, scene_stop), table)`` in order,
    each table from :func:`questions_table`; ``question_index`` is added here.

    >>> folder = tempfile.mkdtemp()
    >>> write_questions_parquet(folder, {"split": "val"}, [((0, 1), questions_table([]))], 1)
    0
    >>> sorted(os.listdir(folder))     # with the folder's record of what we wrote
    ['.ownership.json', 'index.json', 'questions-00000-of-00001.parquet']
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    with OutputFolder(folder, COMMAND) as out:
        out.check_target(INDEX_NAME, overwrite)
        staging = out.staging()
        entries, count = [], 0
        with out.writing():
            for k, ((start, stop), table) in enumerate(shards):
                name = shard_name(k, num_shards)
                out.check_target(name, overwrite)
                table = table.append_column("question_index", pa.array(range(count, count + table.num_rows), pa.int64()))
                pq.write_table(table, staging / name)
                wait_point("shard-written")
                entries.append({"file": name, "scene_start": start, "scene_stop": stop,
                                "num_questions": table.num_rows, "first_question_index": count})
                count += table.num_rows
            if len(entries) != num_shards:
                raise ValueError(f"{folder}: expected {num_shards} shards, got {len(entries)}")
            index = {"format": "clevr-questions-parquet", "version": 1, "info": info, "num_questions": count,
                     "shards": entries}
            (staging / INDEX_NAME).write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
        written = dict.fromkeys([entry["file"] for entry in entries] + [INDEX_NAME])
        stale = [path for path, entry in out.record.items() if entry.command == COMMAND]
        out.commit(staging, written, remove=stale, overwrite=overwrite)
    return count
