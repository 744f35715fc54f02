"""Shared generation core for the CLEVR-Math and Clotho-AQA builders.

Nothing in here is specific to one dataset: CLEVR scenes and functional programs
(:mod:`builder_utils.clevr`), the template engine, synthetic scenes, multilabel
stratified splits (:mod:`builder_utils.splits`) and the Hub export
(:mod:`builder_utils.hub`).
"""

__version__ = "0.1.0"
