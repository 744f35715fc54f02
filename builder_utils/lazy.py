"""Package namespaces whose public names are imported on first use (PEP 562).

Importing any submodule runs its package's ``__init__``; when that ``__init__`` imports the
builder, ``import clevr_math.lmms_eval.utils`` (what lmms-eval does for each task) pays for
``datasets`` and the whole builder. A package built with :func:`lazy_exports` imports a public
name's module only when the name is first read, so its light submodules stay light.

Example:
    >>> import sys, types
    >>> pkg = sys.modules["pkg"] = types.ModuleType("pkg")
    >>> pkg.__all__, pkg.__getattr__, pkg.__dir__ = lazy_exports("pkg", {"dedent": "textwrap"})
    >>> pkg.dedent("  x"), pkg.__all__
    ('x', ['dedent'])
    >>> "dedent" in vars(pkg), "dedent" in pkg.__dir__()
    (True, True)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[list[str], Callable, Callable]:
    """``(__all__, __getattr__, __dir__)`` for the package named ``package``: each name of
    ``exports`` is read from the module it maps to on first access, then kept in the package's
    namespace (later reads are plain attribute reads).

    Example::

        # in pkg/__init__.py
        __all__, __getattr__, __dir__ = lazy_exports(__name__, {"Builder": "pkg.builder"})
    """

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return sorted(exports), __getattr__, __dir__
