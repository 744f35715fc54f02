"""lmms-eval task folders written out to read one export, and what their ``utils.py`` share.

README.md (this package), "lmms-eval". Nothing here imports lmms-eval (optional).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any


__all__ = ["mean_score", "sample_record", "task_files", "user_turn", "write_task_folder"]

_DATASET_PATH = re.compile(r"^dataset_path:.*$", re.MULTILINE)
COMMAND = "write_tasks"
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?")


def task_files(task_dir: str | os.PathLike) -> list[Path]:
    """The files of a task folder: YAML definitions, the shared template, ``utils.py``.

    Example:
        >>> from clevr_math.lmms_eval import TASK_DIR
        >>> sorted(p.name for p in task_files(TASK_DIR))[:2]
        ['_default_template_yaml', 'clevr_math_general.yaml']
    """
    folder = Path(task_dir)
    return sorted(p for p in folder.iterdir()
                  if p.suffix == ".yaml" or p.name == "_default_template_yaml" or p.name == "utils.py")


def write_task_folder(task_dir: str | os.PathLike, out_dir: str | os.PathLike,
                      dataset_path: str | os.PathLike) -> Path:
    """Copy the task folder to ``out_dir``, every ``dataset_path:`` set to a folder (absolute) or Hub id.

    Through :mod:`builder_utils.ownership`: a later call replaces only its own files, unchanged;
    else a ValueError naming the file, and nothing is written.

    Example:
        >>> import tempfile; from clevr_math.lmms_eval import TASK_DIR
        >>> out = write_task_folder(TASK_DIR, tempfile.mkdtemp(), "my-name/clevr-math")
        >>> 'dataset_path: "my-name/clevr-math"' in (out / "_default_template_yaml").read_text()
        True
    """
    from builder_utils.ownership import OutputFolder

    out = Path(out_dir)
    local = Path(dataset_path).expanduser()
    if local.is_dir():
        target = str(local.resolve())
    elif _HUB_ID.fullmatch(os.fspath(dataset_path)):
        target = os.fspath(dataset_path)
    else:
        raise ValueError(f"dataset_path {os.fspath(dataset_path)!r} is neither an existing folder nor a Hub "
                         "repository id (owner/name)")
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: not a folder; write_tasks writes a task folder there")
    sources = task_files(task_dir)
    # JSON strings are YAML strings: a path with ': ' or '#' stays one value.
    line = f"dataset_path: {json.dumps(target)}"
    with OutputFolder.open(out, command=COMMAND, flag="out_dir", inputs={"task_dir": task_dir}) as folder:
        for source in sources:
            folder.check(source.name)  # not written by write_tasks, or changed since: nothing is written
            text = source.read_text(encoding="utf-8")
            if source.name != "utils.py":
                text = _DATASET_PATH.sub(lambda _: line, text)
            (folder.stage / source.name).write_text(text, encoding="utf-8")
        folder.add([source.name for source in sources])
    return out


def user_turn(text: str, images: Sequence[Any] = (), audios: Sequence[Any] = ()) -> list[dict]:
    """One question as lmms-eval's chat protocol has it: a user turn of images, audio clips, then the text.

    Example:
        >>> user_turn("Is it raining?", audios=["clip"])
        [{'role': 'user', 'content': [{'type': 'audio', 'url': 'clip'}, {'type': 'text', 'text': 'Is it raining?'}]}]
    """
    content = [{"type": "image", "url": image} for image in images]
    content += [{"type": "audio", "url": audio} for audio in audios]
    content.append({"type": "text", "text": text})
    return [{"role": "user", "content": content}]


def sample_record(correct: Sequence[bool], **fields: Any) -> dict:
    """A question's record for one metric; ``score`` (what lmms-eval's standard errors read) only with a
    target, so that lmms-eval leaves the others out. ``fields`` carry the cluster key.

    Example:
        >>> sample_record([True, False, True], file_name="a.wav")
        {'file_name': 'a.wav', 'correct': 2, 'targets': 3, 'score': 0.6666666666666666}
        >>> sample_record([], file_name="a.wav")
        {'file_name': 'a.wav', 'correct': 0, 'targets': 0}
    """
    record = {**fields, "correct": sum(correct), "targets": len(correct)}
    if correct:
        record["score"] = record["correct"] / len(correct)
    return record


def mean_score(records: Iterable[Mapping]) -> float | None:
    """The accuracy over every target of the records (None without any), as ``evaluate`` counts.

    Example:
        >>> mean_score([sample_record([True]), sample_record([True, False, False]), sample_record([])])
        0.5
    """
    correct = targets = 0
    for record in records:
        correct += record["correct"]
        targets += record["targets"]
    return correct / targets if targets else None
