"""Accuracy charts: one group of horizontal bars per row (category, number of operations ...),
one bar per system (the model and each baseline), drawn with Pillow.

The fonts, colours, text measuring and the PNG writing are those of the dataset cards' charts
(:mod:`builder_utils.hub.plots`), so both kinds of figure look alike and the same numbers give
the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from PIL import Image, ImageDraw

from builder_utils.atomic import atomic_output
from builder_utils.hub.plots import (
    _AXIS,
    _FONT_SIZE,
    _GRID,
    _MARGIN,
    _MAX_LABEL_WIDTH,
    _MUTED,
    _TITLE_SIZE,
    SPLIT_COLOURS,
    _font,
    _shorten,
    _text_width,
)

__all__ = ["accuracy_chart"]

_BAR_AREA = 480
_VALUE_AREA = 60  # room for "100%" after a full bar
_BAR = 12
_GAP = 3
_GROUP_GAP = 10
_TICKS = (0, 20, 40, 60, 80, 100)


def accuracy_chart(
    path: str | os.PathLike,
    title: str,
    rows: Sequence[tuple[str, Mapping[str, float | None]]],
    systems: Sequence[str],
    *,
    subtitle: str | None = None,
    value_label: str | None = None,
) -> str:
    """Draw ``rows`` = ``[(label, {system: accuracy in 0..1 or None})]`` as grouped bars, one
    colour per system in ``systems`` order, and write the PNG atomically. Returns the path.

    Example:
        >>> accuracy_chart("/tmp/acc.png", "Accuracy by category",
        ...                [("insertion", {"model": 0.7, "majority": 0.2})], ["model", "majority"])
        '/tmp/acc.png'
    """
    font, title_font = _font(), _font(_TITLE_SIZE)
    probe = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    label_width = min(
        _MAX_LABEL_WIDTH,
        max([_text_width(probe, label, font) for label, _ in rows] + [_text_width(probe, value_label or "", font), 40]),
    )
    left = _MARGIN + label_width + 10
    y = _MARGIN + _TITLE_SIZE + 8
    subtitle_y = None
    if subtitle:
        subtitle_y = y
        y += _FONT_SIZE + 8
    legend_y = y + 4
    top = legend_y + _FONT_SIZE + 12
    group = len(systems) * (_BAR + _GAP) - _GAP
    bars_bottom = top + max(1, len(rows)) * (group + _GROUP_GAP)
    tick_y = bars_bottom + 6
    axis_label_y = tick_y + _FONT_SIZE + 8
    height = axis_label_y + _FONT_SIZE + 6 + _MARGIN
    legend_width = sum(19 + _text_width(probe, s, font) + 20 for s in systems)
    width = max(
        left + _BAR_AREA + _VALUE_AREA,
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
    for index, system in enumerate(systems):
        draw.rectangle((x, legend_y + 3, x + 13, legend_y + 16), fill=SPLIT_COLOURS[index % len(SPLIT_COLOURS)])
        draw.text((x + 19, legend_y), system, fill="black", font=font)
        x += 19 + _text_width(draw, system, font) + 20

    scale = _BAR_AREA / 100
    for tick in _TICKS:
        tx = round(left + tick * scale)
        if tick:
            draw.line((tx, top - 4, tx, bars_bottom), fill=_GRID)
        draw.line((tx, bars_bottom, tx, bars_bottom + 4), fill=_AXIS)
        text = f"{tick}%"
        draw.text((tx - _text_width(draw, text, font) // 2, tick_y), text, fill=_MUTED, font=font)
    draw.line((left, bars_bottom, left + _BAR_AREA, bars_bottom), fill=_AXIS)
    axis_text = "accuracy"
    draw.text((left + (_BAR_AREA - _text_width(draw, axis_text, font)) // 2, axis_label_y), axis_text,
              fill="black", font=font)

    small = _font(_BAR)
    for position, (label, values) in enumerate(rows):
        y = top + position * (group + _GROUP_GAP)
        shown = _shorten(draw, label, font, label_width)
        draw.text((left - 10 - _text_width(draw, shown, font), y + (group - _FONT_SIZE) // 2), shown,
                  fill="black", font=font)
        for index, system in enumerate(systems):
            value = values.get(system)
            bar_y = y + index * (_BAR + _GAP)
            if value is None:
                draw.text((left + 4, bar_y - 1), "n/a", fill=_MUTED, font=small)
                continue
            end = left + value * 100 * scale
            colour = SPLIT_COLOURS[index % len(SPLIT_COLOURS)]
            if value > 0:
                draw.rectangle((left, bar_y, max(left, round(end) - 1), bar_y + _BAR - 1), fill=colour)
            draw.text((round(end) + 4, bar_y - 1), f"{value * 100:.0f}%", fill="#333333", font=small)
    draw.line((left, top - 4, left, bars_bottom), fill=_AXIS)

    path = os.fspath(path)
    with atomic_output(path, "wb") as handle:
        image.save(handle, format="PNG", optimize=True)
    return path
