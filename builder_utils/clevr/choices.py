"""The choices of filter and relate nodes on one scene (what the search tries), and the per-scene caches.

Empty filter keys are offered so that 0 and "no" occur: first keys present elsewhere in the
scene (such a "no" survives the degeneracy check and reads naturally), then any.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from operator import itemgetter
from typing import Any

from .executor import SceneIndex
from .plan import ATTRS, NULL_KEY, Step

__all__ = ["SceneData", "filter_choices", "relate_choices", "shuffled"]

# Share of "trivial" relate options (the relation does not narrow the filter) kept, as in
# the reference generator.
_TRIVIAL_FRACTION = 0.1
# The filter key of each attribute support (bit a set: attribute a kept, else None), as one C call
# on an object's attribute values followed by None; SceneData builds 16 keys per object.
_SUPPORT_KEYS = tuple(itemgetter(*(a if support >> a & 1 else len(ATTRS) for a in range(len(ATTRS))))
                      for support in range(1 << len(ATTRS)))


class SceneData:
    """A :class:`SceneIndex` plus the search's caches, shared by the templates of one scene only.

    For example::

        data = SceneData(SceneIndex(scene))
    """

    __slots__ = ("index", "relations", "_values", "_by_support", "_keys", "_summaries", "_filters", "_relates",
                 "_key_masks", "_domains")

    def __init__(self, index: SceneIndex, relations: Sequence[str]):
        self.index = index
        self.relations = tuple(relations)
        # Each object's attribute values followed by None, the input of _SUPPORT_KEYS. The
        # tables of keys per support are built when first asked for: a scene's templates
        # rarely need all 16.
        values_of = itemgetter(*ATTRS)
        self._values = [values_of(obj) + (None,) for obj in index.objects]
        self._by_support: list[dict[tuple, int] | None] = [None] * (1 << len(ATTRS))
        self._keys: dict[tuple[int, int], list[tuple[tuple, int]]] = {}
        self._summaries: dict[tuple[int, int], tuple[frozenset, int, list]] = {}
        self._filters: dict[tuple, tuple] = {}
        self._relates: dict[tuple, tuple] = {}
        self._key_masks: dict[tuple, int] = {}
        self._domains: dict[tuple, tuple[tuple, ...]] = {}

    def _table(self, support: int) -> dict[tuple, int]:
        """The filter keys of one attribute support present in the scene, with their masks, in object order."""
        table = self._by_support[support]
        if table is None:
            table = self._by_support[support] = {}
            key_of = _SUPPORT_KEYS[support]
            bit = 1
            for values in self._values:
                key = key_of(values)
                table[key] = table.get(key, 0) | bit
                bit <<= 1
        return table

    def keys(self, allowed: int, required: int) -> list[tuple[tuple, int]]:
        """Filter keys present in the scene over ``allowed`` attributes, all ``required`` set, with masks."""
        cached = self._keys.get((allowed, required))
        if cached is None:
            cached = []
            for support in range(len(self._by_support)):
                if support & ~allowed == 0 and support & required == required:
                    cached.extend(self._table(support).items())
            self._keys[(allowed, required)] = cached
        return cached

    def summary(self, allowed: int, required: int) -> tuple[frozenset, int, list[tuple[tuple, int]]]:
        """The set of :meth:`keys`, and their one-object ``(key, mask)`` pairs (many templates start so)."""
        found = self._summaries.get((allowed, required))
        if found is None:
            pairs = self.keys(allowed, required)
            single_pairs = [(key, mask) for key, mask in pairs if not mask & (mask - 1)]
            found = self._summaries[(allowed, required)] = (
                frozenset([key for key, _ in pairs]), len(single_pairs), single_pairs)
        return found

    def key_mask(self, key: tuple) -> int:
        """Objects matching a filter key (0 if absent; the all-null key matches every object)."""
        mask = self._key_masks.get(key)
        if mask is None:
            # A key lives in the table of its support: the attributes it sets (object
            # attribute values are never None).
            support = sum(1 << a for a, value in enumerate(key) if value is not None)
            mask = self._key_masks[key] = self._table(support).get(key, 0)
        return mask


def shuffled(items: Sequence[Any], rng: random.Random) -> Iterator[Any]:
    """Items in a random order, drawn lazily by ``rng.random()`` only (the same on every Python version).

    >>> sorted(shuffled(range(5), random.Random(0)))
    [0, 1, 2, 3, 4]
    """
    a = list(items)
    n = len(a)
    rand = rng.random
    for i in range(n):
        j = i + int(rand() * (n - i))
        a[i], a[j] = a[j], a[i]
        yield a[i]


def filter_choices(step: Step, data: SceneData, mask: int, values: dict) -> tuple[list, "_EmptyKeys | None"]:
    """``(key, selected)`` options of a filter-family step on ``mask``, with ``None`` placeholders
    for empty keys, drawn from the :class:`_EmptyKeys` only when reached (most searches stop early)."""
    fixed_values = tuple([values[p] for _, p in step.fixed]) if step.fixed else ()
    cache_key = (step.signature, mask, fixed_values)
    cached = data._filters.get(cache_key)
    if cached is None:
        options, present, singles, elsewhere = [], set(), 0, []
        unique = step.suffix == "unique"
        drop_null = step.function == "filter"
        if not fixed_values and mask == data.index.all_mask:
            # Over the whole scene every key present selects its own objects (never none):
            # what the loop below would find is the scene's summary, shared by such steps.
            present, singles, single_pairs = data.summary(step.allowed, step.required)
            every = data.keys(step.allowed, step.required)
            if unique:
                options = single_pairs
            elif drop_null:
                options = [pair for pair in every if pair[0] != NULL_KEY]
            else:
                options = every
        else:
            for key, key_mask in data.keys(step.allowed, step.required):
                if fixed_values and any(key[a] != v for (a, _), v in zip(step.fixed, fixed_values)):
                    continue
                selected = key_mask & mask
                if not selected:
                    if not unique:
                        elsewhere.append(key)  # in the scene, not among the input objects
                    continue
                present.add(key)
                single = not selected & (selected - 1)
                singles += single
                if (unique and not single) or (drop_null and key == NULL_KEY):
                    continue
                options.append((key, selected))
        # The template's range on the selection (see Step.sizes), applied here rather than
        # tried option by option; no empty key where at least one object is required.
        low, high = step.sizes
        if low is not None or high is not None:
            low = 0 if low is None else low
            high = mask.bit_count() if high is None else high
            options = [pair for pair in options if low <= pair[1].bit_count() <= high]
        extra = 0
        domains = None
        if step.draws_empty_keys:
            extra = len(options) if step.suffix == "exist" else singles
            # The same for every input set: filters over many sets share them.
            domains = data._domains.get((step.signature, fixed_values))
            if domains is None:
                domains = data._domains[(step.signature, fixed_values)] = _key_domains(step, data, fixed_values)
            room = 1
            for d in domains:
                room *= len(d)
            extra = max(0, min(extra, room - len(present) - (drop_null and NULL_KEY not in present)))
        cached = (options + [None] * extra, frozenset(present), domains, tuple(elsewhere))
        data._filters[cache_key] = cached
    options, present, domains, elsewhere = cached
    if domains is None or not options or options[-1] is not None:
        return options, None
    return options, _EmptyKeys(domains, present, step.function == "filter", elsewhere)


def _key_domains(step: Step, data: SceneData, fixed_values: tuple) -> tuple[tuple, ...]:
    """Per attribute, the values a filter key of this step may take (null included)."""
    fixed = {a: v for (a, _), v in zip(step.fixed, fixed_values)}
    domains = []
    for a, attr in enumerate(ATTRS):
        if a in fixed:
            domains.append((fixed[a],))
        elif step.allowed >> a & 1:
            vals = tuple(data.index.attribute_masks[attr])
            domains.append(vals if step.required >> a & 1 else vals + (None,))
        else:
            domains.append((None,))
    return tuple(domains)


class _EmptyKeys:
    """Draws distinct filter keys matching none of the input objects: those ``elsewhere`` first, then
    attribute by attribute, each uniformly among its values and null."""

    __slots__ = ("domains", "present", "drop_null", "seen", "_elsewhere")

    def __init__(self, domains: tuple, present: frozenset, drop_null: bool, elsewhere: Sequence[tuple] = ()):
        self.domains = domains
        self.present = present
        self.drop_null = drop_null
        self.seen: set = set()
        self._elsewhere = elsewhere  # copied on the first draw: most searches never draw

    def draw(self, rng: random.Random):
        """A fresh empty ``(key, 0)`` option, or ``None`` if none turned up in 64 draws."""
        rand = rng.random
        pool = self._elsewhere
        if type(pool) is not list:
            pool = self._elsewhere = list(pool)
        while pool:
            # Swap-remove a random entry: each draw costs O(1) and only the drawn ones move.
            i = int(rand() * len(pool))
            pool[i], pool[-1] = pool[-1], pool[i]
            key = pool.pop()
            if key not in self.seen:
                self.seen.add(key)
                return key, 0
        domains, present, seen = self.domains, self.present, self.seen
        # The four CLEVR attributes are drawn in order as the general case does, without a
        # list per draw (a search may draw thousands of these).
        four = len(domains) == 4
        if four:
            d0, d1, d2, d3 = domains
            n0, n1, n2, n3 = len(d0), len(d1), len(d2), len(d3)
        for _ in range(64):
            if four:
                key = (d0[int(rand() * n0)], d1[int(rand() * n1)], d2[int(rand() * n2)], d3[int(rand() * n3)])
            else:
                key = tuple([d[int(rand() * len(d))] for d in domains])
            if key in present or key in seen or (self.drop_null and key == NULL_KEY):
                continue
            seen.add(key)
            return key, 0
        return None


def relate_choices(step: Step, data: SceneData, obj: int, values: dict, rng: random.Random) -> list:
    """The ``(relation, key, selected)`` options of a relate-family step on object ``obj``.

    ``_count`` / ``_exist`` keep every selection, empty ones too; ``relate_filter`` as many empty
    ones as one-object ones, as ``filter`` does. About 10 % are trivial (the relation does not narrow).
    """
    fixed_values = tuple([values[p] for _, p in step.fixed]) if step.fixed else ()
    rel_value = values[step.rel_param] if step.rel_fixed else None
    cache_key = (step.signature, obj, fixed_values, rel_value)
    cached = data._relates.get(cache_key)
    if cached is None:
        unique = step.suffix == "unique"
        include_zero = step.suffix in ("count", "exist")
        keys = [
            (key, key_mask)
            for key, key_mask in data.keys(step.allowed, step.required)
            if not fixed_values or all(key[a] == v for (a, _), v in zip(step.fixed, fixed_values))
        ]
        nontrivial, trivial, empty = [], [], []
        singles = 0
        rel_masks = data.index.relation_masks
        for rel in (rel_value,) if step.rel_fixed else data.relations:
            related = rel_masks[rel][obj]
            for key, key_mask in keys:
                selected = related & key_mask
                if unique:
                    if not selected or selected & (selected - 1):
                        continue
                elif not selected and not include_zero:
                    empty.append((rel, key, 0))
                    continue
                if selected == key_mask:
                    trivial.append((rel, key, selected))
                else:
                    nontrivial.append((rel, key, selected))
                    singles += selected != 0 and not selected & (selected - 1)
        cached = (nontrivial, trivial, empty, singles)
        data._relates[cache_key] = cached
    nontrivial, trivial, empty, singles = cached
    keep = int(round(len(nontrivial) * _TRIVIAL_FRACTION / (1 - _TRIVIAL_FRACTION)))
    result = nontrivial
    if keep and trivial:
        chosen = _sample(trivial, keep, rng)
        result = result + chosen
        if empty:
            singles += sum(not s & (s - 1) for _, _, s in chosen)
    if empty and singles:
        # As many empty selections as one-object options offered, as for ``filter``.
        result = result + _sample(empty, singles, rng)
    return result


def _sample(items: Sequence[Any], k: int, rng: random.Random) -> list:
    """The first ``k`` items :func:`shuffled` would yield, in O(k) (a sparse Fisher-Yates)."""
    n = len(items)
    moved: dict[int, int] = {}
    chosen = []
    rand = rng.random
    for i in range(min(k, n)):
        j = i + int(rand() * (n - i))
        picked = moved.get(j, j)
        moved[j] = moved.get(i, i)
        chosen.append(items[picked])
    return chosen
