"""``clevr_math/clevr_math.py`` and ``clotho_aqa/clotho_aqa.py`` as loading scripts under datasets 3.6.

The check runs in a separate environment pinned to ``datasets==3.6.0``: ``make test-legacy``
creates ``.venv-legacy`` and runs ``tests/legacy/check_legacy_script.py`` in it. When that
environment exists, this test runs the same check as part of the suite.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY_PYTHON = os.path.join(REPO, ".venv-legacy", "bin", "python")
CHECK = os.path.join(REPO, "tests", "legacy", "check_legacy_script.py")


@pytest.mark.skipif(not os.path.exists(LEGACY_PYTHON), reason="no .venv-legacy; `make test-legacy` creates it")
def test_loading_script_under_datasets_3_6(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "PYTHON"))}
    result = subprocess.run(
        [LEGACY_PYTHON, CHECK, "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "legacy loading script OK (datasets 3.6" in result.stdout


@pytest.mark.parametrize("package", ["clevr_math", "clotho_aqa"])
def test_the_builder_module_imports_only_installed_packages_absolutely(package):
    """A loading script is copied alone into a modules cache: a relative import, or a file
    looked up beside ``__file__``, would break."""
    with open(os.path.join(REPO, package, f"{package}.py"), encoding="utf-8") as fh:
        source = fh.read()
    assert "__file__" not in source
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import at line {node.lineno}"
            top = node.module.split(".")[0]
        elif isinstance(node, ast.Import):
            top = node.names[0].name.split(".")[0]
        else:
            continue
        assert top in sys.stdlib_module_names or top in {"datasets", "pyarrow", "builder_utils", package}, top
