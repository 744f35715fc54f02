"""What a builder declares so that the Hub export can store its media once.

A builder sets a plain ``HUB_LAYOUT`` mapping (no import of this package: the legacy
loading-script mode stays light)::

    HUB_LAYOUT = {
        "media_column": "image",            # the Image/Audio column of the question configs
        "key": "image_filename",            # names the media file; kept in every question row
        "media_config": "images",           # configuration holding each file once (--media shared)
        "media_metadata": [],               # per-file columns that move to the media config
        "conversations_from": "general",    # question configuration grouped into `conversations`
        "conversation_media": "images",     # its list-of-media column (the_cauldron's name)
        "turn": {"user": "question", "assistant": "label"},   # chat turn <- question row
        "turn_fields": ["question_id", "category", "template"],  # kept per turn, typed as in the rows
        "also_follow": ["multihop"],        # conversations_multihop, prompts_multihop follow `multihop`
        "data_source": "clevr_math",        # the_cauldron's turn `source`, verl's `data_source`
    }  # and reasoning, rewards, prompts: see their fields below
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MEDIA_LAYOUTS = ("inline", "shared")
AUDIO_FORMATS = ("wav", "flac")


class LayoutError(ValueError):
    """A ``HUB_LAYOUT`` declaration that cannot be used; the message names the builder."""


@dataclass(frozen=True)
class HubLayout:
    """A builder's ``HUB_LAYOUT``, checked.

    Example:
        >>> HubLayout("image", "image_filename", "images").media_columns
        ('image',)
    """

    media_column: str
    key: str
    media_config: str
    media_metadata: tuple[str, ...] = ()
    conversations_from: str | None = None
    conversation_media: str = "media"
    turn: Mapping[str, str] = field(default_factory=dict)
    turn_fields: tuple[str, ...] = ()
    #: The question column holding each question's chain of thought (None: no reasoning target):
    #: ``conversations`` then also holds ``reasoning_messages``, answers in the think_answer format.
    reasoning: str | None = None
    also_follow: tuple[str, ...] = ()
    data_source: str | None = None
    #: The module of the reward functions the card's GRPO snippet imports (``<pkg>.rewards``).
    rewards: str | None = None
    #: The ``prompts`` declaration, plain data; checked by :func:`builder_utils.prompts.prompt_spec_of`.
    prompts: Mapping[str, object] | None = None
    #: The multiple-choice layouts' options (``builder_utils.hub.trainer_formats.Choices``), plain data:
    #: ``{"vocabulary": "module:ATTRIBUTE", "binary": ["yes", "no"], "seed": 0}``; None: no such layout.
    choices: Mapping[str, object] | None = None
    #: Each trainer layout row's ``difficulty`` struct, plain data: ``{"function": "module:NAME"`` (row ->
    #: dict), ``"columns": [...]`` (the question columns it reads), ``"features": {field: dtype}}``.
    difficulty: Mapping[str, object] | None = None
    #: Media columns a builder draws per row (not files of the data folder, so not shareable by key):
    #: the shared layout drops them from the question rows (which keep what redraws them).
    drawn_media: tuple[str, ...] = ()

    def __post_init__(self):
        if set(self.turn) - {"user", "assistant"} or (self.conversations_from and len(self.turn) != 2):
            raise LayoutError(f"turn must map exactly 'user' and 'assistant' to columns, got {dict(self.turn)}")
        if self.also_follow and not self.conversations_from:
            raise LayoutError("also_follow needs conversations_from (the configuration the plain names follow)")

    @property
    def media_columns(self) -> tuple[str, ...]:
        """The columns that move from the question rows to the media configuration."""
        return (self.media_column, *self.media_metadata)

    def prompt_spec(self):
        """The :class:`builder_utils.prompts.PromptSpec` of the ``prompts`` declaration (None without one).

        Example:
            >>> HubLayout("image", "image_filename", "images", data_source="toy",
            ...           prompts={"media_kind": "image", "answer": "label",
            ...                    "columns": ["image_filename", "question_id"]}).prompt_spec().media_list
            'images'
        """
        from builder_utils.prompts import prompt_spec_from

        return prompt_spec_from({"data_source": self.data_source, "media_column": self.media_column, "key": self.key,
                                 "prompts": self.prompts}, "HUB_LAYOUT")


class DerivedLayout:
    """One derived layout (registered in :mod:`builder_utils.hub.derived`): its rows and card text.

    ``names_files``: shared, its rows name their file (the media configuration holds it);
    ``takes_given``: its rows can be made elsewhere."""

    name: str
    trainer: str
    names_files: bool = False
    takes_given: bool = False

    def available(self, layout: HubLayout) -> bool:
        return True

    def media_list(self, found) -> str | None:
        """The rows' list-of-media column (None: none)."""
        return None

    def shared(self, splits: Mapping, found) -> Mapping:
        """The rows a shared export writes."""
        return splits

    def notes(self, layout: HubLayout, config: str, media: str, audio_rate: int) -> list[str]:
        return []


def layout_of(builder_cls) -> HubLayout | None:
    """The checked ``HUB_LAYOUT`` of a builder class, or None if it declares none.

    Example:
        >>> from clevr_math import ClevrMath
        >>> layout_of(ClevrMath).media_config
        'images'
    """
    declared = getattr(builder_cls, "HUB_LAYOUT", None)
    if declared is None:
        return None
    try:
        values = dict(declared)
        for name in ("media_metadata", "turn_fields", "also_follow", "drawn_media"):
            values[name] = tuple(values.get(name, ()))
        layout = HubLayout(**values)
        layout.prompt_spec()  # a bad prompts declaration fails here, naming the builder
        return layout
    except (TypeError, ValueError) as exc:
        raise LayoutError(f"{builder_cls.__name__}.HUB_LAYOUT: {exc}") from None
