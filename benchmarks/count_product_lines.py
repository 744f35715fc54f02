"""Product lines: the package code that ships, for "product lines go down" (issue 31).

    .venv/bin/python benchmarks/count_product_lines.py [CHECKOUT ...]

Counted: every ``.py`` file under ``builder_utils/``, ``clevr_math/`` and ``clotho_aqa/`` (the
packages ``setup.cfg`` installs), non-blank lines, with the docstring lines among them shown
apart. Not counted: ``tests/``, ``benchmarks/``, ``docs/``, ``examples/``, the READMEs, and
data the packages ship (the template JSON, metadata, YAML of the lmms-eval tasks): they are
not code a change to the structure can shorten. With no argument, this checkout is counted.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGES = ("builder_utils", "clevr_math", "clotho_aqa")


def docstring_lines(source: str) -> int:
    """Non-blank lines inside the docstrings of a module, its classes and functions.

    Example:
        >>> docstring_lines("'''One.\\n\\nTwo.'''\\ndef f():\\n    'doc'\\n    return 1\\n")
        3
    """
    count = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                lines = source.splitlines()[first.lineno - 1:first.end_lineno]
                count += sum(1 for line in lines if line.strip())
    return count


def count(checkout: Path) -> dict[str, int]:
    """``{"files", "lines", "docstring_lines"}`` of the product code in ``checkout`` (non-blank lines)."""
    files = lines = docs = 0
    for package in PACKAGES:
        for path in sorted((checkout / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            files += 1
            lines += sum(1 for line in source.splitlines() if line.strip())
            docs += docstring_lines(source)
    return {"files": files, "lines": lines, "docstring_lines": docs}


def main() -> None:
    checkouts = [Path(p) for p in sys.argv[1:]] or [Path(__file__).resolve().parent.parent]
    for checkout in checkouts:
        found = count(checkout)
        print(f"{checkout}: {found['lines']} product lines in {found['files']} files "
              f"({found['docstring_lines']} of them docstrings, {found['lines'] - found['docstring_lines']} without)")


if __name__ == "__main__":
    main()
