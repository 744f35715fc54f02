"""lmms-eval task for Clotho-AQA: ``clotho_aqa_questions`` (tag ``ccqa_clotho_aqa``), every labelling at once.

The tag is not ``clotho_aqa``: that is lmms-eval's own group, which wins ``--tasks clotho_aqa``.
:func:`write_tasks` writes a copy that reads your export (builder_utils/evaluation/README.md, lmms-eval section).
"""

from __future__ import annotations

from clotho_aqa.cli import ENTRY

TASK_DIR, TAG, write_tasks = ENTRY.task_dir, ENTRY.lmms_tag, ENTRY.write_tasks
