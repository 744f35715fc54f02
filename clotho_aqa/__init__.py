"""Clotho-AQA as a Hugging Face ``datasets`` builder that needs no loading script and no torch.

Example::

    from clotho_aqa import ClothoAQA, decode_audio
    builder = ClothoAQA(config_name="questions", data_dir="release")
    builder.download_and_prepare()
"""


import sys

from builder_utils.lazy import lazy_exports

# Imported on first use: the lmms-eval task utilities and the scorers import submodules of this
# package without paying for the builder and ``datasets``.
_EXPORTS = {
    "CONFIG_NAMES": "clotho_aqa.config",
    "ClothoAQA": "clotho_aqa.clotho_aqa",
    "ClothoAQAConfig": "clotho_aqa.config",
    "MissingAudioError": "clotho_aqa.release",
    "ReleaseError": "clotho_aqa.release",
    "decode_audio": "clotho_aqa.audio",
    "without_decoding": "clotho_aqa.audio",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(sys.modules[__name__], _EXPORTS)
