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

from builder_utils.builder import ConfigError, check_int

# The paper's six question categories, in a fixed order: the ClassLabel ids depend on it.
CATEGORIES: tuple[str, ...] = (
    "remove_group",
    "remove_subset",
    "insertion",
    "count_backwards",
    "adversarial",
    "multihop",
)

TEMPLATE_SETS: tuple[str, ...] = ("clevr_math", "clevr_math_chains")

# Fields that describe the dataset content; they feed the cache hash and the error messages.
CONTENT_FIELDS: tuple[str, ...] = (
    "template_set",
    "holdout_category",
    "seed",
    "templates_per_image",
    "instances_per_template",
    "reset_counts_every",
    "add_post_prompt",
    "max_answer",
    "max_operations",
    "bound_intermediate_counts",
    "question_types",
    "released_questions_dir",
)


@dataclasses.dataclass
class ClevrMathConfig(datasets.BuilderConfig):
    """Configuration of :class:`clevr_math.ClevrMath`.

    Attributes:
        template_set: ``"clevr_math"`` (the 13 CLEVR-Math templates), ``"clevr_math_chains"``
            (longer chains of operations), or a path to a folder of template files.
        holdout_category: when set, questions of this category go only to the test split and
            the test split holds only them (``"multihop"`` gives the paper's zero-shot setting).
        seed: seed of every random choice of the generator.
        templates_per_image: at most this many templates are instantiated per image.
        instances_per_template: accepted questions per template and image.
        reset_counts_every: answer-balancing counts reset every this many scenes; it is also
            the shard size for ``num_proc`` (sharding on these windows is exact); 0 never
            resets (one shard).
        add_post_prompt: append the answer-format sentence to each question.
        max_answer: largest answer a question may have (the paper: 10).
        max_operations: keep only templates with at most this many arithmetic operations
            (``chains``: 5, the longest committed chains).
        bound_intermediate_counts: also keep every intermediate count of a chain within
            ``max_answer`` (``chains``: True), not only the final answer.
        question_types: restrict the templates (family stems, ``stem:index`` or coarse types).
        released_questions_dir: read the originally released ``clevr-math-{train,val,test}.json``
            from this folder instead of regenerating questions (for comparability).

    Example:
        >>> ClevrMathConfig(name="mine", seed=3, templates_per_image=5).seed
        3
    """

    template_set: str = "clevr_math"
    holdout_category: str | None = None
    seed: int = 0
    templates_per_image: int = 10
    instances_per_template: int = 1
    reset_counts_every: int = 250
    add_post_prompt: bool = False
    max_answer: int = 10
    max_operations: int | None = None
    bound_intermediate_counts: bool = False
    question_types: tuple[str, ...] | None = None
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
        if self.template_set not in TEMPLATE_SETS and not os.path.isdir(str(self.template_set)):
            raise ConfigError(
                f"{where}: unknown template_set {self.template_set!r}; valid: "
                f"{', '.join(TEMPLATE_SETS)} or a path to a folder of template files"
            )
        if self.holdout_category is not None and self.holdout_category not in CATEGORIES:
            raise ConfigError(
                f"{where}: unknown holdout_category {self.holdout_category!r}; "
                f"valid: None or one of {', '.join(CATEGORIES)}"
            )
        check_int(where, "seed", self.seed, minimum=0)
        check_int(where, "templates_per_image", self.templates_per_image, minimum=1)
        check_int(where, "instances_per_template", self.instances_per_template, minimum=1)
        check_int(where, "reset_counts_every", self.reset_counts_every, minimum=0)
        check_int(where, "max_answer", self.max_answer, minimum=0)
        for flag in ("add_post_prompt", "bound_intermediate_counts"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(f"{where}: {flag} must be True or False, got {getattr(self, flag)!r}")
        if self.max_operations is not None:
            check_int(where, "max_operations", self.max_operations, minimum=1)
        if self.question_types is not None:
            if isinstance(self.question_types, str):
                self.question_types = tuple(t for t in self.question_types.split(",") if t)
            if not all(isinstance(t, str) and t for t in self.question_types):
                raise ConfigError(
                    f"{where}: question_types must be a list of non-empty strings, got {self.question_types!r}"
                )
            self.question_types = tuple(self.question_types)
            if not self.question_types:
                raise ConfigError(f"{where}: question_types is empty; pass None to keep every template")
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
