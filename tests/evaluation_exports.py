"""Small real exports of both datasets for the evaluation tests: a synthetic CLEVR world (4
scenes per split) and a synthetic Clotho-AQA release (8 clips), built and exported in the Hub
layout with the real builders."""

from __future__ import annotations

from pathlib import Path

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub import export_builder, load_exported
from clevr_math import ClevrMath
from clotho_aqa import ClothoAQA
from clotho_aqa.synth import write_synthetic_release


def make_exports(root: Path) -> dict:
    """Write the data under ``root``; returns the paths (``hub_clevr``, ``hub_clotho``, ``cache`` ...)."""
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)
    release = write_synthetic_release(root / "release", num_files=8, seed=0).root
    cache = root / "cache"
    export_builder(ClevrMath, root / "hub_clevr", card_template="clevr_math", data_dir=clevr,
                   configs=["general", "multihop"], cache_dir=cache, progress=False)
    export_builder(ClothoAQA, root / "hub_clotho", card_template="clotho_aqa", data_dir=release,
                   configs=["questions", "all", "yes_no_unfiltered"], cache_dir=cache, progress=False)
    return {"root": root, "clevr": clevr, "release": release, "cache": cache,
            "hub_clevr": root / "hub_clevr", "hub_clotho": root / "hub_clotho"}


def media_free_rows(exports: dict, hub: str, config: str, split: str = "test") -> list[dict]:
    """The rows of ``split`` of an export (``hub``: ``hub_clevr`` or ``hub_clotho``) without their
    image or audio column: the scorers never read it."""
    rows = load_exported(exports[hub], config, cache_dir=exports["cache"])[split]
    return list(rows.remove_columns([c for c in ("image", "audio") if c in rows.column_names]))
