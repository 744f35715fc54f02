"""One command-line pattern for every dataset command: argparse subcommands, each setting ``run``.

The conventions (README, "Commands"): ``ValueError``/``OSError`` (every error of our readers and
builders) is one error line and status 2, never a traceback; SIGTERM unwinds like Ctrl-C, so
temporary files and workers are cleaned up (status 130 or 143).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from builder_utils.cli_support import add_version, report_error, running
from builder_utils.interrupt import exit_status, stop_on_signals

# The help lines of the export and push subcommands live here, not in builder_utils.hub.cli, because
# every command's listing shows them and must not import the hub (datasets, about a second).
EXPORT_HELP = "write configurations in the Hub layout: Parquet shards with media embedded, card, plots"
PUSH_HELP = "upload an exported folder to a Hub dataset repository (resumable: run it again to continue)"

__all__ = ["EXPORT_HELP", "PUSH_HELP", "CommandParser", "Subcommand", "add_forwarding_subcommand", "command_parser", "run_command", "run_parsed", "subcommands_parser"]


class CommandParser(argparse.ArgumentParser):
    """The parser of every command: a usage error (an unknown flag, an invalid choice, a missing
    argument) is one line, the error and where the options are, not the usage block before it.

    Its subcommands' parsers are of this class too (argparse makes them with the parent's class).

    Example:
        >>> CommandParser(prog="x").parse_args(["--nope"])
        Traceback (most recent call last):
        ...
        SystemExit: 2
    """

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}; see `{self.prog} --help`\n")


def command_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """The top-level parser of a dataset command.

    Example:
        >>> command_parser("clevr-math", "CLEVR-Math.").prog
        'clevr-math'
    """
    return CommandParser(
        prog=prog, description=description, epilog=f"Run `{prog} COMMAND --help` for a command's options."
    )


@dataclass(frozen=True)
class Subcommand:
    """One subcommand: name and help for the listing; ``add(subparsers)`` registers its full parser.

    Example:
        >>> Subcommand("hello", "say hello", lambda subparsers: None).name
        'hello'
    """

    name: str
    help: str
    add: Callable


def _chosen_name(argv: Sequence[str] | None, names: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs (its first word, as argparse reads it), or None."""
    if argv is None:
        return None
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in names else None


def subcommands_parser(prog: str, description: str, subcommands: Sequence[Subcommand],
                       argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """A dataset command's parser with one subparser per :class:`Subcommand`.

    With ``argv``, only the subcommand it runs is built in full, so ``--help`` or a light
    subcommand never imports what a heavy one needs (``datasets`` costs a second of start-up).

    Example:
        >>> def add_hello(subparsers):
        ...     subparsers.add_parser("hello").set_defaults(run=lambda args: 0)
        >>> subs = [Subcommand("hello", "say hello", add_hello)]
        >>> subcommands_parser("demo-cli", "An example.", subs, ["hello"]).parse_args(["hello"]).command
        'hello'
    """
    parser = command_parser(prog, description)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = _chosen_name(argv, [sub.name for sub in subcommands])
    for sub in subcommands:
        if argv is None or sub.name == chosen:
            sub.add(_ListedAs(subparsers, sub))
        else:
            subparsers.add_parser(sub.name, help=sub.help)
    return parser


class _ListedAs:
    """The subparsers as ``sub.add`` sees them: ``sub.help`` is the one source of the listing's line."""

    def __init__(self, subparsers, sub: Subcommand):
        self._subparsers, self._sub = subparsers, sub

    def add_parser(self, name: str, **kwargs):
        if name == self._sub.name:
            kwargs["help"] = self._sub.help
        return self._subparsers.add_parser(name, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self._subparsers, name)


def add_forwarding_subcommand(subparsers, name: str, help: str, main: Callable[[list[str], str], int]):
    """Register ``name`` whose arguments are parsed by ``main(argv, prog)`` (its own parser).

    Example:
        >>> parser = command_parser("x", "X.")
        >>> subparsers = parser.add_subparsers(dest="command", required=True)
        >>> _ = add_forwarding_subcommand(subparsers, "echo", "print the arguments", lambda argv, prog: print(argv) or 0)
        >>> run_command(parser, ["echo", "--out", "d"])
        ['--out', 'd']
        0
    """
    parser = subparsers.add_parser(name, help=help, add_help=False)
    parser.set_defaults(run=lambda args: main(list(args.forwarded), parser.prog), forward=True)
    return parser


def _chosen(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The subparser of subcommand ``name`` (so that its errors carry its own usage line)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return parser


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None,
                errors: tuple[type[BaseException], ...] = (ValueError, OSError), package: str | None = None) -> int:
    """Parse ``argv`` and run the chosen subcommand (:func:`run_parsed`); returns the exit status.

    Example:
        >>> parser = command_parser("demo-cli", "An example.")
        >>> subparsers = parser.add_subparsers(dest="command", required=True)
        >>> subparsers.add_parser("hello").set_defaults(run=lambda args: print("hello") or 0)
        >>> run_command(parser, ["hello"])
        hello
        0
    """
    add_version(parser)
    args, extra = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if getattr(args, "forward", False):
        args.forwarded = extra
    elif extra:
        _chosen(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    return run_parsed(f"{parser.prog} {args.command}", args, errors, package)


def run_parsed(prog: str, args: argparse.Namespace,
               errors: tuple[type[BaseException], ...] = (ValueError, OSError), package: str | None = None) -> int:
    """Run ``args.run(args)`` with the module doc's conventions (also without subcommands); returns the status.

    Example:
        >>> run_parsed("x", argparse.Namespace(run=lambda args: open("/nonexistent/x")))
        2
    """
    try:
        with stop_on_signals(), running(prog, *filter(None, [package]), quiet=getattr(args, "quiet", False)) as progress:
            args.progress = progress
            return int(args.run(args) or 0)
    except KeyboardInterrupt as stop:
        print(f"{prog}: interrupted; nothing half-written was left behind", file=sys.stderr)
        return exit_status(stop)
    except errors as exc:
        return report_error(prog, exc)
