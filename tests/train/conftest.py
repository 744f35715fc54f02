"""tests/train/ runs real TRL trainers; it needs the venv of ``make test-train`` (torch, trl, transformers).

Without TRL (``make test``, the shared venv) the helper modules, which import transformers, are
not collected for doctests, and each test module skips itself with ``pytest.importorskip("trl")``.
"""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("trl") else ["tiny_models.py", "train_helpers.py"]


import dataclasses
from pathlib import Path

import pytest


@dataclasses.dataclass(frozen=True)
class Export:
    """A ``--media shared`` export the tests made from a synthetic world, and a cache to load it with."""

    folder: Path
    cache: Path

    def load(self, config: str, split: str = "train"):
        from builder_utils.hub import load_exported

        return load_exported(self.folder, config, cache_dir=self.cache)[split]


def _export(root: Path, builder_cls, card_template: str, data_dir: Path, configs: list[str]) -> Export:
    from builder_utils.hub import export_builder

    out = root / "out"
    export_builder(builder_cls, out, card_template=card_template, data_dir=data_dir, configs=configs,
                   media="shared", cache_dir=root / "build_cache", progress=False)
    return Export(out, root / "load_cache")


@pytest.fixture(scope="session")
def clevr_export(tmp_path_factory) -> Export:
    """CLEVR-Math ``conversations`` and ``prompts`` (think_answer style) over 4 synthetic scenes per split."""
    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math import ClevrMath

    root = tmp_path_factory.mktemp("clevr")
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)
    return _export(root, ClevrMath, "clevr_math", clevr, ["conversations", "prompts"])


@pytest.fixture(scope="session")
def clotho_export(tmp_path_factory) -> Export:
    """Clotho-AQA ``conversations`` and ``prompts`` over a synthetic release of 10 clips."""
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    root = tmp_path_factory.mktemp("clotho")
    release = write_synthetic_release(root / "release", num_files=10, seed=0).root
    return _export(root, ClothoAQA, "clotho_aqa", release, ["conversations", "prompts"])
