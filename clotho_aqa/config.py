"""The configurations of the Clotho-AQA builder: one per labelling in use, with typed options.

Every option is checked in ``__post_init__`` and again by :meth:`ClothoAQAConfig.validate`
after ``datasets`` has set keyword overrides with ``setattr`` (see
:class:`builder_utils.builder.CheckedConfigBuilder`).
"""

from __future__ import annotations

from dataclasses import dataclass

import datasets

from builder_utils.builder import ConfigError
from builder_utils.options import check_options
from clotho_aqa.options import CONFIG_DESCRIPTIONS, CONFIG_NAMES, CONTENT_FIELDS, SPLIT_STRATEGIES, ClothoAQAOptions

VERSION = datasets.Version("1.0.0")
__all__ = ["BUILDER_CONFIGS", "CONFIG_DESCRIPTIONS", "CONFIG_NAMES", "CONTENT_FIELDS", "DEFAULT_CONFIG_NAME",
           "SPLIT_STRATEGIES", "VERSION", "ClothoAQAConfig"]


@dataclass
class ClothoAQAConfig(ClothoAQAOptions, datasets.BuilderConfig):
    """A configuration of the Clotho-AQA builder: a name of :data:`CONFIG_NAMES` and the options
    of :class:`clotho_aqa.options.ClothoAQAOptions`.

    Example:
        >>> ClothoAQAConfig(name="questions", split_strategy="recomputed", seed=3).seed
        3
    """

    def __post_init__(self):
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Raise :class:`ConfigError` for an unknown config name or an unusable option.

        Example:
            >>> ClothoAQAConfig(name="binary")
            Traceback (most recent call last):
            ...
            builder_utils.builder.ConfigError: unknown Clotho-AQA config 'binary'; valid: all, questions, yes_no_unfiltered, yes_no_unanimous, yes_no_majority, single_word, single_word_majority
        """
        if self.name not in CONFIG_NAMES:
            raise ConfigError(f"unknown Clotho-AQA config {self.name!r}; valid: {', '.join(CONFIG_NAMES)}")
        where = f"Clotho-AQA config {self.name!r}"
        check_options(self, where=where, error=ConfigError)

    def content(self) -> dict:
        """The fields that decide the rows, as a plain dict (for the cache key).

        Example:
            >>> ClothoAQAConfig(name="all").content()["split_strategy"]
            'official'
        """
        return {name: getattr(self, name) for name in CONTENT_FIELDS}


BUILDER_CONFIGS = [ClothoAQAConfig(name=name, version=VERSION, description=text) for name, text in CONFIG_DESCRIPTIONS.items()]
DEFAULT_CONFIG_NAME = "all"
