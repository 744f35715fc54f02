"""The ``clevr-math`` command: ``synth`` (a synthetic CLEVR world), ``demo``, ``render`` (draw a scene
file), ``counting-sets`` (R1-V's CoGenT counting sets), ``export``, ``push``, ``evaluate``.

Declared in :data:`ENTRY`; only ``synth``, ``render`` and the export's ``--stream_questions`` rows are
CLEVR-Math's own.

Example:
    $ clevr-math synth --out /tmp/clevr --num_scenes 50 --splits train,val,test
    $ clevr-math render --scenes CLEVR_v1.0/scenes/CLEVR_val_scenes.json --out redrawn --masks --depth
    $ clevr-math demo --out demo_output
"""

from __future__ import annotations

import sys

from builder_utils.command import Subcommand, add_forwarding_subcommand
from builder_utils.entry import DatasetEntry

SYNTH_HELP = "write a synthetic CLEVR_v1.0-shaped folder (scenes and images)"
RENDER_HELP = "draw any CLEVR-format scene file (images, optional masks and depth), camera fitted to pixel_coords"


def _synth_main(argv: list[str], prog: str) -> int:
    # Imported on use: `clevr-math --help` stays fast and never needs the renderer.
    from builder_utils.clevr.synth import main as synth_main
    from clevr_math.clevr_folder import REQUIRED_SPLITS

    return synth_main(argv, prog=prog, required_splits=REQUIRED_SPLITS, reader="the CLEVR-Math builder") or 0


def _render_main(argv: list[str], prog: str) -> int:
    from builder_utils.clevr.synth.render_file import main as render_main

    return render_main(argv, prog=prog) or 0


COUNTING_HELP = "write R1-V's CLEVR-CoGenT counting sets (train, ValA, ValB; --ood sets) in the r1v and easyr1 layouts"


def _counting_main(argv: list[str], prog: str) -> int:
    from clevr_math.counting_sets import main as counting_main

    return counting_main(argv, prog=prog)


ENTRY = DatasetEntry(
    prog="clevr-math",
    package="clevr_math",
    description="CLEVR-Math: build the dataset from CLEVR scenes, or try it on synthetic data.",
    builder="clevr_math.clevr_math:ClevrMath",
    config="clevr_math.config:ClevrMathConfig",
    card_template="clevr_math",
    synth=Subcommand("synth", SYNTH_HELP, lambda subparsers: add_forwarding_subcommand(
        subparsers, "synth", SYNTH_HELP, _synth_main)),
    extra=(Subcommand("render", RENDER_HELP, lambda subparsers: add_forwarding_subcommand(
        subparsers, "render", RENDER_HELP, _render_main)),
           Subcommand("counting-sets", COUNTING_HELP, lambda subparsers: add_forwarding_subcommand(
               subparsers, "counting-sets", COUNTING_HELP, _counting_main))),
    demo_help="build the general and multihop configs from a tiny synthetic CLEVR world, offline",
    demo_description="Write a synthetic CLEVR world, build and export the general and multihop configs in "
    "the Hub layout, load them back and print a few rows; offline.",
    evaluate_help="score predictions and model-free baselines per category, template and operations",
    evaluate_description="Score a model's answers (and the majority, prior and program-oracle baselines) on a "
    "split: accuracy overall and per category, template and number of operations with bootstrap 95% "
    "intervals; writes report.json, report.md and PNG charts.",
    lmms_tag="ccqa_clevr_math",
    export_data_dir_help="the CLEVR_v1.0 folder the builder reads (scenes/, images/; `clevr-math synth` makes one); "
    "required, except with --stream_questions (then the folder the stream reads; without it, synthetic worlds)",
    export_source="clevr_math.streaming:StreamExport",
)
SUBCOMMANDS = ENTRY.subcommands
build_parser = ENTRY.build_parser
main = ENTRY.main

if __name__ == "__main__":
    sys.exit(main())
