"""The card section that loads each conversation and prompt configuration into its trainer.

Each snippet splits at :data:`TRL_MARKER`: loading (the suite runs it on the export) and training
(needs TRL; ``make test-train`` runs it).
"""

from __future__ import annotations

from collections.abc import Sequence

from builder_utils.hub.card import install_hint
from builder_utils.hub.conversations import REASONING_MESSAGES
from builder_utils.hub.layout import HubLayout
from builder_utils.hub.prompt_config import DEFAULT_AUDIO_RATE
from builder_utils.prompts import DEFAULT_PROMPT_STYLE, VERL_PROMPT

#: The line where a snippet starts to need TRL.
TRL_MARKER = "from trl import"


def _audio(layout: HubLayout) -> bool:
    return layout.conversation_media != "images"


def _load_lines(layout: HubLayout, config: str) -> list[str]:
    lines = ["from datasets import load_dataset"]
    load = f'load_dataset("REPO_ID", "{config}", split="train")'
    if _audio(layout):
        # Clips read as stored bytes: no torchcodec needed (the collator or the reward decodes them).
        lines += [f"from builder_utils.audio import without_decoding  # {install_hint()}", "",
                  f"train = without_decoding({load})  # clips as bytes: no torchcodec needed"]
    else:
        lines += ["", f"train = {load}"]
    return lines


def _reward_lines(layout: HubLayout, style: str) -> tuple[list[str], str]:
    """The rewards' import and ``reward_funcs``; the format reward checks what the system turn asks."""
    if not layout.rewards:
        return [], "[...]"
    note = f"  # {install_hint()}"
    if style in ("plain", "direct"):  # no format to check
        return [f"from {layout.rewards} import accuracy_reward{note}"], "[accuracy_reward]"
    if style == DEFAULT_PROMPT_STYLE:
        return [f"from {layout.rewards} import accuracy_reward, format_reward{note}"], "[accuracy_reward, format_reward]"
    return ([f"from {layout.rewards} import accuracy_reward, make_format_reward{note}",
             f'format_reward = make_format_reward("{style}")  # the --prompt_style of this export'],
            "[accuracy_reward, format_reward]")


def sft_snippet(layout: HubLayout, config: str) -> str:
    """The ``SFTTrainer`` snippet of a ``conversations`` configuration."""
    lines = _load_lines(layout, config)
    if layout.reasoning:
        lines += ["# SFT before GRPO: turns answered <think>{cot}</think><answer>{n}</answer>, as format_reward scores",
                  "# them (drop this line to train on the bare answers of `messages`)",
                  f'train = train.remove_columns("messages").rename_column("{REASONING_MESSAGES}", "messages")']
    lines += [""]
    if _audio(layout):
        lines += [f"{TRL_MARKER} SFTConfig, SFTTrainer",
                  "from transformers import AutoProcessor",
                  "from builder_utils.sft_collator import AudioSFTCollator",
                  "",
                  'processor = AutoProcessor.from_pretrained("MODEL_ID")',
                  "# TRL reads images only: the collator puts each clip, decoded at the processor's rate, in its",
                  "# turn and labels the assistant turns only (a chat template with {% generation %} markers)",
                  'trainer = SFTTrainer(model="MODEL_ID", processing_class=processor, train_dataset=train,',
                  "                     data_collator=AudioSFTCollator(processor),",
                  '                     args=SFTConfig(output_dir="sft", remove_unused_columns=False,',
                  '                                    dataset_kwargs={"skip_prepare_dataset": True}))',
                  "trainer.train()"]
    else:
        lines += [f"{TRL_MARKER} SFTConfig, SFTTrainer",
                  "",
                  "# assistant_only_loss: the loss on the answers only; needs {% generation %} in the chat template",
                  'trainer = SFTTrainer(model="MODEL_ID", train_dataset=train,',
                  '                     args=SFTConfig(output_dir="sft", assistant_only_loss=True))',
                  "trainer.train()"]
    return "\n".join(lines)


def grpo_snippet(layout: HubLayout, config: str, media: str, style: str) -> str:
    """The ``GRPOTrainer`` snippet of a ``prompts`` configuration."""
    lines = _load_lines(layout, config)
    if media == "shared":
        # Shared prompt rows name their file only: the lazy join gives the rows of an inline export.
        files = f'load_dataset("REPO_ID", "{layout.media_config}", split="train")'
        lines += [f"from builder_utils.hub import attach_media  # {install_hint()}",
                  f"train = attach_media(train, {f'without_decoding({files})' if _audio(layout) else files})"]
    imports, rewards = _reward_lines(layout, style)
    lines += ["", f"{TRL_MARKER} GRPOConfig, GRPOTrainer", *imports, "",
              f'trainer = GRPOTrainer(model="MODEL_ID", reward_funcs={rewards}, train_dataset=train,',
              '                      args=GRPOConfig(output_dir="grpo"))',
              "trainer.train()"]
    return "\n".join(lines)


def sft_notes(layout: HubLayout) -> list[str]:
    """The notes under the ``SFTTrainer`` snippet."""
    many = layout.conversation_media
    notes = [f"`messages` (TRL's conversational format: typed parts, the media placeholder in the first user "
             f"turn) and `{many}` are what `SFTTrainer` reads; `texts` is the_cauldron's format of the same turns."]
    if layout.reasoning:
        notes.append(f"`{REASONING_MESSAGES}` holds the same turns after the `think_answer` system turn, each answer "
                     "written `<think>{cot}</think><answer>{answer}</answer>`: a model fine-tuned on it writes the "
                     "format that `format_reward` scores in GRPO on `prompts`. `assistant_only_loss=True` needs "
                     "`{% generation %}` markers in the model's chat template (TRL's requirement); without them, "
                     "leave it out.")
    if _audio(layout):
        notes.append("TRL 1.16's `SFTTrainer` has no audio path: it counts a dataset as multimodal only when a row "
                     "has `images`, prepares these rows as text, and the processor then stops (`Found 1 <|AUDIO|> "
                     "tokens in the text but no audio inputs were passed`). With `AudioSFTCollator` (this package) "
                     "and `skip_prepare_dataset` it trains on the clips: each is decoded at the processor's rate "
                     "with soundfile (no torchcodec) and the loss covers the assistant turns only.")
    return notes


def grpo_notes(layout: HubLayout, config: str, media: str, audio_rate: int) -> list[str]:
    """The notes under the ``GRPOTrainer`` snippet, verl's among them."""
    notes = ["`prompt` is TRL's conversational prompt; every other column (`answer`, the typed labels and "
             "filter fields) reaches the reward functions as a keyword argument (`GRPOConfig` keeps unused "
             "columns by default)."]
    if _audio(layout):
        notes.append("TRL 1.16's `GRPOTrainer` cannot run an audio model: it reads `model.config.image_token_id` "
                     "whatever the processor (`AttributeError: 'Qwen2AudioConfig' object has no attribute "
                     "'image_token_id'`), a limitation of TRL itself. These rows load and score without "
                     "torchcodec; train them with GRPO where the trainer takes audio (verl, below).")
    notes += _verl_notes(layout, config, media, audio_rate)
    return notes


def _verl_notes(layout: HubLayout, config: str, media: str, audio_rate: int) -> list[str]:
    """How verl 0.9.1's ``RLHFDataset`` reads a ``prompts`` configuration (``make test-verl`` runs it)."""
    if media == "shared":
        return ["verl reads the media from each row only: export with `--media inline` for verl. These rows have "
                "no `verl_prompt`, so verl stops on `KeyError: 'verl_prompt'` rather than train without the media."]
    audio = layout.conversation_media != "images"
    marker, key = ("<audio>", "audios") if audio else ("<image>", "images")
    notes = [f"verl reads the same files with its prompt column named, `data.prompt_key={VERL_PROMPT}` (the "
             f"messages as strings, `{marker}` before the question; its default `prompt` holds typed parts, which "
             f"verl skips, so every row fails with `AssertionError: {key[:-1]}_offset 0 != len({key}) 1` and the "
             "dataset is empty):"]
    flags = [f"data.train_files=<export>/{config}/train-00000-of-0000N.parquet", f"data.prompt_key={VERL_PROMPT}"]
    if layout.rewards:
        flags += [f"reward.custom_reward_function.path=<{layout.rewards} file>",
                  "reward.custom_reward_function.name=compute_score",
                  "+reward.custom_reward_function.reward_kwargs.format_weight=0.5"]
    notes[0] += " `" + " ".join(flags) + "`."
    if not audio:
        notes.append("verl's image rollouts read the images through `qwen_vl_utils`, which `pip install verl` does "
                     "not bring: `pip install qwen-vl-utils` (it needs torchvision).")
    if audio:
        notes.append(f"`audios` holds each clip as verl hands it to the processor: mono float32 samples at "
                     f"{audio_rate:,} Hz (`--prompt_audio_rate`, default {DEFAULT_AUDIO_RATE:,}: Qwen2-Audio, "
                     "Whisper); export at your processor's rate.")
    if layout.rewards:
        notes.append("`compute_score` takes verl's reward kwargs: `format_weight` (the score is accuracy + "
                     "format_weight x format, returned as a dict with `score`, `accuracy` and `format`, which verl "
                     "logs), `format_style`. It serves verl's reward loop (`reward_model.reward_manager=naive`, the "
                     "default; `dapo` and `gdpo` call it the same way) and the legacy `BatchRewardManager` class; "
                     "verl 0.9.1's reward loop registers no `batch` manager (`ValueError: Unknown reward manager: "
                     "batch`).")
    return notes


def trainer_section(found, configs: Sequence[str], media: str,
                    style: str = DEFAULT_PROMPT_STYLE, audio_rate: int = DEFAULT_AUDIO_RATE) -> str | None:
    """The card section for the derived configurations among ``configs`` (None without any).

    Example:
        >>> from builder_utils.hub.derived import resolve
        >>> layout = HubLayout("image", "image_filename", "images", conversations_from="general",
        ...                    conversation_media="images", turn={"user": "question", "assistant": "label"})
        >>> section = trainer_section(resolve(layout), ["general", "conversations"], "inline")
        >>> section.splitlines()[0], TRL_MARKER + " SFTConfig, SFTTrainer" in section
        ('## Training with TRL and verl', True)
    """
    layout, derived = found.layout, found.derived
    mine = [name for name in configs if name in derived]
    if not mine:
        return None
    intro = ("Each configuration below loads into its trainer as it is (no conversion); `MODEL_ID` is your model."
             if not _audio(layout) else
             "Each configuration below loads into its trainer; `MODEL_ID` is your model. TRL has no audio path of "
             "its own: SFT goes through this package's audio collator, and GRPO does not run (see below).")
    parts = ["## Training with TRL and verl", intro]
    for name in mine:
        kind = derived[name].layout
        parts += [f"### `{name}` ({kind.trainer}; follows `{derived[name].source}`)",
                  f"```python\n{kind.snippet(layout, name, media, style)}\n```",
                  *(f"- {note}" for note in kind.notes(layout, name, media, audio_rate))]
    return "\n\n".join(parts)


def snippet_before_trl(code: str) -> str:
    """The part of a snippet that runs without TRL (the lines before :data:`TRL_MARKER`).

    Example:
        >>> snippet_before_trl("import a\\nfrom trl import X\\nX()")
        'import a'
    """
    lines = code.splitlines()
    cut = next((i for i, line in enumerate(lines) if line.startswith(TRL_MARKER)), len(lines))
    return "\n".join(lines[:cut]).rstrip()
