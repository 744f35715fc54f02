"""CLEVR scenes and the CLEVR functional language (stable public API).

>>> from builder_utils.clevr import load_scenes, execute, answer
>>> scenes = load_scenes("CLEVR_val_scenes.json")                      # doctest: +SKIP
>>> program = [{"function": "scene", "inputs": [], "value_inputs": []},
...            {"function": "filter_material", "inputs": [0], "value_inputs": ["metal"]},
...            {"function": "count", "inputs": [1], "value_inputs": []}]
>>> answer(program, scenes[0])                                          # doctest: +SKIP
'2'

``InvalidProgram``: a well-formed program without an answer on the scene (``unique`` over
0 or 2+ objects, ``choose`` out of range, a negative ``subtraction``). ``MalformedProgram``
(a ``ValueError``): a program that cannot run anywhere; its message names node and function.
``SceneError`` (a ``ValueError``): a malformed scene file; its message names file, scene, field.
"""

from .executor import (
    CompiledProgram,
    InvalidProgram,
    MalformedProgram,
    SceneIndex,
    answer,
    compile_program,
    execute,
    execute_raw,
    normalize_program,
)
from .metadata import Metadata, MetadataError, load_metadata
from .scenes import SceneError, SceneFile, load_scenes, validate_scene

__all__ = [
    "CompiledProgram",
    "InvalidProgram",
    "MalformedProgram",
    "Metadata",
    "MetadataError",
    "SceneError",
    "SceneFile",
    "SceneIndex",
    "answer",
    "compile_program",
    "execute",
    "execute_raw",
    "load_metadata",
    "load_scenes",
    "normalize_program",
    "validate_scene",
]
