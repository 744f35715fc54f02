"""The R1-family trainers' own layouts: one :class:`TrainerFormat` declaration per trainer, each a
derived configuration (``clevr-math export --config r1v``), rows made from the question rows.

Each trainer reads its rows with its own loader (file and line in ``tests/test_trainer_formats.py``);
what a declaration says: the columns of a row (:func:`TrainerQuestion` -> dict), their features,
and how the row holds its media (:data:`MEDIA_FORMS`). Answers are written as plain integers or
words (``str`` of the question's answer), so ``\\d+`` extractors and ``math_verify`` read them.
Where the trainer's own script adds its prompt template (R1-V, VLM-R1, Reason-RFT RL), the row
holds the bare question; elsewhere the ``--prompt_style`` instruction is in the row.
"""

from __future__ import annotations

import base64
import importlib
import json
import mimetypes
import os
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.compute as pc

from builder_utils.builder import list_of
from builder_utils.datasets_adapter import dataset_from_table
from builder_utils.hub.layout import DerivedLayout, HubLayout
from builder_utils.prompts import VERL_MARKERS, PromptSpec, prompt_style, think_answer_text

#: How a row holds its file: ``single`` one Image/Audio value; ``list`` a one-item list of it;
#: ``bytes_list`` a one-item list of the file's raw bytes (ms-swift's audio loader); ``key`` the
#: file name only (the trainer joins it with its image folder); ``in_text`` inside a JSON prompt, as a
#: ``data:`` URI (LMM-R1's ``qwen_vl_utils``); ``none``.
MEDIA_FORMS = ("single", "list", "bytes_list", "key", "in_text", "none")
#: Per-row columns of ms-swift's own meaning (``swift/dataset/preprocessor/core.py``: ``standard_keys``
#: and ``ResponsePreprocessor``'s automatic mapping to query / response): never written as extras there.
SWIFT_RESERVED = frozenset({
    "messages", "images", "videos", "audios", "tools", "objects", "label", "channel", "margin", "rejected_response",
    "system", "system_prompt", "query", "prompt", "input", "instruction", "question", "problem", "response", "answer",
    "output", "targets", "target", "answer_key", "answers", "solution", "text", "completion", "content", "history"})
#: The annotator answers' name in ms-swift rows (``answers`` is one of its response keys).
SWIFT_ANSWERS = "annotator_answers"
#: Stands for a row's file inside its text until the file is read (``in_text``: LMM-R1's data URIs).
FILE_MARK = "@@file@@"
_FILES = "__files"
#: The column of a row's difficulty struct (``HUB_LAYOUT["difficulty"]``), for curricula and samplers.
DIFFICULTY = "difficulty"


@dataclass(frozen=True)
class TrainerQuestion:
    """One question as a trainer row builder sees it: the text, the answer as text, the typed
    columns of the prompt spec, and the style's instruction (None: none).

    Example:
        >>> TrainerQuestion("How many?", "3", {"question_id": "q0"}, "image", None, "train", 0).marker
        '<image>'
    """

    question: str
    answer: str | None
    columns: Mapping[str, Any]
    media_kind: str
    instruction: str | None
    split: str
    index: int
    reasoning: str | None = None
    media: Any = None
    data_source: str = ""
    choices: tuple[str, ...] | None = None

    @property
    def marker(self) -> str:
        """The ``<image>`` / ``<audio>`` placeholder the trainers' loaders split the text at."""
        return VERL_MARKERS[self.media_kind]

    def with_instruction(self, text: str) -> str:
        """``text`` followed by the style's instruction (when the row, not the trainer, carries it)."""
        return text if self.instruction is None else f"{text} {self.instruction}"


def _answer_tags(answer: str | None) -> str | None:
    # R1-V / Reason-RFT / VLM-R1 write solutions with spaces inside the tags and strip them.
    return None if answer is None else f"<answer> {answer} </answer>"


def _string_features(*names: str) -> dict:
    return {name: datasets.Value("string") for name in names}


def _extras(q: TrainerQuestion, reserved: frozenset = frozenset()) -> dict:
    return {name: value for name, value in q.columns.items() if name not in reserved}


def _extra_features(source: datasets.Features, spec: PromptSpec, reserved: frozenset = frozenset()) -> dict:
    return {name: source[name] for name in spec.columns if name not in reserved}


@dataclass(frozen=True)
class Choices:
    """The options of a multiple-choice row: the answer and distractors drawn from ``vocabulary``
    (none an annotator's answer), four in all; a yes/no question gets ``binary``. Seeded per question
    (``seed`` and its id: the same options whatever the order or the number of workers).

    Example:
        >>> choices = Choices(frozenset({"bird", "car", "dog", "rain", "wind"}), ("yes", "no"), 0)
        >>> sorted(choices.options("q0", "dog", ["dog", "dog", "cat"])), len(choices.options("q1", "yes", ["yes"] * 3))
        (['car', 'dog', 'rain', 'wind'], 2)
        >>> choices.options("q0", "dog", ["dog"]) == choices.options("q0", "dog", ["dog"])
        True
    """

    vocabulary: frozenset
    binary: tuple[str, ...]
    seed: int
    count: int = 4

    def options(self, question_id: str, answer: str, golds) -> list[str]:
        """The shuffled options of one question whose right option is ``answer``."""
        rng = random.Random(f"{self.seed}:{question_id}")  # a str seed: the same in every process
        if answer in self.binary:
            options = list(self.binary)
        else:
            taken = {answer, *(golds or ()), *self.binary}
            pool = sorted(self.vocabulary - taken)
            options = [answer, *rng.sample(pool, min(self.count - 1, len(pool)))]
        rng.shuffle(options)
        return options


def choices_of(layout: HubLayout) -> Choices | None:
    """The :class:`Choices` of a layout's ``choices`` declaration (its vocabulary imported by name).

    Example:
        >>> from clotho_aqa import ClothoAQA
        >>> from builder_utils.hub.layout import layout_of
        >>> len(choices_of(layout_of(ClothoAQA)).vocabulary)
        828
    """
    declared = layout.choices
    if declared is None:
        return None
    module, _, attribute = str(declared["vocabulary"]).partition(":")
    words = getattr(importlib.import_module(module), attribute)
    return Choices(frozenset(words), tuple(declared.get("binary", ())), int(declared.get("seed", 0)))


@dataclass(frozen=True)
class RowDifficulty:
    """A layout's ``difficulty`` declaration, resolved: the function, the columns it reads, the struct's features.

    Example:
        >>> from clevr_math import ClevrMath
        >>> from builder_utils.hub.layout import layout_of
        >>> found = difficulty_of(layout_of(ClevrMath))
        >>> found.columns, found({"num_operations": 1, "num_objects": 5, "label": 2})["objects"]
        (('num_operations', 'num_objects', 'label'), 5)
    """

    function: Callable[[Mapping], dict]
    columns: tuple[str, ...]
    feature: dict

    def __call__(self, row: Mapping) -> dict:
        return self.function(row)


def difficulty_of(layout: HubLayout) -> RowDifficulty | None:
    """The :class:`RowDifficulty` of a layout's ``difficulty`` declaration (None without one)."""
    declared = layout.difficulty
    if declared is None:
        return None
    module, _, name = str(declared["function"]).partition(":")
    feature = {field_name: datasets.Value(dtype) for field_name, dtype in dict(declared["features"]).items()}
    return RowDifficulty(getattr(importlib.import_module(module), name), tuple(declared.get("columns", ())), feature)


@dataclass(frozen=True)
class TrainerFormat(DerivedLayout):
    """One trainer's layout, declared once: its rows, features, media form and card text.

    ``media_kinds``: what it serves (EasyR1, R1-V, VLM-R1, Reason-RFT and LMM-R1 read images only);
    ``needs_reasoning``: rows need the question's chain of thought (CoT-SFT).

    Example:
        >>> FORMATS["r1v"].media_form, FORMATS["r1v"].media_name
        ('single', 'image')
    """

    name: str
    trainer: str
    build: Callable[[TrainerQuestion], dict] = field(repr=False)
    features: Callable[[datasets.Features, PromptSpec], dict] = field(repr=False)
    media_form: str = "list"
    media_name: str = "images"
    media_kinds: tuple[str, ...] = ("image",)
    audio_form: str = "bytes_list"
    needs_reasoning: bool = False
    needs_choices: bool = False
    reads: str = ""
    run: str = ""
    names_files: bool = False
    takes_given: bool = False

    def __post_init__(self):
        for form in (self.media_form, self.audio_form):
            if form not in MEDIA_FORMS:
                raise ValueError(f"{self.name}: a media form must be one of {', '.join(MEDIA_FORMS)}, got {form!r}")

    def available(self, layout: HubLayout) -> bool:
        spec = layout.prompt_spec() if layout.prompts is not None else None
        if spec is None or spec.media_kind not in self.media_kinds:
            return False
        if self.needs_choices and layout.choices is None:
            return False
        return not self.needs_reasoning or bool(layout.reasoning)

    def media_for(self, kind: str) -> tuple[str, str]:
        """The media form and column of rows whose files are of ``kind`` (audio: raw bytes in ``audios``)."""
        return (self.audio_form, "audios") if kind == "audio" else (self.media_form, self.media_name)

    def media_list(self, found) -> str | None:
        if found.spec is None:
            return None
        form, name = self.media_for(found.spec.media_kind)
        return name if form in ("single", "list") else None  # Image/Audio values: the plan counts them

    def rows(self, source, found, style, audio_rate):
        choices = choices_of(found.layout) if self.needs_choices else None
        difficulty = difficulty_of(found.layout)
        return {split: trainer_split(rows, found.spec, self, style, split, found.layout.reasoning, choices, difficulty)
                for split, rows in source.items()}

    def description(self, layout, source):
        return f"Follows `{source}`: one row per question in {self.trainer}'s own layout ({self.reads})."

    def snippet(self, layout, config, media, style):
        return "\n".join(["from datasets import load_dataset", "",
                          f'train = load_dataset("REPO_ID", "{config}", split="train")', f"# {self.run}"])

    def notes(self, layout, config, media, audio_rate):
        return [f"{self.trainer} reads {self.reads}.", f"Run: {self.run}."]


def _media_value(value: Mapping) -> bytes:
    if value.get("bytes") is not None:
        return value["bytes"]
    with open(value["path"], "rb") as handle:
        return handle.read()


def data_uri(value: Mapping) -> str:
    """A stored image (``{"bytes", "path"}``) as a ``data:`` URI, which ``qwen_vl_utils.fetch_image`` reads.

    Example:
        >>> data_uri({"bytes": b"abc", "path": "a.png"})
        'data:image/png;base64,YWJj'
    """
    kind = mimetypes.guess_type(value.get("path") or "")[0] or "image/png"
    return f"data:{kind};base64,{base64.b64encode(_media_value(value)).decode('ascii')}"


def _with_file_bytes(rows: datasets.Dataset, column: str, cache_file: str | None) -> datasets.Dataset:
    """``rows`` with each one-item media list of ``column`` replaced by the file's raw bytes, a batch at a
    time through ``Dataset.map`` (written to ``cache_file``: the clips are not all held in memory)."""
    features = rows.features.copy()
    features[column] = list_of(datasets.Value("binary"))
    position = list(features).index(column)

    def read(batch: pa.Table) -> pa.Table:
        values = batch.column(column).combine_chunks().flatten().to_pylist()
        files = pa.array([[_media_value(v)] for v in values], pa.list_(pa.binary()))
        return batch.set_column(position, column, files)

    done = rows.with_format("arrow").map(
        read, batched=True, batch_size=64, features=features, cache_file_name=cache_file,
        keep_in_memory=cache_file is None, load_from_cache_file=False, desc="reading files as bytes")
    return done.with_format(None)


def _with_file_uris(rows: datasets.Dataset, column: str, cache_file: str | None) -> datasets.Dataset:
    """``rows`` with :data:`FILE_MARK` in the text ``column`` replaced by the row's file (the hidden
    files column, then dropped) as a data URI, a batch at a time: the URIs are not all held in memory."""
    features = rows.features.copy()
    del features[_FILES]
    position = list(rows.features).index(column)
    mark = json.dumps(FILE_MARK)[1:-1]  # as it reads inside the JSON text

    def fill(batch: pa.Table) -> pa.Table:
        texts = batch.column(column).to_pylist()
        files = batch.column(_FILES).to_pylist()
        filled = [text.replace(mark, data_uri(file), 1) for text, file in zip(texts, files)]
        return batch.set_column(position, column, pa.array(filled, pa.string())).drop_columns([_FILES])

    done = rows.with_format("arrow").map(
        fill, batched=True, batch_size=64, features=features, cache_file_name=cache_file,
        keep_in_memory=cache_file is None, load_from_cache_file=False, desc="writing files into the prompts")
    return done.with_format(None)


def trainer_split(rows: datasets.Dataset, spec: PromptSpec, fmt: TrainerFormat, style, split: str,
                  reasoning: str | None = None, choices: Choices | None = None,
                  difficulty: RowDifficulty | None = None) -> datasets.Dataset:
    """The ``fmt`` rows of one split of question rows, in order; a row the format cannot make (a
    multiple-choice row of a question without a majority answer) is left out.

    Example::

        trainer_split(built["general"]["train"], prompt_spec_of(ClevrMath), FORMATS["r1v"], "think_answer", "train")
    """
    if rows._indices is not None:
        rows = rows.flatten_indices(keep_in_memory=True)
    source = rows.features
    form, name = fmt.media_for(spec.media_kind)
    instruction = prompt_style(style).instruction
    table = rows.data.table
    wanted = list(spec.source_columns()) + ([reasoning] if reasoning and reasoning in source else [])
    if difficulty is not None:
        wanted += [name for name in difficulty.columns if name in source]
    questions = table.select(list(dict.fromkeys(wanted))).to_pylist()
    # The file's own name (a release's file may be named otherwise than its key: Clotho's quirks).
    paths = pc.struct_field(table.column(spec.media_column), "path").to_pylist() if form == "key" else None
    built, kept = [], []
    for index, row in enumerate(questions):
        answer = None if row[spec.answer] is None else str(row[spec.answer])
        options = None
        if choices is not None and answer is not None:
            golds = row[spec.ground_truth] if spec.ground_truth else None
            options = tuple(choices.options(str(row["question_id"]), answer, golds))
        media = FILE_MARK if form == "in_text" else None  # its data URI is written batch by batch below
        if paths is not None:
            media = os.path.basename(paths[index]) if paths[index] else row[spec.key]
        made = fmt.build(TrainerQuestion(
            row[spec.question], answer, {n: row[n] for n in spec.columns}, spec.media_kind, instruction, split,
            index, row.get(reasoning) if reasoning else None, media, spec.data_source, options))
        if made is not None:
            if difficulty is not None:
                made[DIFFICULTY] = difficulty(row)
            built.append(made)
            kept.append(index)
    features = dict(fmt.features(source, spec))
    if difficulty is not None:
        features[DIFFICULTY] = difficulty.feature
    text = pa.Table.from_pylist(built, schema=datasets.Features(features).arrow_schema)
    if form in ("single", "list", "bytes_list", "in_text"):
        column = table.column(spec.media_column)
        if len(kept) != len(rows):
            column = column.take(pa.array(kept, pa.int64()))
        column = column.combine_chunks()
        feature = source[spec.media_column]
        if form in ("list", "bytes_list"):
            column = pa.ListArray.from_arrays(pa.array(range(len(kept) + 1), pa.int32()), column)
            feature = list_of(feature)
        text = text.append_column(_FILES if form == "in_text" else name, column)
        features[_FILES if form == "in_text" else name] = feature
    built = dataset_from_table(text, datasets.Features(features), split)
    cache = os.path.dirname(rows.cache_files[0]["filename"]) if rows.cache_files else None
    cache_file = cache and os.path.join(cache, f"{fmt.name}-{split}.arrow")
    if form == "bytes_list":
        built = _with_file_bytes(built, name, cache_file)
    elif form == "in_text":
        built = _with_file_uris(built, name, cache_file)
    return built


# -- the declarations --------------------------------------------------------------------------

def _r1v(q: TrainerQuestion) -> dict:
    return {"problem": q.question, "solution": _answer_tags(q.answer), **_extras(q)}


def _r1v_features(source, spec):
    return {**_string_features("problem", "solution"), **_extra_features(source, spec)}


def _easyr1(q: TrainerQuestion) -> dict:
    return {"problem": q.marker + q.with_instruction(q.question), "answer": q.answer, **_extras(q, {"answer"})}


def _easyr1_features(source, spec):
    return {**_string_features("problem", "answer"), **_extra_features(source, spec, frozenset({"answer"}))}


def _swift(q: TrainerQuestion) -> dict:
    messages = [] if q.instruction is None else [{"role": "system", "content": q.instruction}]
    messages.append({"role": "user", "content": q.marker + q.question})
    extras = _extras(q, SWIFT_RESERVED)
    if "answers" in q.columns:
        extras[SWIFT_ANSWERS] = q.columns["answers"]
    return {"messages": messages, "solution": q.answer, **extras}


def _swift_features(source, spec):
    string = datasets.Value("string")
    columns = {"messages": list_of({"role": string, "content": string}), "solution": string,
               **_extra_features(source, spec, SWIFT_RESERVED)}
    if "answers" in spec.columns:
        columns[SWIFT_ANSWERS] = source["answers"]
    return columns


def _vlm_r1(q: TrainerQuestion) -> dict:
    turns = [{"from": "human", "value": q.marker + q.question}, {"from": "gpt", "value": q.answer}]
    # An unknown method falls back to VLM-R1's default reward; with ours registered (README) it is ours.
    return {"image": q.media, "conversations": turns, "accu_reward_method": q.data_source, **_extras(q, {"image"})}


def _vlm_r1_features(source, spec):
    string = datasets.Value("string")
    return {"image": string, "conversations": list_of({"from": string, "value": string}),
            "accu_reward_method": string, **_extra_features(source, spec, frozenset({"image"}))}


def _reason_rft(q: TrainerQuestion) -> dict:
    return {"id": str(q.columns["question_id"]), "problem": q.question, "solution": _answer_tags(q.answer),
            **_extras(q, frozenset({"id"}))}


def _reason_rft_features(source, spec):
    return {**_string_features("id", "problem", "solution"), **_extra_features(source, spec, frozenset({"id"}))}


def _reason_rft_cot(q: TrainerQuestion) -> dict:
    messages = [{"role": "user", "content": q.marker + q.question},
                {"role": "assistant", "content": think_answer_text(q.reasoning, q.answer)}]
    return {"messages": messages, **_extras(q)}


def _reason_rft_cot_features(source, spec):
    string = datasets.Value("string")
    return {"messages": list_of({"role": string, "content": string}), **_extra_features(source, spec)}


def _lmm_r1(q: TrainerQuestion) -> dict:
    messages = [] if q.instruction is None else [{"role": "system", "content": q.instruction}]
    messages.append({"role": "user", "content": [{"type": "image", "image": q.media},
                                                 {"type": "text", "text": q.question}]})
    return {"message": json.dumps(messages), "question": q.question,
            "answer": None if q.answer is None else f"${q.answer}$", **_extras(q, {"question", "answer"})}


def _lmm_r1_features(source, spec):
    return {**_string_features("message", "question", "answer"),
            **_extra_features(source, spec, frozenset({"question", "answer"}))}


def _options_text(options) -> str:
    return "Please choose the answer from the following options: " + ", ".join(options) + "."


def _swift_choices(q: TrainerQuestion) -> dict | None:
    if q.choices is None:
        return None  # no majority answer: no single right option
    messages = [] if q.instruction is None else [{"role": "system", "content": q.instruction}]
    messages.append({"role": "user", "content": f"{q.marker}{q.question} {_options_text(q.choices)}"})
    return {"messages": messages, "solution": q.answer, "choices": list(q.choices),
            **_extras(q, SWIFT_RESERVED | {"answers", "choices"})}


def _swift_choices_features(source, spec):
    string = datasets.Value("string")
    return {"messages": list_of({"role": string, "content": string}), "solution": string,
            "choices": list_of(string), **_extra_features(source, spec, SWIFT_RESERVED | {"answers", "choices"})}


def _r1_aqa(q: TrainerQuestion) -> dict | None:
    if q.choices is None:
        return None
    # R1-AQA's dataset.py builds its prompt and `<answer>` solution for dataset_name AVQA only.
    return {"audio_path": q.media, "question_text": q.question, "multi_choice": list(q.choices),
            "answer": q.choices.index(q.answer), "dataset_name": "AVQA",
            **_extras(q, frozenset({"answer", "answers", "audio_path", "question_text", "multi_choice"}))}


def _r1_aqa_features(source, spec):
    string = datasets.Value("string")
    reserved = frozenset({"answer", "answers", "audio_path", "question_text", "multi_choice"})
    return {"audio_path": string, "question_text": string, "multi_choice": list_of(string),
            "answer": datasets.Value("int64"), "dataset_name": string, **_extra_features(source, spec, reserved)}


#: The trainer layouts, each a derived configuration of its name (``_multihop`` variants follow ``multihop``).
TRAINER_FORMATS: tuple[TrainerFormat, ...] = (
    TrainerFormat("r1v", "R1-V", _r1v, _r1v_features, "single", "image",
                  reads="`image`, `problem` (its script adds its <think>/<answer> template), `solution` = "
                        "`<answer> N </answer>`",
                  run="src/r1-v/src/open_r1/grpo.py --dataset_name <export folder> --dataset_config r1v"),
    TrainerFormat("easyr1", "EasyR1", _easyr1, _easyr1_features, "list", "images",
                  reads="`problem` (`<image>` then the question and the --prompt_style instruction), `answer`, "
                        "`images`",
                  run="python3 -m verl.trainer.main config=examples/config.yaml data.train_files=<export>/easyr1 "
                      "data.format_prompt=null worker.reward.reward_function=<clevr_math/easyr1_reward.py>:compute_score"),
    TrainerFormat("swift", "ms-swift", _swift, _swift_features, "list", "images", ("image", "audio"),
                  reads="`messages` (`<image>` / `<audio>` in the user text), `images` / `audios`, `solution` "
                        "(handed to its reward classes); no `answer`, `answers`, `label` or `question` column, "
                        "which its automatic mapping would take",
                  run="swift rlhf --rlhf_type grpo --dataset <export>/swift/train-00000-of-0000N.parquet "
                      "--external_plugins <package>/swift_plugin.py --reward_funcs <dataset>_accuracy <dataset>_format"),
    TrainerFormat("vlm_r1", "VLM-R1", _vlm_r1, _vlm_r1_features, "key", "image",
                  reads="JSONL rows of `image` (a file name under --image_folders), `conversations` "
                        "(`from`/`value`, `<image>` in the human turn) and `accu_reward_method`",
                  run="each split written as JSONL (`Dataset.to_json`), then "
                      "grpo_jsonl.py --data_file_paths train.jsonl --image_folders <CLEVR>/images/train"),
    TrainerFormat("reason_rft", "Reason-RFT (RL)", _reason_rft, _reason_rft_features, "single", "image",
                  reads="`id`, `image`, `problem` (its script adds its template), `solution` = `<answer> N </answer>`",
                  run="train/stage_rl/grpo.py --task_name clevr-math --dataset_name <export folder> "
                      "--dataset_config reason_rft"),
    TrainerFormat("reason_rft_cot", "Reason-RFT (CoT-SFT)", _reason_rft_cot, _reason_rft_cot_features, "list", "image",
                  needs_reasoning=True,
                  reads="ShareGPT `messages` (`<image>` in the user turn, the answer as <think>cot</think>"
                        "<answer>N</answer>) and `image`, a list (LLaMA-Factory's `images` column)",
                  run="a dataset_info.json entry: formatting sharegpt, columns messages=messages, images=image"),
    TrainerFormat("lmm_r1", "LMM-R1", _lmm_r1, _lmm_r1_features, "in_text", "message",
                  reads="`message`, the messages as a JSON string (the image inside as a data: URI, which "
                        "qwen_vl_utils reads), and `answer` = `$N$`",
                  run="--prompt_data <export>/lmm_r1 --input_key message --label_key answer"),
    TrainerFormat("swift_choices", "ms-swift (multiple choice)", _swift_choices, _swift_choices_features, "list",
                  "images", ("audio",), needs_choices=True,
                  reads="`messages` (`<audio>`, the question and its options), `audios` (raw bytes), `solution` = "
                        "the right option's text, `choices`; questions without a majority answer are left out",
                  run="swift rlhf --rlhf_type grpo --dataset <export>/swift_choices/train-00000-of-0000N.parquet "
                      "--external_plugins clotho_aqa/swift_plugin.py --reward_funcs clotho_aqa_accuracy "
                      "clotho_aqa_format"),
    TrainerFormat("r1_aqa", "R1-AQA", _r1_aqa, _r1_aqa_features, "key", "audio_path", ("audio",),
                  audio_form="key", needs_choices=True,
                  reads="JSONL rows of `audio_path` (a clip's file name), `question_text`, `multi_choice` (the "
                        "options), `answer` (the right option's index) and `dataset_name` AVQA, the rows its "
                        "loader prompts with the options and scores in <answer> tags",
                  run="each split written as JSONL (`Dataset.to_json`) with `audio_path` joined to the clips' "
                      "folder; src/train.py --data_file train.jsonl"),
)
FORMATS: dict[str, TrainerFormat] = {fmt.name: fmt for fmt in TRAINER_FORMATS}


# -- rows made in memory (a stream, a problem set) ----------------------------------------------

def _media_feature(fmt: TrainerFormat, spec: PromptSpec, media_feature) -> tuple[str, Any] | None:
    form, name = fmt.media_for(spec.media_kind)
    if form == "single":
        return name, media_feature
    if form == "list":
        return name, list_of(media_feature)
    if form == "bytes_list":
        return name, list_of(datasets.Value("binary"))
    return None


def in_trainer_format(rows: datasets.Dataset | datasets.IterableDataset, name: str, layout: HubLayout,
                      style, split: str = "train") -> datasets.Dataset | datasets.IterableDataset:
    """``prompts``-style rows made in memory (a one-item media list; the stream's, the problem sets')
    in the trainer layout ``name``: the rows an export of that configuration holds, row by row.

    Example::

        in_trainer_format(clevr_math.problems(size=8), "r1v", layout_of(ClevrMath), "think_answer")
    """
    fmt = FORMATS.get(name)
    if fmt is None:
        raise ValueError(f"unknown trainer format {name!r}; valid: {', '.join(FORMATS)}")
    if not fmt.available(layout):
        raise ValueError(f"the {name} layout does not serve this dataset")
    spec = layout.prompt_spec()
    media_list = spec.media_list
    media_feature = rows.features[media_list].feature
    undecoded = type(media_feature)(decode=False)
    rows = rows.cast_column(media_list, list_of(undecoded))
    features = dict(fmt.features(rows.features | {spec.media_column: media_feature}, spec))
    difficulty = difficulty_of(layout)
    if difficulty is not None:
        features[DIFFICULTY] = difficulty.feature
    placed = _media_feature(fmt, spec, media_feature)
    if placed is not None:
        features[placed[0]] = placed[1]
    choices = choices_of(layout) if fmt.needs_choices else None
    instruction = prompt_style(style).instruction
    reasoning = layout.reasoning

    def convert(row: dict, index: int) -> dict:
        value = row[media_list][0]
        answer = None if row[spec.answer] is None else str(row[spec.answer])
        options = None
        if choices is not None and answer is not None:
            golds = row[spec.ground_truth] if spec.ground_truth else None
            options = tuple(choices.options(str(row["question_id"]), answer, golds))
        form, media_name = fmt.media_for(spec.media_kind)
        media = data_uri(value) if form == "in_text" else (
            os.path.basename(value["path"]) if value.get("path") else row[spec.key]) if form == "key" else None
        made = fmt.build(TrainerQuestion(
            row[spec.question], answer, {n: row[n] for n in spec.columns}, spec.media_kind, instruction, split, index,
            row.get(reasoning) if reasoning else None, media, spec.data_source, options))
        if made is not None and difficulty is not None:
            made[DIFFICULTY] = difficulty(row)
        if made is not None and form in ("single", "list", "bytes_list"):
            made[media_name] = (value if form == "single" else [value] if form == "list"
                                else [_media_value(value)])
        return made

    def batch(batched: dict, indices: list[int]) -> dict:
        examples = [dict(zip(batched, values)) for values in zip(*batched.values())]
        made = [convert(example, index) for example, index in zip(examples, indices)]
        made = [m for m in made if m is not None]
        return {column: [m[column] for m in made] for column in features}

    made = rows.map(batch, batched=True, with_indices=True, remove_columns=list(rows.column_names),
                    features=datasets.Features(features))
    # a stream read undecoded above stays so after map: decode its media on iteration, as the stream did
    return made.decode(True) if isinstance(made, datasets.IterableDataset) else made
