"""The ``clevr-math`` command: ``synth`` (a synthetic CLEVR world), ``demo``, ``export``, ``push``, ``evaluate``.

The same pattern as ``clotho-aqa`` (:mod:`builder_utils.command`): each subcommand is one
``_add_<name>(subparsers)`` function, listed with its name and help in :data:`SUBCOMMANDS`, that
registers its arguments and sets ``run``; only the subcommand that runs is built (start-up).

Example:
    $ clevr-math synth --out /tmp/clevr --num_scenes 50 --splits train,val,test
    $ clevr-math demo --out demo_output
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from builder_utils.command import EXPORT_HELP, PUSH_HELP, Subcommand, add_forwarding_subcommand, run_command, subcommands_parser


def _synth_main(argv: list[str], prog: str) -> int:
    # Imported on use: `clevr-math --help` stays fast and never needs the renderer.
    from builder_utils.clevr.synth import main as synth_main
    from clevr_math.clevr_folder import REQUIRED_SPLITS

    return synth_main(argv, prog=prog, required_splits=REQUIRED_SPLITS, reader="the CLEVR-Math builder") or 0


def _add_synth(subparsers) -> None:
    add_forwarding_subcommand(
        subparsers, "synth", "write a synthetic CLEVR_v1.0-shaped folder (scenes and images)", _synth_main
    )


def _add_demo(subparsers) -> None:
    from clevr_math.demo import add_demo_arguments

    add_demo_arguments(subparsers.add_parser(
        "demo",
        description="Write a synthetic CLEVR world, build and export the general and multihop configs in "
        "the Hub layout, load them back and print a few rows; offline.",
    ))


def _add_export(subparsers) -> None:
    from builder_utils.hub.cli import add_export_subcommand
    from clevr_math.clevr_math import ClevrMath
    from clevr_math.streaming import StreamExport

    add_export_subcommand(subparsers, ClevrMath, "clevr_math", prog="clevr-math export", source=StreamExport())


def _add_push(subparsers) -> None:
    from builder_utils.hub.cli import add_push_subcommand

    add_push_subcommand(subparsers, prog="clevr-math push")


def _add_evaluate(subparsers) -> None:
    from clevr_math.evaluate import add_arguments

    add_arguments(subparsers.add_parser(
        "evaluate",
        description="Score a model's answers (and the majority, prior and program-oracle baselines) on a "
        "split: accuracy overall and per category, template and number of operations with bootstrap 95% "
        "intervals; writes report.json, report.md and PNG charts.",
    ))


SUBCOMMANDS: list[Subcommand] = [
    Subcommand("synth", "write a synthetic CLEVR_v1.0-shaped folder (scenes and images)", _add_synth),
    Subcommand("demo", "build the general and multihop configs from a tiny synthetic CLEVR world, offline", _add_demo),
    Subcommand("export", EXPORT_HELP, _add_export),
    Subcommand("push", PUSH_HELP, _add_push),
    Subcommand("evaluate", "score predictions and model-free baselines per category, template and operations", _add_evaluate),
]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``clevr-math`` with every subcommand of :data:`SUBCOMMANDS` (with ``argv``: only the one it runs built in full).

    Example:
        >>> build_parser().parse_args(["demo", "--out", "d"]).num_scenes
        30
    """
    return subcommands_parser("clevr-math", "CLEVR-Math: build the dataset from CLEVR scenes, or try it on synthetic data.", SUBCOMMANDS, argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``clevr-math``; returns the exit status (2 with one line on stderr for bad input).

    Example:
        >>> import tempfile
        >>> main(["synth", "--out", tempfile.mkdtemp(), "--num_scenes", "2", "--no_render"])
        0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    return run_command(build_parser(argv), argv, package="clevr_math")


if __name__ == "__main__":
    sys.exit(main())
