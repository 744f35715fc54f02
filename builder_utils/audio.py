"""Decoding an ``Audio`` column without torch: soundfile to read, soxr to resample.

``datasets`` 5.x decodes ``Audio`` values with torchcodec, which needs torch and FFmpeg. Reading
the column undecoded (``without_decoding``) and decoding one value with :func:`decode_audio`
needs neither::

    ds = without_decoding(ds)                                   # Audio(decode=False)
    array, rate = decode_audio(ds[0], sampling_rate=16000)      # float32, resampled to 16 kHz

Channels are never mixed down unless asked (``mono=True``): a mono file gives a 1-D array of
shape ``(frames,)``; a file with C > 1 channels gives ``(C, frames)``, the channels-first layout
of torchcodec's ``AudioSamples.data``. (``row["audio"]["array"]`` of ``datasets``' own decoder
averages the channels to mono.) Resampling uses soxr's "HQ" quality, as ``datasets`` did
before torchcodec.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np
import soundfile
import soxr


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


def decode_audio(
    value: Any, sampling_rate: int | None = None, mono: bool = False, column: str = "audio"
) -> tuple[np.ndarray, int]:
    """Decode one clip to ``(array, sampling_rate)`` with soundfile, resampled with soxr if asked.

    ``value`` is a dataset row holding the audio ``column``, an undecoded audio dict
    (``{"bytes": ..., "path": ...}`` from ``Audio(decode=False)``), an already decoded
    ``{"array", "sampling_rate"}`` dict, or a torchcodec ``AudioDecoder`` (what
    ``Audio(decode=True)`` gives when torchcodec is installed). ``sampling_rate=None`` keeps the
    file's own rate. Mono files give ``(frames,)``, multichannel files ``(channels, frames)``,
    float32 in [-1, 1]; ``mono=True`` averages the channels.

    Example:
        >>> wav = io.BytesIO()
        >>> soundfile.write(wav, np.zeros(44_100, dtype=np.float32), 44_100, format="WAV")
        >>> array, rate = decode_audio({"audio": {"bytes": wav.getvalue(), "path": None}}, sampling_rate=16_000)
        >>> array.shape, array.dtype, rate
        ((16000,), dtype('float32'), 16000)
    """
    if isinstance(value, dict) and column in value:
        value = value[column]
    if hasattr(value, "get_all_samples"):  # torchcodec decoder: keep its channels
        samples = value.get_all_samples()
        data, rate = np.asarray(samples.data.cpu().numpy(), dtype=np.float32), int(samples.sample_rate)
    elif not isinstance(value, dict):
        raise TypeError(
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


def without_decoding(dataset, column: str = "audio"):
    """The dataset with its audio ``column`` cast to ``Audio(decode=False)``: rows read without torch.

    Works on a ``Dataset``, a ``DatasetDict`` and their streaming (``Iterable``) forms; the
    column's sampling rate is kept in the feature (the bytes are never resampled).

    Example:
        >>> import datasets
        >>> ds = datasets.Dataset.from_dict({"audio": ["clip.wav"]}).cast_column("audio", datasets.Audio(16_000))
        >>> feature = without_decoding(ds).features["audio"]
        >>> feature.decode, feature.sampling_rate
        (False, 16000)
    """
    from datasets import Audio, DatasetDict, IterableDatasetDict

    first = next(iter(dataset.values())) if isinstance(dataset, (DatasetDict, IterableDatasetDict)) else dataset
    features = first.features
    feature = features[column] if features is not None else None
    return dataset.cast_column(column, Audio(sampling_rate=getattr(feature, "sampling_rate", None), decode=False))
