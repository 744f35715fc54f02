"""lmms-eval task for Clotho-AQA: ``clotho_aqa_questions`` (tag ``ccqa_clotho_aqa``), every labelling at once.

The tag is not ``clotho_aqa``: lmms-eval's own group of that name wins ``--tasks clotho_aqa`` (evaluation README).
"""

from __future__ import annotations

from clotho_aqa.cli import ENTRY

TASK_DIR, TAG, write_tasks = ENTRY.task_dir, ENTRY.lmms_tag, ENTRY.write_tasks
