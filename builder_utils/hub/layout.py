"""What a builder declares so that the Hub export can store its media once.

A builder sets a plain ``HUB_LAYOUT`` mapping (plain data, so a builder module needs no import
of this package, which keeps the legacy loading-script mode light)::

    HUB_LAYOUT = {
        "media_column": "image",            # the Image/Audio column of the question configs
        "key": "image_filename",            # names the media file; kept in every question row
        "media_config": "images",           # configuration holding each file once (--media shared)
        "media_metadata": [],               # per-file columns that move to the media config
        "conversations_from": "general",    # question configuration grouped into `conversations`
        "conversation_media": "images",     # its list-of-media column (the_cauldron's name)
        "turn": {"user": "question", "assistant": "label"},   # chat turn <- question row
        "turn_fields": ["question_id", "category", "template"],  # kept per turn, typed as in the rows
    }
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

CONVERSATIONS = "conversations"
MEDIA_LAYOUTS = ("inline", "shared")
AUDIO_FORMATS = ("wav", "flac")


class LayoutError(ValueError):
    """A ``HUB_LAYOUT`` declaration that cannot be used; the message names the builder."""


@dataclass(frozen=True)
class HubLayout:
    """A builder's ``HUB_LAYOUT``, checked.

    Example:
        >>> layout = HubLayout("image", "image_filename", "images", conversations_from="general",
        ...                    turn={"user": "question", "assistant": "label"})
        >>> layout.media_columns
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
    #: The ``prompts`` declaration, plain data; checked by :func:`builder_utils.prompts.prompt_spec_of`.
    prompts: Mapping[str, object] | None = None

    def __post_init__(self):
        if set(self.turn) - {"user", "assistant"} or (self.conversations_from and len(self.turn) != 2):
            raise LayoutError(f"turn must map exactly 'user' and 'assistant' to columns, got {dict(self.turn)}")
        if self.media_config == CONVERSATIONS:
            raise LayoutError(f"the media configuration cannot be named {CONVERSATIONS!r}")

    @property
    def media_columns(self) -> tuple[str, ...]:
        """The columns that move from the question rows to the media configuration."""
        return (self.media_column, *self.media_metadata)


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
        for name in ("media_metadata", "turn_fields"):
            values[name] = tuple(values.get(name, ()))
        return HubLayout(**values)
    except (TypeError, LayoutError) as exc:
        raise LayoutError(f"{builder_cls.__name__}.HUB_LAYOUT: {exc}") from None
