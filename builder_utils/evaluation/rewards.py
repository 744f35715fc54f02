"""Training rewards over a :class:`~builder_utils.evaluation.spec.ScoringSpec`, as plain functions
with the signatures TRL and verl call (no trainer imported; README.md, this package).

Formats: ``think_answer``, the tags each once and nothing else around them (as R1-V, R1-AQA);
``boxed``, a final ``\\boxed{...}`` (only :data:`_AFTER_BOXED` characters after it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from builder_utils.evaluation.extract import last_boxed

__all__ = ["FORMAT_STYLES", "check_columns", "check_score_inputs", "completion_text", "format_ok",
           "make_format_reward", "named", "verl_compute_score"]

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
    if not isinstance(completions, (list, tuple)):
        raise ValueError(f"{reward}: completions must be a list (one per row), got {type(completions).__name__}")
    for name, column in columns.items():
        if column is None:
            continue
        if not isinstance(column, (list, tuple)):
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
    if extra_info is not None and not isinstance(extra_info, dict):
        raise ValueError(f"compute_score: extra_info must be a dict or None, got {type(extra_info).__name__}")


def _content_text(content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "".join(part.get("text") or "" for part in content if isinstance(part, dict) and part.get("type") == "text")


def completion_text(completion: Any) -> str:
    """The text of one completion: its assistant messages' (all, when none has a role), typed parts joined.

    Example:
        >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "<answer>3</answer>"}]}])
        '<answer>3</answer>'
    """
    if completion is None or isinstance(completion, str):
        return completion or ""
    if isinstance(completion, dict):
        completion = [completion]
    messages = [m for m in completion if isinstance(m, dict)]
    assistant = [m for m in messages if m.get("role") == "assistant"] or messages
    return "\n".join(_content_text(m.get("content")) for m in assistant)


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
    if style not in FORMAT_STYLES:
        raise ValueError(f"unknown format style {style!r}; valid: {', '.join(FORMAT_STYLES)}")

    def format_reward(completions: list, **kwargs) -> list[float]:
        check_columns(format_reward.__name__, completions)
        return [1.0 if format_ok(completion_text(c), style) else 0.0 for c in completions]

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
        options = dict(format_weight=format_weight, format_style=format_style, return_dict=return_dict, **kwargs)
        if batch:
            # verl hands numpy arrays (extra_infos: of dicts); a column of another length is an error
            strs = list(batch.get("solution_strs", ()))
            columns = {key: list(batch[key]) for key in ("data_sources", "ground_truths", "extra_infos")
                       if batch.get(key) is not None}
            check_columns(name, strs, **columns)
            blank = [None] * len(strs)
            items = zip(columns.get("data_sources", blank), strs, columns.get("ground_truths", blank),
                        columns.get("extra_infos", blank))
            return [compute_score(*item, **options) for item in items]
        check_score_inputs(solution_str, extra_info)
        if format_style not in FORMAT_STYLES:
            raise ValueError(f"unknown format_style {format_style!r}; valid: {', '.join(FORMAT_STYLES)}")
        text = completion_text(solution_str)
        value = accuracy(text, ground_truth, dict(extra_info or {}), **kwargs)
        score = 0.0 if value is None else float(value)
        if format_weight is None and not return_dict:
            return score
        form = 1.0 if format_ok(text, format_style) else 0.0
        weight = float(format_weight or 0.0)
        return {"score": score + weight * form, "accuracy": score, "format": form}

    return named(compute_score, name)
