"""How hard a stream's problems are (:class:`Difficulty`), and how that changes with training (README,
"A stream of fresh problems"). Each knob is one ``option``: stream keywords, export flags and checks.

>>> Difficulty(num_operations=9)
Traceback (most recent call last):
...
ValueError: num_operations must be an integer in 1..8 or None, got 9
"""

from __future__ import annotations

import bisect
import collections
import dataclasses
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from builder_utils.clevr.metadata import default_metadata
from builder_utils.clevr.templates import load_template_set
from builder_utils.clevr.chain_templates import MAX_OPERATIONS, SAME_SIGN_FAMILY
from builder_utils.clevr.options import MAX_ANSWER
from builder_utils.options import Choice, Flag, Integer, Number, Share, Words, check_options, option
from builder_utils.clevr.synth.scenes import MAX_OBJECTS, MAX_WORLD_OBJECTS, MIN_OBJECTS
from clevr_math.categories import OPERATION_CATEGORIES

__all__ = ["AdaptiveCurriculum", "Curriculum", "Difficulty", "OPERATIONS", "MAX_STREAM_OBJECTS", "row_difficulty"]

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
    """(key, category, arithmetic operations) of each of the paper's 13 templates (the shipped set)."""
    metadata = default_metadata()
    return tuple((t.key, t.category, sum(n.type in metadata.arithmetic for n in t.nodes))
                 for t in load_template_set(PAPER_SET, metadata).templates)


@dataclasses.dataclass(frozen=True)
class Difficulty:
    """One difficulty level of a stream (the knobs: their ``option`` help, and the README's table).

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
        None, Words(), f"keep these categories ({', '.join(OPERATION_CATEGORIES)}; default: all)", group=_GROUP)
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
            unknown = [c for c in self.categories if c not in OPERATION_CATEGORIES]
            if unknown:
                raise ValueError(f"categories: unknown {', '.join(map(repr, unknown))}; valid: {', '.join(OPERATION_CATEGORIES)}")
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
        """``(share, template set, question_types)`` per generator, shares summing to 1 (None: the whole set).

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
    """Difficulty as a function of the step: ``(threshold, difficulty)`` pairs, thresholds rising from 0.

    ``by="problems"``: thresholds count each shard's own problems (DataLoader workers never see ``step`` move).

    >>> c = Curriculum.raising("num_operations", [1, 2, 3], every=10)
    >>> c.difficulty().num_operations, c.difficulty(step=25).num_operations
    (1, 3)
    >>> c.step = 12; c.level()
    1
    """

    def __init__(self, schedule: Sequence[tuple[int, Difficulty | Mapping[str, Any]]], *, by: str = "step"):
        Choice(("step", "problems"))("by", by)
        if isinstance(schedule, (str, bytes)) or not isinstance(schedule, Sequence) or not schedule:
            raise ValueError(f"schedule must be a non-empty list of (threshold, difficulty) pairs, got {schedule!r}"[:300])
        thresholds, levels = [], []
        for position, pair in enumerate(schedule):
            if not isinstance(pair, Sequence) or isinstance(pair, (str, bytes)) or len(pair) != 2:
                raise ValueError(f"curriculum schedule[{position}] must be a (threshold, difficulty) pair, got {pair!r}")
            threshold, level = pair
            if not isinstance(level, (Difficulty, Mapping)):
                raise ValueError(f"curriculum schedule[{position}]: the difficulty must be a Difficulty or a dict "
                                 f"of its knobs, got {type(level).__name__}")
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

    @property
    def step(self) -> int:
        """The trainer's step (set by :meth:`trainer_callback`): an integer >= 0, checked when set."""
        return self._step

    @step.setter
    def step(self, value: int) -> None:
        self._step = Integer(0)("step", value)

    @classmethod
    def raising(cls, knob: str, values: Sequence[Any], every: int, *, by: str = "step", **fixed: Any) -> "Curriculum":
        """One knob taking ``values`` in turn, every ``every`` steps (or problems), the others ``fixed``.

        >>> Curriculum.raising("max_answer", [10, 20], every=5).levels[1].max_answer
        20
        """
        Integer(1)("every", every)
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise ValueError(f"values must be a list of the knob's values, got {values!r}"[:300])
        return cls([(k * every, {**fixed, knob: value}) for k, value in enumerate(values)], by=by)

    @classmethod
    def fixed(cls, difficulty: Difficulty) -> "Curriculum":
        """A curriculum of one level.

        >>> Curriculum.fixed(Difficulty(max_answer=12)).difficulty(step=10**9).max_answer
        12
        """
        return cls([(0, difficulty)])

    def level(self, problems: int = 0, *, step: int | None = None) -> int:
        """The index in :attr:`levels` in force (``problems`` counts only with ``by="problems"``).

        >>> Curriculum.raising("max_answer", [10, 20], every=5).level(step=-1)
        Traceback (most recent call last):
        ...
        ValueError: step must be an integer >= 0 or None, got -1
        """
        Integer(0)("problems", problems)
        Integer(0, optional=True)("step", step)
        position = problems if self.by == "problems" else (self.step if step is None else step)
        return bisect.bisect_right(self.thresholds, position) - 1

    def difficulty(self, problems: int = 0, *, step: int | None = None) -> Difficulty:
        """The :class:`Difficulty` in force (see :meth:`level`)."""
        return self.levels[self.level(problems, step=step)]

    def trainer_callback(self):
        """A ``transformers.TrainerCallback`` setting :attr:`step` to ``state.global_step`` (at train begin too).

        Example (needs transformers)::

            trainer = GRPOTrainer(..., train_dataset=clevr_math.stream(curriculum=c), callbacks=[c.trainer_callback()])
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


#: The most logged steps an adaptive curriculum averages over (bounds its memory).
MAX_WINDOW = 100_000


class AdaptiveCurriculum(Curriculum):
    """Difficulty that follows the model: up when a reward's mean over ``window`` logged steps reaches
    ``raise_above``, down when it falls to ``lower_below`` (None: never).

    ``delay`` logged steps after a change are not counted: the data loader reads one batch ahead (README).

    >>> c = AdaptiveCurriculum.over("num_operations", [1, 2, 3], reward="accuracy_reward", window=2,
    ...                             raise_above=0.75, lower_below=0.25, delay=0)
    >>> [c.observe(v) for v in (0.5, 1.0, 1.0, 1.0, 0.0, 0.0)]
    [0, 1, 1, 2, 2, 1]
    >>> c.difficulty().num_operations
    2
    """

    def __init__(self, levels: Sequence[Difficulty | Mapping[str, Any]], *, reward: str, window: int,
                 raise_above: float, lower_below: float | None = None, start: int = 0, delay: int = 1):
        if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence):
            raise ValueError(f"levels must be a list of difficulties, got {levels!r}"[:300])
        super().__init__(list(enumerate(levels)), by="step")
        if not isinstance(reward, str) or not reward:
            raise ValueError(f"reward must name a reward function (its __name__), got {reward!r}")
        for name, value, low, high in (("window", window, 1, MAX_WINDOW), ("start", start, 0, len(self.levels) - 1),
                                       ("delay", delay, 0, MAX_WINDOW)):
            if type(value) is not int or not low <= value <= high:
                raise ValueError(f"{name} must be an integer in {low}..{high}, got {value!r}")
        raise_above = Number()("raise_above", raise_above)
        lower_below = Number(optional=True)("lower_below", lower_below)
        if lower_below is not None and lower_below >= raise_above:
            raise ValueError(f"lower_below ({lower_below}) must be below raise_above ({raise_above})")
        self.reward, self.window, self.delay = reward, window, delay
        self.raise_above, self.lower_below = float(raise_above), lower_below
        self.current = start
        self.recent: collections.deque = collections.deque(maxlen=window)
        self.ignored = 0
        #: ``(step, level)`` at every change, the step being the trainer's (``self.step``) then.
        self.changes: list[tuple[int, int]] = []

    @classmethod
    def over(cls, knob: str, values: Sequence[Any], *, reward: str, window: int, raise_above: float,
             lower_below: float | None = None, start: int = 0, delay: int = 1, **fixed: Any) -> "AdaptiveCurriculum":
        """One knob taking ``values`` (rising difficulty), the other knobs ``fixed``.

        >>> AdaptiveCurriculum.over("max_answer", [10, 20], reward="accuracy_reward", window=5,
        ...                         raise_above=0.8).difficulty().max_answer
        10
        """
        return cls([{**fixed, knob: value} for value in values], reward=reward, window=window,
                   raise_above=raise_above, lower_below=lower_below, start=start, delay=delay)

    def level(self, problems: int = 0, *, step: int | None = None) -> int:
        """The level in force now (the arguments are checked, not used)."""
        Integer(0)("problems", problems)
        Integer(0, optional=True)("step", step)
        return self.current

    @property
    def log_key(self) -> str:
        """The key of the reward's mean in TRL's log records."""
        return self.reward if self.reward == "reward" else f"rewards/{self.reward}/mean"

    def observe(self, value: float) -> int:
        """Count one logged mean of the reward (a finite number); returns the level in force afterwards.

        >>> AdaptiveCurriculum.over("max_answer", [10, 20], reward="r", window=1, raise_above=1.0).observe(float("inf"))
        Traceback (most recent call last):
        ...
        ValueError: value must be a finite number, got inf
        """
        value = Number()("value", value)
        if self.ignored < self.delay and self.changes:
            self.ignored += 1
            return self.current
        self.recent.append(value)
        if len(self.recent) < self.window:
            return self.current
        mean = sum(self.recent) / len(self.recent)
        moved = self.current
        if mean >= self.raise_above and self.current < len(self.levels) - 1:
            moved = self.current + 1
        elif self.lower_below is not None and mean <= self.lower_below and self.current > 0:
            moved = self.current - 1
        if moved != self.current:
            self.current = moved
            self.recent.clear()
            self.ignored = 0
            self.changes.append((self.step, moved))
        return self.current

    def state_dict(self) -> dict:
        """What a resumed run needs: the level, the window's values, the steps still ignored.

        >>> c = AdaptiveCurriculum.over("max_answer", [10, 20], reward="r", window=3, raise_above=1.0)
        >>> c.observe(0.5)
        0
        >>> again = AdaptiveCurriculum.over("max_answer", [10, 20], reward="r", window=3, raise_above=1.0)
        >>> again.load_state_dict(c.state_dict()); list(again.recent)
        [0.5]
        """
        return {"current": self.current, "recent": list(self.recent), "ignored": self.ignored,
                "changes": [list(change) for change in self.changes]}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`state_dict` (checked whole first: a bad one changes nothing).

        >>> c = AdaptiveCurriculum.over("max_answer", [10, 20], reward="r", window=3, raise_above=1.0)
        >>> c.load_state_dict({**c.state_dict(), "current": 99})
        Traceback (most recent call last):
        ...
        ValueError: state['current'] must be an integer in 0..1, got 99
        """
        if not isinstance(state, Mapping):
            raise ValueError(f"state must be a dict from state_dict(), got {type(state).__name__}")
        missing = [key for key in ("current", "recent", "ignored", "changes") if key not in state]
        if missing:
            raise ValueError(f"state lacks {', '.join(missing)}: give a dict from state_dict()")
        last = len(self.levels) - 1
        current = Integer(0, maximum=last)("state['current']", state["current"])
        recent, changes = state["recent"], state["changes"]
        if isinstance(recent, (str, bytes)) or not isinstance(recent, Sequence) or len(recent) > self.window:
            raise ValueError(f"state['recent'] must be a list of at most {self.window} numbers, got {recent!r}"[:300])
        recent = [Number()(f"state['recent'][{k}]", value) for k, value in enumerate(recent)]
        ignored = Integer(0, maximum=self.delay)("state['ignored']", state["ignored"])
        if isinstance(changes, (str, bytes)) or not isinstance(changes, Sequence):
            raise ValueError(f"state['changes'] must be a list of (step, level) pairs, got {changes!r}"[:300])
        pairs = []
        for k, change in enumerate(changes):
            if isinstance(change, (str, bytes)) or not isinstance(change, Sequence) or len(change) != 2:
                raise ValueError(f"state['changes'][{k}] must be a (step, level) pair, got {change!r}"[:300])
            pairs.append((Integer(0)(f"state['changes'][{k}] step", change[0]),
                          Integer(0, maximum=last)(f"state['changes'][{k}] level", change[1])))
        self.current, self.ignored, self.changes = current, ignored, pairs
        self.recent = collections.deque(recent, maxlen=self.window)

    def trainer_callback(self):
        """:meth:`Curriculum.trainer_callback`, also feeding :meth:`observe` each log record's
        :attr:`log_key` (records without it, e.g. the closing summary, are skipped).

        Example (needs transformers)::

            GRPOTrainer(..., args=GRPOConfig(..., logging_steps=1), callbacks=[c.trainer_callback()])
        """
        callback = super().trainer_callback()
        curriculum = self

        def on_log(args, state, control, logs=None, **kwargs):
            value = (logs or {}).get(curriculum.log_key)
            if value is not None and math.isfinite(value):
                curriculum.step = state.global_step
                curriculum.observe(value)

        callback.on_log = on_log
        return callback

    def __repr__(self) -> str:
        return (f"AdaptiveCurriculum({list(self.levels)!r}, reward={self.reward!r}, window={self.window}, "
                f"raise_above={self.raise_above}, lower_below={self.lower_below}, level={self.current})")


def row_difficulty(row: Mapping[str, Any]) -> dict:
    """How hard one question row is, as the trainer layouts write it (``difficulty``): its operations,
    the scene's objects (None without a scene graph; a stream row counts its ``scene``) and the answer.

    >>> row_difficulty({"num_operations": 2, "num_objects": 7, "label": 4})
    {'operations': 2, 'objects': 7, 'answer': 4}
    """
    objects = row.get("num_objects")
    if objects is None and row.get("scene"):
        import json

        objects = len(json.loads(row["scene"]).get("objects", ()))
    return {"operations": row.get("num_operations"), "objects": objects, "answer": row.get("label")}
