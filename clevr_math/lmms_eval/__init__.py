"""lmms-eval tasks for CLEVR-Math: ``clevr_math_general`` and ``clevr_math_multihop`` (tag ``ccqa_clevr_math``).

Scored by :data:`clevr_math.scoring.SPEC`, like ``clevr-math evaluate`` and the rewards; standard
errors clustered by image. Tags start with ``ccqa_`` (this package, clevr-clotho-qa) so that none
is the name of a task or group that lmms-eval ships. :func:`write_tasks`
(:meth:`builder_utils.entry.DatasetEntry.write_tasks`) writes a copy that reads your export::

    python -c "from clevr_math.lmms_eval import write_tasks as w; w('tasks/clevr_math', 'demo_output/clevr_math/hub')"
    lmms-eval --model ... --tasks clevr_math_multihop --include_path tasks
"""

from __future__ import annotations

from clevr_math.cli import ENTRY

TASK_DIR, TAG, write_tasks = ENTRY.task_dir, ENTRY.lmms_tag, ENTRY.write_tasks
