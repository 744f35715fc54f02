"""CLEVR's object vocabulary with the rendering facts the synthetic world needs.

Values come from ``metadata.json`` when it exists (one source of truth), else the constants
below; always sorted, so the draws do not depend on the order a file lists them in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from builder_utils.clevr.metadata import load_metadata

METADATA_PATH = Path(__file__).resolve().parent.parent / "metadata.json"

# CLEVR's real colours (render_images.py properties) and object radii in world units.
COLOR_RGB: dict[str, tuple[int, int, int]] = {
    "gray": (87, 87, 87),
    "red": (173, 35, 35),
    "blue": (42, 75, 215),
    "green": (29, 105, 20),
    "brown": (129, 74, 25),
    "purple": (129, 38, 192),
    "cyan": (41, 208, 208),
    "yellow": (255, 238, 51),
}
SIZE_RADIUS: dict[str, float] = {"large": 0.7, "small": 0.35}
MATERIALS = ("metal", "rubber")
SHAPES = ("cube", "cylinder", "sphere")

# metadata.json type name -> the values this module can render
_RENDERABLE = {
    "Color": tuple(COLOR_RGB),
    "Size": tuple(SIZE_RADIUS),
    "Material": MATERIALS,
    "Shape": SHAPES,
}


@dataclass(frozen=True)
class Vocabulary:
    """The sorted attribute values objects are drawn from.

    Example:
        >>> load_vocabulary().shapes
        ('cube', 'cylinder', 'sphere')
    """

    colors: tuple[str, ...]
    sizes: tuple[str, ...]
    materials: tuple[str, ...]
    shapes: tuple[str, ...]


def _from_metadata(path: Path) -> dict[str, tuple[str, ...]] | None:
    if not path.is_file():
        return None
    types = load_metadata(path).types  # validated there: every attribute type has values
    values: dict[str, tuple[str, ...]] = {}
    for type_name, renderable in _RENDERABLE.items():
        listed = types[type_name]
        unknown = sorted(set(listed) - set(renderable))
        if unknown:
            raise ValueError(
                f"{path}: types.{type_name} lists {unknown}, which the synthetic renderer has no "
                f"appearance for (known: {sorted(renderable)})"
            )
        values[type_name] = tuple(sorted(set(listed)))
    return values


@lru_cache(maxsize=None)
def load_vocabulary(metadata_path: Path | None = None) -> Vocabulary:
    """Read the CLEVR vocabulary (metadata.json ``types`` if present, else built-in constants).

    Example:
        >>> "cyan" in load_vocabulary().colors
        True
    """
    values = _from_metadata(Path(metadata_path) if metadata_path else METADATA_PATH)
    if values is None:
        values = {name: tuple(sorted(v)) for name, v in _RENDERABLE.items()}
    return Vocabulary(
        colors=values["Color"], sizes=values["Size"], materials=values["Material"], shapes=values["Shape"]
    )
