"""Clotho-AQA as a Hugging Face ``datasets`` builder that needs no loading script and no torch.

Example::

    from clotho_aqa import ClothoAQA, decode_audio
    builder = ClothoAQA(config_name="questions", data_dir="release")
    builder.download_and_prepare()
"""


from builder_utils.lazy import lazy_exports

# Imported on first use (builder_utils/lazy.py): the scorers and lmms-eval task stay light.
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "CONFIG_NAMES": "clotho_aqa.config",
    "ClothoAQA": "clotho_aqa.clotho_aqa",
    "ClothoAQAConfig": "clotho_aqa.config",
    "MissingAudioError": "clotho_aqa.release",
    "ReleaseError": "clotho_aqa.release",
    "decode_audio": "clotho_aqa.audio",
    "evaluate": "clotho_aqa.evaluation",
    "figure": "clotho_aqa.figures",
    "without_decoding": "clotho_aqa.audio",
    "write_evaluation": "clotho_aqa.evaluation",
})
