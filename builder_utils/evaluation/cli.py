"""The shared options of the ``evaluate`` subcommands.

Each dataset's ``evaluate`` module adds its own options and a ``run(args)``; this module gives
them the common ones (``--data --config --split --predictions --out`` ...). Errors and signals
follow :mod:`builder_utils.command` (one ``error:`` line and status 2; 130 / 143 when interrupted;
each output file is written atomically).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="x evaluate")
    >>> add_evaluate_arguments(parser, default_config="general")
    >>> parser.parse_args(["--data", "hub", "--out", "eval"]).split
    'test'
"""

from __future__ import annotations

import argparse

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES

__all__ = ["add_evaluate_arguments", "positive_int"]


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1.

    Example:
        >>> positive_int("1000")
        1000
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def add_evaluate_arguments(parser: argparse.ArgumentParser, default_config: str) -> None:
    """The options every ``evaluate`` subcommand shares.

    Example:
        >>> p = argparse.ArgumentParser(); add_evaluate_arguments(p, "questions")
        >>> p.parse_args(["--data", "d", "--out", "o"]).config
        'questions'
    """
    parser.add_argument("--data", required=True,
                        help="an exported folder, a Hub repository id (owner/name) or the builder's data_dir")
    parser.add_argument("--config", default=default_config, help=f"configuration (default: {default_config})")
    parser.add_argument("--split", default="test", help="split to evaluate (default: test)")
    parser.add_argument("--predictions",
                        help="JSONL, CSV or Parquet rows of question_id, prediction; without it only the baselines")
    parser.add_argument("--out", required=True, help="folder for report.json, report.md and the PNG charts")
    parser.add_argument("--train_split", default="train", help="split the baselines count answers on (default: train)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (default: 0)")
    parser.add_argument("--bootstrap", type=positive_int, default=DEFAULT_RESAMPLES,
                        help=f"bootstrap resamples for the 95%% intervals (default: {DEFAULT_RESAMPLES})")
    parser.add_argument("--cache_dir", help="datasets cache for loading or building --data")
    parser.add_argument("--overwrite", action="store_true", help="replace report files a previous run wrote in --out")
    parser.add_argument("--quiet", action="store_true", help="do not print the overall table")
