"""``clotho-aqa demo``: every configuration built from a synthetic release, exported and reloaded, offline."""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from pathlib import Path

from builder_utils.cli_support import progress_bars
from builder_utils.options import FilePath, option

logger = logging.getLogger(__name__)

DEMO_DIR = Path("demo_output") / "clotho_aqa"
#: The folders the demo writes inside its output folder.
DEMO_FOLDERS = ("release", "hub", "evaluation")  # evaluation: the scores the demo ends with


@progress_bars(False)  # the demo prints its own summary; a caller's setting is restored after it
def run_demo(out: str | os.PathLike = DEMO_DIR, num_files: int = 10, seed: int = 0, stream=None,
             builder_kwargs: dict | None = None) -> dict[str, dict[str, int]]:
    """Synthesise a release, export every config in the Hub layout, load each back and print a row.

    Returns config -> split -> rows; ``OwnershipError`` for a folder an earlier demo run did not create.

    Example::

        run_demo("/tmp/clotho_demo", num_files=5)["all"]["train"]   # -> 54
    """
    from clotho_aqa.cli import ENTRY
    from clotho_aqa.config import ClothoAQAConfig

    stream = stream or sys.stdout
    ClothoAQAConfig(name="all", **(builder_kwargs or {}))  # the builder options' checks, before any work
    with ENTRY.demo_folder(Path(out).absolute(), DEMO_FOLDERS, builder_kwargs) as (folder, claimed):  # claimed before any work
        release_dir, hub, evaluation = claimed
        # the builds' cache lives in the demo folder's staging and goes with it (as the CLEVR-Math demo's)
        return _run_demo(release_dir, hub, evaluation, os.fspath(folder.scratch("cache")), num_files, seed, stream,
                         builder_kwargs)


def _run_demo(release_dir, hub, evaluation, cache, num_files, seed, stream, builder_kwargs) -> dict[str, dict[str, int]]:
    from builder_utils.hub import load_exported
    from clotho_aqa import CONFIG_NAMES, decode_audio, without_decoding
    from clotho_aqa.cli import ENTRY
    from clotho_aqa.synth import write_synthetic_release

    release = write_synthetic_release(release_dir, num_files=num_files, seed=seed)
    logger.info("synthetic release: %s (%d clips, seed %d)", release.root, num_files, seed)
    sizes: dict[str, dict[str, int]] = {}
    ENTRY.export_demo(hub, release.root, cache, builder_kwargs)
    logger.info("exported every config in the Hub layout: %s", hub)
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
    from clotho_aqa.evaluation import evaluate_demo

    evaluate_demo(hub, evaluation, cache_dir=cache, stream=stream)
    return sizes


@dataclasses.dataclass
class DemoPaths:
    """The path of the demo, declared with its role (its sub-folders are each written by their own command)."""

    out: str = option(str(DEMO_DIR), FilePath(), "demo folder: release/ (synthetic), hub/ (the export that "
                      "`clotho-aqa push` uploads) and evaluation/ (the baselines' report); such folders that an earlier demo run did not create are never "
                      "touched", group="inputs and outputs", role="output_dir")


def add_demo_options(parser: argparse.ArgumentParser) -> None:
    """The flags of ``clotho-aqa demo`` that are its own (:class:`builder_utils.entry.DatasetEntry` adds the rest)."""
    parser.add_argument("--num_files", type=int, default=10, help="synthetic clips (at least 3; default: 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic release (default: 0)")


def run_from_args(args: argparse.Namespace, builder_kwargs: dict, stream) -> None:
    run_demo(args.out, args.num_files, args.seed, stream=stream, builder_kwargs=builder_kwargs)
