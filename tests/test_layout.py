"""The shared core imports neither builder: what is specific to a builder is declared by it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILDERS = {"clevr_math", "clotho_aqa"}


def imported_packages(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__" and node.args:
            if isinstance(node.args[0], ast.Constant):
                names.add(str(node.args[0].value).split(".")[0])
    return names


def test_the_check_sees_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom clevr_math.config import X\nfrom . import y\n")
    assert imported_packages(module) == {"os", "clevr_math"}


@pytest.mark.parametrize("path", sorted((ROOT / "builder_utils").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_builder_utils_imports_no_builder(path):
    assert imported_packages(path) & BUILDERS == set()
