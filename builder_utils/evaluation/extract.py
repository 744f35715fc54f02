"""Answer extraction: a model's free text -> the answer it gives, or ``None`` (unparseable).

One rule set for every dataset: README.md (this package), "Answer extraction". Linear in the
text's length on any input (one pass per rule, no backtracking, at most :data:`SPAN_LIMIT`
characters of the span read). Beyond the README: ``3.0`` reads as 3, ``2.5`` as nothing; a
plural ``-s`` is dropped when only the singular is an answer; integer and yes/no read a ranked
list's first item only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from builder_utils.options import Instance, Integer

__all__ = ["KINDS", "NUMBER_WORDS", "SPAN_LIMIT", "Work", "answer_span", "extract", "extract_integer", "extract_ranked",
           "extract_word", "extract_yes_no", "last_boxed"]

KINDS = ("integer", "yes_no", "word")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
          "fifteen sixteen seventeen eighteen nineteen").split()
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
#: English number words 0..99 ("twenty-one" and "twenty one"), plus "none" for 0.
NUMBER_WORDS: dict[str, int] = ({word: value for value, word in enumerate(_UNITS)} | dict(_TENS) | {"none": 0}
                                | {f"{ten}-{_UNITS[u]}": value + u for ten, value in _TENS.items() for u in range(1, 10)})

# Finding the span is a fixed number of passes over the text, each linear: ``str.find`` /
# ``rfind`` for the literal tags, and two searches anchored at the start that open with a greedy
# ``.*``: the engine runs to the end once and backs off to the LAST place where the rest matches
# (no list of matches, no retry from every start). What follows the ``.*`` is a literal, or a
# possessive run that stops at the next brace or non-space: no attempt scans past the next candidate.
_LAST_BOXED = re.compile(r"(?s:.*)\\boxed(\s*+)\{([^{}]*+)\}")  # a literal first: a fast back-off
# "Answer: 3", "the answer is 3", "Final answer = 3", "ANSWER - 3"; "answer" alone (as in
# "I cannot answer that") is not a marker. Possessive runs: a space run is never re-scanned.
# The word boundary before "answer" is a lookbehind AFTER it, so that the pattern opens with a
# literal and the engine backs off to each "a" at C speed. Matched on the folded text.
_LAST_MARKER = re.compile(r"(?s:.*)answer(?<!\wanswer)\b\s*+(?:is\b|:|=|-(?!\w))\s*+")
_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_WORD = re.compile(r"[a-z]+(?:-[a-z]+)*")
_ONE_WORD = re.compile(r"[\w'-]+")
_YES_NO = dict.fromkeys(("yes", "yeah", "yep", "true"), "yes") | dict.fromkeys(("no", "nope", "false"), "no")
_STRIP = " \t\r\n.,;:!?\"'`()[]*_"
_ARTICLES = ("a ", "an ", "the ")
#: The answer is read from at most this many characters of the span: its end for an integer
#: (the last number), its start for yes/no and words (the first word). Spans are short in
#: practice; the cap bounds the work on degenerate ones (a million digits, a whole essay).
SPAN_LIMIT = 2048


@dataclass
class Work:
    """The characters an extraction's searches covered: what the linearity tests count, not time.

    Example:
        >>> work = Work(); _ = answer_span("<answer>3</answer>", work); work.chars <= 3 * 18
        True
    """

    chars: int = 0


def _search(pattern: re.Pattern, text: str, work: Work | None) -> re.Match | None:
    found = pattern.match(text)
    if work is not None:
        work.chars += 2 * len(text) - (found.end() if found else 0)  # forwards, then backing off
    return found


def _find(text: str, needle: str, work: Work | None, start: int = 0, end: int | None = None, last: bool = False) -> int:
    end = len(text) if end is None else end
    at = text.rfind(needle, start, end) if last else text.find(needle, start, end)
    if work is not None:
        work.chars += (end - at if last else at - start) if at >= 0 else end - start
    return at


def _span(text: str, work: Work | None) -> tuple[int, int] | None:
    """(start, end) of the answer span's candidate in the rule's priority order, or None."""
    if _find(text, "\\boxed", work) >= 0:
        boxed = _search(_LAST_BOXED, text, work)
        if boxed is not None:
            return boxed.span(2)
    # Tags and markers are ASCII: other characters become "?" (one each, so positions stay put;
    # lower() alone would turn "İ" into two characters).
    folded = (text if text.isascii() else text.encode("ascii", "replace").decode("ascii")).lower()
    close = _find(folded, "</answer>", work, last=True)
    # the nearest opening tag before the last closing one, to the first closing tag after it
    opened = _find(folded, "<answer>", work, 0, close, last=True) if close > 0 else -1
    if opened >= 0:
        return opened + 8, _find(folded, "</answer>", work, opened + 8)
    # the last "{...}" without inner braces: the last "}", the last "{" before it, the first "}" after that
    close = _find(text, "}", work, last=True)
    opened = _find(text, "{", work, 0, close, last=True) if close > 0 else -1
    if opened >= 0:
        return opened + 1, _find(text, "}", work, opened + 1)
    if _find(folded, "answer", work) >= 0:
        marker = _search(_LAST_MARKER, folded, work)
        if marker is not None:
            return marker.end(), len(text)
    return None


def last_boxed(text: str) -> tuple[int, int] | None:
    """(start, end) of the last whole ``\\boxed{...}`` (no braces inside), found in linear time.

    Example:
        >>> last_boxed("1 + 1 = \\\\boxed{2}.")
        (8, 17)
    """
    found = _LAST_BOXED.match(text) if "\\boxed" in text else None
    return None if found is None else (found.start(1) - len("\\boxed"), found.end())


# A prediction's text is a str: a number or a list here is a caller's mistake, one ValueError naming it
# (checked by answer_span, which every extract_* calls before anything else reads the text).
_TEXT = Instance(str)
_PREDICTION = Instance(str, list, tuple, optional=True)
_LIMIT = Integer(1, optional=True)


def answer_span(text: str, work: Work | None = None) -> str:
    """The part of ``text`` that holds the answer, in linear time (``work`` counts what was examined).

    Example:
        >>> answer_span("Step 1: 10 objects. Step 2: remove 3. Answer: 7."), answer_span("There are 3 cubes.")
        ('7.', 'There are 3 cubes.')
        >>> answer_span("<answer>two</answer>"), answer_span("<answer><answer>5</answer>")
        ('two', '5')
    """
    _TEXT("text", text)
    found = _span(text, work)
    return (text[found[0]:found[1]] if found is not None else text).strip()


def _window(span: str, work: Work | None, tail: bool = False) -> str:
    """The first (``tail``: last) :data:`SPAN_LIMIT` characters, without a word or number cut in two."""
    if work is not None:
        work.chars += min(len(span), SPAN_LIMIT)
    if len(span) <= SPAN_LIMIT:
        return span
    cut = len(span) - SPAN_LIMIT if tail else SPAN_LIMIT
    while 0 < cut < len(span) and all(c.isalnum() or c in "_.,-'" for c in span[cut - 1:cut + 1]):
        cut += 1 if tail else -1
    return span[cut:] if tail else span[:cut]


def _number_words(span: str) -> list[int]:
    values: list[int] = []
    previous_ten = False
    for word in _WORD.findall(span.lower()):
        value = NUMBER_WORDS.get(word)
        if value is not None and previous_ten and 0 < value < 10:  # "twenty one" is one number, not two
            values[-1] += value
        elif value is not None:
            values.append(value)
        previous_ten = value is not None and word in _TENS
    return values


def extract_integer(text: str, work: Work | None = None) -> int | None:
    """The integer answer of ``text`` (the last number of the answer span), or None.

    Example:
        >>> [extract_integer(t) for t in ("3", "three", "Answer: 3", "\\\\boxed{3}", "There are 3 cubes left.")]
        [3, 3, 3, 3, 3]
        >>> extract_integer("10 - 4 = 6"), extract_integer("twenty-one"), extract_integer("I am not sure.")
        (6, 21, None)
    """
    span = _window(answer_span(text, work), work, tail=True)
    last = None
    for last in _NUMBER_TOKEN.finditer(span):
        pass
    if last is not None:
        token = last.group().replace(",", "")
        if "." not in token:
            return int(token)  # exact (a float would round 20 digits); the span cap bounds its length
        number = float(token)
        return int(number) if number.is_integer() else None
    words = _number_words(span)
    return words[-1] if words else None


def extract_yes_no(text: str, work: Work | None = None) -> str | None:
    """``"yes"``, ``"no"`` or None: the first yes/no word of the answer span.

    Example:
        >>> [extract_yes_no(t) for t in ("y", "Yes.", "TRUE", "No, there is not.", "maybe")]
        ['yes', 'yes', 'yes', 'no', None]
    """
    span = _window(answer_span(text, work), work).lower().strip(_STRIP)
    if span in ("y", "n"):
        return "yes" if span == "y" else "no"
    return next((_YES_NO[word] for word in _WORD.findall(span) if word in _YES_NO), None)


def extract_word(text: str, vocabulary: Collection[str] | None = None, synonyms: Mapping[str, str] | None = None,
                 normalize: Callable[[str], str] | None = None, work: Work | None = None,
                 unlisted_words: bool = False) -> str | None:
    """A single-word answer: the normalised span (``normalize``: the dataset's spelling rule), synonyms mapped.

    With a ``vocabulary``: the span if an answer, else its first answer word, else
    (``unlisted_words``) the span when it is one word.

    Example:
        >>> extract_word("The Rain."), extract_word("...")
        ('rain', None)
        >>> extract_word("Two balls.", vocabulary={"sphere", "cube"}, synonyms={"ball": "sphere"})
        'sphere'
        >>> extract_word("Squeak.", vocabulary={"rain"}), extract_word("Squeak.", vocabulary={"rain"}, unlisted_words=True)
        (None, 'squeak')
    """
    normalize = normalize or (lambda s: " ".join(s.split()).lower())
    synonyms = synonyms or {}
    span = normalize(_window(answer_span(text, work), work)).strip(_STRIP)
    article = next((a for a in _ARTICLES if span.startswith(a)), "")
    span = span[len(article):].strip(_STRIP)
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
    return whole if unlisted_words and _ONE_WORD.fullmatch(whole) else None


def extract(prediction: str | Sequence[str] | None, kind: str, vocabulary: Collection[str] | None = None,
            synonyms: Mapping[str, str] | None = None, normalize: Callable[[str], str] | None = None) -> str | None:
    """The answer of one prediction (of a ranked list: the first) as a string, or None.

    Example:
        >>> extract("There are three.", "integer"), extract(["no", "yes"], "yes_no")
        ('3', 'no')
    """
    ranked = extract_ranked(prediction, kind, vocabulary, synonyms, normalize, limit=1)
    return ranked[0] if ranked else None


def extract_ranked(prediction: str | Sequence[str] | None, kind: str, vocabulary: Collection[str] | None = None,
                   synonyms: Mapping[str, str] | None = None, normalize: Callable[[str], str] | None = None,
                   limit: int | None = None, work: Work | None = None, unlisted_words: bool = False) -> list[str]:
    """The answers of a prediction in rank order, without repeats or unparseable items, at most ``limit``.

    Example:
        >>> extract_ranked(["Rain", "the water", "rain", "???"], "word")
        ['rain', 'water']
    """
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"unknown answer kind {kind!r}; valid: {', '.join(KINDS)}")
    _PREDICTION("prediction", prediction)
    _LIMIT("limit", limit)
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
            value = extract_integer(item, work)
            answer = None if value is None else str(value)
        elif kind == "yes_no":
            answer = extract_yes_no(item, work)
        else:
            answer = extract_word(item, vocabulary, synonyms, normalize, work, unlisted_words)
        if answer is not None and answer not in answers:
            answers.append(answer)
            if limit is not None and len(answers) >= limit:
                break
    return answers
