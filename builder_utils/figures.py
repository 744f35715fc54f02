"""One figure per question, drawn with Pillow: the media (an image with marked objects, or a clip's
waveform and spectrogram) beside the question, the answers and the reasoning.

A figure is a ``PIL.Image``: a notebook shows it inline (Jupyter displays PIL images as PNG), a
script saves it with ``.save("x.png")``. Pillow is a dependency already, so this needs no plotting
library, and the same row gives the same bytes. The datasets' own figures (what a row holds, how
its objects are named) are ``clevr_math.figure`` and ``clotho_aqa.figure``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from builder_utils.charts import COLOURS

__all__ = ["COLOURS", "Line", "Marker", "as_image", "compose", "font", "spectrogram", "waveform"]

_TEXT_WIDTH = 520
_MARGIN = 14
_FONT_SIZE = 15
_TITLE_SIZE = 17
_INK = "#222222"
_MUTED = "#666666"
_BACKGROUND = "white"


@dataclass(frozen=True)
class Line:
    """One paragraph of the text panel; ``label`` (bold colour, e.g. ``"Q"``) precedes ``text``."""

    text: str
    label: str = ""
    colour: str = _INK


@dataclass(frozen=True)
class Marker:
    """A ring around a point of the image (pixel coordinates), numbered ``tag``, in ``colour``."""

    x: float
    y: float
    tag: str
    colour: str


def font(size: int = _FONT_SIZE) -> ImageFont.ImageFont:
    """Pillow's bundled font at ``size`` pixels (the same on every machine)."""
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no scalable default font
        return ImageFont.load_default()


def as_image(value) -> Image.Image:
    """A PIL image from what an image column holds: a PIL image, ``{"bytes", "path"}``, or a list of one.

    Example:
        >>> as_image([Image.new("RGB", (4, 3))]).size
        (4, 3)
    """
    if isinstance(value, list):
        if len(value) != 1:
            raise ValueError(f"the image list holds {len(value)} images; draw one: figure(row, image=row[...][i])")
        value = value[0]
    if isinstance(value, Image.Image):
        return value.convert("RGB")
    if isinstance(value, dict) and (value.get("bytes") or value.get("path")):
        return Image.open(io.BytesIO(value["bytes"]) if value.get("bytes") else value["path"]).convert("RGB")
    raise TypeError(f"expected a PIL image or an image dict, got {type(value).__name__}")


def _wrapped(draw: ImageDraw.ImageDraw, text: str, font, width: int) -> list[str]:
    """``text`` broken into lines of at most ``width`` pixels (at spaces; each newline kept)."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and draw.textlength(candidate, font=font) > width:
                lines.append(current)
                current = word
            else:
                current = candidate
        lines.append(current)
    return lines


def _mark(image: Image.Image, markers: Sequence[Marker]) -> Image.Image:
    image = image.copy()
    draw = ImageDraw.Draw(image)
    tag_font = font(13)
    radius = max(12, image.width // 30)
    for marker in markers:
        box = (marker.x - radius, marker.y - radius, marker.x + radius, marker.y + radius)
        draw.ellipse(box, outline="white", width=5)
        draw.ellipse(box, outline=marker.colour, width=3)
        tx, ty = marker.x + radius * 0.7, marker.y - radius * 1.25
        left, top, right, bottom = draw.textbbox((tx, ty), marker.tag, font=tag_font)
        draw.rectangle((left - 3, top - 2, right + 3, bottom + 2), fill=marker.colour)
        draw.text((tx, ty), marker.tag, fill="white", font=tag_font)
    return image


def compose(title: str, media: Image.Image, lines: Sequence[Line], markers: Sequence[Marker] = ()) -> Image.Image:
    """The figure: ``title`` on top, ``media`` (with ``markers``) on the left, ``lines`` wrapped on the right.

    Example:
        >>> figure = compose("a title", Image.new("RGB", (480, 320), "gray"), [Line("How many?", "Q"), Line("3", "A")],
        ...                  [Marker(100, 80, "1", COLOURS[0])])
        >>> figure.size, figure.getpixel((_MARGIN + 100 - 15, _MARGIN + 30 + 80))  # the ring, left of the point
        ((1042, 378), (0, 114, 178))
    """
    media = _mark(media, markers)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    regular, bold = font(), font(_FONT_SIZE + 1)
    title_height = 30
    drawn: list[tuple[int, int, Line, str, bool]] = []  # (y, indent, line, piece, first piece) per text line
    y = 0
    for line in lines:
        indent = int(probe.textlength(f"{line.label}  ", font=bold)) if line.label else 0  # a hanging indent
        for i, piece in enumerate(_wrapped(probe, line.text, regular, _TEXT_WIDTH - indent)):
            drawn.append((y, indent, line, piece, i == 0))
            y += _FONT_SIZE + 5
        y += 6
    height = _MARGIN * 2 + title_height + max(media.height, y)
    figure = Image.new("RGB", (_MARGIN * 3 + media.width + _TEXT_WIDTH, height), _BACKGROUND)
    draw = ImageDraw.Draw(figure)
    draw.text((_MARGIN, _MARGIN), title, fill=_MUTED, font=font(_TITLE_SIZE))
    top = _MARGIN + title_height
    figure.paste(media, (_MARGIN, top))
    left = _MARGIN * 2 + media.width
    for y, indent, line, piece, first in drawn:
        if first and line.label:
            draw.text((left, top + y), line.label, fill=line.colour, font=bold)
        draw.text((left + indent, top + y), piece, fill=_INK if line.label else line.colour, font=regular)
    return figure


def _colour_map(values: np.ndarray) -> np.ndarray:
    """Values in 0..1 -> RGB (a dark-blue to yellow ramp, perceptually ordered like viridis)."""
    anchors = np.array([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]], dtype=np.float32)
    position = np.clip(values, 0, 1) * (len(anchors) - 1)
    low = np.floor(position).astype(int).clip(0, len(anchors) - 2)
    weight = (position - low)[..., None]
    return (anchors[low] * (1 - weight) + anchors[low + 1] * weight).astype(np.uint8)


def spectrogram(array: np.ndarray, rate: int, width: int = 480, height: int = 220,
                window: int = 512, floor_db: float = -80.0) -> Image.Image:
    """A spectrogram of a mono clip as an image: time left to right, frequency (0 to rate / 2) bottom to top,
    loudness (dB below the clip's peak, down to ``floor_db``) from dark to bright.

    Example:
        >>> tone = np.sin(2 * np.pi * 1000 * np.arange(16_000) / 16_000).astype(np.float32)
        >>> image = spectrogram(tone, 16_000, 100, 80)
        >>> row = int(80 * (1 - 1000 / 8000))             # 1 kHz is one eighth of the way up
        >>> image.size, image.getpixel((50, row))[1] > image.getpixel((50, 5))[1]
        ((100, 80), True)
    """
    samples = np.asarray(array, dtype=np.float32).reshape(-1)
    if samples.size < window:
        samples = np.pad(samples, (0, window - samples.size))
    hop = max(1, (samples.size - window) // max(1, width - 1))
    starts = np.arange(0, samples.size - window + 1, hop)
    frames = np.stack([samples[s:s + window] for s in starts]) * np.hanning(window).astype(np.float32)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    decibels = 10 * np.log10(power + 1e-12)
    decibels -= decibels.max()
    scaled = 1 - np.clip(decibels / floor_db, 0, 1)
    image = Image.fromarray(_colour_map(scaled.T[::-1]), "RGB")  # low frequencies at the bottom
    return image.resize((width, height), Image.Resampling.BILINEAR)


def waveform(array: np.ndarray, width: int = 480, height: int = 80, colour: str = COLOURS[0]) -> Image.Image:
    """A mono clip's waveform: per pixel column, the range of its samples, scaled to the clip's peak.

    Example:
        >>> waveform(np.zeros(1000, dtype=np.float32), 50, 20).getpixel((10, 10))   # silence: the centre line
        (0, 114, 178)
    """
    samples = np.asarray(array, dtype=np.float32).reshape(-1)
    image = Image.new("RGB", (width, height), _BACKGROUND)
    draw = ImageDraw.Draw(image)
    peak = float(np.abs(samples).max()) or 1.0
    middle = height // 2
    for x, column in enumerate(np.array_split(samples, width)):
        low, high = (float(column.min()), float(column.max())) if column.size else (0.0, 0.0)
        draw.line((x, middle - high / peak * (middle - 1), x, middle - low / peak * (middle - 1)), fill=colour)
    return image
