"""The CLEVR-Math dataset builder.

Example:
    >>> from clevr_math import ClevrMath
    >>> builder = ClevrMath(config_name="general", data_dir="CLEVR_v1.0")  # doctest: +SKIP
    >>> builder.download_and_prepare()                                      # doctest: +SKIP
"""

from clevr_math.clevr_math import ClevrMath
from clevr_math.config import BUILDER_CONFIGS, CATEGORIES, ClevrMathConfig, ConfigError

__all__ = ["BUILDER_CONFIGS", "CATEGORIES", "ClevrMath", "ClevrMathConfig", "ConfigError"]
