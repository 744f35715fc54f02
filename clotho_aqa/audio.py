"""Decoding Clotho-AQA audio without torch.

``datasets`` 5.x decodes an ``Audio`` column with torchcodec (which needs torch). Without it,
read the column undecoded and decode with soundfile::

    ds = without_decoding(ds)                # Audio(decode=False): {"bytes", "path"}
    array, sampling_rate = decode_audio(ds[0])

Channels are never mixed down here unless asked (``mono=True``): a mono file gives a 1-D
array of shape ``(frames,)``; a file with C > 1 channels gives ``(C, frames)``, the same
channels-first layout as torchcodec's ``AudioSamples.data``. (For comparison, torchcodec's
``row["audio"]["array"]`` in ``datasets`` averages the channels to mono.) Samples are
float32 in [-1, 1] at the file's own sampling rate; the official clips are all 44.1 kHz
mono, so no resampling is involved for them.
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np
import soundfile


def _samples_to_array(data: np.ndarray, mono: bool) -> np.ndarray:
    """(channels, frames) float32 -> the documented layout."""
    if mono:
        return data.mean(axis=0, dtype=np.float32) if data.shape[0] > 1 else data[0]
    return data[0] if data.shape[0] == 1 else data


def decode_audio(value: Any, mono: bool = False) -> tuple[np.ndarray, int]:
    """Decode one clip to ``(array, sampling_rate)`` with soundfile (or torchcodec if given its decoder).

    ``value`` is a dataset row holding an ``audio`` column, an undecoded audio dict
    (``{"bytes": ..., "path": ...}`` from ``Audio(decode=False)``), an already decoded
    ``{"array", "sampling_rate"}`` dict, or a torchcodec ``AudioDecoder`` (what
    ``Audio(decode=True)`` gives when torchcodec is installed). Mono files give ``(frames,)``,
    multichannel files ``(channels, frames)``; ``mono=True`` averages the channels.

    Example:
        >>> ds = without_decoding(builder.as_dataset("train"))  # doctest: +SKIP
        >>> array, sr = decode_audio(ds[0])  # doctest: +SKIP
        >>> array.shape, sr  # doctest: +SKIP
        ((882000,), 44100)
    """
    if isinstance(value, dict) and "audio" in value:
        value = value["audio"]
    if hasattr(value, "get_all_samples"):  # torchcodec decoder: keep its channels
        samples = value.get_all_samples()
        data = np.asarray(samples.data.cpu().numpy(), dtype=np.float32)
        return _samples_to_array(np.atleast_2d(data), mono), int(samples.sample_rate)
    if not isinstance(value, dict):
        raise TypeError(
            f"decode_audio expects a row, an audio dict or an AudioDecoder, got {type(value).__name__}"
        )
    if "array" in value and "sampling_rate" in value:
        data = np.atleast_2d(np.asarray(value["array"], dtype=np.float32))
        return _samples_to_array(data, mono), int(value["sampling_rate"])
    raw, path = value.get("bytes"), value.get("path")
    if raw is None and not path:
        raise ValueError("audio dict has neither 'bytes' nor 'path'")
    if raw is None and not os.path.isfile(path):
        raise FileNotFoundError(f"audio file {path} does not exist (was the source folder moved or deleted?)")
    try:
        data, rate = soundfile.read(io.BytesIO(raw) if raw is not None else path, dtype="float32", always_2d=True)
    except soundfile.LibsndfileError as err:
        raise ValueError(f"cannot decode audio {path or '<bytes>'}: {err}") from None
    return _samples_to_array(np.ascontiguousarray(data.T), mono), int(rate)


def without_decoding(dataset, column: str = "audio"):
    """The dataset with its audio column cast to ``Audio(decode=False)`` (no torch needed to read rows).

    Example:
        >>> row = without_decoding(ds)[0]  # doctest: +SKIP
        >>> sorted(row["audio"])  # doctest: +SKIP
        ['bytes', 'path']
    """
    from datasets import Audio

    feature = dataset.features[column]
    return dataset.cast_column(column, Audio(sampling_rate=getattr(feature, "sampling_rate", None), decode=False))
