"""``builder_utils.datasets_adapter`` under the installed ``datasets`` (5.x): one test per use of its
internals (tests/datasets_adapter_checks.py; the legacy environment runs the same checks under 3.6);
and no other module of the package reaches below ``datasets``' top level."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from datasets_adapter_checks import CHECKS

ROOT = Path(__file__).resolve().parent.parent
# Submodules of datasets that are documented public API.
PUBLIC_SUBMODULES = {"datasets.distributed", "datasets.utils.logging"}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_datasets_internal(name):
    CHECKS[name]()


def test_only_the_adapter_imports_datasets_submodules():
    found = []
    for path in sorted(p for package in ("builder_utils", "clevr_math", "clotho_aqa") for p in (ROOT / package).rglob("*.py")):
        if path.name == "datasets_adapter.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            found += [f"{path.relative_to(ROOT)}: {name}" for name in names
                      if name.startswith("datasets.") and name not in PUBLIC_SUBMODULES]
    assert found == []
