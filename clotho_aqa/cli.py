"""The ``clotho-aqa`` command: ``synth``, ``demo``, ``splits``, ``export``, ``push`` and ``evaluate``.

The same pattern as ``clevr-math`` (:mod:`builder_utils.command`): each subcommand is one
``_add_<name>(subparsers)`` function listed in :data:`SUBCOMMANDS` that registers its arguments
and sets ``run``; a new subcommand is one more such function appended to the list.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import logging
import os
import sys
from pathlib import Path
from typing import Callable, Sequence

from builder_utils.command import run_command, subcommands_parser

logger = logging.getLogger(__name__)
SPLITS_COMMAND = "clotho-aqa splits"

# --- synth -----------------------------------------------------------------------------


def _add_synth(subparsers) -> None:
    p = subparsers.add_parser(
        "synth", help="write a small synthetic release in the official layout",
        description="Write a small synthetic Clotho-AQA release (our own questions, generated WAVs) in the "
        "official layout: audio_files/, the three QA CSVs and the metadata CSV.",
    )
    p.add_argument("--out", required=True, help="folder to create (audio_files/ and the official CSV names)")
    p.add_argument("--num_files", type=int, default=10, help="number of clips (at least 3; split about 60/20/20)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default: 0)")
    p.add_argument("--duration", type=float, default=0.2, help="seconds of audio per clip")
    p.add_argument(
        "--overwrite", action="store_true",
        help="replace --out if it is a release this command wrote earlier (any other folder is never replaced)",
    )
    p.set_defaults(run=_run_synth)


def _run_synth(args) -> int:
    from clotho_aqa.synth import write_synthetic_release

    release = write_synthetic_release(
        args.out, num_files=args.num_files, seed=args.seed, duration=args.duration, overwrite=args.overwrite
    )
    sizes = ", ".join(f"{split} {len(files)} clips / {release.num_rows[split]} rows" for split, files in release.files.items())
    logger.info("wrote %s: %s", release.root, sizes)
    return 0


# --- demo ------------------------------------------------------------------------------


def _add_demo(subparsers) -> None:
    from clotho_aqa.demo import add_demo_arguments

    add_demo_arguments(subparsers.add_parser(
        "demo", help="build every config from a synthetic release, export and reload it, offline",
        description="Write a small synthetic release, export every config in the Hub layout, load each "
        "back and print a row with its decoded audio; offline, no torch.",
    ))


# --- splits ----------------------------------------------------------------------------


def compute_split_file(
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    report: str | os.PathLike | None = None,
    candidates: int = 2000,
    keep: int = 50,
    seed: int = 0,
    progress: bool = True,
    overwrite: bool = False,
) -> dict:
    """Recompute the 60/20/20 split of a release's clips and write ``file_name,split`` rows.

    Only the QA CSVs are read (no audio needed). The CSV and the optional JSON report (the
    search's report plus clip counts) go through :mod:`builder_utils.ownership`: refused before any
    work when they overlap ``data_dir`` or each other; an existing file this command did not
    write is replaced only with ``overwrite``. Returns the report.

    Example:
        >>> import os, tempfile
        >>> from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> report = compute_split_file(root, root.parent / "splits.csv", None, candidates=20, keep=5)
        >>> report["files"]            # the official CSVs, default options: 1193 / 399 / 399
        {'train': 3, 'validation': 1, 'test': 1}
    """
    from clotho_aqa.recompute import recompute_release_splits
    from clotho_aqa.release import find_release_files

    from builder_utils.ownership import OutputFolder, check_output, refuse_overlap

    outputs = {"--out": check_output(out, "--out"), "--report": None if report is None else check_output(report, "--report")}
    refuse_overlap(outputs, {"--data_dir": data_dir})
    if report is not None:
        refuse_overlap({"--report": report}, {"--out": out})
    for path in (out, report):
        if path is not None and os.path.isdir(path):
            raise IsADirectoryError(f"{path} is a folder; give the path of the file to write")
    for path in filter(None, (out, report)):  # before the search: a refusal costs nothing
        with OutputFolder(Path(path).parent, SPLITS_COMMAND) as folder:
            folder.check_target(Path(path).name, overwrite)
    assignment, result = recompute_release_splits(
        find_release_files(data_dir)["csv"], seed=seed, candidates=candidates, keep=keep, progress=progress
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["file_name", "split"])
    writer.writerows(assignment.items())
    counts = {split: sum(1 for s in assignment.values() if s == split) for split in ("train", "validation", "test")}
    summary = {
        "data_dir": str(data_dir),
        "seed": seed,
        "candidates": candidates,
        "keep": keep,
        "files": counts,
        "search": result.report(),
    }
    texts = {out: buffer.getvalue()}
    if report is not None:
        texts[report] = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    for path, text in texts.items():
        with OutputFolder(Path(path).parent, SPLITS_COMMAND) as folder:
            folder.write_file(Path(path).name, text, overwrite=overwrite)
    return summary


def _add_splits(subparsers) -> None:
    p = subparsers.add_parser(
        "splits", help="recompute the stratified 60/20/20 split of a release",
        description="Recompute the paper's stratified 60/20/20 split of a release's clips (only the QA CSVs "
        "are read) and write file_name,split rows; the builder's split_strategy='recomputed' uses the same rule.",
    )
    p.add_argument("--data_dir", required=True, help="folder with the official QA CSVs")
    p.add_argument("--out", required=True, help="CSV file to write: file_name,split")
    p.add_argument("--report", help="JSON report file to write")
    p.add_argument("--candidates", type=int, default=2000, help="60/40 candidate splits (paper: 2000)")
    p.add_argument("--keep", type=int, default=50, help="best candidates split again 50/50 (paper: 50)")
    p.add_argument("--seed", type=int, default=0, help="seed of the search (default: 0)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out / --report file that this command did not write")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings")
    p.set_defaults(run=_run_splits)


def _run_splits(args) -> int:
    summary = compute_split_file(
        args.data_dir, args.out, args.report, args.candidates, args.keep, args.seed, progress=args.progress,
        overwrite=args.overwrite,
    )
    search = summary["search"]
    logger.info("wrote %s: %s, allocation error %s", args.out, summary["files"], search["allocation_error"])
    violations = search["constraint"]["violations"]
    if violations:
        # The split is still written (the search's best), but never without saying what it breaks.
        shown = ", ".join(repr(v) for v in violations[:10]) + (", ..." if len(violations) > 10 else "")
        logger.warning("%d answer(s) with at least 2 clips are not in train and in validation or test: %s",
                       len(violations), shown)
    return 0


# --- entry point -----------------------------------------------------------------------

def _add_export(subparsers) -> None:
    from builder_utils.hub.cli import add_export_subcommand
    from clotho_aqa import ClothoAQA

    add_export_subcommand(subparsers, ClothoAQA, "clotho_aqa", prog="clotho-aqa export")


def _add_push(subparsers) -> None:
    from builder_utils.hub.cli import add_push_subcommand

    add_push_subcommand(subparsers, prog="clotho-aqa push")


def _add_evaluate(subparsers) -> None:
    from clotho_aqa.evaluate import add_arguments

    add_arguments(subparsers.add_parser(
        "evaluate", help="score predictions and model-free baselines under the paper's labellings",
        description="Score a model's answers (and the majority and question-only baselines) on a split: "
        "binary accuracy on the unfiltered, unanimous and majority labellings, single-word top-1 (top-5 for "
        "ranked predictions); writes report.json, report.md and PNG charts.",
    ))


SUBCOMMANDS: list[Callable] = [_add_synth, _add_demo, _add_splits, _add_export, _add_push, _add_evaluate]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``clotho-aqa`` with every subcommand of ``SUBCOMMANDS``.

    Example:
        >>> build_parser().parse_args(["synth", "--out", "rel"]).num_files
        10
    """
    return subcommands_parser("clotho-aqa", "Clotho-AQA: synthetic releases, demo, splits, Hub export and push.", SUBCOMMANDS)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``clotho-aqa``; bad input ends the command with one line on stderr and exit status 2.

    Example:
        >>> main(["synth", "--out", "/nonexistent/dir/rel", "--num_files", "2"])
        2
    """
    return run_command(build_parser(), argv, package="clotho_aqa")


if __name__ == "__main__":
    sys.exit(main())
