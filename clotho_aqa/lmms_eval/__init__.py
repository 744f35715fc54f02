"""lmms-eval task for Clotho-AQA: ``clotho_aqa_questions`` (tag ``ccqa_clotho_aqa``), every labelling at once.

One row per question (config ``questions``); the metrics are the binary accuracy on the
unfiltered, unanimous, majority and any-of-3 labellings and single-word top-1 accuracy on
the same four, scored by :data:`clotho_aqa.scoring.SPEC` like ``clotho-aqa
evaluate`` and the rewards; standard errors clustered by clip. The tag is not ``clotho_aqa``:
that is lmms-eval's own group (over ``lmms-lab-audio/ClothoAQA``), which wins ``--tasks
clotho_aqa``. The shipped folder names no dataset; :func:`write_tasks` writes a copy that reads
your export or Hub repository::

    python -c "from clotho_aqa.lmms_eval import write_tasks as w; w('tasks/clotho_aqa', 'demo_output/clotho_aqa/hub')"
    lmms-eval --model ... --tasks ccqa_clotho_aqa --include_path tasks

Example:
    >>> TASK_DIR.name
    'lmms_eval'
"""

from __future__ import annotations

import os
from pathlib import Path

from builder_utils.evaluation.lmms import write_task_folder

TASK_DIR = Path(__file__).resolve().parent
TAG = "ccqa_clotho_aqa"


def write_tasks(out_dir: str | os.PathLike, dataset_path: str | os.PathLike) -> Path:
    """Copy this task to ``out_dir``, reading ``dataset_path``: an exported folder (written
    absolute, so the copy works from any working folder) or a Hub repository id. Returns ``out_dir``.

    Example::

        write_tasks("tasks/clotho_aqa", "my-name/clotho-aqa")
        # -> PosixPath('tasks/clotho_aqa')
    """
    return write_task_folder(TASK_DIR, out_dir, dataset_path)
