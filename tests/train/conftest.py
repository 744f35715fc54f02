"""tests/train/ runs real TRL trainers; it needs the venv of ``make test-train`` (torch, trl, transformers).

Without TRL (``make test``, the shared venv) the helper modules, which import transformers, are
not collected for doctests, and each test module skips itself with ``pytest.importorskip("trl")``.
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("trl") else ["tiny_models.py", "train_helpers.py"]
