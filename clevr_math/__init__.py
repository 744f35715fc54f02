"""The CLEVR-Math dataset builder, its stream and problem sets (reference: ``README.md`` beside this file).

Example::

    from clevr_math import ClevrMath
    builder = ClevrMath(config_name="general", data_dir="CLEVR_v1.0")
    builder.download_and_prepare()
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
    "evaluate": "clevr_math.evaluation",
    "figure": "clevr_math.figures",
    "problems": "clevr_math.problem_sets",
    "stream": "clevr_math.streaming",
    "write_evaluation": "clevr_math.evaluation",
})
