"""The question generator's options, each declared once with :func:`builder_utils.options.option`.

:class:`GeneratorOptions` is everything that decides the generated questions; the framework
(:mod:`builder_utils.options`) derives from it the ``generate-questions`` flags and the fields
CLEVR-Math's builder config inherits: adding an option is one field here, plus its test.

>>> options = GeneratorOptions(templates="clevr_math", max_answer=10)
>>> options.templates_per_image, option_names(cls=GeneratorOptions, builder=True)[:2]
(10, ('seed', 'templates_per_image'))
>>> GeneratorOptions(templates_per_image=0)
Traceback (most recent call last):
...
ValueError: templates_per_image must be an integer in 1..1000, got 0
"""

from __future__ import annotations

import dataclasses
import os

from builder_utils.options import MAX_SEED, Choice, FilePath, Flag, Integer, Words, check_options, option, option_names

from .question_types import COARSE_TYPES
from .templates import SHIPPED_TEMPLATE_SETS, SYNONYMS_FILE, template_set_dir

METADATA_FILE = SYNONYMS_FILE.with_name("metadata.json")

__all__ = ["DEFAULT_SEARCH_BUDGET", "GeneratorOptions", "MAX_ANSWER"]

DEFAULT_SEARCH_BUDGET = 2000
"""Options tried per template and image before the search moves on (see BENCHMARKS.md)."""

# The maxima: each far above any real use, and each keeps what it sizes small. An answer is a
# count of objects: a scene holds at most 14 and a chain of 8 operations inserts a few more, so
# 1,000 is never reached, and the answer domain it sizes (one entry per answer) stays a few KB
# (10**8 took gigabytes). Templates: no set ships more than 100 families, so 1,000 per image
# means "all"; instances per template are questions per image. A balancing window beyond 10**9
# scenes is never reached (CLEVR has 100,000). A search budget of 10**6 states is a few seconds
# per template and image, 500 times the default.
MAX_ANSWER = 1000
MAX_TEMPLATES_PER_IMAGE = 1000
MAX_INSTANCES_PER_TEMPLATE = 1000
MAX_WINDOW = 10**9
MAX_SEARCH_BUDGET = 10**6

@dataclasses.dataclass
class GeneratorOptions:
    """Everything that decides the generated questions (and nothing else does).

    ``template_dir`` overrides ``templates``; ``bound_intermediate_counts`` applies ``max_answer``
    to every count along a chain too.

    >>> GeneratorOptions(bound_intermediate_counts=True)
    Traceback (most recent call last):
    ...
    ValueError: bound_intermediate_counts needs max_answer
    """

    templates: str = option(
        "clevr", Choice(SHIPPED_TEMPLATE_SETS), "shipped template set (default: %(default)s, the nine CLEVR families)",
        group="inputs and outputs", ignored_with="template_dir")
    template_dir: str | os.PathLike | None = option(
        None, FilePath(), "folder of template *.json files (overrides --templates)", group="inputs and outputs",
        role="input_dir", fallback=lambda o: template_set_dir(o.templates))
    metadata_file: str | os.PathLike | None = option(
        None, FilePath(), "functional-language metadata (default: the shipped one)", group="inputs and outputs",
        role="input", fallback=lambda o: METADATA_FILE)
    synonyms_json: str | os.PathLike | None = option(
        None, FilePath(), "value and word synonyms (default: the shipped one)", group="inputs and outputs",
        role="input", fallback=lambda o: SYNONYMS_FILE)
    seed: int = option(
        0, Integer(0, maximum=MAX_SEED), "random seed (%(default)s); same inputs and seed = same questions",
        builder=True)
    templates_per_image: int = option(
        10, Integer(1, maximum=MAX_TEMPLATES_PER_IMAGE), "templates instantiated per image (%(default)s)", builder=True)
    instances_per_template: int = option(
        1, Integer(1, maximum=MAX_INSTANCES_PER_TEMPLATE), "questions per template and image (%(default)s)",
        builder=True)
    reset_counts_every: int = option(
        250, Integer(0, maximum=MAX_WINDOW),
        "scenes per balancing window; counts reset at multiples of it (%(default)s; 0 = never)",
        builder=True)
    question_types: tuple[str, ...] | None = option(
        None, Words(), f"restrict templates: family stems, stem:index, or coarse types ({', '.join(COARSE_TYPES)}); "
        "comma or space separated",
        builder=True, flag={"metavar": "TYPE"})
    add_post_prompt: bool = option(
        False, Flag(), "append an answer-format sentence (by answer type) to every question", builder=True)
    max_answer: int | None = option(
        None, Integer(0, maximum=MAX_ANSWER, optional=True), f"refuse Integer answers above this (at most {MAX_ANSWER})",
        builder=True)
    bound_intermediate_counts: bool = option(
        False, Flag(), "with --max_answer: also refuse questions whose intermediate counts exceed it",
        builder=True, requires="max_answer")
    search_budget: int = option(
        DEFAULT_SEARCH_BUDGET, Integer(1, maximum=MAX_SEARCH_BUDGET),
        "search states per template and image (%(default)s)")
    verbose: bool = option(False, Flag(), "log every template tried to stderr", group="running")
    time_dfs: bool = option(False, Flag(), "with --verbose: time each template search", group="running")

    def __post_init__(self) -> None:
        check_options(self)
