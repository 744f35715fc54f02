"""lmms-eval task folders shipped in the packages, and copies that point at another dataset.

A task folder holds YAML task definitions (``dataset_path`` names an exported folder or a Hub
repository) and the ``utils.py`` their ``!function`` entries name. lmms-eval reads a folder given
with ``--include_path``; :func:`write_task_folder` copies one with ``dataset_path`` replaced, so
the same tasks run on your own export or repository. lmms-eval itself is optional: nothing here
imports it.

Example:
    >>> import tempfile
    >>> from clevr_math.lmms_eval import TASK_DIR
    >>> out = write_task_folder(TASK_DIR, tempfile.mkdtemp(), "my-name/clevr-math")
    >>> "dataset_path: my-name/clevr-math" in (out / "_default_template_yaml").read_text()
    True
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from builder_utils.atomic import write_atomic

__all__ = ["task_files", "write_task_folder"]

_DATASET_PATH = re.compile(r"^dataset_path:.*$", re.MULTILINE)


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


def write_task_folder(task_dir: str | os.PathLike, out_dir: str | os.PathLike, dataset_path: str) -> Path:
    """Copy the task folder to ``out_dir`` with every ``dataset_path:`` set to ``dataset_path``
    (an exported folder, made absolute, or a Hub repository id). Returns ``out_dir``.

    Example::

        write_task_folder(TASK_DIR, "my_tasks", "hub/clevr_math")
        # -> PosixPath('my_tasks')
    """
    out = Path(out_dir)
    local = Path(dataset_path).expanduser()
    target = str(local.resolve()) if local.exists() else dataset_path
    for path in task_files(task_dir):
        text = path.read_text(encoding="utf-8")
        if path.name != "utils.py":
            text = _DATASET_PATH.sub(f"dataset_path: {target}", text)
        write_atomic(out / path.name, text)
    return out
