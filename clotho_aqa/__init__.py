"""Clotho-AQA as a Hugging Face ``datasets`` builder that needs no loading script and no torch.

Example::

    from clotho_aqa import ClothoAQA, decode_audio
    builder = ClothoAQA(config_name="questions", data_dir="release")
    builder.download_and_prepare()
"""

from clotho_aqa.audio import decode_audio, without_decoding
from clotho_aqa.clotho_aqa import ClothoAQA
from clotho_aqa.config import CONFIG_NAMES, ClothoAQAConfig
from clotho_aqa.release import MissingAudioError, ReleaseError

__all__ = [
    "CONFIG_NAMES",
    "ClothoAQA",
    "ClothoAQAConfig",
    "MissingAudioError",
    "ReleaseError",
    "decode_audio",
    "without_decoding",
]
