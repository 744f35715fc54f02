"""Shared generation core for the CLEVR-Math and Clotho-AQA builders; no code of one builder.

Module map: DEVELOPERS.md, "Layout".
"""

__version__ = "0.1.0"
