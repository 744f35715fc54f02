"""Decoding an ``Audio`` column without torch: soundfile to read, soxr to resample.

``datasets`` 5.x decodes with torchcodec (torch and FFmpeg); usage: clotho_aqa/README.md. Channels
are kept, ``(C, frames)`` as torchcodec's ``AudioSamples.data`` lays them out (``datasets``' own
decoder averages them to mono); soxr "HQ" is what ``datasets`` used before torchcodec.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np
import soundfile
import soxr

#: The highest sampling rate a clip is resampled to: 768 kHz, the most any audio interface records
#: (a larger one would only allocate memory).
MAX_SAMPLING_RATE = 768_000


def _layout(data: np.ndarray, mono: bool) -> np.ndarray:
    """(channels, frames) float32 -> the documented layout."""
    if mono:
        return data.mean(axis=0, dtype=np.float32) if data.shape[0] > 1 else data[0]
    return data[0] if data.shape[0] == 1 else data


def resample(data: np.ndarray, rate: int, sampling_rate: int) -> np.ndarray:
    """Resample ``(channels, frames)`` float32 samples from ``rate`` to ``sampling_rate`` Hz with soxr.

    Example:
        >>> resample(np.zeros((2, 44_100), dtype=np.float32), 44_100, 16_000).shape
        (2, 16000)
    """
    if sampling_rate <= 0:
        raise ValueError(f"sampling_rate must be a positive number of Hz, got {sampling_rate}")
    if rate == sampling_rate:
        return data
    # soxr wants (frames, channels); a C-contiguous copy keeps it from copying again.
    out = soxr.resample(np.ascontiguousarray(data.T), rate, sampling_rate, quality="HQ")
    return np.ascontiguousarray(np.asarray(out, dtype=np.float32).reshape(-1, data.shape[0]).T)


def _read(value: dict) -> tuple[np.ndarray, int]:
    """An undecoded ``{"bytes", "path"}`` value -> ((channels, frames) float32, rate)."""
    raw, path = value.get("bytes"), value.get("path")
    if raw is None and not path:
        raise ValueError("audio dict has neither 'bytes' nor 'path'")
    if raw is None and not os.path.isfile(path):
        raise FileNotFoundError(f"audio file {path} does not exist (was the source folder moved or deleted?)")
    try:
        data, rate = soundfile.read(io.BytesIO(raw) if raw is not None else path, dtype="float32", always_2d=True)
    except soundfile.LibsndfileError as err:
        raise ValueError(f"cannot decode audio {path or '<bytes>'}: {err}") from None
    return np.ascontiguousarray(data.T), int(rate)


def _audio_column_of(row: dict, column: str | None) -> str:
    """The row's audio column: ``column``, else ``audio`` or ``audios``; none is a ValueError saying why."""
    names = [column] if column is not None else ["audio", "audios"]
    for name in names:
        if name in row:
            return name
    raise ValueError(
        f"the row has no {' or '.join(map(repr, names))} column (columns: {', '.join(map(str, row))}); "
        "rows of a --media shared export name their clip in file_name: join them with "
        "builder_utils.hub.attach_media(questions, clips) first"
    )


def decode_audio(
    value: Any, sampling_rate: int | None = None, mono: bool = False, column: str | None = None
) -> tuple[np.ndarray, int]:
    """Decode one clip to ``(array, sampling_rate)`` with soundfile, resampled with soxr if asked.

    ``value``: a row, an undecoded or decoded audio dict, or a torchcodec ``AudioDecoder``. Mono
    files give ``(frames,)``, others ``(channels, frames)`` float32; ``mono=True`` averages.

    Example:
        >>> wav = io.BytesIO()
        >>> soundfile.write(wav, np.zeros(44_100, dtype=np.float32), 44_100, format="WAV")
        >>> array, rate = decode_audio({"audio": {"bytes": wav.getvalue(), "path": None}}, sampling_rate=16_000)
        >>> array.shape, array.dtype, rate
        ((16000,), dtype('float32'), 16000)
    """
    from builder_utils.options import Flag, Instance, Integer

    Integer(1, maximum=MAX_SAMPLING_RATE, optional=True)("sampling_rate", sampling_rate)
    Flag()("mono", mono)
    Instance(str, optional=True)("column", column)
    if isinstance(value, dict) and not ({"bytes", "path", "array"} & set(value)):
        value = value[_audio_column_of(value, column)]
    if isinstance(value, list):  # a list column holds one clip per row in our layouts
        if len(value) != 1:
            raise ValueError(f"the audio list holds {len(value)} clips; decode one item: decode_audio(row[...][i])")
        value = value[0]
    if hasattr(value, "get_all_samples"):  # torchcodec decoder: keep its channels
        samples = value.get_all_samples()
        data, rate = np.asarray(samples.data.cpu().numpy(), dtype=np.float32), int(samples.sample_rate)
    elif not isinstance(value, dict):
        raise ValueError(
            f"decode_audio expects a row, an audio dict or an AudioDecoder, got {type(value).__name__}"
        )
    elif "array" in value and "sampling_rate" in value:
        data, rate = np.asarray(value["array"], dtype=np.float32), int(value["sampling_rate"])
    else:
        data, rate = _read(value)
    data = np.atleast_2d(data)
    if sampling_rate is not None:
        data, rate = resample(data, rate, int(sampling_rate)), int(sampling_rate)
    return _layout(data, mono), rate


def _undecoded(feature):
    """The ``decode=False`` form of an Audio feature or a list of one; None for anything else."""
    from datasets import Audio

    from builder_utils.builder import list_of

    if isinstance(feature, Audio):
        return Audio(sampling_rate=feature.sampling_rate, decode=False)
    # datasets 4+ spells a list feature List; 3.x (the loading-script mode) Sequence or [feature]
    if isinstance(feature, list) and len(feature) == 1:
        inner = feature[0]
    else:
        inner = getattr(feature, "feature", None) if type(feature).__name__ in ("List", "Sequence") else None
    if isinstance(inner, Audio):
        return list_of(Audio(sampling_rate=inner.sampling_rate, decode=False))
    return None


def without_decoding(dataset, column: str | None = None):
    """The dataset with its audio columns cast to ``Audio(decode=False)``: rows read without torch.

    ``column=None``: every audio column (or list of clips); a dataset without one comes back as it
    is. The sampling rate stays in the feature (the bytes are never resampled).

    Example:
        >>> import datasets
        >>> ds = datasets.Dataset.from_dict({"audio": ["clip.wav"]}).cast_column("audio", datasets.Audio(16_000))
        >>> feature = without_decoding(ds).features["audio"]
        >>> feature.decode, feature.sampling_rate
        (False, 16000)
    """
    from datasets import Audio, Dataset, DatasetDict, IterableDataset, IterableDatasetDict

    from builder_utils.options import Instance

    Instance(Dataset, IterableDataset, DatasetDict, IterableDatasetDict)("dataset", dataset)
    Instance(str, optional=True)("column", column)
    first = next(iter(dataset.values())) if isinstance(dataset, (DatasetDict, IterableDatasetDict)) else dataset
    features = first.features
    if features is None:  # a stream without known features: the question rows' column
        return dataset.cast_column(column or "audio", Audio(decode=False))
    if column is not None and column not in features:
        raise ValueError(f"without_decoding: no column {column!r} (columns: {', '.join(features)})")
    names = [column] if column is not None else list(features)
    casts = {name: _undecoded(features[name]) for name in names}
    if column is not None and casts[column] is None:
        raise ValueError(f"without_decoding: column {column!r} is {features[column]!r}, not audio or a list of audio")
    for name, feature in casts.items():
        if feature is not None:
            dataset = dataset.cast_column(name, feature)
    return dataset
