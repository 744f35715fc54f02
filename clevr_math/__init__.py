"""The CLEVR-Math dataset builder.

Example (``data_dir``: an unzipped CLEVR_v1.0, or ``clevr-math synth --out DIR``)::

    from clevr_math import ClevrMath
    builder = ClevrMath(config_name="general", data_dir="CLEVR_v1.0")
    builder.download_and_prepare()
    ds = builder.as_dataset()

A stream of fresh problems (synthetic worlds rendered on the fly, or a CLEVR folder)::

    from clevr_math import Curriculum, stream
    ds = stream(seed=0, curriculum=Curriculum.raising("num_operations", [1, 2, 4, 8], every=100))

The reference (configurations, columns, options, what differs from the original release) is
``README.md`` beside this file.
"""

from clevr_math.clevr_math import ClevrMath
from clevr_math.config import BUILDER_CONFIGS, CATEGORIES, ClevrMathConfig, ConfigError
from clevr_math.difficulty import Curriculum, Difficulty
from clevr_math.streaming import StreamError, stream

__all__ = ["BUILDER_CONFIGS", "CATEGORIES", "ClevrMath", "ClevrMathConfig", "ConfigError", "Curriculum", "Difficulty",
           "StreamError", "stream"]
