"""Decoding Clotho-AQA audio without torch (shared: :mod:`builder_utils.audio`; README, "Audio").

Example:
    >>> import builder_utils.audio
    >>> decode_audio is builder_utils.audio.decode_audio
    True
"""

from builder_utils.audio import decode_audio, resample, without_decoding

__all__ = ["decode_audio", "resample", "without_decoding"]
