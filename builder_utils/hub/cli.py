"""The ``export`` and ``push`` subcommands, shared by ``clevr-math`` and ``clotho-aqa``.

``args.run(args)`` returns the exit status: bad input, folder or network is one ``error:`` line
and 2, an interruption one line and 130 / 143, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from builder_utils.cli_support import report_error
from builder_utils.command import EXPORT_HELP, PUSH_HELP
from builder_utils.options import MAX_WORKERS, Integer, add_builder_flags, add_option_flags, builder_kwargs_from_args
from builder_utils.interrupt import exit_status, stop_on_signals

# The export's and the push's modules (datasets, huggingface_hub: about a second) are imported
# where they are used, so that `push --help` and every command's listing start in a blink.


def _config_list(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    return [name for value in values for name in value.split(",") if name]




def _interruptible(prog: str, work: Callable[[], int], after: str) -> int:
    # SIGTERM unwinds like Ctrl-C, so staging folders and temporary files go in `finally` blocks.
    with stop_on_signals():
        try:
            return work()
        except KeyboardInterrupt as stop:
            print(f"{prog}: interrupted; {after}", file=sys.stderr)
            return exit_status(stop)


def _export_arguments(parser: argparse.ArgumentParser, builder_cls, source=None,
                      data_dir_help: str | None = None) -> argparse.ArgumentParser:
    from builder_utils.hub.derived import resolve
    from builder_utils.hub.export import DEFAULT_MAX_SHARD_SIZE, ExportPaths
    from builder_utils.hub.layout import layout_of

    names = ", ".join(c.name for c in builder_cls.BUILDER_CONFIGS)
    derived = ", ".join(resolve(layout_of(builder_cls)).derived)
    add_option_flags(parser, {"inputs and outputs": parser}, cls=ExportPaths)  # --data_dir, --out, --cache_dir
    data_dir = parser._option_string_actions["--data_dir"]
    data_dir.required = source is None
    data_dir.help = data_dir_help or data_dir.help
    parser.add_argument(
        # extend + nargs: `--config a b`, `--config a --config b` and `--config a,b` all work
        "--config", action="extend", nargs="+", metavar="NAME",
        help=f"configuration(s) to export: NAME [NAME ...], repeatable or comma-separated (default: all of {names}"
             + (f"; the training layouts by name only: {derived})" if derived else ")"),
    )
    parser.add_argument(
        "--format", action="extend", nargs="+", metavar="TRAINER",
        help="a trainer's own layout (r1v, easyr1, swift, vlm_r1, reason_rft, reason_rft_cot, lmm_r1; Clotho-AQA: "
             "swift, swift_choices, r1_aqa), written as the configuration of that name: the same as --config "
             "TRAINER (README, 'Which trainer')",
    )
    parser.add_argument("--num_proc", type=Integer(1, maximum=MAX_WORKERS).parse, default=None,
                        help="worker processes for the build, and shards written at once (default: 1, and 2 shards)")
    parser.add_argument(
        "--max_shard_size", default=DEFAULT_MAX_SHARD_SIZE,
        help="target size of one shard: its rows with the images/audio embedded, counted as push_to_hub "
        f"counts them (Arrow bytes), e.g. 200MB, 1GB (default: {DEFAULT_MAX_SHARD_SIZE})",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars, no success line")
    add_media_arguments(parser)
    if source is not None:
        source.add_arguments(parser)
    # After the source's flags: a name it uses (--max_answer of a stream) stays the source's.
    add_builder_flags(parser, builder_cls.BUILDER_CONFIG_CLASS)
    return parser


def run_export(args: argparse.Namespace, builder_cls, card_template: str, prog: str, source=None,
               data_dir_help: str | None = None) -> int:
    """Run a parsed ``export`` command; returns the exit status.

    Example::

        run_export(args, ClevrMath, "clevr_math", "clevr-math export")   # 0
    """
    if args.num_proc is not None and args.num_proc < 1:
        print(f"{prog}: error: --num_proc must be at least 1", file=sys.stderr)
        return 2
    import datasets

    from builder_utils.hub.export import export_builder

    if args.quiet:
        datasets.disable_progress_bars()
    try:
        given = source.given(args) if source is not None else None
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.data_dir is None and given is None:  # only a source makes --data_dir optional (its help says when)
        print(f"{prog}: error: --data_dir: " + (data_dir_help or "required"),
              file=sys.stderr)
        return 2

    def work() -> int:
        terminal = log_to_terminal(prog)
        try:
            result = export_builder(
                builder_cls,
                args.out,
                card_template=card_template,
                data_dir=args.data_dir,
                configs=_config_list((args.config or []) + (args.format or [])),
                num_proc=args.num_proc,
                max_shard_size=args.max_shard_size,
                cache_dir=args.cache_dir,
                progress=getattr(args, "progress", not args.quiet),  # set by run_command: bars only on a terminal
                builder_kwargs=builder_kwargs_from_args(args, builder_cls.BUILDER_CONFIG_CLASS),
                given=given,
                **media_options(args),
            )
        except (ValueError, OSError) as exc:  # our errors and the builders' all derive from these
            return report_error(prog, exc)
        finally:
            terminal.close()
        if args.plan:
            print(f"--plan: nothing written to {result.folder}")
            return 0
        if not args.quiet:
            print(f"{prog}: {result.summary_line()}", file=sys.stderr)
        return 0

    return _interruptible(prog, work, "the export folder keeps its previous files, staging removed")


def add_export_subcommand(subparsers, builder_cls, card_template: str, prog: str | None = None,
                          source=None, data_dir_help: str | None = None) -> argparse.ArgumentParser:
    """Register ``export`` on an argparse subparsers object; ``args.run(args)`` runs it.

    ``source`` (clevr-math's ``--stream_questions``) adds flags (``add_arguments(parser)``) and rows
    made elsewhere (``given(args)``: :func:`export_builder`'s ``given``), and makes ``--data_dir`` optional.
    ``data_dir_help``: ``--data_dir``'s help in the dataset's words (what folder, when it is required).

    Example:
        >>> from clotho_aqa import ClothoAQA
        >>> parser = argparse.ArgumentParser(prog="clotho-aqa")
        >>> export = add_export_subcommand(parser.add_subparsers(), ClothoAQA, "clotho_aqa")
        >>> export.prog, parser.parse_args(["export", "--data_dir", "d", "--out", "o"]).max_shard_size
        ('clotho-aqa export', '500MB')
    """
    parser = _export_arguments(subparsers.add_parser("export", help=EXPORT_HELP, description=EXPORT_HELP), builder_cls,
                               source, data_dir_help)
    name = prog or parser.prog
    parser.set_defaults(run=lambda args: run_export(args, builder_cls, card_template, name, source, data_dir_help))
    return parser


def _push_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--folder", required=True, help="a folder written by `export`")
    parser.add_argument("--repo_id", required=True, help="dataset repository, e.g. my-name/clevr-math")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", default=None, help="branch (created if missing) or refs/pr/N to push to")
    parser.add_argument("--create_pr", action="store_true", help="open a pull request instead of committing to the branch")
    parser.add_argument("--commit_message", default=None, help="message of the Hub commit (default: \"Upload <configs>\")")
    parser.add_argument("--token", default=None, help="Hub token (default: HF_TOKEN or the `hf auth login` one)")
    parser.add_argument("--num_workers", type=Integer(1, maximum=MAX_WORKERS).parse, default=None,
                        help="files hashed and uploaded at once")
    parser.add_argument("--dry_run", action="store_true", help="list the files and sizes to upload; no network")
    parser.add_argument("--quiet", action="store_true", help="no progress bars, no success line")
    return parser


def run_push(args: argparse.Namespace, prog: str) -> int:
    """Run a parsed ``push`` command; returns the exit status.

    Example::

        run_push(args, "clevr-math push")   # 0
    """
    from builder_utils.hub.push import PushError, check_repo_id, plan_upload, push_folder

    def work() -> int:
        terminal = log_to_terminal(prog)
        try:
            if args.dry_run:
                check_repo_id(args.repo_id)
                print(plan_upload(args.folder, args.repo_id).describe(args.repo_id))
                return 0
            result = push_folder(
                args.folder, args.repo_id, private=args.private, revision=args.revision,
                commit_message=args.commit_message, token=args.token, create_pr=args.create_pr,
                num_workers=args.num_workers,
            )
        except (PushError, ValueError, OSError) as exc:
            return report_error(prog, exc)
        finally:
            terminal.close()
        if not getattr(args, "quiet", False):
            print(f"{prog}: pushed {args.folder} to datasets/{args.repo_id}: {result.summary()}", file=sys.stderr)
        return 0

    return _interruptible(prog, work, "run the same push again to upload the rest")


def add_push_subcommand(subparsers, prog: str | None = None) -> argparse.ArgumentParser:
    """Register ``push`` on an argparse subparsers object; ``args.run(args)`` runs it.

    Example:
        >>> parser = argparse.ArgumentParser(prog="clevr-math")
        >>> push = add_push_subcommand(parser.add_subparsers())
        >>> push.prog, parser.parse_args(["push", "--folder", "f", "--repo_id", "me/x", "--dry_run"]).dry_run
        ('clevr-math push', True)
    """
    description = PUSH_HELP + " (token from --token, HF_TOKEN or `hf auth login`)"
    parser = _push_arguments(subparsers.add_parser("push", help=PUSH_HELP, description=description))
    name = prog or parser.prog
    parser.set_defaults(run=lambda args: run_push(args, name))
    return parser


# -- media layout options (--media, --audio_format, --plan) ---------------------------------


def add_media_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--media``, ``--audio_format`` and ``--plan`` to an export parser.

    Example:
        >>> add_media_arguments(argparse.ArgumentParser()).parse_args(["--media", "shared"]).media
        'shared'
    """
    from builder_utils.hub.layout import AUDIO_FORMATS, MEDIA_LAYOUTS
    from builder_utils.prompts import DEFAULT_PROMPT_STYLE, PROMPT_STYLES

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
    parser.add_argument(
        "--prompt_style", choices=[s.name for s in PROMPT_STYLES], default=DEFAULT_PROMPT_STYLE,
        help="answer-format instruction in the system turn of the prompts configs (RL): think_answer "
        "(<think>..</think><answer>..</answer>), boxed (\\boxed{}) or plain (no system turn)",
    )
    from builder_utils.hub.prompt_config import PromptAudioOptions  # with the export's modules: numpy, datasets

    add_option_flags(parser, cls=PromptAudioOptions)
    return parser


def media_options(args: argparse.Namespace) -> dict:
    """The keyword arguments of :func:`export_builder` given by :func:`add_media_arguments`.

    Example:
        >>> media_options(argparse.Namespace(media="shared", audio_format="wav", plan=True, prompt_style="boxed",
        ...                                  prompt_audio_rate=16000))
        {'media': 'shared', 'audio_format': 'wav', 'plan_only': True, 'prompt_style': 'boxed', 'prompt_audio_rate': 16000}
    """
    return {"media": args.media, "audio_format": args.audio_format, "plan_only": args.plan,
            "prompt_style": args.prompt_style, "prompt_audio_rate": args.prompt_audio_rate}


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
    """Show the export's size table (INFO, stdout) and warnings (stderr) until the handler is closed.

    Example:
        >>> terminal = log_to_terminal("clotho-aqa export")
        >>> logging.getLogger("builder_utils.hub.plan").info("a table")
        a table
        >>> terminal.close()
    """
    return _Terminal(prog)
