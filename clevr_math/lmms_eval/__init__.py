"""lmms-eval tasks for CLEVR-Math: ``clevr_math_general`` and ``clevr_math_multihop`` (group ``clevr_math``).

They read the exported dataset (default ``dataset_path``: the demo's export,
``demo_output/clevr_math/hub``) and score with :mod:`clevr_math.evaluate` (integer extraction,
accuracy per category). Run them with lmms-eval installed::

    lmms-eval --model ... --tasks clevr_math_multihop --include_path "$(python -c 'import clevr_math.lmms_eval as t; print(t.TASK_DIR)')"

For another export or a Hub repository, copy the folder with the path replaced::

    python -c "from clevr_math.lmms_eval import write_tasks; write_tasks('my_tasks', 'my-name/clevr-math')"
    lmms-eval --model ... --tasks clevr_math --include_path my_tasks

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
    """Copy these tasks to ``out_dir``, reading ``dataset_path`` (an exported folder or a repo id).

    Example::

        write_tasks("my_tasks", "my-name/clevr-math")
        # -> PosixPath('my_tasks')
    """
    return write_task_folder(TASK_DIR, out_dir, dataset_path)
