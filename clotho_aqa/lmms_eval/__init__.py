"""lmms-eval task for Clotho-AQA: ``clotho_aqa_questions``, every labelling of the paper at once.

One row per question (config ``questions``); the metrics are the paper's binary accuracy on the
unfiltered, unanimous and majority labellings and single-word top-1 accuracy (unfiltered and
majority), scored by :mod:`clotho_aqa.evaluate` like ``clotho-aqa evaluate``. The default
``dataset_path`` is the demo's export, ``demo_output/clotho_aqa/hub``::

    lmms-eval --model ... --tasks clotho_aqa_questions --include_path "$(python -c 'import clotho_aqa.lmms_eval as t; print(t.TASK_DIR)')"
    python -c "from clotho_aqa.lmms_eval import write_tasks; write_tasks('my_tasks', 'my-name/clotho-aqa')"

Example:
    >>> TASK_DIR.name
    'lmms_eval'
"""

from __future__ import annotations

import os
from pathlib import Path

from builder_utils.evaluation.lmms import write_task_folder

TASK_DIR = Path(__file__).resolve().parent


def write_tasks(out_dir: str | os.PathLike, dataset_path: str) -> Path:
    """Copy this task to ``out_dir``, reading ``dataset_path`` (an exported folder or a repo id).

    Example::

        write_tasks("my_tasks", "my-name/clotho-aqa")
        # -> PosixPath('my_tasks')
    """
    return write_task_folder(TASK_DIR, out_dir, dataset_path)
