"""The ``clotho-aqa`` command: ``synth``, ``demo`` and ``splits``.

Each subcommand is one ``_add_<name>(subparsers)`` function listed in ``SUBCOMMANDS`` that
registers its arguments and sets ``run``; a new subcommand (``export``, ``push``) is one more
such function appended to the list.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable

from builder_utils.atomic import write_atomic

DEMO_DIR = Path("demo_output") / "clotho_aqa"


# --- synth -----------------------------------------------------------------------------


def _add_synth(subparsers) -> None:
    p = subparsers.add_parser("synth", help="write a small synthetic release in the official layout")
    p.add_argument("--out", required=True, help="folder to create (audio_files/ and the official CSV names)")
    p.add_argument("--num_files", type=int, default=10, help="number of clips (at least 3; split about 60/20/20)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--duration", type=float, default=0.2, help="seconds of audio per clip")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    p.set_defaults(run=_run_synth)


def _run_synth(args) -> int:
    from clotho_aqa.synth import write_synthetic_release

    release = write_synthetic_release(
        args.out, num_files=args.num_files, seed=args.seed, duration=args.duration, overwrite=args.overwrite
    )
    sizes = ", ".join(f"{split} {len(files)} clips / {release.num_rows[split]} rows" for split, files in release.files.items())
    print(f"wrote {release.root}: {sizes}")
    return 0


# --- demo ------------------------------------------------------------------------------


def run_demo(out: str | os.PathLike = DEMO_DIR, num_files: int = 10, seed: int = 0, stream=None) -> dict[str, dict[str, int]]:
    """Synthesise a release, export every config in the Hub layout, load each back and print a row.

    The export folder (``OUT/hub``) is what ``clotho-aqa push`` uploads; loading it back with
    ``datasets.load_dataset(folder, config)`` after the build is the check that it is complete.
    Returns config -> split -> rows of the reloaded datasets.

    Example:
        >>> run_demo("/tmp/clotho_demo", num_files=5)["all"]["train"]  # doctest: +SKIP
        54
    """
    import datasets

    from builder_utils.hub import export_builder, load_exported
    from clotho_aqa import CONFIG_NAMES, ClothoAQA, decode_audio, without_decoding
    from clotho_aqa.synth import write_synthetic_release

    stream = stream or sys.stdout
    datasets.disable_progress_bars()
    out = Path(out)
    release = write_synthetic_release(out / "release", num_files=num_files, seed=seed, overwrite=True)
    print(f"synthetic release: {release.root} ({num_files} clips, seed {seed})", file=stream)
    hub = out / "hub"
    sizes: dict[str, dict[str, int]] = {}
    # A fresh cache each run: the builder's cache is keyed by the data_dir path, not its content.
    with tempfile.TemporaryDirectory(prefix="clotho_demo_cache_") as cache:
        export_builder(ClothoAQA, hub, card_template="clotho_aqa", data_dir=release.root, cache_dir=cache, progress=False)
        print(f"exported every config in the Hub layout: {hub}", file=stream)
        for name in CONFIG_NAMES:
            loaded = load_exported(hub, name, cache_dir=cache)
            sizes[name] = {split: len(ds) for split, ds in loaded.items()}
            first = next(iter(loaded.values()))  # a split without rows is left out by the builder
            row = without_decoding(first)[0]
            array, rate = decode_audio(row)
            shown = {k: v for k, v in row.items() if k not in ("audio", "keywords", "sound_link", "manufacturer")}
            if "label" in shown:
                shown["label"] = f"{row['label']} ({first.features['label'].int2str(row['label'])})"
            print(f"\n[{name}] load_dataset({str(hub)!r}, {name!r}) rows {sizes[name]}", file=stream)
            print(f"  audio: {row['audio']['path']!r} -> {array.shape} @ {rate} Hz", file=stream)
            print(f"  {json.dumps(shown, ensure_ascii=False)}", file=stream)
        from clotho_aqa.evaluate import evaluate_demo

        evaluate_demo(hub, out / "evaluation", cache_dir=cache, stream=stream)
    return sizes


def _add_demo(subparsers) -> None:
    p = subparsers.add_parser("demo", help="build every config from a synthetic release, offline")
    p.add_argument(
        "--out", default=str(DEMO_DIR),
        help="demo folder: release/ (synthetic) and hub/ (the export that `clotho-aqa push` uploads)",
    )
    p.add_argument("--num_files", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=_run_demo)


def _run_demo(args) -> int:
    run_demo(args.out, args.num_files, args.seed)
    return 0


# --- splits ----------------------------------------------------------------------------


def compute_split_file(
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    report: str | os.PathLike | None = None,
    candidates: int = 2000,
    keep: int = 50,
    seed: int = 0,
    progress: bool = True,
) -> dict:
    """Recompute the 60/20/20 split of a release's clips and write ``file_name,split`` rows.

    Only the QA CSVs are read (no audio needed). The CSV and the optional JSON report (the
    search's report plus clip counts) are written atomically. Returns the report.

    Example:
        >>> compute_split_file("release", "splits.csv", "report.json", candidates=200, keep=10)["files"]  # doctest: +SKIP
        {'train': 1194, 'validation': 398, 'test': 399}
    """
    from clotho_aqa.clotho_aqa import recompute_splits
    from clotho_aqa.release import find_release_files, read_questions

    questions = read_questions(find_release_files(data_dir)["csv"])
    assignment, result = recompute_splits(questions, seed=seed, candidates=candidates, keep=keep, progress=progress)
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
    write_atomic(out, buffer.getvalue(), newline="")
    if report is not None:
        write_atomic(report, json.dumps(summary, indent=2, ensure_ascii=False) + "\n", newline="")
    return summary


def _add_splits(subparsers) -> None:
    p = subparsers.add_parser("splits", help="recompute the stratified 60/20/20 split of a release")
    p.add_argument("--data_dir", required=True, help="folder with the official QA CSVs")
    p.add_argument("--out", required=True, help="CSV to write: file_name,split")
    p.add_argument("--report", help="JSON report to write")
    p.add_argument("--candidates", type=int, default=2000, help="60/40 candidate splits (paper: 2000)")
    p.add_argument("--keep", type=int, default=50, help="best candidates split again 50/50 (paper: 50)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_run_splits)


def _run_splits(args) -> int:
    summary = compute_split_file(
        args.data_dir, args.out, args.report, args.candidates, args.keep, args.seed, progress=not args.quiet
    )
    search = summary["search"]
    print(f"wrote {args.out}: {summary['files']}, allocation error {search['allocation_error']}")
    violations = search["constraint"]["violations"]
    if violations:
        # The split is still written (the search's best), but never without saying what it breaks.
        shown = ", ".join(repr(v) for v in violations[:10]) + (", ..." if len(violations) > 10 else "")
        print(
            f"clotho-aqa splits: warning: {len(violations)} answer(s) with at least 2 clips are not in "
            f"train and in validation or test: {shown}",
            file=sys.stderr,
        )
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
    from clotho_aqa import evaluate

    p = subparsers.add_parser("evaluate", help="score predictions (and baselines) under the paper's labellings")
    evaluate.add_arguments(p)
    p.set_defaults(run=lambda args: evaluate_command(args))


def evaluate_command(args) -> int:
    """``clotho-aqa evaluate``, with the evaluation's own error handling (exit status 2, 130/143).

    Example:
        >>> main(["evaluate", "--data", "/nonexistent/hub", "--out", "/tmp/eval"])
        2
    """
    from builder_utils.evaluation.cli import run_command
    from clotho_aqa import evaluate

    return run_command("clotho-aqa evaluate", evaluate.run, args)


SUBCOMMANDS: list[Callable] = [_add_synth, _add_demo, _add_splits, _add_export, _add_push, _add_evaluate]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``clotho-aqa`` with every subcommand of ``SUBCOMMANDS``.

    Example:
        >>> build_parser().parse_args(["synth", "--out", "rel"]).num_files
        10
    """
    parser = argparse.ArgumentParser(prog="clotho-aqa", description="Clotho-AQA: synthetic releases, demo, splits.")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``clotho-aqa``; errors about the input end the command with their message, exit code 2.

    Example:
        >>> main(["synth", "--out", "/tmp/rel", "--num_files", "5", "--overwrite"])  # doctest: +SKIP
        0
    """
    from clotho_aqa.release import ReleaseError

    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ReleaseError, FileNotFoundError, FileExistsError, ValueError) as err:
        print(f"clotho-aqa {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
