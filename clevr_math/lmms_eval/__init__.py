"""lmms-eval tasks for CLEVR-Math: ``clevr_math_general`` and ``clevr_math_multihop`` (tag ``ccqa_clevr_math``).

Tags start with ``ccqa_``, so none is a task or group lmms-eval ships (builder_utils/evaluation/README.md).
"""

from __future__ import annotations

from clevr_math.cli import ENTRY

TASK_DIR, TAG, write_tasks = ENTRY.task_dir, ENTRY.lmms_tag, ENTRY.write_tasks
