"""The options of ``clevr-math synth`` (and :func:`~builder_utils.clevr.synth.write_clevr_folder`),
declared once with :mod:`builder_utils.options`: each has its check, its bound and its flag.

Example:
    >>> SynthOptions(renderer="blender").samples
    8
    >>> SynthOptions(samples=0)
    Traceback (most recent call last):
    ...
    ValueError: samples must be an integer in 1..4096, got 0
"""

from __future__ import annotations

import dataclasses

from builder_utils.options import Choice, FilePath, Integer, check_options, option

from .blender import BLENDER_ENV, DEVICES

RENDERERS = ("pillow", "blender")
MAX_SAMPLES = 4096


@dataclasses.dataclass(frozen=True)
class SynthOptions:
    """How a synthetic world's images are rendered."""

    renderer: str = option(
        "pillow", Choice(RENDERERS),
        "pillow: the fast stylised renderer (milliseconds an image); blender: Blender's Cycles in CLEVR's "
        "own look (seconds an image; needs Blender, see --blender) (default: %(default)s)", group="rendering")
    samples: int = option(
        8, Integer(1, maximum=MAX_SAMPLES),
        "--renderer blender: Cycles samples per pixel; 8 with OpenImageDenoise looks like 64 (default: %(default)s)",
        group="rendering")
    device: str = option(
        "cpu", Choice(DEVICES),
        "--renderer blender: render on the CPU or the GPU (OptiX, CUDA or HIP, whichever Cycles finds) "
        "(default: %(default)s)", group="rendering")
    blender: str | None = option(
        None, FilePath(),
        f"--renderer blender: a Blender executable, or a Python that imports bpy (default: ${BLENDER_ENV}, "
        "else `blender` on PATH)", group="rendering", role="input", flag={"metavar": "PATH"})

    def __post_init__(self) -> None:
        check_options(self)
