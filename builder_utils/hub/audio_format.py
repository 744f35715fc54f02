"""``--audio_format flac``: embedded WAV clips re-encoded losslessly as FLAC, with soundfile (same samples)."""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor

import datasets
import pyarrow as pa
import soundfile

from builder_utils.media_check import MediaError, check_audio_size

# WAV subtypes whose samples FLAC holds exactly.
_LOSSLESS = {"PCM_16": "PCM_16", "PCM_24": "PCM_24", "PCM_S8": "PCM_S8", "PCM_U8": "PCM_S8"}


class AudioFormatError(ValueError):
    """A clip that cannot be written in the requested format; the message names it."""


def to_flac(data: bytes, name: str) -> bytes:
    """The FLAC encoding of one WAV file's bytes (same sampling rate, channels and samples).

    Example:
        >>> import numpy as np
        >>> wav = io.BytesIO(); soundfile.write(wav, np.zeros(100, dtype="int16"), 16000, format="WAV")
        >>> soundfile.info(io.BytesIO(to_flac(wav.getvalue(), "a.wav"))).format
        'FLAC'
    """
    try:
        with soundfile.SoundFile(io.BytesIO(data)) as source:
            subtype = _LOSSLESS.get(source.subtype)
            if subtype is None:
                raise AudioFormatError(
                    f"{name}: {source.subtype} samples have no lossless FLAC form (FLAC holds 8/16/24-bit integers)"
                )
            # the header's frames decide the allocation: a bomb is refused, not decoded
            check_audio_size(name, source.frames, source.channels, len(data))
            samples = source.read(dtype="int32" if subtype == "PCM_24" else "int16", always_2d=True)
            rate = source.samplerate
    except soundfile.LibsndfileError as exc:
        raise AudioFormatError(f"{name}: not a readable audio file ({exc})") from None
    except MediaError as exc:
        raise AudioFormatError(str(exc)) from None
    out = io.BytesIO()
    soundfile.write(out, samples, rate, format="FLAC", subtype=subtype)
    return out.getvalue()


def flac_path(path: str | None) -> str | None:
    """The stored name of a clip re-encoded as FLAC.

    Example:
        >>> flac_path("rain.wav")
        'rain.flac'
    """
    return None if path is None else os.path.splitext(path)[0] + ".flac"


def _audio_columns(features: datasets.Features) -> list[str]:
    found = []
    for name, feature in features.items():
        inner = getattr(feature, "feature", None)
        if isinstance(feature, datasets.Audio) or isinstance(inner, datasets.Audio):
            found.append(name)
    return found


def _encode_struct(array: pa.StructArray, cache: dict) -> pa.StructArray:
    stored, paths = array.field("bytes").to_pylist(), array.field("path").to_pylist()
    keys = [None if data is None else (path, len(data), hash(data)) for data, path in zip(stored, paths)]
    todo = {key: (data, path) for key, data, path in zip(keys, stored, paths) if key is not None and key not in cache}
    # libsndfile runs without the GIL: threads encode clips side by side; map keeps the order.
    with ThreadPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1) or 1) as pool:
        for key, flac in zip(todo, pool.map(lambda item: to_flac(item[0], item[1] or "audio"), todo.values())):
            cache[key] = flac
    encoded = [None if key is None else cache[key] for key in keys]
    names = [path if key is None else flac_path(path) for key, path in zip(keys, paths)]
    return pa.StructArray.from_arrays(
        [pa.array(encoded, pa.binary()), pa.array(names, pa.string())], names=["bytes", "path"], mask=array.is_null()
    )


def encode_flac(table: pa.Table, features: datasets.Features) -> pa.Table:
    """``table`` (media embedded) with every Audio column, or list of Audio, re-encoded as FLAC.

    Example:
        >>> import numpy as np
        >>> wav = io.BytesIO(); soundfile.write(wav, np.zeros(100, dtype="int16"), 16000, format="WAV")
        >>> features = datasets.Features({"audio": datasets.Audio()})
        >>> table = pa.table({"audio": [{"bytes": wav.getvalue(), "path": "a.wav"}]}, schema=features.arrow_schema)
        >>> encode_flac(table, features).column("audio")[0]["path"].as_py()
        'a.flac'
    """
    cache: dict = {}
    for name in _audio_columns(features):
        position = table.schema.get_field_index(name)
        column = table.column(name).combine_chunks()
        if isinstance(column, pa.ListArray):
            column = pa.ListArray.from_arrays(column.offsets, _encode_struct(column.values, cache),
                                              mask=column.is_null() if column.null_count else None)
        else:
            column = _encode_struct(column, cache)
        table = table.set_column(position, table.schema.field(name), column)
    return table
