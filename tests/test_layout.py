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


# -- the import graph: static, from the AST of every module (imports inside functions included) --

PACKAGES = ("builder_utils", "clevr_math", "clotho_aqa")


def _modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (path, is a package's __init__)}`` of every module of the packages."""
    found = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the modules of the packages it imports (``from a import b``: ``a.b`` when that is
    a module, else ``a``); relative imports resolved; imports of other packages left out."""
    modules = _modules(root)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        here = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = ".".join(filter(None, (anchor, node.module)))
                submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
                targets = submodules or [base]
            else:
                continue
            graph[name].update(t for t in map(known, targets) if t is not None and t != name)
    return graph


def package_graph(graph: dict[str, set[str]], root: Path = ROOT) -> dict[str, set[str]]:
    """The same graph between packages (``builder_utils``, ``builder_utils.hub``, ``clevr_math`` ...)."""
    modules = _modules(root)

    def package(name: str) -> str:
        return name if modules[name][1] else name.rpartition(".")[0]

    packages: dict[str, set[str]] = {package(name): set() for name in graph}
    for name, targets in graph.items():
        packages[package(name)].update(package(t) for t in targets if package(t) != package(name))
    return packages


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for target in graph[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    return seen


def test_the_graph_sees_relative_function_level_and_cyclic_imports(tmp_path):
    package = tmp_path / "clevr_math"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from . import b\n")
    (package / "b.py").write_text("from .a import f\nimport os\n")
    graph = import_graph(tmp_path)
    assert graph == {"clevr_math": set(), "clevr_math.a": {"clevr_math.b"}, "clevr_math.b": {"clevr_math.a"}}
    assert cycles(graph) == [["clevr_math.a", "clevr_math.b"]]


def test_no_import_cycle_between_modules():
    assert cycles(import_graph()) == []


def test_no_import_cycle_between_packages():
    assert cycles(package_graph(import_graph())) == []


def test_clotho_aqa_never_imports_the_clevr_package():
    graph = import_graph()
    for module in (name for name in graph if name.split(".")[0] == "clotho_aqa"):
        clevr = {name for name in reachable(graph, module) if name.startswith("builder_utils.clevr")}
        assert clevr == set(), f"{module} imports {sorted(clevr)}"
