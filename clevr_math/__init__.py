"""The CLEVR-Math dataset builder.

Example (``data_dir``: an unzipped CLEVR_v1.0, or ``clevr-math synth --out DIR``)::

    from clevr_math import ClevrMath
    builder = ClevrMath(config_name="general", data_dir="CLEVR_v1.0")
    builder.download_and_prepare()
    ds = builder.as_dataset()

The reference (configurations, columns, options, what differs from the original release) is
``README.md`` beside this file.
"""


import sys

from builder_utils.lazy import lazy_exports

# Imported on first use: the lmms-eval task utilities and the scorers import submodules of this
# package without paying for the builder and ``datasets``.
_EXPORTS = {
    "ClevrMath": "clevr_math.clevr_math",
    "BUILDER_CONFIGS": "clevr_math.config",
    "CATEGORIES": "clevr_math.categories",
    "ClevrMathConfig": "clevr_math.config",
    "ConfigError": "clevr_math.config",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(sys.modules[__name__], _EXPORTS)
