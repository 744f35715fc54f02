"""A new derived export layout is one object plus one registration: a toy one, exported for real."""

from __future__ import annotations

from collections import Counter

import datasets
import pyarrow.parquet as pq
from huggingface_hub import DatasetCard

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub import export_builder
from builder_utils.hub.derived import DERIVED_LAYOUTS
from builder_utils.hub.layout import DerivedLayout
from clevr_math import ClevrMath


class QuestionCounts(DerivedLayout):
    """Toy layout: one row per file of the configuration it follows, with its number of questions."""

    name, trainer = "counts", "none"

    def rows(self, source, found, style, audio_rate):
        key = found.layout.key
        made = {}
        for split, rows in source.items():
            counts = Counter(rows[key])
            made[split] = datasets.Dataset.from_dict({key: sorted(counts), "questions": [counts[k] for k in sorted(counts)]},
                                                     split=split)
        return made

    def description(self, layout, source):
        return f"Follows `{source}`: questions per file."

    def snippet(self, layout, config, media, style):
        return f'load_dataset("REPO_ID", "{config}")'

    def notes(self, layout, config, media, audio_rate):
        return ["`questions` counts the rows of each file."]


def test_a_toy_layout_is_exported_by_the_real_export(tmp_path):
    clevr = write_clevr_folder(tmp_path / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)
    out = tmp_path / "out"
    layouts = (*DERIVED_LAYOUTS, QuestionCounts())  # the one registration
    result = export_builder(ClevrMath, out, card_template="clevr_math", data_dir=clevr,
                            configs=["general", "counts", "counts_multihop"], progress=False, layouts=layouts)
    assert set(result.configs) == {"general", "counts", "counts_multihop"}
    general = pq.read_table(out / result.configs["general"]["train"].shards[0]).column("image_filename").to_pylist()
    counts = pq.read_table(out / result.configs["counts"]["train"].shards[0]).to_pydict()
    assert dict(zip(counts["image_filename"], counts["questions"])) == Counter(general)
    assert [c.name for c in result.plan.configs] == ["general", "images", "counts", "counts_multihop"]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "Follows `general`: questions per file." in card and "Follows `multihop`: questions per file." in card
    assert "### `counts` (none; follows `general`)" in card and "`questions` counts the rows of each file." in card
    assert {c["config_name"] for c in DatasetCard(card).data.configs} >= {"general", "counts", "counts_multihop"}


def test_without_the_registration_the_toy_layout_is_unknown(tmp_path):
    import pytest

    from builder_utils.hub.export import ExportError

    with pytest.raises(ExportError, match="unknown ClevrMath config"):
        export_builder(ClevrMath, tmp_path / "out", card_template="clevr_math", configs=["counts"], progress=False)
