"""Horizontal stacked bar charts of a distribution per split, drawn with Pillow.

The dataset cards show the answer and template/category distributions as PNGs; Pillow is
already a dependency, so no plotting library is needed. The drawing is a pure function of its
inputs (fixed sizes, fixed colours, Pillow's bundled font), so the same counts give the same
bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from PIL import Image, ImageDraw, ImageFont

from builder_utils.atomic import atomic_output

# Colour-blind-safe (Okabe-Ito) colours, one per split in order of appearance.
SPLIT_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
_BAR_AREA = 520
_NUMBER_AREA = 70
_ROW = 22
_MARGIN = 12
_FONT_SIZE = 13


def _font(size: int = _FONT_SIZE) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no scalable default font
        return ImageFont.load_default()


def _text_width(draw: ImageDraw.ImageDraw, text: str, font) -> int:
    left, _, right, _ = draw.textbbox((0, 0), text, font=font)
    return right - left


def _shorten(draw: ImageDraw.ImageDraw, text: str, font, width: int) -> str:
    if _text_width(draw, text, font) <= width:
        return text
    while text and _text_width(draw, text + "…", font) > width:
        text = text[:-1]
    return text + "…"


def bar_chart(
    path: str | os.PathLike,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, int]]],
    splits: Sequence[str],
) -> str:
    """Draw one horizontal bar per row, stacked by split, and write it as a PNG atomically.

    ``rows`` is ``[(label, {split: count})]`` in display order; the total is printed at the end
    of each bar. Returns the path written.

    Example:
        >>> bar_chart("/tmp/answers.png", "answers", [("0", {"train": 3, "test": 1})], ["train", "test"])
        '/tmp/answers.png'
    """
    font, bold = _font(), _font(_FONT_SIZE + 3)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    label_width = min(320, max([_text_width(probe, label, font) for label, _ in rows] + [40]))
    left = _MARGIN + label_width + 8
    legend_y = _MARGIN + 26
    top = legend_y + 26
    height = top + max(1, len(rows)) * _ROW + _MARGIN
    width = max(left + _BAR_AREA + _NUMBER_AREA, _MARGIN + _text_width(probe, title, bold) + _MARGIN)
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((_MARGIN, _MARGIN), title, fill="black", font=bold)

    x = _MARGIN
    for index, split in enumerate(splits):
        colour = SPLIT_COLOURS[index % len(SPLIT_COLOURS)]
        draw.rectangle((x, legend_y + 3, x + 12, legend_y + 15), fill=colour)
        draw.text((x + 17, legend_y + 1), split, fill="black", font=font)
        x += 17 + _text_width(draw, split, font) + 18

    largest = max([sum(counts.values()) for _, counts in rows] + [1])
    scale = _BAR_AREA / largest
    for position, (label, counts) in enumerate(rows):
        y = top + position * _ROW
        shown = _shorten(draw, label, font, label_width)
        draw.text((left - 8 - _text_width(draw, shown, font), y + 3), shown, fill="black", font=font)
        x = float(left)
        for index, split in enumerate(splits):
            count = counts.get(split, 0)
            if count:
                end = x + count * scale
                draw.rectangle((round(x), y + 3, max(round(x), round(end) - 1), y + _ROW - 3), fill=SPLIT_COLOURS[index % len(SPLIT_COLOURS)])
                x = end
        draw.text((round(x) + 6, y + 3), f"{sum(counts.values()):,}", fill="#333333", font=font)
    draw.line((left, top - 2, left, height - _MARGIN), fill="#999999")

    path = os.fspath(path)
    with atomic_output(path, "wb") as handle:
        image.save(handle, format="PNG", optimize=True)
    return path
