"""Horizontal bar charts drawn with Pillow: the cards' distributions, the reports' accuracies.

Pillow is already a dependency, so no plotting library; fixed sizes, colours and Pillow's bundled
font make the same numbers give the same bytes. The Hub shows card images at their own width (up
to about 800 px), so sizes are pixels as displayed.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from builder_utils.atomic import atomic_output

__all__ = ["COLOURS", "axis_ticks", "bar_chart"]

# Colour-blind-safe (Okabe-Ito) colours, one per series in order of appearance.
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
_MARGIN = 14
_FONT_SIZE = 15
_TITLE_SIZE = 19
_MAX_LABEL_WIDTH = 300
_GRID = "#E4E4E4"
_AXIS = "#777777"
_MUTED = "#555555"
_NUMBER = "#333333"


@dataclass(frozen=True)
class _Sizes:
    """Pixel sizes of one kind of chart."""

    bar_area: int  # the x axis, from 0 to the last tick
    end_room: int  # after the axis: the number printed at the end of the longest bar
    bar: int  # thickness of one bar
    bar_gap: int  # between the bars of one row
    row_top: int  # above a row's first bar
    row_gap: int  # below a row's last bar
    number_size: int  # font size of the number at the end of a bar
    number_dx: int
    number_dy: int
    centre_labels: bool  # row name centred on its group of bars, else level with its top


# One thick bar per row; the number ("13,643") is as large as the text, one per row.
_STACKED = _Sizes(bar_area=540, end_room=80, bar=19, bar_gap=0, row_top=3, row_gap=2,
                  number_size=_FONT_SIZE, number_dx=6, number_dy=0, centre_labels=False)
# A group of thin bars per row, one per series: a smaller number ("100%") fits beside each.
_GROUPED = _Sizes(bar_area=480, end_room=60, bar=12, bar_gap=3, row_top=0, row_gap=10,
                  number_size=12, number_dx=4, number_dy=-1, centre_labels=True)


def _font(size: int = _FONT_SIZE) -> ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1 has no scalable default font
        return ImageFont.load_default()


def _text_width(draw: ImageDraw.ImageDraw, text: str, font) -> int:
    left, _, right, _ = draw.textbbox((0, 0), text, font=font)
    return right - left


def _shorten(draw: ImageDraw.ImageDraw, text: str, font, width: int) -> str:
    """``text``, or its longest prefix that fits ``width`` pixels followed by "…".

    A label comes from user data (an answer of 5,000 characters): at most ``width`` characters are
    ever measured (no glyph of a label is narrower than a pixel, so more never fits), and the
    prefix is found by bisection, so the work is ~log2(width) measurements whatever the length.

    Example:
        >>> probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
        >>> _shorten(probe, "x" * 5000, _font(), 60)[-1], len(_shorten(probe, "x" * 5000, _font(), 60)) < 60
        ('…', True)
    """
    if len(text) <= width and _text_width(draw, text, font) <= width:
        return text
    fits, too_long = 0, min(len(text), width) + 1  # text[:fits] + "…" fits; text[:too_long] + "…" does not
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if _text_width(draw, text[:middle] + "…", font) <= width:
            fits = middle
        else:
            too_long = middle
    return text[:fits] + "…"


def axis_ticks(largest: float, target: int = 5) -> list[int]:
    """Round tick values (steps of 1, 2 or 5 times a power of ten) from 0 to at least ``largest``.

    Example:
        >>> axis_ticks(209)
        [0, 50, 100, 150, 200, 250]
    """
    largest = max(1, largest)
    raw = largest / target
    power = 10 ** math.floor(math.log10(raw)) if raw >= 1 else 1
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    step = max(1, int(step))
    return list(range(0, math.ceil(largest / step) * step + 1, step))


def _bars(values: Mapping[str, float | None], series: Sequence[str], stacked: bool) -> list:
    """``[(segments, total)]`` of one row: segments are ``(colour index, length)`` laid end to
    end; ``total`` is None where the value is missing ("n/a")."""
    if stacked:
        segments = [(index, values.get(name) or 0) for index, name in enumerate(series)]
        return [(segments, sum(value for value in values.values() if value))]
    bars = []
    for index, name in enumerate(series):
        value = values.get(name)
        bars.append(([], None) if value is None else ([(index, value)], value))
    return bars


def bar_chart(
    path: str | os.PathLike,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, float | None]]],
    series: Sequence[str],
    *,
    stacked: bool = True,
    subtitle: str | None = None,
    value_label: str | None = None,
    axis_label: str = "",
    ticks: Sequence[int] | None = None,
    number_format: str = "{:,}",
) -> str:
    """Draw ``rows`` = ``[(label, {series: value})]`` as horizontal bars to a PNG (atomically); returns the path.

    ``stacked``: one bar per row, segments by series, the total at its end; else a group of bars
    per row (None prints "n/a"). ``value_label`` names the y axis, ``axis_label`` the x axis.

    Example:
        >>> bar_chart("/tmp/chart.png", "Questions per family",
        ...           [("count", {"train": 30, "test": 10}), ("exist", {"train": 12})],
        ...           ["train", "test"], value_label="family", axis_label="questions")
        '/tmp/chart.png'
    """
    sizes = _STACKED if stacked else _GROUPED
    drawn = [(label, _bars(values, series, stacked)) for label, values in rows]
    font, title_font, number_font = _font(), _font(_TITLE_SIZE), _font(sizes.number_size)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    label_width = min(
        _MAX_LABEL_WIDTH,
        # at most the widest label, measured on as many characters as can fit (labels are user data)
        max([_text_width(probe, label[:_MAX_LABEL_WIDTH + 1], font) for label, _ in rows]
            + [_text_width(probe, (value_label or "")[:_MAX_LABEL_WIDTH + 1], font), 40]),
    )
    left = _MARGIN + label_width + 10
    y = _MARGIN + _TITLE_SIZE + 8
    subtitle_y = None
    if subtitle:
        subtitle_y = y
        y += _FONT_SIZE + 8
    legend_y = y + 4
    top = legend_y + _FONT_SIZE + 12
    per_row = 1 if stacked else len(series)
    group = per_row * (sizes.bar + sizes.bar_gap) - sizes.bar_gap
    pitch = sizes.row_top + group + sizes.row_gap
    bars_bottom = top + max(1, len(rows)) * pitch
    tick_y = bars_bottom + 6
    axis_label_y = tick_y + _FONT_SIZE + 8
    height = axis_label_y + _FONT_SIZE + 6 + _MARGIN
    legend_width = sum(19 + _text_width(probe, name, font) + 20 for name in series)
    width = max(
        left + sizes.bar_area + sizes.end_room,
        left + legend_width,
        _MARGIN + _text_width(probe, title, title_font) + _MARGIN,
        _MARGIN + (_text_width(probe, subtitle, font) if subtitle else 0) + _MARGIN,
    )
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    draw.text((_MARGIN, _MARGIN), title, fill="black", font=title_font)
    if subtitle_y is not None:
        draw.text((_MARGIN, subtitle_y), subtitle, fill=_MUTED, font=font)

    if value_label:
        shown = _shorten(draw, value_label, font, label_width)
        draw.text((left - 10 - _text_width(draw, shown, font), legend_y), shown, fill="black", font=font)
    x = left
    for index, name in enumerate(series):
        draw.rectangle((x, legend_y + 3, x + 13, legend_y + 16), fill=COLOURS[index % len(COLOURS)])
        draw.text((x + 19, legend_y), name, fill="black", font=font)
        x += 19 + _text_width(draw, name, font) + 20

    if ticks is None:
        ticks = axis_ticks(max([total or 0 for _, bars in drawn for _, total in bars] + [1]))
    scale = sizes.bar_area / ticks[-1]
    for tick in ticks:
        tx = round(left + tick * scale)
        if tick:
            draw.line((tx, top - 4, tx, bars_bottom), fill=_GRID)
        draw.line((tx, bars_bottom, tx, bars_bottom + 4), fill=_AXIS)
        text = number_format.format(tick)
        draw.text((tx - _text_width(draw, text, font) // 2, tick_y), text, fill=_MUTED, font=font)
    draw.line((left, bars_bottom, left + sizes.bar_area, bars_bottom), fill=_AXIS)
    draw.text((left + (sizes.bar_area - _text_width(draw, axis_label, font)) // 2, axis_label_y), axis_label,
              fill="black", font=font)

    for position, (label, bars) in enumerate(drawn):
        y = top + position * pitch + sizes.row_top
        shown = _shorten(draw, label, font, label_width)
        label_y = y + (group - _FONT_SIZE) // 2 if sizes.centre_labels else y
        draw.text((left - 10 - _text_width(draw, shown, font), label_y), shown, fill="black", font=font)
        for bar_y, (segments, total) in zip(range(y, y + group, sizes.bar + sizes.bar_gap), bars):
            x = float(left)
            for index, length in segments:
                end = x + length * scale
                if length > 0:
                    draw.rectangle((round(x), bar_y, max(round(x), round(end) - 1), bar_y + sizes.bar - 1),
                                   fill=COLOURS[index % len(COLOURS)])
                x = end
            text, fill = ("n/a", _MUTED) if total is None else (number_format.format(total), _NUMBER)
            draw.text((round(x) + sizes.number_dx, bar_y + sizes.number_dy), text, fill=fill, font=number_font)
    draw.line((left, top - 4, left, bars_bottom), fill=_AXIS)

    path = os.fspath(path)
    with atomic_output(path, "wb") as handle:
        # zlib's default level: optimize=True made the file 4% smaller and took 3x as long
        # (0.1 s a chart, a tenth of a small export).
        image.save(handle, format="PNG")
    return path
