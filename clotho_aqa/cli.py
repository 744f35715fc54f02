"""The ``clotho-aqa`` command: ``synth``, ``demo``, ``splits``, ``export``, ``push`` and ``evaluate``.

Declared in :data:`ENTRY`; only ``synth`` and ``splits`` are Clotho-AQA's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import csv
import io
import json
import logging
import os
import sys
from pathlib import Path

from builder_utils.command import Subcommand
from builder_utils.entry import DatasetEntry
from builder_utils.options import FilePath, add_option_flags, option, path_values
from builder_utils.ownership import OVERWRITE_HELP

logger = logging.getLogger(__name__)
SPLITS_COMMAND = "clotho-aqa splits"

# --- synth -----------------------------------------------------------------------------


@dataclasses.dataclass
class SynthPaths:
    """The path of ``clotho-aqa synth``, declared with its role."""

    out: str = option(None, FilePath(), "folder to create (audio_files/ and the official CSV names)",
                      group="inputs and outputs", role="output_dir", flag={"required": True})


def _add_synth(subparsers) -> None:
    p = subparsers.add_parser(
        "synth",
        description="Write a small synthetic Clotho-AQA release (our own questions, generated WAVs) in the "
        "official layout: audio_files/, the three QA CSVs and the metadata CSV.",
    )
    add_option_flags(p, {"inputs and outputs": p}, cls=SynthPaths)
    p.add_argument("--num_files", type=int, default=10, help="number of clips (at least 3; split about 60/20/20)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default: 0)")
    p.add_argument("--duration", type=float, default=0.2, help="seconds of audio per clip")
    p.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    p.add_argument("--quiet", action="store_true", help="no message but warnings")
    p.set_defaults(run=_run_synth)


def _run_synth(args) -> int:
    from clotho_aqa.synth import write_synthetic_release

    release = write_synthetic_release(
        args.out, num_files=args.num_files, seed=args.seed, duration=args.duration, overwrite=args.overwrite
    )
    sizes = ", ".join(f"{split} {len(files)} clips / {release.num_rows[split]} rows" for split, files in release.files.items())
    logger.info("wrote %s: %s", release.root, sizes)
    return 0


# --- splits ----------------------------------------------------------------------------


@dataclasses.dataclass
class SplitsPaths:
    """The paths of ``clotho-aqa splits``, each declared once with its role."""

    data_dir: str = option(None, FilePath(), "folder with the official QA CSVs", group="inputs and outputs",
                           role="input_dir", flag={"required": True})
    out: str = option(None, FilePath(), "CSV file to write: file_name,split", group="inputs and outputs",
                      role="output", flag={"required": True})
    report: str | None = option(None, FilePath(), "JSON report file to write (and its Markdown beside it, .md)",
                                group="inputs and outputs", role="output")

SEARCH_OPTIONS = ("seed", "candidates", "keep", "refine_rounds")


def compute_split_file(
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    report: str | os.PathLike | None = None,
    candidates: int | None = None,
    keep: int | None = None,
    seed: int | None = None,
    progress: bool = True,
    refine_rounds: int | None = None,
    overwrite: bool = False,
) -> dict:
    """Recompute the 60/20/20 split of a release's clips and write ``file_name,split`` rows.

    Only the QA CSVs are read; outputs go through :mod:`builder_utils.ownership`. Returns the report.

    Example:
        >>> import os, tempfile; from clotho_aqa.synth import write_synthetic_release
        >>> root = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0).root
        >>> report = compute_split_file(root, root.parent / "splits.csv", None, candidates=20, keep=5)
        >>> report["files"]            # the official CSVs, default options: 1193 / 399 / 399
        {'train': 3, 'validation': 1, 'test': 1}
    """
    from builder_utils.splits.search import LABEL_ERROR_MEASURE
    from clotho_aqa.options import ClothoAQAOptions
    from clotho_aqa.release import find_release_files

    from builder_utils.ownership import OutputFolder

    candidates = ClothoAQAOptions.candidates if candidates is None else candidates
    keep = ClothoAQAOptions.keep if keep is None else keep
    refine_rounds = ClothoAQAOptions.refine_rounds if refine_rounds is None else refine_rounds
    seed = ClothoAQAOptions.seed if seed is None else seed
    from builder_utils.options import check_options

    check_options(ClothoAQAOptions(seed=seed, candidates=candidates, keep=keep, refine_rounds=refine_rounds))

    markdown = None if report is None else os.path.splitext(os.fspath(report))[0] + ".md"
    targets = {flag: path for flag, path in (("--out", out), ("--report", report), ("the report's Markdown", markdown))
               if path is not None}
    if len({os.path.abspath(path) for path in targets.values()}) < len(targets):
        raise ValueError(f"{out}: --out and --report (or its Markdown, .md) name the same file; give two files")
    for path in (out, report):
        if path is not None and os.path.isdir(path):
            raise IsADirectoryError(f"{path} is a folder; give the path of the file to write")
    declared = path_values(SplitsPaths(data_dir, out, report))
    with contextlib.ExitStack() as stack:
        folders = {}  # one open output folder per parent: the lock, the refusals before the search
        for flag, path in targets.items():
            parent = os.path.abspath(os.path.dirname(os.fspath(path)) or ".")
            if parent in folders:
                folders[parent].check(Path(path).name)
            else:
                folders[parent] = stack.enter_context(OutputFolder.open(
                    path, command=SPLITS_COMMAND, flag=flag, declared=declared, overwrite=overwrite, file=True))
        return _write_splits(folders, data_dir, out, report, markdown, seed, candidates, keep, progress, refine_rounds)


def _write_splits(folders, data_dir, out, report, markdown, seed, candidates, keep, progress, refine_rounds) -> dict:
    from builder_utils.splits.search import LABEL_ERROR_MEASURE
    from clotho_aqa.release import find_release_files

    from clotho_aqa.recompute import official_label_error, recompute_splits
    from clotho_aqa.release import read_questions

    questions = read_questions(find_release_files(data_dir)["csv"])
    assignment, result = recompute_splits(questions, seed=seed, candidates=candidates, keep=keep, progress=progress,
                                          refine_rounds=refine_rounds)
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
        "refine_rounds": refine_rounds,
        "files": counts,
        "measure": LABEL_ERROR_MEASURE,
        "label_error": round(result.label_error, 3),
        "label_error_floor": round(result.label_error_floor, 3),
        "tables_split_label_error": round(official_label_error(questions), 3),
        "search": result.report(),
    }
    texts = {out: buffer.getvalue()}
    if report is not None:
        texts[report] = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
        texts[markdown] = split_report_markdown(summary)
    for path, text in texts.items():
        folder = folders[os.path.abspath(os.path.dirname(os.fspath(path)) or ".")]
        (folder.stage / Path(path).name).write_text(text, encoding="utf-8")
        folder.add([Path(path).name])
    return summary


def split_report_markdown(summary: dict) -> str:
    """The ``splits`` report as Markdown: the measure in one sentence, ours next to the tables' own split.

    Example:
        >>> summary = {"data_dir": "rel", "seed": 0, "files": {"train": 3, "validation": 1, "test": 1},
        ...            "measure": "m", "label_error": 1.0, "label_error_floor": 0.5, "tables_split_label_error": 2.0,
        ...            "search": {"constraint": {"satisfied": True}}}
        >>> print(split_report_markdown(summary).splitlines()[6])
        | label error (lower is better) | 1.0 | 2.0 |
    """
    search = summary["search"]
    files = summary["files"]
    lines = [
        f"# Recomputed 60/20/20 split of {summary['data_dir']} (seed {summary['seed']})",
        "",
        f"Measure: {summary['measure']}.",
        "",
        "| | recomputed | the tables' own split |",
        "|---|---|---|",
        f"| label error (lower is better) | {summary['label_error']} | {summary['tables_split_label_error']} |",
        f"| floor (no split goes lower) | {summary['label_error_floor']} | {summary['label_error_floor']} |",
        f"| clips train / validation / test | {files['train']} / {files['validation']} / {files['test']} | |",
        f"| every answer in train and in validation or test | {'yes' if search['constraint']['satisfied'] else 'no'} | |",
        "",
        "With the official CSVs, the tables' own split is the official split.",
    ]
    return "\n".join(lines) + "\n"


def _add_splits(subparsers) -> None:
    p = subparsers.add_parser(
        "splits",
        description="Recompute the paper's stratified 60/20/20 split of a release's clips (only the QA CSVs "
        "are read) and write file_name,split rows; the builder's split_strategy='recomputed' uses the same rule.",
    )
    add_option_flags(p, {"inputs and outputs": p}, cls=SplitsPaths)
    from builder_utils.options import add_builder_flags
    from clotho_aqa.options import ClothoAQAOptions

    # The search's options are the builder's (split_strategy="recomputed"), declared once there
    # (without datasets: this command builds no dataset).
    add_builder_flags(p, ClothoAQAOptions, "split search options", only=SEARCH_OPTIONS)
    p.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    p.add_argument("--quiet", action="store_true", help="no progress bar, no message but warnings")
    p.set_defaults(run=_run_splits)


def _run_splits(args) -> int:
    from builder_utils.options import builder_kwargs_from_args
    from clotho_aqa.options import ClothoAQAOptions

    summary = compute_split_file(args.data_dir, args.out, args.report, progress=args.progress,
                                 overwrite=args.overwrite, **builder_kwargs_from_args(args, ClothoAQAOptions))
    search = summary["search"]
    files = summary["files"]
    also = f" and {args.report} (+ .md)" if args.report else ""
    logger.info(
        "wrote %s%s: %d / %d / %d clips; label error %.1f (floor %.1f; the tables' own split %.1f), "
        "the sum over answers of |clips in a split - 60/20/20 of its clips| / its clips",
        args.out, also, files["train"], files["validation"], files["test"], summary["label_error"],
        summary["label_error_floor"], summary["tables_split_label_error"],
    )
    violations = search["constraint"]["violations"]
    if violations:
        # The split is still written (the search's best), but never without saying what it breaks.
        shown = ", ".join(repr(v) for v in violations[:10]) + (", ..." if len(violations) > 10 else "")
        logger.warning("%d answer(s) with at least 2 clips are not in train and in validation or test: %s",
                       len(violations), shown)
    return 0


# --- entry point: the declaration ------------------------------------------------------

ENTRY = DatasetEntry(
    prog="clotho-aqa",
    package="clotho_aqa",
    description="Clotho-AQA: synthetic releases, demo, splits, Hub export and push.",
    builder="clotho_aqa:ClothoAQA",
    config="clotho_aqa.config:ClothoAQAConfig",
    card_template="clotho_aqa",
    synth=Subcommand("synth", "write a small synthetic release in the official layout", _add_synth),
    demo_help="build every config from a synthetic release, export and reload it, offline",
    demo_description="Write a small synthetic release, export every config in the Hub layout, load each "
    "back and print a row with its decoded audio; offline, no torch.",
    evaluate_help="score predictions and model-free baselines under the paper's labellings",
    evaluate_description="Score a model's answers (and the majority and question-only baselines) on a split: "
    "binary accuracy on the unfiltered, unanimous and majority labellings, single-word top-1 (top-5 for "
    "ranked predictions); writes report.json, report.md and PNG charts.",
    lmms_tag="ccqa_clotho_aqa",
    export_data_dir_help="the Clotho-AQA release folder the builder reads (the official CSVs and audio_files/ or "
    "audio_files.zip; `clotho-aqa synth` makes one); required",
    extra=(Subcommand("splits", "recompute the stratified 60/20/20 split of a release", _add_splits),),
)
SUBCOMMANDS = ENTRY.subcommands
build_parser = ENTRY.build_parser
main = ENTRY.main

if __name__ == "__main__":
    sys.exit(main())
