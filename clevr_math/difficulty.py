"""How hard the problems of a stream are (:class:`Difficulty`), and how that changes with the
training step (:class:`Curriculum`).

Each difficulty knob is one field of :class:`Difficulty`, declared once with
:func:`builder_utils.options.option` (default, check, help): the keyword arguments of
:func:`clevr_math.stream`, the ``clevr-math export --stream_questions`` flags and the checks
all come from that declaration. A bad value is one line naming the knob and the valid values:

>>> Difficulty(num_operations=9)
Traceback (most recent call last):
...
ValueError: num_operations must be an integer in 1..8 or None, got 9
>>> Difficulty(num_operations=4, operations="same_sign").templates()
[(1.0, 'clevr_math_long_chains', ('same_sign_4',))]
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from builder_utils.clevr.metadata import default_metadata
from builder_utils.clevr.templates import load_template_set
from builder_utils.clevr.chain_templates import MAX_OPERATIONS, SAME_SIGN_FAMILY
from builder_utils.clevr.options import MAX_ANSWER
from builder_utils.options import Choice, Flag, Integer, Share, Words, check_options, option
from builder_utils.clevr.synth.scenes import MAX_OBJECTS, MAX_WORLD_OBJECTS, MIN_OBJECTS
from clevr_math.categories import CATEGORIES

__all__ = ["Curriculum", "Difficulty", "OPERATIONS", "MAX_STREAM_OBJECTS"]

OPERATIONS = ("alternating", "same_sign")
#: The most objects a synthetic world of a stream holds (the renderer places at most this many).
MAX_STREAM_OBJECTS = MAX_WORLD_OBJECTS
#: Colours a confounded world uses: one per shape (CLEVR has three shapes).
CONFOUNDED_COLOURS = 3
_GROUP = "difficulty"
PAPER_SET = "clevr_math"
LONG_CHAINS_SET = "clevr_math_long_chains"


@lru_cache(maxsize=None)
def _paper_templates() -> tuple[tuple[str, str, int], ...]:
    """(key, category, arithmetic operations) of each of the paper's 13 templates, read from
    the shipped set (1 operation; 2 for multihop; 0 for two adversarial ones)."""
    metadata = default_metadata()
    return tuple((t.key, t.category, sum(n.type in metadata.arithmetic for n in t.nodes))
                 for t in load_template_set(PAPER_SET, metadata).templates)


@dataclasses.dataclass(frozen=True)
class Difficulty:
    """One difficulty level of a stream.

    ``num_operations`` None asks for the paper's 13 templates (1 operation, 2 for multihop, 0 for
    two adversarial ones); 1 for their one-operation templates; 2..8 for chains of exactly that
    many operations, ``operations`` ``alternating`` (removal and insertion in turn) or
    ``same_sign`` (removals only, or insertions only). ``categories`` keeps some of the paper's
    six (chains are ``multihop``). ``max_answer`` bounds the answer and every count on the way;
    above 10 it needs insertions or more objects: ``max_objects`` (synthetic worlds only, up to
    :data:`MAX_STREAM_OBJECTS`). ``adversarial`` is the share of adversarial problems among the
    paper's templates (None: as the templates fall). ``confounder`` paints each shape in one
    fixed colour in a training stream and leaves colours random in held-out streams
    (synthetic worlds only).

    >>> Difficulty().templates()[0][1:]
    ('clevr_math', None)
    >>> Difficulty(adversarial=0.5, categories="adversarial,insertion").templates()[0][0]
    0.5
    >>> Difficulty(num_operations=3, adversarial=0.2)
    Traceback (most recent call last):
    ...
    ValueError: adversarial applies to the paper's templates (num_operations None or 1), got num_operations=3
    """

    num_operations: int | None = option(
        None, Integer(1, maximum=MAX_OPERATIONS, optional=True),
        f"exact arithmetic operations per problem, 1..{MAX_OPERATIONS} (default: the paper's 13 templates)",
        group=_GROUP)
    operations: str = option(
        "alternating", Choice(OPERATIONS), "chains of 2+ operations: alternating removal/insertion, or same_sign "
        "(removals only or insertions only) (default: %(default)s)", group=_GROUP)
    categories: tuple[str, ...] | None = option(
        None, Words(), f"keep these categories ({', '.join(CATEGORIES)}; default: all)", group=_GROUP)
    max_answer: int = option(
        10, Integer(0, maximum=MAX_ANSWER),
        f"largest answer, and largest count along a chain, at most {MAX_ANSWER} (default: %(default)s)", group=_GROUP)
    max_objects: int = option(
        MAX_OBJECTS, Integer(MIN_OBJECTS, maximum=MAX_STREAM_OBJECTS),
        f"synthetic worlds: {MIN_OBJECTS} to this many objects per scene, at most {MAX_STREAM_OBJECTS} "
        "(default: %(default)s)", group=_GROUP)
    adversarial: float | None = option(
        None, Share(optional=True), "share of adversarial problems, 0..1 (default: as the templates fall)",
        group=_GROUP)
    confounder: bool = option(
        False, Flag(), "synthetic worlds: one fixed colour per shape in the train stream, random colours in "
        "held-out streams", group=_GROUP)

    def __post_init__(self) -> None:
        check_options(self)
        chains = self.num_operations is not None and self.num_operations >= 2
        if self.categories is not None:
            unknown = [c for c in self.categories if c not in CATEGORIES]
            if unknown:
                raise ValueError(f"categories: unknown {', '.join(map(repr, unknown))}; valid: {', '.join(CATEGORIES)}")
            if chains and "multihop" not in self.categories:
                raise ValueError(f"chains of {self.num_operations} operations are category multihop, "
                                 f"but categories={list(self.categories)}")
        if self.adversarial is not None:
            if chains:
                raise ValueError("adversarial applies to the paper's templates (num_operations None or 1), "
                                 f"got num_operations={self.num_operations}")
            if self.categories is not None and self.adversarial > 0 and "adversarial" not in self.categories:
                raise ValueError(f"adversarial={self.adversarial} but categories={list(self.categories)} "
                                 "has no adversarial")
        if self.confounder and chains and self.num_operations > CONFOUNDED_COLOURS:
            raise ValueError(f"confounder leaves {CONFOUNDED_COLOURS} colours (one per shape) and each chain "
                             f"operation names its own colour: num_operations must be <= {CONFOUNDED_COLOURS}")
        if not self.templates():
            raise ValueError(f"no template fits num_operations={self.num_operations} and "
                             f"categories={list(self.categories or ())}")

    def templates(self) -> list[tuple[float, str, tuple[str, ...] | None]]:
        """What to generate from: ``(share, template set, question_types)`` per generator, shares
        summing to 1 (question_types None: the whole set).

        >>> Difficulty(num_operations=1, categories="insertion").templates()
        [(1.0, 'clevr_math', ('addition:0', 'addition:1', 'addition:2'))]
        """
        if self.num_operations is not None and self.num_operations >= 2:
            family = "chain" if self.operations == "alternating" else SAME_SIGN_FAMILY
            return [(1.0, LONG_CHAINS_SET, (f"{family}_{self.num_operations}",))]
        every = _paper_templates()
        kept = [(key, category) for key, category, operations in every
                if (self.num_operations is None or operations == self.num_operations)
                and (self.categories is None or category in self.categories)]
        if not kept:
            return []
        keys = tuple(key for key, _ in kept)
        if self.adversarial is None:
            return [(1.0, PAPER_SET, None if len(keys) == len(every) else keys)]
        tricky = tuple(key for key, category in kept if category == "adversarial")
        plain = tuple(key for key, category in kept if category != "adversarial")
        parts = [(self.adversarial, PAPER_SET, tricky), (1.0 - self.adversarial, PAPER_SET, plain)]
        return [part for part in parts if part[0] > 0 and part[2]]


def difficulty_fields() -> tuple[str, ...]:
    """The names of the difficulty knobs (the keyword arguments of ``clevr_math.stream``).

    >>> difficulty_fields()[:2]
    ('num_operations', 'operations')
    """
    return tuple(f.name for f in dataclasses.fields(Difficulty))


class Curriculum:
    """Difficulty as a function of the step: ``schedule`` lists ``(threshold, difficulty)`` pairs
    (a :class:`Difficulty` or its keyword arguments), thresholds rising from 0; the level in
    force is the last whose threshold is reached.

    ``by="step"``: the threshold is the training step, which the training loop sets
    (``curriculum.step = n``, or the callback of :meth:`trainer_callback`); the stream reads it
    for every scene, so it follows without restarting. ``by="problems"``: the threshold counts
    the problems each shard of the stream has yielded before the scene (the stream's own
    position): deterministic, and the same in DataLoader worker processes, which do not see
    ``step`` updates made in the training process (they iterate a copy of the stream).

    >>> c = Curriculum.raising("num_operations", [1, 2, 3], every=10)
    >>> c.difficulty().num_operations, c.difficulty(step=25).num_operations
    (1, 3)
    >>> c.step = 12; c.level()
    1
    """

    def __init__(self, schedule: Sequence[tuple[int, Difficulty | Mapping[str, Any]]], *, by: str = "step"):
        if by not in ("step", "problems"):
            raise ValueError(f"by must be 'step' or 'problems', got {by!r}")
        if not schedule:
            raise ValueError("a curriculum needs at least one (threshold, difficulty) pair")
        thresholds, levels = [], []
        for position, (threshold, level) in enumerate(schedule):
            if type(threshold) is not int or threshold < 0 or (thresholds and threshold <= thresholds[-1]):
                raise ValueError(f"curriculum schedule[{position}]: thresholds must be rising integers >= 0, "
                                 f"got {threshold!r}")
            try:
                levels.append(level if isinstance(level, Difficulty) else Difficulty(**dict(level)))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"curriculum schedule[{position}]: {exc}") from None
            thresholds.append(threshold)
        if thresholds[0] != 0:
            raise ValueError(f"curriculum schedule[0]: the first threshold must be 0, got {thresholds[0]}")
        self.thresholds, self.levels, self.by = tuple(thresholds), tuple(levels), by
        self.step = 0

    @classmethod
    def raising(cls, knob: str, values: Sequence[Any], every: int, *, by: str = "step", **fixed: Any) -> "Curriculum":
        """One knob taking ``values`` in turn, every ``every`` steps (or problems), the other knobs
        ``fixed``.

        >>> Curriculum.raising("max_answer", [10, 20], every=5).levels[1].max_answer
        20
        """
        if type(every) is not int or every < 1:
            raise ValueError(f"every must be an integer >= 1, got {every!r}")
        return cls([(k * every, {**fixed, knob: value}) for k, value in enumerate(values)], by=by)

    @classmethod
    def fixed(cls, difficulty: Difficulty) -> "Curriculum":
        """A curriculum of one level.

        >>> Curriculum.fixed(Difficulty(max_answer=12)).difficulty(step=10**9).max_answer
        12
        """
        return cls([(0, difficulty)])

    def level(self, problems: int = 0, *, step: int | None = None) -> int:
        """The index in :attr:`levels` in force: at ``step`` (default: :attr:`step`) with
        ``by="step"``, after ``problems`` problems of a shard with ``by="problems"``."""
        position = problems if self.by == "problems" else (self.step if step is None else step)
        return bisect.bisect_right(self.thresholds, position) - 1

    def difficulty(self, problems: int = 0, *, step: int | None = None) -> Difficulty:
        """The :class:`Difficulty` in force (see :meth:`level`)."""
        return self.levels[self.level(problems, step=step)]

    def trainer_callback(self):
        """A ``transformers.TrainerCallback`` that sets :attr:`step` to ``state.global_step`` at
        every step (and at the start of training, so a resumed run starts at its step).

        Example (needs transformers)::

            trainer = GRPOTrainer(..., train_dataset=clevr_math.stream(curriculum=c),
                                  callbacks=[c.trainer_callback()])
        """
        from transformers import TrainerCallback

        curriculum = self

        class CurriculumCallback(TrainerCallback):
            """Moves a :class:`clevr_math.Curriculum` with the trainer's ``global_step``."""

            def on_train_begin(self, args, state, control, **kwargs):
                curriculum.step = state.global_step

            def on_step_begin(self, args, state, control, **kwargs):
                curriculum.step = state.global_step

            def on_step_end(self, args, state, control, **kwargs):
                curriculum.step = state.global_step

        return CurriculumCallback()

    def __repr__(self) -> str:
        return f"Curriculum({list(zip(self.thresholds, self.levels))!r}, by={self.by!r})"
