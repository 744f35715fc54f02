"""The ``export`` and ``push`` subcommands, shared by ``clevr-math`` and ``clotho-aqa``.

Each dataset's command line hands its arguments over, with its builder and card template::

    from builder_utils.hub.cli import export_command, push_command
    export_command(argv, ClevrMath, "clevr_math", prog="clevr-math export")
    push_command(argv, prog="clevr-math push")

or, for a command line built on argparse subparsers, registers both subcommands::

    add_export_subcommand(subparsers, ClothoAQA, "clotho_aqa", prog="clotho-aqa export")
    add_push_subcommand(subparsers, prog="clotho-aqa push")   # then: sys.exit(args.run(args))

Both return an exit status; a problem with the input, the folder or the network is one line on
stderr (``<prog>: error: ...``) and status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

import datasets

from builder_utils.hub.export import DEFAULT_MAX_SHARD_SIZE, README, export_builder
from builder_utils.hub.layout import AUDIO_FORMATS, MEDIA_LAYOUTS
from builder_utils.hub.push import PushError, plan_upload, push_folder


def _config_list(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    return [name for value in values for name in value.split(",") if name]


EXPORT_HELP = "write configurations in the Hub layout: Parquet shards with media embedded, card, plots"
PUSH_HELP = "upload an exported folder to a Hub dataset repository"


def _export_arguments(parser: argparse.ArgumentParser, builder_cls=None) -> argparse.ArgumentParser:
    names = ", ".join(c.name for c in builder_cls.BUILDER_CONFIGS) if builder_cls is not None else "see the builder"
    parser.add_argument("--data_dir", required=True, help="the local release/CLEVR folder the builder reads")
    parser.add_argument("--out", required=True, help="export folder (created; configs already in it are kept)")
    parser.add_argument(
        # extend + nargs: `--config a b`, `--config a --config b` and `--config a,b` all work
        "--config", action="extend", nargs="+", metavar="NAME",
        help=f"configuration(s) to export: NAME [NAME ...], repeatable or comma-separated (default: all of {names})",
    )
    parser.add_argument("--num_proc", type=int, default=None, help="worker processes for the build")
    parser.add_argument(
        "--max_shard_size", default=DEFAULT_MAX_SHARD_SIZE,
        help=f"largest Parquet shard before embedding, e.g. 200MB, 1GB (default: {DEFAULT_MAX_SHARD_SIZE})",
    )
    parser.add_argument("--cache_dir", default=None, help="builder cache to reuse (default: a temporary one)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    add_media_arguments(parser)
    return parser


def export_parser(prog: str, builder_cls=None) -> argparse.ArgumentParser:
    """The parser of ``<dataset> export``.

    Example:
        >>> export_parser("clevr-math export").parse_args(["--data_dir", "d", "--out", "o"]).max_shard_size
        '500MB'
    """
    return _export_arguments(argparse.ArgumentParser(prog=prog, description=EXPORT_HELP), builder_cls)


def run_export(args: argparse.Namespace, builder_cls, card_template: str, prog: str) -> int:
    """Run a parsed ``export`` command; returns the exit status.

    Example:
        >>> run_export(export_parser("x").parse_args(["--data_dir", "d", "--out", "o"]), ClevrMath, "clevr_math", "x")  # doctest: +SKIP
        0
    """
    if args.num_proc is not None and args.num_proc < 1:
        print(f"{prog}: error: --num_proc must be at least 1", file=sys.stderr)
        return 2
    if args.quiet:
        datasets.disable_progress_bars()
    terminal = log_to_terminal(prog)
    try:
        result = export_builder(
            builder_cls,
            args.out,
            card_template=card_template,
            data_dir=args.data_dir,
            configs=_config_list(args.config),
            num_proc=args.num_proc,
            max_shard_size=args.max_shard_size,
            cache_dir=args.cache_dir,
            progress=not args.quiet,
            **media_options(args),
        )
    except (ValueError, OSError) as exc:  # our errors and the builders' all derive from these
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    finally:
        terminal.close()
    if args.plan:
        print(f"--plan: nothing written to {result.folder}")
        return 0
    print(result.summary())
    print(f"card: {result.folder / README}")
    return 0


def export_command(argv: Sequence[str] | None, builder_cls, card_template: str, prog: str) -> int:
    """``<dataset> export --data_dir D --out OUT [--config NAME ...] [--num_proc N]``.

    Example:
        >>> from clotho_aqa import ClothoAQA
        >>> export_command(["--data_dir", "rel", "--out", "hub"], ClothoAQA, "clotho_aqa", "clotho-aqa export")  # doctest: +SKIP
        0
    """
    return run_export(export_parser(prog, builder_cls).parse_args(argv), builder_cls, card_template, prog)


def add_export_subcommand(subparsers, builder_cls, card_template: str, prog: str) -> argparse.ArgumentParser:
    """Register ``export`` on an argparse subparsers object; ``args.run(args)`` runs it.

    Example:
        >>> add_export_subcommand(subparsers, ClothoAQA, "clotho_aqa", "clotho-aqa export")  # doctest: +SKIP
    """
    parser = _export_arguments(subparsers.add_parser("export", help=EXPORT_HELP, description=EXPORT_HELP), builder_cls)
    parser.set_defaults(run=lambda args: run_export(args, builder_cls, card_template, prog))
    return parser


def _push_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--folder", required=True, help="a folder written by `export`")
    parser.add_argument("--repo_id", required=True, help="dataset repository, e.g. my-name/clevr-math")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", default=None, help="branch to push to (created if missing)")
    parser.add_argument("--commit_message", default=None)
    parser.add_argument("--dry_run", action="store_true", help="list the files and sizes to upload; no network")
    return parser


def push_parser(prog: str) -> argparse.ArgumentParser:
    """The parser of ``<dataset> push``.

    Example:
        >>> push_parser("clotho-aqa push").parse_args(["--folder", "f", "--repo_id", "me/x", "--dry_run"]).dry_run
        True
    """
    description = PUSH_HELP + " (token from HF_TOKEN or `hf auth login`)"
    return _push_arguments(argparse.ArgumentParser(prog=prog, description=description))


def run_push(args: argparse.Namespace, prog: str) -> int:
    """Run a parsed ``push`` command; returns the exit status.

    Example:
        >>> run_push(push_parser("x").parse_args(["--folder", "hub", "--repo_id", "me/x", "--dry_run"]), "x")  # doctest: +SKIP
        0
    """
    try:
        if args.dry_run:
            print(plan_upload(args.folder, args.repo_id).describe(args.repo_id))
            return 0
        url = push_folder(
            args.folder, args.repo_id, private=args.private, revision=args.revision, commit_message=args.commit_message
        )
    except (PushError, ValueError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"pushed {args.folder} to datasets/{args.repo_id}: {url}")
    return 0


def push_command(argv: Sequence[str] | None, prog: str) -> int:
    """``<dataset> push --folder OUT --repo_id NAME [--private] [--revision R] [--dry_run]``.

    Example:
        >>> push_command(["--folder", "hub", "--repo_id", "me/x", "--dry_run"], "clevr-math push")  # doctest: +SKIP
        0
    """
    return run_push(push_parser(prog).parse_args(argv), prog)


def add_push_subcommand(subparsers, prog: str) -> argparse.ArgumentParser:
    """Register ``push`` on an argparse subparsers object; ``args.run(args)`` runs it.

    Example:
        >>> add_push_subcommand(subparsers, "clotho-aqa push")  # doctest: +SKIP
    """
    parser = _push_arguments(subparsers.add_parser("push", help=PUSH_HELP, description=PUSH_HELP))
    parser.set_defaults(run=lambda args: run_push(args, prog))
    return parser


# -- media layout options (--media, --audio_format, --plan) ---------------------------------


def add_media_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--media``, ``--audio_format`` and ``--plan`` to an export parser.

    Example:
        >>> add_media_arguments(argparse.ArgumentParser()).parse_args(["--media", "shared"]).media
        'shared'
    """
    parser.add_argument(
        "--media", choices=MEDIA_LAYOUTS, default="inline",
        help="inline: every row embeds its file (push_to_hub's layout, the default); shared: question "
        "configs name their file and one media config holds each file once (join: builder_utils.hub.attach_media)",
    )
    parser.add_argument(
        "--audio_format", choices=AUDIO_FORMATS, default="wav",
        help="how embedded clips are stored: wav (as read) or flac (lossless, same samples, smaller)",
    )
    parser.add_argument(
        "--plan", action="store_true",
        help="build, print the rows and projected bytes per config and layout, write nothing",
    )
    return parser


def media_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`export_builder` given by :func:`add_media_arguments`.

    Example:
        >>> media_options(argparse.Namespace(media="shared", audio_format="wav", plan=True))
        {'media': 'shared', 'audio_format': 'wav', 'plan_only': True}
    """
    return {"media": args.media, "audio_format": args.audio_format, "plan_only": args.plan}


class _Terminal(logging.Handler):
    """Prints the ``builder_utils.hub`` records of one command: INFO to stdout, warnings to stderr."""

    def __init__(self, prog: str):
        super().__init__(logging.INFO)
        self.prog = prog
        self.logger = logging.getLogger("builder_utils.hub")
        self.saved = (self.logger.level, self.logger.propagate)
        self.logger.addHandler(self)
        self.logger.setLevel(logging.INFO)
        self.logger.propagate = False

    def emit(self, record: logging.LogRecord) -> None:
        # sys.stdout/sys.stderr looked up now: a replaced stream (pytest's capture) is used.
        if record.levelno >= logging.WARNING:
            print(f"{self.prog}: warning: {record.getMessage()}", file=sys.stderr)
        else:
            print(record.getMessage(), file=sys.stdout)

    def close(self) -> None:
        """Detach from the logger and give it back its level and propagation."""
        if self in self.logger.handlers:
            self.logger.removeHandler(self)
            self.logger.setLevel(self.saved[0])
            self.logger.propagate = self.saved[1]
        super().close()


def log_to_terminal(prog: str) -> _Terminal:
    """Show the export's size table (INFO, stdout) and warnings (stderr, ``<prog>: warning:``)
    until the returned handler is closed.

    Example:
        >>> terminal = log_to_terminal("clotho-aqa export")
        >>> logging.getLogger("builder_utils.hub.plan").info("a table")
        a table
        >>> terminal.close()
    """
    return _Terminal(prog)
