"""Horizontal stacked bar charts of a distribution per split, drawn with Pillow.

The dataset cards show the answer and template/category distributions as PNGs; Pillow is
already a dependency, so no plotting library is needed. The drawing is a pure function of its
inputs (fixed sizes, fixed colours, Pillow's bundled font), so the same counts give the same
bytes.

Layout, top to bottom: a large title and an optional grey subtitle; the y-axis label (the
column) above the value names, the split legend above the bars; one bar per value with its
total at the end, over light vertical grid lines; the x axis with ticks at round numbers and
its label. The Hub shows card images at their own width (up to the text column, about 800 px),
so sizes are in pixels as displayed: 15 px text, 19 px title.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

from PIL import Image, ImageDraw, ImageFont

from builder_utils.atomic import atomic_output

# Colour-blind-safe (Okabe-Ito) colours, one per split in order of appearance.
SPLIT_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
_BAR_AREA = 540
_NUMBER_AREA = 80  # room for the total printed after the longest bar ("13,643")
_ROW = 24
_MARGIN = 14
_FONT_SIZE = 15
_TITLE_SIZE = 19
_MAX_LABEL_WIDTH = 300
_GRID = "#E4E4E4"
_AXIS = "#777777"
_MUTED = "#555555"


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


def axis_ticks(largest: int, target: int = 5) -> list[int]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) from 0 to at least ``largest``.

    Example:
        >>> axis_ticks(209)
        [0, 50, 100, 150, 200, 250]
        >>> axis_ticks(3)
        [0, 1, 2, 3]
    """
    largest = max(1, largest)
    raw = largest / target
    power = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    step = max(1, int(step))
    return list(range(0, math.ceil(largest / step) * step + 1, step))


def bar_chart(
    path: str | os.PathLike,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, int]]],
    splits: Sequence[str],
    *,
    subtitle: str | None = None,
    value_label: str | None = None,
    count_label: str = "rows",
) -> str:
    """Draw one horizontal bar per row, stacked by split, and write it as a PNG atomically.

    ``rows`` is ``[(label, {split: count})]`` in display order; the total is printed at the end
    of each bar. ``value_label`` names the y axis (the column), ``count_label`` the x axis.
    Returns the path written.

    Example:
        >>> bar_chart("/tmp/answers.png", "Rows per answer", [("0", {"train": 3, "test": 1})], ["train", "test"],
        ...           value_label="label")
        '/tmp/answers.png'
    """
    font, title_font = _font(), _font(_TITLE_SIZE)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    label_width = min(
        _MAX_LABEL_WIDTH,
        max([_text_width(probe, label, font) for label, _ in rows]
            + [_text_width(probe, value_label or "", font), 40]),
    )
    left = _MARGIN + label_width + 10
    y = _MARGIN
    title_y = y
    y += _TITLE_SIZE + 8
    subtitle_y = None
    if subtitle:
        subtitle_y = y
        y += _FONT_SIZE + 8
    legend_y = y + 4
    top = legend_y + _FONT_SIZE + 12
    bars_bottom = top + max(1, len(rows)) * _ROW
    tick_y = bars_bottom + 6
    axis_label_y = tick_y + _FONT_SIZE + 8
    height = axis_label_y + _FONT_SIZE + 6 + _MARGIN
    width = max(
        left + _BAR_AREA + _NUMBER_AREA,
        _MARGIN + _text_width(probe, title, title_font) + _MARGIN,
        _MARGIN + (_text_width(probe, subtitle, font) if subtitle else 0) + _MARGIN,
    )
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((_MARGIN, title_y), title, fill="black", font=title_font)
    if subtitle_y is not None:
        draw.text((_MARGIN, subtitle_y), subtitle, fill=_MUTED, font=font)

    if value_label:
        shown = _shorten(draw, value_label, font, label_width)
        draw.text((left - 10 - _text_width(draw, shown, font), legend_y), shown, fill="black", font=font)
    x = left
    for index, split in enumerate(splits):
        colour = SPLIT_COLOURS[index % len(SPLIT_COLOURS)]
        draw.rectangle((x, legend_y + 3, x + 13, legend_y + 16), fill=colour)
        draw.text((x + 19, legend_y), split, fill="black", font=font)
        x += 19 + _text_width(draw, split, font) + 20

    ticks = axis_ticks(max([sum(counts.values()) for _, counts in rows] + [1]))
    scale = _BAR_AREA / ticks[-1]
    for tick in ticks:
        tx = round(left + tick * scale)
        if tick:
            draw.line((tx, top - 4, tx, bars_bottom), fill=_GRID)
        draw.line((tx, bars_bottom, tx, bars_bottom + 4), fill=_AXIS)
        text = f"{tick:,}"
        draw.text((tx - _text_width(draw, text, font) // 2, tick_y), text, fill=_MUTED, font=font)
    draw.line((left, bars_bottom, left + _BAR_AREA, bars_bottom), fill=_AXIS)
    axis_text = f"{count_label} (stacked by split)" if len(splits) > 1 else count_label
    draw.text((left + (_BAR_AREA - _text_width(draw, axis_text, font)) // 2, axis_label_y), axis_text,
              fill="black", font=font)

    for position, (label, counts) in enumerate(rows):
        y = top + position * _ROW
        shown = _shorten(draw, label, font, label_width)
        draw.text((left - 10 - _text_width(draw, shown, font), y + 3), shown, fill="black", font=font)
        x = float(left)
        for index, split in enumerate(splits):
            count = counts.get(split, 0)
            if count:
                end = x + count * scale
                colour = SPLIT_COLOURS[index % len(SPLIT_COLOURS)]
                draw.rectangle((round(x), y + 3, max(round(x), round(end) - 1), y + _ROW - 3), fill=colour)
                x = end
        draw.text((round(x) + 6, y + 3), f"{sum(counts.values()):,}", fill="#333333", font=font)
    draw.line((left, top - 4, left, bars_bottom), fill=_AXIS)

    path = os.fspath(path)
    with atomic_output(path, "wb") as handle:
        image.save(handle, format="PNG", optimize=True)
    return path
