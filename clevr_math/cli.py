"""The ``clevr-math`` command: ``synth`` (a synthetic CLEVR world), ``demo``, ``export``, ``push``, ``evaluate``.

Every subcommand is a :class:`Command` in :data:`COMMANDS` and parses its own arguments, so a
new one is one entry here and one module beside this one.

Example:
    $ clevr-math synth --out /tmp/clevr --num_scenes 50 --splits train,val,test
    $ clevr-math demo --out demo_output
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Command:
    """A subcommand: one line of help and ``run(argv) -> exit status``."""

    help: str
    run: Callable[[list[str]], int]


def _synth(argv: list[str]) -> int:
    # Imported on use: `clevr-math --help` stays fast and never needs the renderer.
    from builder_utils.clevr.synth import main as synth_main

    return synth_main(argv, prog="clevr-math synth") or 0


def _demo(argv: list[str]) -> int:
    from clevr_math.demo import main as demo_main

    return demo_main(argv)


def _export(argv: list[str]) -> int:
    from builder_utils.hub.cli import export_command
    from clevr_math.clevr_math import ClevrMath

    return export_command(argv, ClevrMath, "clevr_math", prog="clevr-math export")


def _evaluate(argv: list[str]) -> int:
    from clevr_math.evaluate import main as evaluate_main

    return evaluate_main(argv)


def _push(argv: list[str]) -> int:
    from builder_utils.hub.cli import push_command

    return push_command(argv, prog="clevr-math push")


COMMANDS: dict[str, Command] = {
    "synth": Command("write a synthetic CLEVR_v1.0-shaped folder (scenes and images)", _synth),
    "demo": Command("build both configs from a tiny synthetic CLEVR world, offline, and show them", _demo),
    "export": Command("write configs in the Hub layout (Parquet shards, dataset card, plots)", _export),
    "push": Command("upload an exported folder to a Hub dataset repository", _push),
    "evaluate": Command("score predictions (and baselines) per category, template and number of operations", _evaluate),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clevr-math",
        description="CLEVR-Math: build the dataset from CLEVR scenes, or try it on synthetic data.",
        epilog="Run `clevr-math COMMAND --help` for a command's options.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        commands.add_parser(name, help=command.help, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``clevr-math``; returns the exit status.

    Example:
        >>> main(["demo", "--out", "/tmp/clevr_math_demo"])  # doctest: +SKIP
        0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        _parser().parse_args(argv)  # prints the help or the "invalid choice" error and exits
        return 2
    return COMMANDS[argv[0]].run(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
