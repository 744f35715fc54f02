"""The CLEVR-Math dataset builder.

Example (``data_dir``: an unzipped CLEVR_v1.0, or ``clevr-math synth --out DIR``)::

    from clevr_math import ClevrMath
    builder = ClevrMath(config_name="general", data_dir="CLEVR_v1.0")
    builder.download_and_prepare()
    ds = builder.as_dataset()

A stream of fresh problems (synthetic worlds rendered on the fly, or a CLEVR folder)::

    from clevr_math import Curriculum, stream
    ds = stream(seed=0, curriculum=Curriculum.raising("num_operations", [1, 2, 4, 8], every=100))

A fixed-size problem set (``len(ds)``, ``ds[i]``: the first problems of a one-shard stream)::

    from clevr_math import problems
    ds = problems(size=1000, seed=0, num_operations=2)

The reference (configurations, columns, options, what differs from the original release) is
``README.md`` beside this file.
"""


from builder_utils.lazy import lazy_exports

# Imported on first use (builder_utils/lazy.py): the scorers and lmms-eval tasks stay light.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "AdaptiveCurriculum": "clevr_math.difficulty",
    "ClevrMath": "clevr_math.clevr_math",
    "BUILDER_CONFIGS": "clevr_math.config",
    "CATEGORIES": "clevr_math.categories",
    "ClevrMathConfig": "clevr_math.config",
    "ConfigError": "clevr_math.config",
    "Curriculum": "clevr_math.difficulty",
    "Difficulty": "clevr_math.difficulty",
    "StreamError": "clevr_math.streaming",
    "problems": "clevr_math.problem_sets",
    "stream": "clevr_math.streaming",
})
