"""The chat model package of tests/test_lmms_eval_harness.py; it needs lmms-eval (``make test-harness``).

Without lmms-eval (``make test``, the shared venv) the package is not collected for doctests.
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("lmms_eval") else ["ccqa_chat"]
