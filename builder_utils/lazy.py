"""Package namespaces whose public names are imported on first use (PEP 562).

Importing a submodule runs its package's ``__init__``: without this, ``import
clevr_math.lmms_eval.utils`` (lmms-eval, per task) would pay for ``datasets`` and the whole builder.

Example:
    >>> import sys, types
    >>> pkg = sys.modules["pkg"] = types.ModuleType("pkg")
    >>> pkg.__all__, pkg.__getattr__, pkg.__dir__ = lazy_exports("pkg", {"dedent": "textwrap"})
    >>> pkg.dedent("  x"), pkg.__all__
    ('x', ['dedent'])
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[list[str], Callable, Callable]:
    """``(__all__, __getattr__, __dir__)`` for ``package``: each name is imported on first access, then kept.

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
