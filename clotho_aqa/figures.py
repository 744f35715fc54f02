"""A Clotho-AQA question as one figure: :func:`figure` (README, "A figure per question").

The clip is decoded without torch (:func:`clotho_aqa.decode_audio`) and drawn as its waveform above
its spectrogram; beside it, the question and what the three annotators answered.
"""

from __future__ import annotations

import html

from PIL import Image, ImageDraw

from builder_utils.audio import decode_audio
from builder_utils.figures import COLOURS, Line, compose, font, spectrogram, waveform

__all__ = ["FIGURE_RATE", "figure"]

#: The rate the clip is drawn at: the spectrogram shows 0 to FIGURE_RATE / 2 (8 kHz), what the
#: 16 kHz audio encoders of current models hear.
FIGURE_RATE = 16_000
_MUTED = "#666666"


def _media(row: dict) -> Image.Image:
    array, rate = decode_audio(row, sampling_rate=FIGURE_RATE, mono=True)
    wave, spectrum = waveform(array, 480, 70), spectrogram(array, rate, 480, 230)
    media = Image.new("RGB", (480, 70 + 4 + 230 + 18), "white")
    media.paste(wave, (0, 0))
    media.paste(spectrum, (0, 74))
    draw = ImageDraw.Draw(media)
    draw.text((0, 74 + 232), f"{len(array) / rate:.1f} s; spectrogram 0-{rate // 2000} kHz, time left to right",
              fill=_MUTED, font=font(12))
    return media


def _answers(row: dict, features) -> list[Line]:
    lines = []
    if row.get("answers"):
        lines.append(Line(" | ".join(map(str, row["answers"])), "Answers", COLOURS[0]))
        if row.get("confidences"):  # each annotator's "are you confident?" (yes, no, maybe)
            lines.append(Line(" | ".join(map(str, row["confidences"])), "Confident", _MUTED))
    if row.get("answer") is not None:
        annotator = f" (annotator {row['annotator']})" if row.get("annotator") is not None else ""
        lines.append(Line(f"{row['answer']}{annotator}", "A", COLOURS[0]))
        if row.get("confidence") is not None:
            lines.append(Line(str(row["confidence"]), "Confident", _MUTED))
    if isinstance(row.get("label"), int) and features is not None and hasattr(features.get("label"), "int2str"):
        lines.append(Line(features["label"].int2str(row["label"]) if row["label"] >= 0 else "(none)", "Label",
                          COLOURS[2]))
    if row.get("majority_answer") is not None:
        agreed = "unanimous" if row.get("unanimous") else "majority"
        lines.append(Line(f"{row['majority_answer']} ({agreed})", "Majority", COLOURS[2]))
    return lines


def figure(row: dict, features=None):
    """One Clotho-AQA question as a figure (a ``PIL.Image``; a notebook shows it inline): the clip's waveform
    and spectrogram beside the question and the answers of the row (the three annotators' with their
    confidence, the majority or the label, or one annotator's answer in ``all``).

    ``row``: a row of any configuration with its ``audio``, decoded or not (no torch needed:
    :func:`clotho_aqa.without_decoding`); ``features`` (``ds.features``) names the ``label``.

    Example::

        from datasets import load_dataset
        import clotho_aqa
        ds = clotho_aqa.without_decoding(load_dataset("demo_output/clotho_aqa/hub", "yes_no_majority", split="train"))
        clotho_aqa.figure(ds[0], ds.features)            # shown inline by Jupyter
    """
    # The release writes some file names with HTML entities ("Kids&#39; choir"): shown as read aloud.
    title = "  ·  ".join(html.unescape(str(part)) for part in (row.get("file_name", ""), row.get("answer_type", ""))
                         if part)
    lines = [Line(str(row["question"]), "Q"), *_answers(row, features)]
    if row.get("keywords"):
        lines.append(Line(", ".join(row["keywords"]), "Clip keywords", _MUTED))
    return compose(title, _media(row), lines)
