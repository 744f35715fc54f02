"""The shared bar chart (builder_utils/charts.py): grouped bars to scale, a legend that fits."""

from __future__ import annotations

from PIL import Image

from builder_utils.charts import COLOURS, bar_chart


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def _lines_with(image: Image.Image, colour: tuple[int, int, int]) -> dict[int, int]:
    """{y: number of pixels of ``colour`` on that line} for the lines that have any."""
    counts = {}
    for y in range(image.height):
        n = sum(image.getpixel((x, y)) == colour for x in range(image.width))
        if n:
            counts[y] = n
    return counts


def test_grouped_bars_are_to_scale_and_a_missing_value_draws_no_bar(tmp_path):
    rows = [("a", {"model": 75.0, "majority": 25.0}), ("b", {"model": 50.0, "majority": None})]
    path = bar_chart(tmp_path / "g.png", "Accuracy", rows, ["model", "majority"], stacked=False,
                     ticks=range(0, 101, 20), number_format="{:.0f}%")
    with Image.open(path) as png:
        image = png.convert("RGB")
    legend_square = 14
    model = sorted(n for n in _lines_with(image, _rgb(COLOURS[0])).values() if n > legend_square)
    majority = [n for n in _lines_with(image, _rgb(COLOURS[1])).values() if n > legend_square]
    # model bars: 50 and 75 (12 px thick each); one majority bar only, 25
    assert len(model) == 24 and len(set(model)) == 2 and len(majority) == 12
    short, long_ = model[0], model[-1]
    assert abs(long_ - 3 * majority[0]) <= 2 and abs(2 * long_ - 3 * short) <= 2


def test_a_wide_legend_widens_the_chart(tmp_path):
    splits = [f"split-number-{i}-long" for i in range(6)]
    path = bar_chart(tmp_path / "w.png", "Wide legend", [("a", {s: i + 1 for i, s in enumerate(splits)})], splits)
    with Image.open(path) as png:
        image = png.convert("RGB")
    # the last split's colour is in its legend square, above (and apart from) its bar segment
    lines = sorted(_lines_with(image, _rgb(COLOURS[5])))
    assert any(b > a + 1 for a, b in zip(lines, lines[1:]))


class _CountingDraw:
    """Pillow's ImageDraw, counting the characters measured (the cost of shortening a label)."""

    def __init__(self):
        from PIL import ImageDraw

        self._draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
        self.calls = self.characters = 0

    def textbbox(self, xy, text, font=None):
        self.calls += 1
        self.characters += len(text)
        return self._draw.textbbox(xy, text, font=font)


def test_a_5000_character_label_is_shortened_with_bounded_work():
    """Issue 37 cause 13: the work of shortening is a few measurements of at most the width, not
    one measurement of the whole text per character removed."""
    from builder_utils.charts import _font, _shorten

    font, width = _font(), 200
    short, long_ = _CountingDraw(), _CountingDraw()
    shown_short = _shorten(short, "a long answer " * 8, font, width)
    shown_long = _shorten(long_, "a long answer " * 400, font, width)
    assert shown_long == shown_short and shown_long.endswith("…")
    assert long_.calls <= 12 and long_.characters <= 12 * (width + 1)
    # the longest prefix that fits: one more character does not
    def measured(text: str) -> int:
        left, _, right, _ = _CountingDraw().textbbox((0, 0), text, font=font)
        return right - left

    assert measured(shown_long) <= width
    assert measured(("a long answer " * 400)[:len(shown_long)] + "…") > width


def test_a_chart_of_a_5000_character_label_is_drawn(tmp_path):
    path = bar_chart(tmp_path / "long.png", "Answers", [("x" * 5000, {"train": 3}), ("yes", {"train": 5})],
                     ["train"], value_label="answer", axis_label="questions")
    with Image.open(path) as png:
        assert png.width < 2000
