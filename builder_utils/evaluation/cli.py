"""The ``evaluate`` subcommands: one :class:`EvaluateCommand` per dataset gives the options, run and entry point.

Errors and signals follow :mod:`builder_utils.command` (one ``error:`` line and status 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from builder_utils.command import CommandParser, run_parsed
from builder_utils.evaluation.accuracy import DEFAULT_RESAMPLES, MAX_RESAMPLES
from builder_utils.evaluation.evaluate import write_evaluation
from builder_utils.evaluation.report import COMMAND as REPORT_COMMAND
from builder_utils.evaluation.report import check_outputs, overall_table, report_systems
from builder_utils.evaluation.spec import ScoringSpec
from builder_utils.options import (MAX_SEED, FilePath, Integer, add_option_flags, declared_from_args, given_path_values,
                                   joined_path_values, option, path_values)
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder

__all__ = ["RESAMPLES", "EvaluateCommand", "run_evaluation"]

RESAMPLES = Integer(1, maximum=MAX_RESAMPLES)
"""The ``--bootstrap`` flag's check (its ``parse`` is the argparse type): 1 to ``MAX_RESAMPLES``."""


def run_evaluation(
    args: argparse.Namespace,
    evaluate: Callable[..., Mapping],
    write: Callable[..., Sequence[Path]],
    chart_files: Sequence[str],
    extra: Sequence[str] = (),
    builder_config: type | None = None,
) -> int:
    """Run a parsed ``evaluate`` subcommand: ``--out`` checked before any work, then ``evaluate`` and ``write``.

    The options named in ``extra`` are passed to ``evaluate`` by name; the paths among
    ``args.builder_kwargs`` that ``builder_config`` declares are inputs too. Returns the exit status 0.

    Example:
        >>> import tempfile
        >>> from builder_utils.evaluation.accuracy import score, summarize
        >>> from builder_utils.evaluation.report import write_report
        >>> command = EvaluateCommand("x", "x", "X.", "all", None, None)
        >>> args = command.add_arguments(argparse.ArgumentParser()).parse_args(["--data", "hub", "--out", tempfile.mkdtemp()])
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
    # the report folder never overlaps an input (the predictions, a local --data, a file option
    # such as --scenes) nor the cache; its report files are refused before any work
    inputs = {f"--{name}": getattr(args, name) for name in extra if isinstance(getattr(args, name, None), str)}
    with OutputFolder.open(Path(args.out).expanduser(), command=REPORT_COMMAND, inputs=inputs,
                           declared=joined_path_values(
                               path_values(declared_from_args(args, EvaluatePaths)),
                               given_path_values(builder_config, getattr(args, "builder_kwargs", None))
                               if builder_config is not None else {}),
                           overwrite=args.overwrite) as folder:
        check_outputs(folder, chart_files)
        report = evaluate(args.data, args.config, args.split, args.predictions, train_split=args.train_split,
                          seed=args.seed, resamples=args.bootstrap, cache_dir=args.cache_dir,
                          **{name: getattr(args, name) for name in extra})
        write(report, folder, overwrite=args.overwrite)
    if not args.quiet:
        print(overall_table(report_systems(report)))
        print(f"report: {Path(args.out) / 'report.md'}")
    return 0


@dataclasses.dataclass
class EvaluatePaths:
    """The paths of every ``evaluate`` subcommand, each with its role (extra options, ``--scenes``, are inputs too)."""

    data: str = option(None, FilePath(), "an exported folder, a Hub repository id (owner/name) or the builder's "
                       "data_dir", group="inputs and outputs", role="input_dir", flag={"required": True})
    predictions: str | None = option(None, FilePath(), "JSONL, CSV or Parquet rows of question_id, prediction; "
                                     "without it only the baselines", group="inputs and outputs", role="input")
    out: str = option(None, FilePath(), "folder for report.json, report.md and the PNG charts",
                      group="inputs and outputs", role="output_dir", flag={"required": True})
    cache_dir: str | None = option(None, FilePath(), "datasets cache for loading or building --data (default: "
                                   "datasets' own, HF_DATASETS_CACHE)", group="inputs and outputs", role="cache",
                                   fallback=lambda paths: datasets_cache())


def datasets_cache() -> str:
    """The cache ``datasets`` falls back on without a ``cache_dir`` (``HF_DATASETS_CACHE``): declared
    like a given ``--cache_dir``, so the data-safety rules see it (never inside ``--data``).

    Example:
        >>> os.path.isabs(datasets_cache())
        True
    """
    from builder_utils.datasets_adapter import default_cache_dir

    return os.path.abspath(default_cache_dir())


@dataclass(frozen=True)
class EvaluateCommand:
    """One dataset's ``evaluate`` subcommand (examples: its methods, :func:`run_evaluation`).

    ``options``: extra ``(flag, help)`` string options passed to ``evaluate`` by name.
    ``builder_config()`` is called late (importing the class imports ``datasets``); its options
    become flags for a ``--data`` that is a ``data_dir``, passed as ``builder_kwargs``.
    """

    prog: str
    package: str
    description: str
    default_config: str
    evaluate: Callable[..., Mapping]
    spec: ScoringSpec
    options: Sequence[tuple[str, str]] = ()
    builder_config: Callable[[], type] | None = None

    def add_arguments(self, parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        """The subcommand's options on ``parser``; ``args.run(args)`` evaluates.

        Example:
            >>> c = EvaluateCommand("x", "x", "X.", "questions", None, None, (("--scenes", "scene files"),))
            >>> c.add_arguments(argparse.ArgumentParser()).parse_args(["--data", "d", "--out", "o"]).config
            'questions'
        """
        config = self.default_config
        add_option_flags(parser, {"inputs and outputs": parser}, cls=EvaluatePaths)  # --data, --predictions, --out, --cache_dir
        parser.add_argument("--config", default=config, help=f"configuration (default: {config})")
        parser.add_argument("--split", default="test", help="split to evaluate (default: test)")
        parser.add_argument("--train_split", default="train",
                            help="split the baselines count answers on (default: train)")
        parser.add_argument("--seed", type=Integer(0, maximum=MAX_SEED).parse, default=0,
                            help="seed of the bootstrap intervals (default: 0)")
        parser.add_argument("--bootstrap", type=RESAMPLES.parse, default=DEFAULT_RESAMPLES,
                            help=f"bootstrap resamples for the 95%% intervals (default: {DEFAULT_RESAMPLES})")
        parser.add_argument("--ignore_extra_ids", action="store_true",
                            help="score a predictions file made for a larger configuration: predictions for "
                                 "questions not in --config/--split are left out (the report counts them)")
        parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
        parser.add_argument("--quiet", action="store_true", help="do not print the overall table")
        for flag, text in self.options:
            parser.add_argument(flag, help=text)
        if self.builder_config is not None:
            from builder_utils.options import add_builder_flags

            add_builder_flags(parser, self.builder_config(), "builder options (when --data is a data_dir)")
        parser.set_defaults(run=self.run)
        return parser

    def run(self, args: argparse.Namespace) -> int:
        """:func:`run_evaluation` with this command's evaluate, spec and options; returns 0.

        Example::

            command.run(command.add_arguments(argparse.ArgumentParser()).parse_args([...]))
        """
        extra = ["ignore_extra_ids", *(flag.lstrip("-") for flag, _ in self.options)]
        if self.builder_config is not None:
            from builder_utils.options import builder_kwargs_from_args

            args.builder_kwargs = builder_kwargs_from_args(args, self.builder_config())
            extra.append("builder_kwargs")
        return run_evaluation(args, self.evaluate, partial(write_evaluation, self.spec),
                              [chart.filename for chart in self.spec.charts], extra=extra,
                              builder_config=None if self.builder_config is None else self.builder_config())

    def main(self, argv: Sequence[str] | None = None) -> int:
        """The standalone entry point (:func:`builder_utils.command.run_parsed`: status 2 for bad input).

        Example:
            >>> EvaluateCommand("x evaluate", "x", "X.", "all", None, None).main(["--data", "d"])
            Traceback (most recent call last):
            ...
            SystemExit: 2
        """
        parser = self.add_arguments(CommandParser(prog=self.prog, description=self.description))
        return run_parsed(self.prog, parser.parse_args(argv), package=self.package)
