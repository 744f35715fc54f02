"""Shared generation core for the CLEVR-Math and Clotho-AQA builders.

Nothing in here is specific to one dataset: CLEVR scenes and functional programs
(:mod:`builder_utils.clevr`), the template engine, synthetic scenes, multilabel
stratified splits (:mod:`builder_utils.splits`) and the Hub export
(:mod:`builder_utils.hub`); the builders' shared plumbing (:mod:`~builder_utils.builder`: cache
key, config checks; :mod:`~builder_utils.checksums`: downloads; :mod:`~builder_utils.media_check`:
PNG/WAV checks; :mod:`~builder_utils.json_input`: every JSON input, bounded) and the commands' (:mod:`~builder_utils.command`: argparse subcommands and
errors; :mod:`~builder_utils.atomic`, :mod:`~builder_utils.ownership`,
:mod:`~builder_utils.interrupt`: never a half-written output or a user's file touched).
"""

__version__ = "0.1.0"
