"""Training rewards over a :class:`~builder_utils.evaluation.spec.ScoringSpec`: the accuracy
reward is the spec's scoring (so its mean equals ``evaluate``'s accuracy), the format reward
checks one of the two conventions in use. No trainer is imported: these are plain functions
with the signatures TRL and verl call.

- **Completions** (TRL): strings, or conversational lists of ``{"role", "content"}`` messages
  whose content is a string or typed parts (``{"type": "text", "text": ...}``); the text of the
  assistant messages is scored.
- **Formats**: ``think_answer`` = ``<think>...</think>`` then ``<answer>...</answer>``, each
  once, nothing else around them but white space (R1-V, R1-AQA); ``boxed`` = the text ends with
  a ``\\boxed{...}`` (only white space, ``$``, ``.``, ``\\]`` or ``)`` after it).

Example:
    >>> completion_text([{"role": "assistant", "content": [{"type": "text", "text": "<answer>3</answer>"}]}])
    '<answer>3</answer>'
    >>> format_ok("<think>2 + 1</think> <answer>3</answer>", "think_answer"), format_ok("So \\\\boxed{3}.", "boxed")
    (True, True)
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
    """Check a reward's batch: ``completions`` a list (or tuple), each column given (not None) a
    list of the same length; returns the length. A mismatch is one ``ValueError`` line, never a
    silently shortened ``zip``.

    Example:
        >>> check_columns("accuracy_reward", ["3", "3", "3"], answer=["3"])
        Traceback (most recent call last):
        ...
        ValueError: accuracy_reward: answer has 1 value(s) for 3 completions; give one per completion
        >>> check_columns("accuracy_reward", "3")
        Traceback (most recent call last):
        ...
        ValueError: accuracy_reward: completions must be a list (one per row), got str
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
    """Check verl's ``compute_score`` arguments: ``solution_str`` a string (or None),
    ``extra_info`` a dict (or None); else one ``ValueError`` line.

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
    """The text of one completion: a string as is; a list of messages, the text of its
    assistant messages (all messages when none has a role), typed parts' text joined.

    Example:
        >>> completion_text([{"role": "assistant", "content": "Yes."}])
        'Yes.'
    """
    if completion is None or isinstance(completion, str):
        return completion or ""
    if isinstance(completion, dict):
        completion = [completion]
    messages = [m for m in completion if isinstance(m, dict)]
    assistant = [m for m in messages if m.get("role") == "assistant"] or messages
    return "\n".join(_content_text(m.get("content")) for m in assistant)


def format_ok(text: str, style: str = "think_answer") -> bool:
    """Whether ``text`` follows the ``style`` convention (see the module docstring), in
    linear time.

    Example:
        >>> format_ok("<answer>3</answer>"), format_ok("\\\\boxed{3} and more", "boxed")
        (False, False)
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
    """A TRL reward ``(completions, **kwargs) -> list[float]``: 1.0 where a completion follows
    ``style``, else 0.0. Named ``format_reward`` (``think_answer``) or ``format_reward_<style>``.

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
    """verl's custom reward function over ``accuracy(solution_str, ground_truth, extra_info,
    **reward_kwargs)`` (a value in [0, 1], or None: no target, scored 0.0).

    The function takes the call shapes of verl 0.9.1's reward managers:

    - naive (``verl.workers.reward_manager`` and the reward loop): ``compute_score(data_source=,
      solution_str=, ground_truth=, extra_info=, **kwargs)``, ``kwargs`` being the config's
      ``reward.custom_reward_function.reward_kwargs`` and what the manager adds (the reward-model
      router's ``reward_router_address``, ``reward_model_tokenizer``), which are ignored;
    - batch: ``compute_score(data_sources=, solution_strs=, ground_truths=, extra_infos=,
      **reward_kwargs)``, which returns one result per item.

    Without reward kwargs of its own the result is the accuracy as a float (``evaluate``'s
    score). ``format_weight=w`` adds a format component (``format_style``, default
    ``think_answer``; see :func:`format_ok`) and returns a dict, whose every key verl logs:
    ``{"score": accuracy + w * format, "accuracy": ..., "format": ...}`` (``return_dict=True``
    gives the dict with ``w = 0``).

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
