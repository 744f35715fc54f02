"""The derived export layouts: configurations built from a question configuration, by name.

:func:`resolve` turns a builder's :class:`HubLayout` into one export's :class:`Layouts`, once;
every stage reads that. A new layout: one :class:`DerivedLayout` (in ``layout.py``, so this module
can import it) plus one entry in :data:`DERIVED_LAYOUTS`. ``L`` follows ``conversations_from``,
``L_C`` each ``C`` of ``also_follow``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from builder_utils.hub import trainer_card
from builder_utils.hub.conversations import conversations
from builder_utils.hub.layout import DerivedLayout, HubLayout, LayoutError
from builder_utils.hub.prompt_config import prompts
from builder_utils.hub.trainer_formats import TRAINER_FORMATS
from builder_utils.prompts import VERL_PROMPT, PromptSpec

class Conversations(DerivedLayout):
    """``conversations``: :mod:`builder_utils.hub.conversations`, for SFT; its media in both layouts."""

    name, trainer = "conversations", "SFT"

    def media_list(self, found):
        return found.layout.conversation_media

    def rows(self, source, found, style, audio_rate):
        return conversations(source, found.layout)

    def description(self, layout, source):
        return (f"Follows `{source}`: one row per file, its questions as chat turns (`{layout.conversation_media}` "
                "+ `messages`, TRL's conversational format, for SFT; `texts`, the_cauldron's format).")

    def snippet(self, layout, config, media, style):
        return trainer_card.sft_snippet(layout, config)

    def notes(self, layout, config, media, audio_rate):
        return trainer_card.sft_notes(layout)


class Prompts(DerivedLayout):
    """``prompts``: :mod:`builder_utils.hub.prompt_config` (GRPO, verl); shared, no media list or ``verl_prompt``."""

    name, trainer, names_files, takes_given = "prompts", "GRPO", True, True

    def available(self, layout):
        return layout.prompts is not None

    def media_list(self, found):
        return found.spec.media_list if found.spec is not None else None

    def rows(self, source, found, style, audio_rate):
        return prompts(source, found.spec, style, audio_rate=audio_rate)

    def shared(self, splits, found):
        return {s: d.remove_columns([found.spec.media_list, VERL_PROMPT]) for s, d in splits.items()}

    def description(self, layout, source):
        return (f"Follows `{source}`: one RL prompt row per question (`prompt`, TRL's conversational "
                "format, for GRPO; `verl_prompt`, `data_source`, `reward_model`, `extra_info` for verl), "
                "the ground truth as plain columns.")

    def snippet(self, layout, config, media, style):
        return trainer_card.grpo_snippet(layout, config, media, style)

    def notes(self, layout, config, media, audio_rate):
        return trainer_card.grpo_notes(layout, config, media, audio_rate)


#: The registered derived layouts, in the order an export writes them: TRL's and verl's, then each
#: R1-family trainer's own (:mod:`builder_utils.hub.trainer_formats`).
DERIVED_LAYOUTS: tuple[DerivedLayout, ...] = (Conversations(), Prompts(), *TRAINER_FORMATS)


@dataclass(frozen=True)
class Derived:
    """A derived configuration: its layout object and the configuration it follows."""

    layout: DerivedLayout
    source: str


@dataclass(frozen=True)
class Layouts:
    """A builder's layout resolved once for an export: declaration, prompt spec, derived configurations."""

    layout: HubLayout | None
    spec: PromptSpec | None = None
    derived: dict[str, Derived] = field(default_factory=dict)
    registered: tuple[DerivedLayout, ...] = DERIVED_LAYOUTS


def resolve(layout: HubLayout | None, registered: Sequence[DerivedLayout] = DERIVED_LAYOUTS) -> Layouts:
    """The :class:`Layouts` of ``layout`` with the ``registered`` derived layouts.

    Example:
        >>> layout = HubLayout("image", "image_filename", "images", conversations_from="general",
        ...                    turn={"user": "question", "assistant": "label"}, also_follow=("multihop",),
        ...                    data_source="toy", prompts={"media_kind": "image", "answer": "label",
        ...                                                "columns": ["image_filename", "question_id"]})
        >>> derived = resolve(layout).derived
        >>> {name: d.source for name, d in derived.items() if name.startswith(("conversations", "prompts"))}
        {'conversations': 'general', 'conversations_multihop': 'multihop', 'prompts': 'general', 'prompts_multihop': 'multihop'}
        >>> derived["r1v_multihop"].source, "reason_rft_cot" in derived  # no reasoning column declared
        ('multihop', False)
    """
    registered = tuple(registered)
    if layout is None:
        return Layouts(None, registered=registered)
    found: dict[str, Derived] = {}
    for kind in registered if layout.conversations_from else ():
        if kind.available(layout):
            for source, name in [(layout.conversations_from, kind.name)] + [(s, f"{kind.name}_{s}") for s in layout.also_follow]:
                found[name] = Derived(kind, source)
    if layout.media_config in found or layout.media_config in {kind.name for kind in registered}:
        raise LayoutError(f"the media configuration cannot be named {layout.media_config!r}")
    spec = layout.prompt_spec() if layout.prompts is not None else None
    return Layouts(layout, spec, found, registered)
