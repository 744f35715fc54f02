"""CLEVR scenes and the CLEVR functional language (stable public API).

>>> import tempfile
>>> from builder_utils.clevr import load_scenes, execute, answer
>>> from builder_utils.clevr.synth import write_clevr_folder
>>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 1}, seed=0, render=False, progress=False)
>>> scenes = load_scenes(root / "scenes" / "CLEVR_val_scenes.json")
>>> [obj["material"] for obj in scenes[0]["objects"]]
['rubber', 'rubber', 'metal']
>>> program = [{"function": "scene", "inputs": [], "value_inputs": []},
...            {"function": "filter_material", "inputs": [0], "value_inputs": ["metal"]},
...            {"function": "count", "inputs": [1], "value_inputs": []}]
>>> answer(program, scenes[0]), execute(program, scenes[0])
('1', [[0, 1, 2], [2], 1])

The errors and the generator, module by module: ``README.md`` beside this file.
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
