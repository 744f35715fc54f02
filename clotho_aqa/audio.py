"""Decoding Clotho-AQA audio without torch (the code is shared: :mod:`builder_utils.audio`).

The official clips are 44.1 kHz mono WAV files, so ``decode_audio(row)`` gives a float32
``(frames,)`` array at 44100 Hz, and ``decode_audio(row, sampling_rate=16000)`` resamples it
with soxr for a 16 kHz model.

Example:
    >>> import builder_utils.audio
    >>> decode_audio is builder_utils.audio.decode_audio
    True
"""

from builder_utils.audio import decode_audio, resample, without_decoding

__all__ = ["decode_audio", "resample", "without_decoding"]
