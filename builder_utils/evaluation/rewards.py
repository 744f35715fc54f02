"""Training rewards over a :class:`~builder_utils.evaluation.spec.ScoringSpec`, as plain functions
with the signatures TRL and verl call (no trainer imported; README.md, this package).

Formats: ``think_answer``, the tags each once and nothing else around them (as R1-V, R1-AQA);
``boxed``, a final ``\\boxed{...}`` (only :data:`_AFTER_BOXED` characters after it).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from builder_utils.evaluation.extract import last_boxed
from builder_utils.options import Choice, Flag, Instance, Number, is_bool

__all__ = ["FORMAT_STYLES", "check_columns", "check_score_inputs", "completion_text", "format_ok", "gold_text",
           "make_format_reward", "named", "verl_compute_score"]

#: What verl hands as a batch column (numpy arrays), and what TRL hands (lists).
_COLUMN_TYPES: tuple[type, ...] = (list, tuple)

FORMAT_STYLES = ("think_answer", "boxed")
_AFTER_BOXED = " \t\r\n$.\\])"


def named(function: Callable, name: str) -> Callable:
    """``function`` renamed: TRL logs each reward under ``reward_func.__name__``.

    Example:
        >>> named(lambda completions, **kw: [], "my_reward").__name__
        'my_reward'
    """
    function.__name__ = function.__qualname__ = name
    return function


def check_columns(reward: str, completions: Any, **columns: Any) -> int:
    """The batch's length, each given column a list as long; else one ``ValueError``, never a shortened ``zip``.

    Example:
        >>> check_columns("accuracy_reward", ["3", "3", "3"], answer=["3"])
        Traceback (most recent call last):
        ...
        ValueError: accuracy_reward: answer has 1 value(s) for 3 completions; give one per completion
    """
    if not isinstance(completions, _COLUMN_TYPES):
        raise ValueError(f"{reward}: completions must be a list (one per row), got {type(completions).__name__}")
    for name, column in columns.items():
        if column is None:
            continue
        if not isinstance(column, _COLUMN_TYPES):
            raise ValueError(f"{reward}: {name} must be a list (one value per completion), got {type(column).__name__}")
        if len(column) != len(completions):
            raise ValueError(f"{reward}: {name} has {len(column)} value(s) for {len(completions)} completions; "
                             "give one per completion")
    return len(completions)


def check_score_inputs(solution_str: Any, extra_info: Any) -> None:
    """Check the types of verl's ``compute_score`` arguments; else one ``ValueError`` line.

    Example:
        >>> check_score_inputs(["3"], None)
        Traceback (most recent call last):
        ...
        ValueError: compute_score: solution_str must be a string, got list
    """
    if solution_str is not None and not isinstance(solution_str, str):
        raise ValueError(f"compute_score: solution_str must be a string, got {type(solution_str).__name__}")
    try:
        Instance(dict, optional=True)("extra_info", extra_info)
    except ValueError as exc:
        raise ValueError(f"compute_score: {exc}") from None


def _content_text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, (list, tuple)):
        raise ValueError(f"{where}: a message's content must be a string or a list of parts, "
                         f"got {type(content).__name__}")
    texts = []
    for part in content:
        if not isinstance(part, dict):
            raise ValueError(f"{where}: a content part must be a dict, got {type(part).__name__}")
        if part.get("type") == "text":
            text = part.get("text")
            if text is not None and not isinstance(text, str):
                raise ValueError(f"{where}: a text part's text must be a string, got {type(text).__name__} {text!r}")
            texts.append(text or "")
    return "".join(texts)


def completion_text(completion: Any, where: str = "completion") -> str:
    """The text of one completion: its assistant messages' (all, when none has a role), typed parts joined;
    anything else than a string or messages is one ``ValueError`` naming ``where``.

    Example:
        >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "<answer>3</answer>"}]}])
        '<answer>3</answer>'
        >>> completion_text(3, "accuracy_reward: completions[0]")
        Traceback (most recent call last):
        ...
        ValueError: accuracy_reward: completions[0]: a completion must be a string or a list of messages, got int
    """
    if completion is None or isinstance(completion, str):
        return completion or ""
    if isinstance(completion, dict):
        completion = [completion]
    if not isinstance(completion, (list, tuple)):
        raise ValueError(f"{where}: a completion must be a string or a list of messages, got {type(completion).__name__}")
    for message in completion:
        if not isinstance(message, dict):
            raise ValueError(f"{where}: a message must be a dict (role, content), got {type(message).__name__}")
    assistant = [m for m in completion if m.get("role") == "assistant"] or completion
    return "\n".join(_content_text(m.get("content"), where) for m in assistant)


def gold_text(value: Any, where: str) -> str | None:
    """A gold answer as text (None: no target): a string stripped, an integral number as its integer
    (a Parquet integer column with a null reads back as float: ``3.0`` is ``"3"``). A boolean, a
    non-finite number or any other type is one ``ValueError`` naming ``where``.

    Example:
        >>> import numpy
        >>> gold_text(3.0, "answer"), gold_text(numpy.int64(3), "answer"), gold_text(" yes ", "answer")
        ('3', '3', 'yes')
        >>> gold_text(True, "answer")
        Traceback (most recent call last):
        ...
        ValueError: answer must be a number or a string, got bool True
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, numbers.Real) and not is_bool(value):
        if isinstance(value, numbers.Integral):
            return str(int(value))
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{where} must be a finite number or a string, got {value!r}")
        return str(int(number)) if number.is_integer() else repr(number)
    raise ValueError(f"{where} must be a number or a string, got {type(value).__name__} {value!r}"[:300])


def format_ok(text: str, style: str = "think_answer") -> bool:
    """Whether ``text`` follows the ``style`` convention (the module docstring), in linear time.

    Example:
        >>> format_ok("<think>2 + 1</think> <answer>3</answer>"), format_ok("<answer>3</answer>")
        (True, False)
        >>> format_ok("So \\\\boxed{3}.", "boxed"), format_ok("\\\\boxed{3} and more", "boxed")
        (True, False)
    """
    if style == "think_answer":
        text = text.strip()
        tags = ("<think>", "</think>", "<answer>", "</answer>")
        if not (text.startswith(tags[0]) and text.endswith(tags[3])) or any(text.count(t) != 1 for t in tags):
            return False
        think_end, answer_start = text.find(tags[1]), text.find(tags[2])
        return think_end < answer_start and not text[think_end + len(tags[1]):answer_start].strip()
    if style == "boxed":
        found = last_boxed(text)
        return found is not None and not text[found[1]:].strip(_AFTER_BOXED)
    raise ValueError(f"unknown format style {style!r}; valid: {', '.join(FORMAT_STYLES)}")


def make_format_reward(style: str = "think_answer") -> Callable[..., list[float]]:
    """A TRL reward: 1.0 where a completion follows ``style``, else 0.0 (named for TRL's log).

    Example:
        >>> reward = make_format_reward("boxed")
        >>> reward.__name__, reward(["\\\\boxed{2}", [{"role": "assistant", "content": "2"}]])
        ('format_reward_boxed', [1.0, 0.0])
    """
    Choice(FORMAT_STYLES)("style", style)

    def format_reward(completions: list, **kwargs) -> list[float]:
        name = format_reward.__name__
        check_columns(name, completions)
        return [1.0 if format_ok(completion_text(c, f"{name}: completions[{k}]"), style) else 0.0
                for k, c in enumerate(completions)]

    return named(format_reward, "format_reward" if style == "think_answer" else f"format_reward_{style}")


#: The keywords of verl's batch reward manager (``verl.workers.reward_manager.batch``): one list each.
_VERL_BATCH = ("data_sources", "solution_strs", "ground_truths", "extra_infos")


def verl_compute_score(accuracy: Callable[..., float | None], name: str = "compute_score") -> Callable[..., Any]:
    """verl's custom reward function over ``accuracy(text, ground_truth, extra_info, **kw)`` (None: 0.0).

    It takes the call shapes of verl 0.9.1's naive and batch managers (README.md, this package);
    what the naive ones add (the reward-model router's arguments) reaches ``accuracy``'s
    ``**kw``, to be ignored there. ``format_weight`` / ``return_dict`` return a dict, every key logged by verl.

    Example:
        >>> exact = verl_compute_score(lambda text, truth, extra, **kw: float(text.strip() == truth))
        >>> exact("toy", "3", "3"), exact("toy", "<think>.</think><answer>3</answer>", "3", format_weight=0.5)
        (1.0, {'score': 0.5, 'accuracy': 0.0, 'format': 1.0})
        >>> exact(data_sources=["toy"] * 2, solution_strs=["3", "4"], ground_truths=["3", "3"], extra_infos=[{}, {}])
        [1.0, 0.0]
    """
    def compute_score(data_source: str | None = None, solution_str: str | None = None, ground_truth: Any = None,
                      extra_info: dict | None = None, *, format_weight: float | None = None,
                      format_style: str = "think_answer", return_dict: bool = False, **kwargs) -> Any:
        batch = {key: kwargs.pop(key) for key in _VERL_BATCH if key in kwargs}
        try:
            Number(minimum=0, optional=True)("format_weight", format_weight)
            Choice(FORMAT_STYLES)("format_style", format_style)
            Flag()("return_dict", return_dict)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        options = dict(format_weight=format_weight, format_style=format_style, return_dict=return_dict, **kwargs)
        if batch:
            columns = _batch_columns(name, batch)
            strs = columns.pop("solution_strs")
            blank = [None] * len(strs)
            items = zip(columns.get("data_sources", blank), strs, columns.get("ground_truths", blank),
                        columns.get("extra_infos", blank))
            return [compute_score(*item, **options) for item in items]
        check_score_inputs(solution_str, extra_info)
        text = completion_text(solution_str, f"{name}: solution_str")
        value = accuracy(text, ground_truth, dict(extra_info or {}), **kwargs)
        score = 0.0 if value is None else float(value)
        if format_weight is None and not return_dict:
            return score
        form = 1.0 if format_ok(text, format_style) else 0.0
        weight = float(format_weight or 0.0)
        return {"score": score + weight * form, "accuracy": score, "format": form}

    return named(compute_score, name)


def _batch_columns(name: str, batch: dict) -> dict[str, list]:
    """verl's batch keywords as lists of one length (verl hands numpy arrays; extra_infos of dicts);
    a string, a scalar or ``None`` where a column belongs is one ``ValueError``, never iterated."""
    import numpy as np

    if batch.get("solution_strs") is None:
        raise ValueError(f"{name}: solution_strs must be a list (one completion per row), got None")
    columns = {}
    for key in _VERL_BATCH:
        column = batch.get(key)
        if column is None and key != "solution_strs":
            continue
        if isinstance(column, np.ndarray) and column.ndim >= 1:
            column = list(column)  # rows (a 2-D array of answers: one array per row)
        if not isinstance(column, _COLUMN_TYPES):
            raise ValueError(f"{name}: {key} must be a list (one value per row), got {type(column).__name__}")
        columns[key] = list(column)
    check_columns(name, columns["solution_strs"], **{k: v for k, v in columns.items() if k != "solution_strs"})
    return columns
