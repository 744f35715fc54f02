"""CLEVR's object vocabulary with the rendering facts the synthetic world needs.

Values come from ``metadata.json`` when it exists (one source of truth), else the constants
below; always sorted, so the draws do not depend on the order a file lists them in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from builder_utils.clevr.metadata import load_metadata
from builder_utils.json_input import load_json, shown_path

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
    #: 0-255 RGB of each colour and radius of each size (pairs, so that a vocabulary stays hashable)
    rgb: tuple[tuple[str, tuple[int, int, int]], ...] = field(default=tuple(sorted(COLOR_RGB.items())), repr=False)
    radius: tuple[tuple[str, float], ...] = field(default=tuple(sorted(SIZE_RADIUS.items())), repr=False)

    def colour_rgb(self) -> dict[str, tuple[int, int, int]]:
        """Colour name -> 0-255 RGB (CLEVR's numbers, taken as linear values by the renderers)."""
        return dict(self.rgb)

    def size_radius(self) -> dict[str, float]:
        """Size name -> radius in world units.

        Example:
            >>> load_vocabulary().size_radius()
            {'large': 0.7, 'small': 0.35}
        """
        return dict(self.radius)

    def is_clevrs(self) -> bool:
        """True when every value and number is CLEVR's own (what the Pillow renderer draws).

        Example:
            >>> load_vocabulary().is_clevrs()
            True
        """
        return (self.colour_rgb().items() <= COLOR_RGB.items() and self.size_radius().items() <= SIZE_RADIUS.items()
                and set(self.materials) <= set(MATERIALS) and set(self.shapes) <= set(SHAPES))


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


# the most values of one kind a properties file may list: each colour becomes a material in
# Blender, and CLEVR has 8; far more would only slow the studio's set-up
MAX_PROPERTY_VALUES = 64
MAX_RADIUS = 1.5


def _named_values(data: dict, key: str, where: str) -> dict:
    values = data.get(key)
    if not isinstance(values, dict) or not values:
        raise ValueError(f"{where}: \"{key}\" must be a non-empty object of name -> value (CLEVR's properties.json "
                         "format)")
    if len(values) > MAX_PROPERTY_VALUES:
        raise ValueError(f"{where}: \"{key}\" lists {len(values)} values, at most {MAX_PROPERTY_VALUES}")
    for name in values:
        if not name or not name.isidentifier() or not name.islower():
            raise ValueError(f"{where}: {key} name {name!r} must be a lower-case word")
    return values


@lru_cache(maxsize=16)
def _properties(path: str, stamp: tuple) -> Vocabulary:  # stamp: (mtime, size), so an edited file is read again
    where = shown_path(path)
    data = load_json(path, what="properties file")
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object with shapes, colors, materials and sizes")
    shapes, colours = _named_values(data, "shapes", where), _named_values(data, "colors", where)
    materials, sizes = _named_values(data, "materials", where), _named_values(data, "sizes", where)
    unknown = sorted(set(shapes) - set(SHAPES)) + sorted(set(materials) - set(MATERIALS))
    if unknown:
        raise ValueError(f"{where}: {', '.join(unknown)}: the synthetic worlds have shapes {', '.join(SHAPES)} and "
                         f"materials {', '.join(MATERIALS)} only")
    rgb = {}
    for name, value in colours.items():
        if not (isinstance(value, list) and len(value) == 3 and all(type(c) is int and 0 <= c <= 255 for c in value)):
            raise ValueError(f"{where}: colors.{name} must be [r, g, b] with integers 0..255, got {value!r}")
        rgb[name] = tuple(value)
    for name, value in sizes.items():
        if type(value) not in (int, float) or not 0.05 <= value <= MAX_RADIUS:
            raise ValueError(f"{where}: sizes.{name} must be a radius in [0.05, {MAX_RADIUS}], got {value!r}")
    return Vocabulary(colors=tuple(sorted(rgb)), sizes=tuple(sorted(sizes)), materials=tuple(sorted(materials)),
                      shapes=tuple(sorted(shapes)), rgb=tuple(sorted(rgb.items())),
                      radius=tuple(sorted((k, float(v)) for k, v in sizes.items())))


def load_properties(path: str | os.PathLike | None) -> Vocabulary:
    """The vocabulary of CLEVR's ``--properties_json`` format (``None``: the default vocabulary).

    ``shapes`` and ``materials`` map names to CLEVR's asset names (only the names are used here),
    ``colors`` names to 0-255 RGB, ``sizes`` names to radii; values are sorted, as always.

    Example:
        >>> import json, pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "properties.json"
        >>> _ = path.write_text(json.dumps({"shapes": {"cube": "SmoothCube_v2"}, "colors": {"red": [173, 35, 35]},
        ...     "materials": {"rubber": "Rubber"}, "sizes": {"small": 0.35}}))
        >>> vocab = load_properties(path)
        >>> vocab.shapes, vocab.colors, vocab.size_radius()
        (('cube',), ('red',), {'small': 0.35})
    """
    if path is None:
        return load_vocabulary()
    path = os.path.abspath(os.fspath(path))
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise ValueError(f"{shown_path(path)}: cannot read the properties file ({exc.strerror or exc})") from None
    return _properties(path, (stat.st_mtime_ns, stat.st_size))
