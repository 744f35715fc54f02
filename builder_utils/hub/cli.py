"""The ``export`` and ``push`` subcommands, shared by ``clevr-math`` and ``clotho-aqa``.

Each dataset's command line hands its arguments over, with its builder and card template::

    from builder_utils.hub.cli import export_command, push_command
    export_command(argv, ClevrMath, "clevr_math", prog="clevr-math export")
    push_command(argv, prog="clevr-math push")

Both return an exit status; a problem with the input, the folder or the network is one line on
stderr (``<prog>: error: ...``) and status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import datasets

from builder_utils.hub.export import DEFAULT_MAX_SHARD_SIZE, README, export_builder
from builder_utils.hub.push import PushError, plan_upload, push_folder


def _config_list(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    return [name for value in values for name in value.split(",") if name]


def export_parser(prog: str, builder_cls=None) -> argparse.ArgumentParser:
    """The parser of ``<dataset> export``.

    Example:
        >>> export_parser("clevr-math export").parse_args(["--data_dir", "d", "--out", "o"]).max_shard_size
        '500MB'
    """
    names = ", ".join(c.name for c in builder_cls.BUILDER_CONFIGS) if builder_cls is not None else "see the builder"
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Build configurations and write them to a folder in the Hub's layout "
        "(<config>/<split>-NNNNN-of-MMMMM.parquet with media embedded, README.md card, assets/ plots).",
    )
    parser.add_argument("--data_dir", required=True, help="the local release/CLEVR folder the builder reads")
    parser.add_argument("--out", required=True, help="export folder (created; configs already in it are kept)")
    parser.add_argument(
        "--config", action="append", metavar="NAME",
        help=f"configuration to export (repeatable or comma-separated; default: all of {names})",
    )
    parser.add_argument("--num_proc", type=int, default=None, help="worker processes for the build")
    parser.add_argument(
        "--max_shard_size", default=DEFAULT_MAX_SHARD_SIZE,
        help=f"largest Parquet shard before embedding, e.g. 200MB, 1GB (default: {DEFAULT_MAX_SHARD_SIZE})",
    )
    parser.add_argument("--cache_dir", default=None, help="builder cache to reuse (default: a temporary one)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser


def export_command(argv: Sequence[str] | None, builder_cls, card_template: str, prog: str) -> int:
    """``<dataset> export --data_dir D --out OUT [--config NAME ...] [--num_proc N]``.

    Example:
        >>> from clotho_aqa import ClothoAQA
        >>> export_command(["--data_dir", "rel", "--out", "hub"], ClothoAQA, "clotho_aqa", "clotho-aqa export")  # doctest: +SKIP
        0
    """
    args = export_parser(prog, builder_cls).parse_args(argv)
    if args.num_proc is not None and args.num_proc < 1:
        print(f"{prog}: error: --num_proc must be at least 1", file=sys.stderr)
        return 2
    if args.quiet:
        datasets.disable_progress_bars()
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
        )
    except (ValueError, OSError) as exc:  # our errors and the builders' all derive from these
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(result.summary())
    print(f"card: {result.folder / README}")
    return 0


def push_parser(prog: str) -> argparse.ArgumentParser:
    """The parser of ``<dataset> push``.

    Example:
        >>> push_parser("clotho-aqa push").parse_args(["--folder", "f", "--repo_id", "me/x", "--dry_run"]).dry_run
        True
    """
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Upload an exported folder to a Hub dataset repository (token from HF_TOKEN or `hf auth login`).",
    )
    parser.add_argument("--folder", required=True, help="a folder written by `export`")
    parser.add_argument("--repo_id", required=True, help="dataset repository, e.g. my-name/clevr-math")
    parser.add_argument("--private", action="store_true", help="create the repository as private")
    parser.add_argument("--revision", default=None, help="branch to push to (created if missing)")
    parser.add_argument("--commit_message", default=None)
    parser.add_argument("--dry_run", action="store_true", help="list the files and sizes to upload; no network")
    return parser


def push_command(argv: Sequence[str] | None, prog: str) -> int:
    """``<dataset> push --folder OUT --repo_id NAME [--private] [--revision R] [--dry_run]``.

    Example:
        >>> push_command(["--folder", "hub", "--repo_id", "me/x", "--dry_run"], "clevr-math push")  # doctest: +SKIP
        0
    """
    args = push_parser(prog).parse_args(argv)
    try:
        if args.dry_run:
            plan = plan_upload(args.folder)
            print(plan.describe(args.repo_id))
            return 0
        url = push_folder(
            args.folder, args.repo_id, private=args.private, revision=args.revision, commit_message=args.commit_message
        )
    except (PushError, ValueError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(f"pushed {args.folder} to datasets/{args.repo_id}: {url}")
    return 0
