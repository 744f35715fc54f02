"""lmms-eval task for Clotho-AQA: ``clotho_aqa_questions`` (tag ``ccqa_clotho_aqa``), every labelling at once.

One row per question (config ``questions``); the metrics are the binary accuracy on the
unfiltered, unanimous, majority and any-of-3 labellings and single-word top-1 accuracy on
the same four, scored by :data:`clotho_aqa.scoring.SPEC` like ``clotho-aqa
evaluate`` and the rewards; standard errors clustered by clip. The tag is not ``clotho_aqa``:
that is lmms-eval's own group (over ``lmms-lab-audio/ClothoAQA``), which wins ``--tasks
clotho_aqa``. :func:`write_tasks` (:meth:`builder_utils.entry.DatasetEntry.write_tasks`) writes a
copy that reads your export or Hub repository::

    python -c "from clotho_aqa.lmms_eval import write_tasks as w; w('tasks/clotho_aqa', 'demo_output/clotho_aqa/hub')"
    lmms-eval --model ... --tasks ccqa_clotho_aqa --include_path tasks
"""

from __future__ import annotations

from clotho_aqa.cli import ENTRY

TASK_DIR, TAG, write_tasks = ENTRY.task_dir, ENTRY.lmms_tag, ENTRY.write_tasks
