"""Where the evaluated questions come from: an exported folder, a Hub repository or a ``data_dir``.

``--data D`` is read as:

- a folder holding a dataset card (``README.md``) and Parquet files one level down: an export
  (``clevr-math export``, or a downloaded copy of the Hub repository), loaded with
  :func:`builder_utils.hub.load_exported`;
- any other folder: the builder's ``data_dir`` (a CLEVR_v1.0 folder, a Clotho-AQA release),
  built with the builder class (cached like any build);
- ``owner/name`` that is not a local path: a Hub dataset repository, ``datasets.load_dataset``.

Only the columns the evaluation needs are kept, so images and audio are never decoded.

Example::

    splits = load_splits("demo_output/clevr_math/hub", "general", ClevrMath, ["question_id", "label"])
    sorted(splits)
    # -> ['test', 'train', 'validation']
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path


__all__ = ["EvaluationError", "data_kind", "load_splits", "require_known_ids", "require_split"]

_REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


class EvaluationError(ValueError):
    """The evaluation cannot run on these inputs; the message says which input and why."""


def data_kind(data: str | os.PathLike) -> str:
    """``"export"``, ``"data_dir"`` or ``"hub"``: how ``data`` is read.

    Example:
        >>> data_kind("someone/clevr-math")
        'hub'
    """
    path = Path(data).expanduser()
    if path.is_dir():
        exported = (path / "README.md").is_file() and next(path.glob("*/*.parquet"), None) is not None
        return "export" if exported else "data_dir"
    if path.exists():
        raise EvaluationError(f"{data}: a file; --data takes an exported folder, a data_dir or a Hub repository id")
    if _REPO_ID.match(str(data)):
        return "hub"
    raise EvaluationError(f"{data}: no such folder, and not a Hub repository id (owner/name)")


def load_splits(
    data: str | os.PathLike,
    config: str,
    builder_class: type,
    columns: Sequence[str],
    cache_dir: str | os.PathLike | None = None,
) -> dict[str, "datasets.Dataset"]:
    """Every split of ``config`` in ``data``, restricted to ``columns`` (those that exist).

    Example::

        load_splits("my-name/clevr-math", "multihop", ClevrMath, ["label"])["test"]
    """
    import datasets  # here: scoring a reward or a dict of predictions needs no datasets import

    kind = data_kind(data)
    cache = None if cache_dir is None else os.fspath(cache_dir)
    if kind == "export":
        from builder_utils.hub import load_exported

        loaded = load_exported(data, config, cache_dir=cache)
    elif kind == "hub":
        try:
            loaded = datasets.load_dataset(str(data), config, cache_dir=cache)
        except (ConnectionError, OSError, datasets.exceptions.DatasetNotFoundError) as exc:
            raise EvaluationError(f"{data}: cannot load config {config!r} from the Hub ({exc})") from None
    else:
        builder = builder_class(config_name=config, data_dir=os.fspath(Path(data).expanduser().resolve()),
                                cache_dir=cache)
        builder.download_and_prepare()
        loaded = builder.as_dataset()
    return {split: ds.select_columns([c for c in columns if c in ds.column_names]) for split, ds in loaded.items()}


def require_split(splits: dict, split: str, data, config: str) -> "datasets.Dataset":
    """``splits[split]``, or an :class:`EvaluationError` that lists the splits there are.

    Example:
        >>> require_split({"train": None}, "test", "hub/x", "general")
        Traceback (most recent call last):
        ...
        builder_utils.evaluation.data.EvaluationError: hub/x: config 'general' has no split 'test'; it has: train
    """
    if split not in splits:
        raise EvaluationError(f"{data}: config {config!r} has no split {split!r}; it has: {', '.join(splits)}")
    return splits[split]


def require_known_ids(prediction_ids: Iterable[str], known: Collection[str], source: str | None, where: str,
                      ignore: bool = False) -> int:
    """The number of predictions for questions that are not among the evaluated ones (``where``
    names them: ``split 'test' of config 'general'``). Unless ``ignore``, any such prediction is
    an error: a wrong ``--split`` or ``--config`` would otherwise score as all-missing, and a file
    made for a larger configuration needs ``--ignore_extra_ids``. ``source`` names the file.

    Example:
        >>> require_known_ids(["q1", "q9"], {"q1", "q2"}, "p.jsonl", "split 'test'", ignore=True)
        1
        >>> require_known_ids(["q1", "q9"], {"q1", "q2"}, "p.jsonl", "split 'test'")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.evaluation.data.EvaluationError: p.jsonl: 1 question_id(s) are not in split 'test' ('q9'); ...
    """
    unknown = [qid for qid in prediction_ids if qid not in known]
    if unknown and not ignore:
        shown = ", ".join(repr(u) for u in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise EvaluationError(f"{source or 'predictions'}: {len(unknown)} question_id(s) are not in {where} ({shown}); "
                              "wrong --split or --config? (--ignore_extra_ids scores a file made for a larger "
                              "configuration, leaving those out)")
    return len(unknown)
