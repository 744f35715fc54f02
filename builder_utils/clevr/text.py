"""Turning an instantiated template into question text.

Every draw uses ``rng.random()`` only (:func:`pick`): its sequence is fixed for a seed across
Python versions, so the same seed gives the same words everywhere.

>>> import random
>>> realise(["How many <C> <S>s are there?"], {"<C>": "Color", "<S>": "Shape"},
...         {"<C>": "red", "<S>": None}, {}, random.Random(0))
'How many red things are there?'
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

# The validator's own slot syntax, so that what loading accepts is exactly what is rendered.
from .templates import _OPTIONAL, _WORD_SLOT, ATTRIBUTE_TYPES, slot_synonyms

__all__ = ["POST_PROMPTS", "TextPlan", "null_word", "number_agreement", "pick", "realise", "with_post_prompt"]

# Appended by --add_post_prompt, by the type of the answer (seed 001's sentences).
POST_PROMPTS: Mapping[str, str] = {
    "Bool": "Answer with only yes or no in curly braces, e.g. {yes}.",
    "Integer": "Answer with only the number in curly braces, e.g. {1}.",
    "Shape": "Answer with only the shape name in curly braces, e.g. {sphere}.",
    "Color": "Answer with only the color name in curly braces, e.g. {red}.",
    "Size": "Answer with only the size name in curly braces, e.g. {small}.",
    "Material": "Answer with only the material name in curly braces, e.g. {rubber}.",
}

_OTHER = re.compile(r"\b([Oo])ther\s+")
_ANOTHER = re.compile(r"\b([Aa])nother\b")
_ARTICLE = re.compile(r"\b([Aa])n?(\s+)(?=([A-Za-z0-9]))")
# Marks that take no space before them; the text has single spaces when they are fixed.
_SPACED_PUNCT = tuple((" " + mark, mark) for mark in "?.,;:!")


def pick(rng: random.Random, options: Sequence[Any]) -> Any:
    """One uniformly drawn element, using only ``rng.random()`` (stable across versions).

    >>> pick(random.Random(1), ["a", "b", "c"])
    'a'
    """
    return options[int(rng.random() * len(options))]


def null_word(param_type: str) -> str:
    """How a null param reads: ``thing`` for a Shape, nothing for the other attributes.

    >>> null_word("Shape"), null_word("Color")
    ('thing', '')
    """
    return "thing" if param_type == "Shape" else ""


def realise(
    texts: Sequence[str],
    param_types: Mapping[str, str],
    values: Mapping[str, Any],
    synonyms: Mapping[str, Sequence[str]],
    rng: random.Random,
    *,
    agreement: Callable[[str], str] | None = None,
) -> str:
    """Render one question as ``TEMPLATES.md`` says (one synonym draw per param: written twice, it reads the same).

    >>> realise(["Is there another <C2> <S2> [that is] the same size as the <C> <S>?"],
    ...         {"<C>": "Color", "<S>": "Shape", "<C2>": "Color", "<S2>": "Shape"},
    ...         {"<C>": "red", "<S>": "cube", "<C2>": "blue", "<S2>": None}, {}, random.Random(3))
    'Is there a blue thing the same size as the red cube?'
    """
    return TextPlan(texts, param_types, synonyms, agreement=agreement).render(values, rng)


class TextPlan:
    """A template's text variants cut once into format strings: ``render`` makes exactly the draws
    and text of :func:`realise`. Drawn words are inserted as they are, never read as slots.

    >>> plan = TextPlan(["How many <C> <S>s are there?"], {"<C>": "Color", "<S>": "Shape"}, {})
    >>> plan.render({"<C>": "red", "<S>": None}, random.Random(0))
    'How many red things are there?'
    """

    __slots__ = ("texts", "synonyms", "agreement", "_params", "_pairs", "_variants")

    def __init__(self, texts: Sequence[str], param_types: Mapping[str, str],
                 synonyms: Mapping[str, Sequence[str]], *, agreement: Callable[[str], str] | None = None):
        self.texts = tuple(texts)
        self.synonyms = synonyms
        self.agreement = agreement
        self._params = tuple((name, null_word(ptype)) for name, ptype in param_types.items())
        self._pairs = _contrasted_pairs(param_types)
        self._variants = tuple(_Variant(text, [name for name, _ in self._params], synonyms) for text in self.texts)

    def render(self, values: Mapping[str, Any], rng: random.Random) -> str:
        """One question text; draws: the variant, then per param, ``{Word}`` slot and ``[optional]`` segment."""
        rand = rng.random
        synonyms = self.synonyms
        variants = self._variants
        variant = variants[int(rand() * len(variants))]
        words = []
        for name, null in self._params:
            value = values.get(name)
            word = null if value is None else str(value)
            options = synonyms.get(word)
            if options:
                word = options[int(rand() * len(options))]
            words.append(word)
        for word, options in variant.slots:
            # A slot without synonyms (validation rejects it) reads as written, without a draw.
            words.append(options[int(rand() * len(options))] if options else word)
        if variant.optional:
            kept = [segment.format(*words) if rand() < 0.5 else "" for segment in variant.optional]
            words += kept
        text = variant.format.format(*words)
        # " ".join(text.split()) collapses whitespace runs and strips, as re.sub(r"\s+", " ", text)
        # .strip() did: both split on the same (Unicode) whitespace, and it is several times faster.
        text = " ".join(text.split())
        # Both rules need "other" ([Oo]ther, [Aa]nother): most texts are spared two regexes.
        if self._pairs and ("other" in text or "Other" in text):
            for a, b in self._pairs:
                first, second = values.get(a), values.get(b)
                if first is not None and second is not None and first != second:
                    text = _OTHER.sub("", text)
                    text = _ANOTHER.sub(_first_letter, text)
                    break
        if self.agreement is not None:
            # Collapsed again, the agreement being any callable (the rules above keep single
            # spaces): the substring tests below rely on single spaces. Collapsing before the
            # article and punctuation rules rather than after gives the same text, as neither
            # adds whitespace nor tells one run of it from another.
            text = " ".join(self.agreement(text).split())
        if "a " in text or "A " in text or "an " in text or "An " in text:
            text = _ARTICLE.sub(_agree, text)
        for spaced, mark in _SPACED_PUNCT:
            if spaced in text:
                text = text.replace(spaced, mark)
        return text[:1].upper() + text[1:]


class _Variant:
    """One text variant as a format string: fields for params, ``{Word}`` slots, ``[optional]`` segments."""

    __slots__ = ("format", "slots", "optional")

    def __init__(self, text: str, names: Sequence[str], synonyms: Mapping[str, Sequence[str]]):
        param_field = {name: k for k, name in enumerate(names)}
        token = re.compile("|".join([*map(re.escape, sorted(names, key=len, reverse=True)), _WORD_SLOT.pattern]))
        first_segment = len(names) + len(_WORD_SLOT.findall(text))
        # (word, its synonyms cased by the slot's first letter: {Remove} starts a sentence,
        # {remove} not; () when it has none, and the slot reads as written), in text order
        slots: list[tuple[str, tuple[str, ...]]] = []

        def fields(part: str) -> str:
            out, last = [], 0
            for m in token.finditer(part):
                out.append(_escape_braces(part[last:m.start()]))
                word = m.group(1)
                if word is None:
                    out.append("{%d}" % param_field[m.group()])
                else:
                    upper = word[:1].isupper()
                    cased = tuple((c[:1].upper() if upper else c[:1].lower()) + c[1:]
                                  for c in slot_synonyms(synonyms, word) or ())
                    out.append("{%d}" % (len(names) + len(slots)))
                    slots.append((word, cased))
                last = m.end()
            out.append(_escape_braces(part[last:]))
            return "".join(out)

        main, optional, last = [], [], 0
        for m in _OPTIONAL.finditer(text):
            main.append(fields(text[last:m.start()]))
            optional.append(fields(m.group(1)))
            main.append("{%d}" % (first_segment + len(optional) - 1))
            last = m.end()
        main.append(fields(text[last:]))
        self.format = "".join(main)
        self.optional = tuple(optional)
        self.slots = tuple(slots)


def _escape_braces(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")


def number_agreement(
    adjectives: Iterable[str], nouns: Iterable[str], fillers: Iterable[str] = ("more", "other", "extra", "new")
) -> Callable[[str], str]:
    """A fix-up making "1 <adjectives> <noun>s" singular: only the given words (and fillers such as
    "more") may stand between, so "1 of the red balls" is left alone.

    >>> fix = number_agreement(["red", "small"], ["ball", "thing"])
    >>> fix("Add 1 small red balls. Remove 1 of the balls. Add 3 balls.")
    'Add 1 small red ball. Remove 1 of the balls. Add 3 balls.'
    """
    adjective_words = sorted({w for w in adjectives if w} | set(fillers), key=len, reverse=True)
    noun_words = sorted({w for w in nouns if w}, key=len, reverse=True)
    pattern = re.compile(
        r"\b(1|one|One) ((?:(?:%s) )*)(%s)s\b"
        % ("|".join(map(re.escape, adjective_words)), "|".join(map(re.escape, noun_words)))
    )

    def agree(text: str) -> str:
        # Most questions hold no "1 " nor "one ": a substring test spares them the regex; and
        # a search is cheaper than a sub that finds nothing (it would parse its template).
        if "1 " not in text and "one " not in text and "One " not in text:
            return text
        if pattern.search(text) is None:
            return text
        return pattern.sub(_singular, text)

    return agree


def with_post_prompt(question: str, answer_type: str) -> str:
    """Append seed 001's answer-format sentence for the answer type.

    >>> with_post_prompt("How many cubes are there?", "Integer")
    'How many cubes are there? Answer with only the number in curly braces, e.g. {1}.'
    """
    return f"{question} {POST_PROMPTS[answer_type]}"


def _contrasted_pairs(param_types: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The two params of an attribute type, whose different values make "other" redundant (and
    misleading), so it is dropped; with three of a type it is unclear which two "other" contrasts.

    >>> _contrasted_pairs({"<C>": "Color", "<S>": "Shape", "<C2>": "Color", "<X>": "Integer"})
    (('<C>', '<C2>'),)
    """
    by_type: dict[str, list[str]] = {}
    for name, ptype in param_types.items():
        if ptype in ATTRIBUTE_TYPES:
            by_type.setdefault(ptype, []).append(name)
    if not by_type or any(len(names) > 2 for names in by_type.values()):
        return ()
    return tuple((names[0], names[1]) for names in by_type.values() if len(names) == 2)


def _singular(match: re.Match) -> str:
    return f"{match.group(1)} {match.group(2)}{match.group(3)}"


def _first_letter(match: re.Match) -> str:
    return match.group(1)


def _agree(match: re.Match) -> str:
    article = match.group(1)
    vowel = match.group(3).lower() in "aeiou"
    return (article + "n" if vowel else article) + match.group(2)
