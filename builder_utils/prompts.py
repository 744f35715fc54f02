"""The RL prompt row: one question as the ``prompts`` configuration writes it and a stream yields it.

Columns: builder_utils/hub/README.md, "Training layouts". Two prompt forms because TRL wants typed
parts (``prompt``) and verl 0.9.1's ``RLHFDataset._build_messages`` skips non-string content, then
asserts every media item was placed at its marker (``verl_prompt``). A dataset declares its part
as plain data (``HUB_LAYOUT["prompts"]``); nothing here names a dataset.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import datasets

from builder_utils.builder import list_of

#: What a placeholder part may stand for, and the list column holding the media of that kind.
MEDIA_KINDS = {"image": "images", "audio": "audios"}
#: verl's markers inside string content (0.9.1: ``re.split("(<image>|<video>|<audio>)", content)``).
VERL_MARKERS = {"image": "<image>", "audio": "<audio>"}
VERL_PROMPT = "verl_prompt"


@dataclass(frozen=True)
class PromptStyle:
    """An answer-format convention (``--prompt_style``); ``instruction`` None: no system turn.

    Example:
        >>> prompt_style("boxed").instruction.endswith("\\\\boxed{}.")
        True
    """

    name: str
    instruction: str | None


#: The conventions the format rewards check: ``<think>...</think><answer>...</answer>`` (R1-V and
#: its descendants), a final ``\\boxed{}``; or none: the direct answer, or no instruction.
PROMPT_STYLES = (
    PromptStyle(
        "think_answer",
        "Reason about the question inside <think> </think> tags, then give only the final answer "
        "inside <answer> </answer> tags.",
    ),
    PromptStyle("boxed", "Reason step by step, then write the final answer as \\boxed{}."),
    # R1-V's README reports a higher score for its 2B model answering directly, without the tags.
    PromptStyle("direct", "Answer with the final answer only, without any reasoning."),
    PromptStyle("plain", None),
)
DEFAULT_PROMPT_STYLE = "think_answer"


def prompt_style(style: str | PromptStyle) -> PromptStyle:
    """The :class:`PromptStyle` of a name (a style passes through); an unknown name is a ValueError.

    Example:
        >>> prompt_style("json")
        Traceback (most recent call last):
        ...
        ValueError: unknown prompt style 'json'; valid: think_answer, boxed, direct, plain
    """
    if isinstance(style, PromptStyle):
        return style
    for known in PROMPT_STYLES:
        if known.name == style:
            return known
    raise ValueError(f"unknown prompt style {style!r}; valid: {', '.join(s.name for s in PROMPT_STYLES)}")


def _check_media_kind(media_kind: str) -> None:
    if media_kind not in MEDIA_KINDS:
        raise ValueError(f"media_kind must be one of {', '.join(MEDIA_KINDS)}, got {media_kind!r}")


def prompt_messages(question: str, media_kind: str, style: str | PromptStyle) -> list[dict]:
    """The question as TRL conversational messages (typed parts, media placeholder first).

    Example:
        >>> prompt_messages("How many cubes?", "image", "plain")
        [{'role': 'user', 'content': [{'type': 'image'}, {'type': 'text', 'text': 'How many cubes?'}]}]
    """
    _check_media_kind(media_kind)
    style = prompt_style(style)
    messages = []
    if style.instruction is not None:
        messages.append({"role": "system", "content": [{"type": "text", "text": style.instruction}]})
    messages.append({"role": "user", "content": [{"type": media_kind}, {"type": "text", "text": question}]})
    return messages


def conversation_messages(turns, media_kind: str) -> list[dict]:
    """Question/answer pairs as one TRL conversation; the placeholder opens the first turn only (one file a row).

    Example:
        >>> [m["role"] for m in conversation_messages([("2+1?", "3"), ("1-1?", "0")], "image")]
        ['user', 'assistant', 'user', 'assistant']
    """
    _check_media_kind(media_kind)
    messages = []
    for user, assistant in turns:
        placeholder = [] if messages else [{"type": media_kind}]
        messages.append({"role": "user", "content": [*placeholder, {"type": "text", "text": user}]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": assistant}]})
    return messages


def think_answer_text(reasoning: str | None, answer: str) -> str:
    """An answer in the ``think_answer`` format the format reward scores (empty think without reasoning).

    Example:
        >>> think_answer_text("3 cubes, take 1: 2.", "2")
        '<think>3 cubes, take 1: 2.</think><answer>2</answer>'
    """
    return f"<think>{reasoning or ''}</think><answer>{answer}</answer>"


def reasoning_messages(turns, media_kind: str) -> list[dict]:
    """``(question, reasoning, answer)`` triples as one SFT conversation that leads into GRPO
    (the ``think_answer`` system turn the ``prompts`` rows open with).

    Example:
        >>> messages = reasoning_messages([("2+1?", "2 plus 1 is 3.", "3")], "image")
        >>> [m["role"] for m in messages], messages[-1]["content"][0]["text"]
        (['system', 'user', 'assistant'], '<think>2 plus 1 is 3.</think><answer>3</answer>')
    """
    instruction = prompt_style(DEFAULT_PROMPT_STYLE).instruction
    system = {"role": "system", "content": [{"type": "text", "text": instruction}]}
    pairs = [(question, think_answer_text(reasoning, answer)) for question, reasoning, answer in turns]
    return [system, *conversation_messages(pairs, media_kind)]


def media_kind_of(feature) -> str:
    """``"image"`` or ``"audio"``: the placeholder type of a media feature (or a list of one).

    Example:
        >>> media_kind_of(datasets.List(datasets.Audio()))
        'audio'
    """
    inner = getattr(feature, "feature", feature)
    if isinstance(inner, datasets.Image):
        return "image"
    if isinstance(inner, datasets.Audio):
        return "audio"
    raise ValueError(f"not an Image or Audio feature: {feature!r}")


def verl_prompt_messages(question: str, media_kind: str, style: str | PromptStyle) -> list[dict]:
    """:func:`prompt_messages` with string content and verl's ``<image>`` / ``<audio>`` marker.

    Example:
        >>> verl_prompt_messages("How many cubes?", "image", "plain")
        [{'role': 'user', 'content': '<image>How many cubes?'}]
    """
    _check_media_kind(media_kind)
    style = prompt_style(style)
    marker = VERL_MARKERS[media_kind]
    messages = [] if style.instruction is None else [{"role": "system", "content": style.instruction}]
    return messages + [{"role": "user", "content": marker + question}]


class PromptSpecError(ValueError):
    """A ``HUB_LAYOUT["prompts"]`` declaration that cannot be used; the message names the builder."""


@dataclass(frozen=True)
class PromptSpec:
    """What one dataset's question rows give a prompt row (its builder declares it as plain data).

    ``key`` names the media file (kept in every row: the shared-media join key); ``answer`` is
    the column written as text; ``ground_truth`` None: ``reward_model.ground_truth`` is that text;
    ``columns`` are copied as they are, typed.

    Example:
        >>> PromptSpec("toy", "image", "image", "f", answer="a", columns=("f", "question_id")).media_list
        'images'
    """

    data_source: str
    media_kind: str
    media_column: str
    key: str
    answer: str
    ground_truth: str | None = None
    columns: tuple[str, ...] = ()
    question: str = "question"
    #: A list column of media that, when a row has it, is the row's media list in its order (a
    #: problem's worlds: before, after each operation), one placeholder per item.
    media_sequence: str | None = None

    def __post_init__(self):
        if not isinstance(self.data_source, str) or not self.data_source:
            raise PromptSpecError(f"data_source must be a non-empty string, got {self.data_source!r}")
        if self.media_kind not in MEDIA_KINDS:
            raise PromptSpecError(f"media_kind must be one of {', '.join(MEDIA_KINDS)}, got {self.media_kind!r}")
        if self.key not in self.columns:
            raise PromptSpecError(f"columns must keep the media key {self.key!r}, got {list(self.columns)}")
        if "question_id" not in self.columns:
            raise PromptSpecError(f"columns must keep 'question_id' (extra_info names it), got {list(self.columns)}")

    @property
    def media_list(self) -> str:
        """The list column holding a row's media: ``images`` or ``audios``."""
        return MEDIA_KINDS[self.media_kind]

    def source_columns(self) -> tuple[str, ...]:
        """The question-row columns a prompt row reads (without the media).

        Example:
            >>> PromptSpec("toy", "image", "image", "f", answer="a", columns=("f", "question_id")).source_columns()
            ('question', 'a', 'f', 'question_id')
        """
        wanted = [self.question, self.answer, *([self.ground_truth] if self.ground_truth else []), *self.columns]
        return tuple(dict.fromkeys(wanted))


def prompt_spec_of(builder_cls) -> PromptSpec | None:
    """The checked ``HUB_LAYOUT["prompts"]`` declaration of a builder, or None if it declares none.

    Example:
        >>> from clevr_math import ClevrMath
        >>> prompt_spec_of(ClevrMath).data_source
        'clevr_math'
    """
    return prompt_spec_from(getattr(builder_cls, "HUB_LAYOUT", None) or {}, builder_cls.__name__)


def prompt_spec_from(layout: Mapping[str, Any], where: str = "HUB_LAYOUT") -> PromptSpec | None:
    """The :class:`PromptSpec` of a ``HUB_LAYOUT`` mapping (None without ``"prompts"``); errors name ``where``.

    Example:
        >>> prompt_spec_from({"media_column": "audio", "key": "f", "data_source": "x",
        ...                   "prompts": {"media_kind": "audio", "answer": "a", "columns": ["f", "question_id"]}}).media_list
        'audios'
    """
    declared = layout.get("prompts")
    if declared is None:
        return None
    try:
        values = {"data_source": layout.get("data_source"), "media_column": layout["media_column"],
                  "key": layout["key"], **dict(declared)}
        values["columns"] = tuple(values.get("columns", ()))
        return PromptSpec(**values)
    except (KeyError, TypeError, PromptSpecError) as exc:
        raise PromptSpecError(f"{where}['prompts']: {exc}") from None


def _text(value) -> str | None:
    return None if value is None else str(value)


def prompt_row(
    row: Mapping[str, Any], *, dataset: PromptSpec, style: str | PromptStyle, split: str, index: int
) -> dict[str, Any]:
    """The ``prompts`` row of one question row; without the media column it names its file by key only (shared).

    Example:
        >>> spec = PromptSpec("toy", "image", "image", "f", answer="label", columns=("label", "question_id", "f"))
        >>> row = prompt_row({"question": "How many?", "label": 3, "question_id": "q0", "f": "a.png"},
        ...                  dataset=spec, style="plain", split="train", index=0)
        >>> row["answer"], row["reward_model"], row["extra_info"]
        ('3', {'style': 'rule', 'ground_truth': '3'}, {'split': 'train', 'index': 0, 'question_id': 'q0'})
    """
    question = row[dataset.question]
    answer = _text(row[dataset.answer])
    built: dict[str, Any] = {
        "prompt": prompt_messages(question, dataset.media_kind, style),
        VERL_PROMPT: verl_prompt_messages(question, dataset.media_kind, style),
    }
    if dataset.media_column in row:
        built[dataset.media_list] = [row[dataset.media_column]]
    built["answer"] = answer
    built |= {name: row[name] for name in dataset.columns}
    truth = answer if dataset.ground_truth is None else row[dataset.ground_truth]
    built["data_source"] = dataset.data_source
    built["reward_model"] = {"style": "rule", "ground_truth": truth}
    built["extra_info"] = {"split": split, "index": index, "question_id": row["question_id"]}
    return built


def with_media_count(built: dict[str, Any], count: int) -> dict[str, Any]:
    """A prompt row whose media list holds ``count`` items (a problem's worlds in order): its user turn
    gets one placeholder per item, its ``verl_prompt`` one marker per item, as TRL (Qwen2-VL's
    processor) and verl pair them with the list. The placeholder parts may be encoded
    (``{"type": "image", "text": None}``) or not.

    Example:
        >>> spec = PromptSpec("toy", "image", "image", "f", answer="label", columns=("label", "question_id", "f"))
        >>> row = prompt_row({"question": "How many?", "label": 3, "question_id": "q0", "f": "a.png"},
        ...                  dataset=spec, style="plain", split="train", index=0)
        >>> row = with_media_count(row, 2)
        >>> [part["type"] for part in row["prompt"][-1]["content"]], row["verl_prompt"][-1]["content"]
        (['image', 'image', 'text'], '<image><image>How many?')
    """
    user = built["prompt"][-1]
    media = [part for part in user["content"] if part["type"] in MEDIA_KINDS]
    if not media:
        raise ValueError("the prompt row's user turn has no media placeholder")
    text = [part for part in user["content"] if part["type"] not in MEDIA_KINDS]
    kind = media[0]["type"]
    user["content"] = [dict(media[0]) for _ in range(count)] + text
    marker = VERL_MARKERS[kind]
    verl_user = built[VERL_PROMPT][-1]
    verl_user["content"] = marker * count + verl_user["content"].removeprefix(marker)
    return built


def messages_feature():
    """The feature of TRL conversational messages with typed parts (a placeholder reads back ``text`` None).

    Example:
        >>> list(messages_feature().feature["content"].feature)
        ['type', 'text']
    """
    string = datasets.Value("string")
    return list_of({"role": string, "content": list_of({"type": string, "text": string})})


def media_list_of(features) -> bool:
    """Whether ``features`` are prompt rows', whose media is a one-item list (as TRL and verl read it).

    Example:
        >>> spec = PromptSpec("toy", "image", "image", "f", answer="a", columns=("f", "question_id"))
        >>> source = datasets.Features({n: datasets.Value("string") for n in ("question", "a", "f", "question_id")})
        >>> media_list_of(prompt_features(source, spec, media=False)), media_list_of(source)
        (True, False)
    """
    return bool(features) and features.get("prompt") == messages_feature() and "reward_model" in features


def prompt_features(source: datasets.Features, dataset: PromptSpec, *, media: bool = True) -> datasets.Features:
    """The features of :func:`prompt_row` rows from ``source`` (``media=False``: no media list, as shared).

    Example:
        >>> spec = PromptSpec("toy", "image", "image", "f", answer="a", columns=("f", "question_id"))
        >>> source = datasets.Features({n: datasets.Value("string") for n in spec.source_columns()})
        >>> source["image"] = datasets.Image()
        >>> list(prompt_features(source, spec))
        ['prompt', 'verl_prompt', 'images', 'answer', 'f', 'question_id', 'data_source', 'reward_model', 'extra_info']
    """
    string = datasets.Value("string")
    columns: dict[str, Any] = {"prompt": messages_feature(),
                               VERL_PROMPT: list_of({"role": string, "content": string})}
    if media:
        columns[dataset.media_list] = list_of(source[dataset.media_column])
    columns["answer"] = string
    columns |= {name: source[name] for name in dataset.columns}
    truth = string if dataset.ground_truth is None else source[dataset.ground_truth]
    columns["data_source"] = string
    columns["reward_model"] = {"style": string, "ground_truth": truth}
    columns["extra_info"] = {"split": string, "index": datasets.Value("int64"), "question_id": source["question_id"]}
    return datasets.Features(columns)
