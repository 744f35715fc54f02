"""The shared part of the ``evaluate`` subcommands: arguments, error handling, exit status.

Each dataset's ``evaluate`` module adds its own options and a ``run(args)``; this module gives
them the common options (``--data --config --split --predictions --out`` ...) and turns bad
input into one ``<prog>: error: ...`` line with exit status 2, and Ctrl-C / SIGTERM into 130 / 143
(each output file is written atomically, so an interruption leaves no partial file).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="x evaluate")
    >>> add_evaluate_arguments(parser, default_config="general")
    >>> parser.parse_args(["--data", "hub", "--out", "eval"]).split
    'test'
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable

from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES
from builder_utils.evaluation.data import EvaluationError
from builder_utils.evaluation.predictions import PredictionsError
from builder_utils.interrupt import exit_status, stop_on_signals

__all__ = ["add_evaluate_arguments", "positive_int", "run_command"]


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


def run_command(prog: str, run: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """``run(args)`` with the shared error handling; returns the exit status.

    Example:
        >>> def fail(args):
        ...     raise EvaluationError("hub/x: config 'general' has no split 'test'")
        >>> run_command("clevr-math evaluate", fail, argparse.Namespace())
        2
    """
    from builder_utils.hub.export import ExportError

    try:
        with stop_on_signals():
            return run(args)
    except (EvaluationError, PredictionsError, ExportError, FileNotFoundError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a builder's configuration error (unknown config, bad data_dir)
        logging.getLogger("builder_utils").debug("evaluate failed", exc_info=True)
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        print(f"{prog}: interrupted (report.json is written last: without it the report is incomplete)",
              file=sys.stderr)
        return exit_status(stop)
