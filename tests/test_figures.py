"""The figures of a problem and of a question (clevr_math.figure, clotho_aqa.figure): real rows in,
pixels checked where the figure promises something (a ring where the reasoning names an object, the
tone of a clip in its spectrogram)."""

from __future__ import annotations

import io

import numpy as np
import soundfile
from PIL import Image

import clevr_math
import clotho_aqa
from builder_utils.figures import COLOURS
from clevr_math.figures import referred_objects

TOP_LEFT = (14, 44)  # where the media is pasted: the margin, then the title line


def _hex(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def test_a_problem_figure_rings_each_object_its_reasoning_names():
    problems = clevr_math.problems(size=8, seed=4, num_operations=2)
    drawn = 0
    for row in problems:
        objects = referred_objects(row["cot"])
        figure = clevr_math.figure(row, problems.features)
        assert figure.width > row["images"][0].width and figure.height >= row["images"][0].height
        for step, _, x, y in objects:
            radius = max(12, row["images"][0].width // 30)
            ring = figure.getpixel((TOP_LEFT[0] + x - radius + 1, TOP_LEFT[1] + y))
            # the step's colour, unless a later ring (another object close by) was drawn over it
            drawn += ring == _hex(COLOURS[(step - 1) % len(COLOURS)])
        assert row["images"][0].getpixel((0, 0)) == figure.getpixel(TOP_LEFT)  # the image itself, unscaled
    assert drawn >= 8  # every problem of two operations names objects


def test_a_problem_without_reasoning_shows_its_program():
    row = dict(clevr_math.problems(size=1, seed=0)[0], cot="")
    plain = clevr_math.figure(row)
    assert referred_objects("") == []
    assert plain.getpixel(TOP_LEFT) == row["images"][0].getpixel((0, 0))
    undecoded = dict(row, images=[{"bytes": _png(row["images"][0]), "path": None}])
    assert clevr_math.figure(undecoded).tobytes() == plain.tobytes()


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _clip(frequency: float, seconds: float = 1.0, rate: int = 44_100) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    buffer = io.BytesIO()
    soundfile.write(buffer, (0.5 * np.sin(2 * np.pi * frequency * t)).astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


def test_a_question_figure_shows_the_clip_and_the_three_answers():
    row = {"file_name": "Kids&#39; choir.wav", "audio": {"bytes": _clip(2000.0), "path": None},
           "question": "Is a bell ringing?", "answers": ["yes", "no", "yes"], "confidences": ["yes", "maybe", "yes"],
           "majority_answer": "yes", "unanimous": False, "answer_type": "yes_no"}
    figure = clotho_aqa.figure(row)
    spectrum_top = TOP_LEFT[1] + 74
    tone_row = spectrum_top + round(230 * (1 - 2000 / 8000))  # 2 kHz: a quarter of the way up to 8 kHz
    tone = figure.getpixel((TOP_LEFT[0] + 240, tone_row))
    quiet = figure.getpixel((TOP_LEFT[0] + 240, spectrum_top + 20))
    assert sum(tone) > sum(quiet) + 200, (tone, quiet)  # bright at the tone, dark elsewhere
    # a decoded row (datasets with torchcodec gives an array) draws the same figure
    array, rate = clotho_aqa.decode_audio(row)
    decoded = dict(row, audio={"array": array, "sampling_rate": rate})
    assert clotho_aqa.figure(decoded).tobytes() == figure.tobytes()
