"""The typed configuration of the CLEVR-Math builder and its predefined configurations.

A configuration says *how* questions are made (template set, seed, generator knobs) and *how*
they are split (which category, if any, is held out for the test split). Everything is checked
in ``__post_init__`` and again by :meth:`ClevrMathConfig.validate` after ``datasets`` has
overwritten fields with user keyword arguments (``datasets`` does that with ``setattr``, which
skips ``__post_init__``).
"""

from __future__ import annotations

import dataclasses
import os

import datasets

from builder_utils.builder import ConfigError
from builder_utils.clevr.options import GeneratorOptions
from builder_utils.options import Integer, builder_fields, check_options, option_names
from clevr_math.categories import CATEGORIES


# The shipped template sets a CLEVR-Math configuration may name (the generator also ships "clevr").
CLEVR_MATH_TEMPLATE_SETS: tuple[str, ...] = ("clevr_math", "clevr_math_chains")

# The generator options a configuration sets (seed, templates_per_image, instances_per_template,
# reset_counts_every, question_types, add_post_prompt, max_answer, bound_intermediate_counts):
# declared, checked and documented once in builder_utils/clevr/options.py; only the default
# answer cap is CLEVR-Math's own (the paper's answers are 0-10).
GeneratorFields = builder_fields("GeneratorFields", GeneratorOptions, max_answer=10)

# Fields that describe the dataset content; they feed the cache hash and the error messages.
CONTENT_FIELDS: tuple[str, ...] = (
    "template_set",
    "holdout_category",
    *option_names(cls=GeneratorOptions, builder=True),
    "max_operations",
    "released_questions_dir",
)


@dataclasses.dataclass
class ClevrMathConfig(GeneratorFields, datasets.BuilderConfig):
    """Configuration of :class:`clevr_math.ClevrMath`.

    Attributes:
        template_set: ``"clevr_math"`` (the 13 CLEVR-Math templates), ``"clevr_math_chains"``
            (longer chains of operations), or a path to a folder of template files.
        holdout_category: when set, questions of this category go only to the test split and
            the test split holds only them (``"multihop"`` gives the paper's zero-shot setting).
        max_operations: keep only templates with at most this many arithmetic operations
            (``chains``: 5, the longest committed chains).
        released_questions_dir: read the originally released ``clevr-math-{train,val,test}.json``
            from this folder instead of regenerating questions (for comparability).
        seed, templates_per_image, ...: the generator options of :data:`GeneratorFields`
            (``max_answer`` 10, the others as the generator's); ``reset_counts_every`` is also
            the shard size for ``num_proc`` (sharding on these windows is exact).

    Example:
        >>> ClevrMathConfig(name="mine", seed=3, templates_per_image=5).seed
        3
    """

    template_set: str = "clevr_math"
    holdout_category: str | None = None
    max_operations: int | None = None
    released_questions_dir: str | None = None

    def __post_init__(self):
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Check every field; raise :class:`ConfigError` naming the field and the valid values.

        Example:
            >>> ClevrMathConfig(name="x").validate()  # defaults are valid
        """
        where = f"CLEVR-Math config {self.name!r}"
        if self.template_set not in CLEVR_MATH_TEMPLATE_SETS and not os.path.isdir(str(self.template_set)):
            raise ConfigError(
                f"{where}: unknown template_set {self.template_set!r}; valid: "
                f"{', '.join(CLEVR_MATH_TEMPLATE_SETS)} or a path to a folder of template files"
            )
        if self.holdout_category is not None and self.holdout_category not in CATEGORIES:
            raise ConfigError(
                f"{where}: unknown holdout_category {self.holdout_category!r}; "
                f"valid: None or one of {', '.join(CATEGORIES)}"
            )
        check_options(self, where=where, error=ConfigError)
        if self.max_operations is not None:
            # A filter, not a size (the longest shipped chain has 8 operations): any bound is cheap.
            try:
                Integer(1, maximum=1000)("max_operations", self.max_operations)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        if self.released_questions_dir is not None and not os.path.isdir(self.released_questions_dir):
            raise ConfigError(
                f"{where}: released_questions_dir {self.released_questions_dir!r} is not a folder; it must "
                "hold clevr-math-train.json, clevr-math-val.json and optionally clevr-math-test.json"
            )

    def content(self) -> dict:
        """The fields that determine the rows, as a plain dict (for hashing and display).

        Example:
            >>> ClevrMathConfig(name="x").content()["templates_per_image"]
            10
        """
        return {name: getattr(self, name) for name in CONTENT_FIELDS}


VERSION = datasets.Version("2.0.0")

BUILDER_CONFIGS: list[ClevrMathConfig] = [
    ClevrMathConfig(
        name="general",
        version=VERSION,
        description="Every CLEVR-Math template in every split.",
    ),
    ClevrMathConfig(
        name="multihop",
        version=VERSION,
        holdout_category="multihop",
        description="Single-hop questions in train and validation, multihop questions only in test.",
    ),
    ClevrMathConfig(
        name="chains",
        version=VERSION,
        template_set="clevr_math_chains",
        max_operations=5,
        bound_intermediate_counts=True,
        description="Longer chains of alternating removals and insertions (the paper's future work), every split.",
    ),
]

DEFAULT_CONFIG_NAME = "general"
