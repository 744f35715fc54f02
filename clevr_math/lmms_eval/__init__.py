"""lmms-eval tasks for CLEVR-Math: ``clevr_math_general`` and ``clevr_math_multihop`` (tag ``ccqa_clevr_math``).

The shipped folder names no dataset; :func:`write_tasks` writes a copy that reads your export or
Hub repository, and lmms-eval reads the copy. Scored by :data:`clevr_math.scoring.SPEC`, like
``clevr-math evaluate`` and the rewards; standard errors clustered by image. Tags start with
``ccqa_`` (this package, clevr-clotho-qa) so that none is the name of a task or group that
lmms-eval ships::

    python -c "from clevr_math.lmms_eval import write_tasks as w; w('tasks/clevr_math', 'demo_output/clevr_math/hub')"
    lmms-eval --model ... --tasks clevr_math_multihop --include_path tasks

Example:
    >>> TASK_DIR.name
    'lmms_eval'
"""

from __future__ import annotations

import os
from pathlib import Path

from builder_utils.evaluation.lmms import write_task_folder

TASK_DIR = Path(__file__).resolve().parent
TAG = "ccqa_clevr_math"


def write_tasks(out_dir: str | os.PathLike, dataset_path: str | os.PathLike) -> Path:
    """Copy these tasks to ``out_dir``, reading ``dataset_path``: an exported folder (written
    absolute, so the copy works from any working folder) or a Hub repository id. Returns ``out_dir``.

    Example::

        write_tasks("tasks/clevr_math", "my-name/clevr-math")
        # -> PosixPath('tasks/clevr_math')
    """
    return write_task_folder(TASK_DIR, out_dir, dataset_path)
