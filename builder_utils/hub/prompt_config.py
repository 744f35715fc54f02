"""The ``prompts`` configurations (RL): one :func:`builder_utils.prompts.prompt_row` per question.

Inline audio is stored as samples because verl 0.9.1 hands each ``audios`` item to the processor
as it is: README.md (this package), "Training layouts".
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

import datasets
import numpy as np
import pyarrow.compute as pc
import pyarrow as pa

from builder_utils.builder import list_of
from builder_utils.datasets_adapter import dataset_from_table
from builder_utils.options import Integer, check_options, option
from builder_utils.prompts import PromptSpec, PromptStyle, prompt_features, prompt_row, with_media_count

#: Qwen2-Audio's and Whisper's sampling rate: what the ``prompts`` export resamples clips to by default.
DEFAULT_AUDIO_RATE = 16_000
#: Prompt rows whose clips are decoded at once (a question's clip is usually its neighbours').
DECODE_BATCH = 64


@dataclasses.dataclass(frozen=True)
class PromptAudioOptions:
    """The export option of the audio ``prompts`` rows (``--prompt_audio_rate``).

    Example:
        >>> PromptAudioOptions(prompt_audio_rate=4_000)
        Traceback (most recent call last):
        ...
        ValueError: prompt_audio_rate must be an integer in 8000..48000, got 4000
    """

    prompt_audio_rate: int = option(
        DEFAULT_AUDIO_RATE, Integer(8_000, maximum=48_000),
        "sampling rate (Hz) of the clips in the audio prompts configs, stored as samples the way verl hands "
        "them to the processor: that processor's rate (%(default)s: Qwen2-Audio, Whisper)", group="prompts (RL)")

    def __post_init__(self) -> None:
        check_options(self)


def audio_samples_feature():
    """The feature of an audio ``prompts`` row's ``audios``: a list of 1-D float32 sample arrays.

    Example:
        >>> audio_samples_feature().feature.feature
        Value('float32')
    """
    return list_of(list_of(datasets.Value("float32")))


def decoded_audios(column: pa.Array, sampling_rate: int) -> pa.Array:
    """The one-item ``audios`` lists of an Audio column, each distinct clip decoded once (mono float32, soxr).

    Example:
        >>> import io, soundfile
        >>> wav = io.BytesIO(); soundfile.write(wav, np.zeros(441, dtype="float32"), 44_100, format="WAV")
        >>> column = pa.array([{"bytes": wav.getvalue(), "path": "a.wav"}] * 2)
        >>> [len(clips[0]) for clips in decoded_audios(column, 16_000).to_pylist()]
        [160, 160]
    """
    from builder_utils.audio import decode_audio

    values = column.to_pylist()
    keys = [(v.get("path"), None if v.get("bytes") is None else hash(v["bytes"])) for v in values]
    distinct = dict(zip(keys, values))
    # libsndfile and soxr release the GIL: threads decode clips side by side.
    with ThreadPoolExecutor(max_workers=min(len(distinct), os.cpu_count() or 1) or 1) as pool:
        decoded = dict(zip(distinct, pool.map(lambda v: decode_audio(v, sampling_rate, mono=True)[0], distinct.values())))
    arrays = [decoded[key] for key in keys]
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    samples = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(np.concatenate(arrays) if arrays else np.zeros(0, np.float32)))
    return pa.ListArray.from_arrays(pa.array(range(len(arrays) + 1), pa.int32()), samples)


def prompts_split(
    rows: datasets.Dataset, spec: PromptSpec, style: str | PromptStyle, split: str, *, media: bool = True,
    audio_rate: int | None = None,
) -> datasets.Dataset:
    """The prompt rows of one split of question rows, in order; with ``audio_rate``, audio as samples.

    Example:
        >>> rows = datasets.Dataset.from_dict({"question": ["How many?"], "label": [2], "question_id": ["q0"],
        ...                                    "image_filename": ["a.png"], "image": ["a.png"]})
        >>> rows = rows.cast_column("image", datasets.Image())
        >>> spec = PromptSpec("toy", "image", "image", "image_filename", answer="label",
        ...                   columns=("label", "question_id", "image_filename"))
        >>> row = prompts_split(rows, spec, "plain", "train").cast_column("images", datasets.List(datasets.Image(decode=False)))[0]
        >>> row["images"], row["answer"], row["extra_info"]["index"]
        ([{'bytes': None, 'path': 'a.png'}], '2', 0)
    """
    if rows._indices is not None:
        rows = rows.flatten_indices(keep_in_memory=True)
    source = rows.features
    features = prompt_features(source, spec, media=media)
    cache = os.path.dirname(rows.cache_files[0]["filename"]) if rows.cache_files else None
    table = rows.data.table
    # Only the text columns go through Python; the media column stays Arrow (paths or bytes).
    questions = table.select(list(spec.source_columns())).to_pylist()
    built = [prompt_row(row, dataset=spec, style=style, split=split, index=i) for i, row in enumerate(questions)]
    # Several media per row (a problem's worlds), inline only: one placeholder each. A shared export's
    # rows name their one file by key, so they keep one placeholder.
    sequence = spec.media_sequence if media and spec.media_sequence in source else None
    if sequence is not None:
        for row, count in zip(built, pc.list_value_length(table.column(sequence)).to_pylist()):
            with_media_count(row, count)
    text_features = prompt_features(source, spec, media=False)
    text = pa.Table.from_pylist(built, schema=text_features.arrow_schema) if built else text_features.arrow_schema.empty_table()
    if media:
        offsets = pa.array(range(len(rows) + 1), pa.int32())
        column = pa.ListArray.from_arrays(offsets, table.column(spec.media_column).combine_chunks())
        if sequence is not None:
            column = table.column(sequence).combine_chunks()
        text = text.add_column(list(features).index(spec.media_list), spec.media_list, column)
    built = dataset_from_table(text, features, split)
    if media and audio_rate is not None and spec.media_kind == "audio":
        built = with_samples(built, spec.media_list, audio_rate, cache and os.path.join(cache, f"prompts-{split}.arrow"))
    return built


def with_samples(rows: datasets.Dataset, column: str, sampling_rate: int, cache_file: str | None = None) -> datasets.Dataset:
    """``rows`` with the clips of ``column`` decoded to samples, :data:`DECODE_BATCH` rows at a time.

    ``Dataset.map`` writes them to ``cache_file`` (None: in memory), so they are memory-mapped, not held.

    Example:
        >>> import io, soundfile
        >>> wav = io.BytesIO(); soundfile.write(wav, np.zeros(441, dtype="float32"), 44_100, format="WAV")
        >>> features = datasets.Features({"audios": list_of(datasets.Audio())})
        >>> table = pa.table({"audios": [[{"bytes": wav.getvalue(), "path": "a.wav"}]]}, schema=features.arrow_schema)
        >>> rows = dataset_from_table(table, features, None)
        >>> len(with_samples(rows, "audios", 16_000)[0]["audios"][0])
        160
    """
    features = rows.features.copy()
    features[column] = audio_samples_feature()
    position = list(features).index(column)

    def decode(batch: pa.Table) -> pa.Table:
        clips = decoded_audios(batch.column(column).combine_chunks().flatten(), sampling_rate)
        return batch.set_column(position, column, clips)

    decoded = rows.with_format("arrow").map(
        decode, batched=True, batch_size=DECODE_BATCH, features=features, cache_file_name=cache_file,
        keep_in_memory=cache_file is None, load_from_cache_file=False, desc=f"decoding clips at {sampling_rate} Hz")
    return decoded.with_format(None)


def prompts(
    source: Mapping[str, datasets.Dataset], spec: PromptSpec, style: str | PromptStyle, *, media: bool = True,
    audio_rate: int | None = None,
) -> dict[str, datasets.Dataset]:
    """A ``prompts`` configuration: :func:`prompts_split` of every split of ``source``.

    Example::

        prompts(built["general"], prompt_spec_of(ClevrMath), "think_answer", media=False)["train"][0]["prompt"]
    """
    return {split: prompts_split(rows, spec, style, split, media=media, audio_rate=audio_rate)
            for split, rows in source.items()}
