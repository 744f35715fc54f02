"""No tasks: ``LMMS_EVAL_PLUGINS`` also adds each plugin's ``tasks`` package folder to the task paths."""
