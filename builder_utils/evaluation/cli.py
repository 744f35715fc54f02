"""The shared part of the ``evaluate`` subcommands: their common options and what they do.

Each dataset's ``evaluate`` module declares what is its own (its ``evaluate`` and
``write_evaluation`` functions, its chart files, its extra options) and gets from here the
common options (``--data --config --split --predictions --out`` ...), the run (check ``--out``,
evaluate, write, print the overall table) and the entry point. Errors and signals follow
:mod:`builder_utils.command` (one ``error:`` line and status 2; 130 / 143 when interrupted;
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
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from builder_utils.command import run_parsed
from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES
from builder_utils.evaluation.report import check_outputs, overall_table, report_systems
from builder_utils.ownership import check_output, refuse_overlap

__all__ = ["add_evaluate_arguments", "evaluate_main", "positive_int", "run_evaluation"]


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


def run_evaluation(
    args: argparse.Namespace,
    evaluate: Callable[..., Mapping],
    write: Callable[..., Sequence[Path]],
    chart_files: Sequence[str],
    extra: Sequence[str] = (),
) -> int:
    """What an ``evaluate`` subcommand does with the options of :func:`add_evaluate_arguments`:
    check ``--out`` before any work, ``evaluate(data, config, split, predictions, train_split=,
    seed=, resamples=, cache_dir=)`` (plus the options named in ``extra``, by name), ``write(report,
    out, overwrite=)``, and print the overall table unless ``--quiet``. Returns the exit status 0.

    Example:
        >>> import tempfile
        >>> from builder_utils.evaluation.accuracy import score, summarize
        >>> from builder_utils.evaluation.report import write_report
        >>> parser = argparse.ArgumentParser(); add_evaluate_arguments(parser, "all")
        >>> args = parser.parse_args(["--data", "hub", "--out", tempfile.mkdtemp()])
        >>> def evaluate(data, config, split, predictions, **options):
        ...     return {"config": config, "overall": summarize([score(["3"], "3")])}
        >>> def write(report, out, overwrite):
        ...     return write_report(out, report, f"# {report['config']}")
        >>> run_evaluation(args, evaluate, write, chart_files=[])  # doctest: +ELLIPSIS
        | system | accuracy | 95% CI | correct / total | unparseable | missing |
        |---|---|---|---|---|---|
        | model | 100.0% | 100.0-100.0 | 1 / 1 | 0 | 0 |
        report: .../report.md
        0
    """
    # before any work: the report folder never overlaps an input (the predictions, a local --data)
    refuse_overlap({"--out": check_output(args.out, "--out")},
                   {"--predictions": args.predictions, "--data": args.data if os.path.exists(args.data) else None})
    check_outputs(args.out, chart_files, args.overwrite)
    report = evaluate(args.data, args.config, args.split, args.predictions, train_split=args.train_split,
                      seed=args.seed, resamples=args.bootstrap, cache_dir=args.cache_dir,
                      **{name: getattr(args, name) for name in extra})
    write(report, args.out, overwrite=args.overwrite)
    if not args.quiet:
        print(overall_table(report_systems(report)))
        print(f"report: {Path(args.out) / 'report.md'}")
    return 0


def evaluate_main(
    argv: Sequence[str] | None,
    prog: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], argparse.ArgumentParser],
    package: str,
) -> int:
    """A standalone ``evaluate`` entry point: ``add_arguments`` (which sets ``run``) on a parser
    named ``prog``, run with the conventions of :func:`builder_utils.command.run_parsed` and the
    log records of ``package``; returns the exit status.

    Example:
        >>> def add_arguments(parser):
        ...     add_evaluate_arguments(parser, "all")
        ...     parser.set_defaults(run=lambda args: open(args.data))
        ...     return parser
        >>> evaluate_main(["--data", "/nonexistent", "--out", "o"], "x evaluate", "X.", add_arguments, "x")
        2
    """
    parser = add_arguments(argparse.ArgumentParser(prog=prog, description=description))
    return run_parsed(prog, parser.parse_args(argv), package=package)
