"""Answer extraction: a model's free text -> the answer it gives, or ``None`` (unparseable).

One documented rule set, the same for every dataset, applied in two steps.

1. **The answer span.** The last ``\\boxed{...}``; else the last ``<answer>...</answer>``; else the
   last ``{...}``; else the text after the last answer marker (``Answer:``, ``answer is``,
   ``Final answer =`` ...); else the whole text.
2. **The answer in the span**, by the kind of answer the question asks for:

   - ``integer``: numbers written with digits (``3``, ``-1``, ``1,000``, ``3.0``) or as English words
     (``zero`` ... ``ninety-nine``, ``none``). When several appear, **the last one** wins (a
     chain of thought states the result last: "Removing 2 of the 5 cubes leaves 3." -> 3), and
     digits win over words ("There are 3 cubes; one is red." -> 3). A last number that is not
     whole (``2.5``) is unparseable.
   - ``yes_no``: the span ``y`` / ``n``, or **the first** of yes, yeah, yep, true / no, nope,
     false ("No, there is no dog." -> no; "Yes, but no cat." -> yes).
   - ``word`` (CLEVR attribute values, Clotho-AQA single-word answers): the span is normalised
     (lower case, one space, surrounding punctuation and a leading article removed), synonyms
     are mapped to their canonical word (``ball`` -> ``sphere``) and, with a vocabulary, a span
     that is not itself an answer yields **the first** vocabulary word in it (plural ``-s``
     dropped when only the singular is known): short answers lead with the answer.

A prediction may be a ranked list (single-word answers): each item is extracted the same way,
in order; integer and yes/no questions use the first item.

Example:
    >>> extract_integer("Let me count. 5 - 2 = 3, so the answer is \\\\boxed{3}.")
    3
    >>> extract_yes_no("Yes, there is a dog barking.")
    'yes'
    >>> extract_word("Big.", synonyms={"big": "large"}, vocabulary={"large", "small"})
    'large'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence

__all__ = [
    "KINDS",
    "NUMBER_WORDS",
    "answer_span",
    "extract",
    "extract_integer",
    "extract_ranked",
    "extract_word",
    "extract_yes_no",
]

KINDS = ("integer", "yes_no", "word")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
#: English number words 0..99 ("twenty-one" and "twenty one"), plus "none" for 0.
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_UNITS)} | dict(_TENS) | {"none": 0}
for _ten, _value in _TENS.items():
    for _unit in range(1, 10):
        NUMBER_WORDS[f"{_ten}-{_UNITS[_unit]}"] = _value + _unit

_BOXED = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_TAGGED = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_BRACED = re.compile(r"\{([^{}]*)\}")
# "Answer: 3", "the answer is 3", "Final answer = 3", "ANSWER - 3"; "answer" alone (as in
# "I cannot answer that") is not a marker.
_MARKER = re.compile(r"\banswer\b\s*(?:is\b|:|=|-(?!\w))\s*", re.IGNORECASE)
_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_YES = frozenset({"yes", "yeah", "yep", "true"})
_NO = frozenset({"no", "nope", "false"})
_STRIP = " \t\r\n.,;:!?\"'`()[]*_"
_ARTICLES = ("a ", "an ", "the ")


def answer_span(text: str) -> str:
    """The part of ``text`` that holds the answer (step 1 of the module's rule).

    Example:
        >>> answer_span("Step 1: 10 objects. Step 2: remove 3. Answer: 7.")
        '7.'
        >>> answer_span("<answer>two</answer>")
        'two'
        >>> answer_span("There are 3 cubes left.")
        'There are 3 cubes left.'
    """
    for pattern in (_BOXED, _TAGGED, _BRACED):
        found = pattern.findall(text)
        if found:
            return found[-1].strip()
    markers = list(_MARKER.finditer(text))
    if markers:
        return text[markers[-1].end():].strip()
    return text.strip()


def _number_words(span: str) -> list[int]:
    words = _WORD.findall(span.lower())
    values: list[int] = []
    previous_ten = False
    for word in words:
        value = NUMBER_WORDS.get(word)
        if value is None:
            previous_ten = False
            continue
        if previous_ten and 0 < value < 10:  # "twenty one" is one number, not two
            values[-1] += value
            previous_ten = False
            continue
        values.append(value)
        previous_ten = word in _TENS
    return values


def extract_integer(text: str) -> int | None:
    """The integer answer of ``text`` (the last number of the answer span), or None.

    Example:
        >>> [extract_integer(t) for t in ("3", "three", "Answer: 3", "\\\\boxed{3}", "There are 3 cubes left.")]
        [3, 3, 3, 3, 3]
        >>> extract_integer("10 - 4 = 6"), extract_integer("twenty-one"), extract_integer("I am not sure.")
        (6, 21, None)
    """
    span = answer_span(text)
    digits = _NUMBER_TOKEN.findall(span)
    if digits:
        number = float(digits[-1].replace(",", ""))
        return int(number) if number.is_integer() else None
    words = _number_words(span)
    return words[-1] if words else None


def extract_yes_no(text: str) -> str | None:
    """``"yes"``, ``"no"`` or None: the first yes/no word of the answer span.

    Example:
        >>> [extract_yes_no(t) for t in ("y", "Yes.", "TRUE", "No, there is not.", "maybe")]
        ['yes', 'yes', 'yes', 'no', None]
    """
    span = answer_span(text).lower().strip(_STRIP)
    if span in ("y", "n"):
        return "yes" if span == "y" else "no"
    for word in _WORD.findall(span):
        if word in _YES:
            return "yes"
        if word in _NO:
            return "no"
    return None


def _normalize_span(text: str, normalize: Callable[[str], str]) -> str:
    span = normalize(answer_span(text)).strip(_STRIP)
    for article in _ARTICLES:
        if span.startswith(article):
            span = span[len(article):].strip(_STRIP)
            break
    return span


def extract_word(
    text: str,
    vocabulary: Collection[str] | None = None,
    synonyms: Mapping[str, str] | None = None,
    normalize: Callable[[str], str] | None = None,
) -> str | None:
    """A single-word answer: the normalised span, mapped through ``synonyms``; with a
    ``vocabulary``, the span itself when it is an answer, else the first answer word in it.

    ``normalize`` is the dataset's own spelling rule (for Clotho-AQA, the one its builder
    applies to the annotators' answers); by default lower case and single spaces.

    Example:
        >>> extract_word("The Rain.")
        'rain'
        >>> extract_word("It is a shiny ball.", vocabulary={"metal", "rubber"}, synonyms={"shiny": "metal"})
        'metal'
        >>> extract_word("Two balls.", vocabulary={"sphere", "cube"}, synonyms={"ball": "sphere"})
        'sphere'
        >>> extract_word("...") is None
        True
    """
    normalize = normalize or (lambda s: " ".join(s.split()).lower())
    synonyms = synonyms or {}
    span = _normalize_span(text, normalize)
    if not span:
        return None
    whole = synonyms.get(span, span)
    if vocabulary is None or whole in vocabulary:
        return whole
    for token in re.findall(r"[\w'-]+", span):
        for form in (token, token[:-1] if token.endswith("s") else None):
            if form:
                word = synonyms.get(form, form)
                if word in vocabulary:
                    return word
    return None


def extract(
    prediction: str | Sequence[str] | None,
    kind: str,
    vocabulary: Collection[str] | None = None,
    synonyms: Mapping[str, str] | None = None,
    normalize: Callable[[str], str] | None = None,
) -> str | None:
    """The answer of one prediction as a string (``"3"``, ``"yes"``, ``"sphere"``), or None.

    A list is a ranked prediction: its first item is used here (see :func:`extract_ranked`).

    Example:
        >>> extract("There are three.", "integer"), extract(["no", "yes"], "yes_no")
        ('3', 'no')
    """
    ranked = extract_ranked(prediction, kind, vocabulary, synonyms, normalize, limit=1)
    return ranked[0] if ranked else None


def extract_ranked(
    prediction: str | Sequence[str] | None,
    kind: str,
    vocabulary: Collection[str] | None = None,
    synonyms: Mapping[str, str] | None = None,
    normalize: Callable[[str], str] | None = None,
    limit: int | None = None,
) -> list[str]:
    """The answers of a prediction in rank order (a text is a list of one), without repeats
    and without unparseable items, at most ``limit``.

    Example:
        >>> extract_ranked(["Rain", "the water", "rain", "???"], "word")
        ['rain', 'water']
    """
    if kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; valid: {', '.join(KINDS)}")
    if prediction is None:
        return []
    items = [prediction] if isinstance(prediction, str) else list(prediction)
    if kind != "word":
        items = items[:1]
    answers: list[str] = []
    for item in items:
        if item is None:
            continue
        item = str(item)
        if kind == "integer":
            value = extract_integer(item)
            answer = None if value is None else str(value)
        elif kind == "yes_no":
            answer = extract_yes_no(item)
        else:
            answer = extract_word(item, vocabulary, synonyms, normalize)
        if answer is not None and answer not in answers:
            answers.append(answer)
            if limit is not None and len(answers) >= limit:
                break
    return answers
