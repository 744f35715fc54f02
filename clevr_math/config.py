"""The typed configuration of the CLEVR-Math builder and its predefined configurations (README, "Options").

Checked in ``__post_init__`` and again by :meth:`ClevrMathConfig.validate`: ``datasets`` sets overrides by ``setattr``.
"""

from __future__ import annotations

import dataclasses
import os

import datasets

from builder_utils.builder import ConfigError
from builder_utils.clevr.chain_templates import MAX_OPERATIONS
from builder_utils.clevr.options import GeneratorOptions
from builder_utils.options import Choice, FilePath, Flag, Integer, builder_fields, check_options, option, option_names
from builder_utils.clevr.changes import CHANGES_TEMPLATES
from clevr_math.categories import CATEGORIES

#: What a configuration's rows are with ``changes``: the change questions only, or also the operations'.
CHANGE_ROWS = ("only", "also")


# The shipped template sets a CLEVR-Math configuration may name (the generator also ships "clevr").
CLEVR_MATH_TEMPLATE_SETS: tuple[str, ...] = ("clevr_math", "clevr_math_chains")

# The generator options, declared once in builder_utils/clevr/options.py; only the default
# answer cap is CLEVR-Math's own (the paper's answers are 0-10).
GeneratorFields = builder_fields("GeneratorFields", GeneratorOptions, max_answer=10)


class _TemplateSet:
    """A check (:mod:`builder_utils.options`): a shipped CLEVR-Math template set, or a folder."""

    def __call__(self, name: str, value):
        if value not in CLEVR_MATH_TEMPLATE_SETS and not os.path.isdir(str(value)):
            raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(CLEVR_MATH_TEMPLATE_SETS)} "
                             "or a path to a folder of template files")
        return value

    def flag(self) -> dict:
        return {"metavar": "NAME_OR_DIR"}

def _template_folder(value) -> str:
    """The folder a ``template_set`` reads: a shipped set's (a name wins, as in the check), or the folder given."""
    from builder_utils.clevr.templates import template_set_dir

    return os.fspath(template_set_dir(value)) if value in CLEVR_MATH_TEMPLATE_SETS else value


@dataclasses.dataclass
class ClevrMathConfig(GeneratorFields, datasets.BuilderConfig):
    """Configuration of :class:`clevr_math.ClevrMath`: every field a declared option (its help says what it does).

    Example:
        >>> ClevrMathConfig(name="mine", seed=3, templates_per_image=5).seed
        3
    """

    # Declared options: each is checked, has its --NAME flag wherever the dataset is built, and keys the cache.
    template_set: str = option(
        "clevr_math", _TemplateSet(), group=None, builder=True, role="input_dir", path_of=_template_folder,
        help=f"template set: {' or '.join(CLEVR_MATH_TEMPLATE_SETS)}, or a folder of template files")
    holdout_category: str | None = option(
        None, Choice(CATEGORIES, optional=True), group=None, builder=True,
        help="questions of this category only in test, and test holds only them (multihop: the paper's zero-shot)")
    # At most the longest chain builder_utils.clevr.chain_templates writes: more keeps every template.
    max_operations: int | None = option(
        None, Integer(1, maximum=MAX_OPERATIONS, optional=True), group=None, builder=True,
        help="keep only templates with at most this many arithmetic operations")
    test_data_dir: str | None = option(
        None, FilePath(), group=None, builder=True, role="input_dir",
        help="a folder whose scenes/CLEVR_test_scenes.json and images/test/ are the test split (CLEVR v1.0 has "
             "none: write one with `clevr-math synth --out DIR --num_scenes test=1000`)")
    step_scenes: bool = option(
        False, Flag(), group=None, builder=True,
        help="add steps: each question's scene graph after each operation (JSON text); a question whose "
             "insertion finds no free, visible spot is replaced by another")
    render_steps: bool = option(
        False, Flag(), group=None, builder=True,
        help="add step_images: every world of each problem (before, after each operation), drawn by the Pillow "
             "renderer with the first image's camera (implies step_scenes)")
    changes: str | None = option(
        None, Choice(CHANGE_ROWS, optional=True), group=None, builder=True,
        help="questions over the change each one-operation question makes, shown before and after: only them "
             "(only), or them and the operation questions (also; holdout_category=changes tests them zero-shot)")
    released_questions_dir: str | None = option(
        None, FilePath(), group=None, builder=True, role="input_dir",
        help="read the released clevr-math-{train,val,test}.json from this folder instead of regenerating")

    def __post_init__(self):
        if not isinstance(self.name, str):  # datasets' own check of the name would be a TypeError
            raise ConfigError(f"name must be a config name (a str), got {type(self.name).__name__} {self.name!r}")
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Check every field; raise :class:`ConfigError` naming the field and the valid values.

        Example:
            >>> ClevrMathConfig(name="x").validate()  # defaults are valid
        """
        where = f"CLEVR-Math config {self.name!r}"
        check_options(self, where=where, error=ConfigError)
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
        return {name: getattr(self, name) for name in CONTENT_FIELDS}  # the cache key sorts them


#: The fields that determine the rows (they key the cache): every declared option.
CONTENT_FIELDS: tuple[str, ...] = option_names(cls=ClevrMathConfig, builder=True)

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
    ClevrMathConfig(
        name="changes",
        version=VERSION,
        question_types=CHANGES_TEMPLATES,
        changes="only",
        render_steps=True,
        description="Before-and-after problems: how many objects were removed or added, of which kind, how many "
                    "there were before; both worlds drawn, answers checked on the step scene graphs.",
    ),
]

DEFAULT_CONFIG_NAME = "general"
