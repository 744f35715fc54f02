"""tests/verl_train/ runs verl 0.9.1's own dataset and reward managers on our exports; it needs the venv
of ``make test-verl`` (verl, torch's CPU build, transformers < 5.11).

Without verl (``make test``, the shared venv) the helper module is not collected for doctests and
each test module skips itself with ``pytest.importorskip("verl")``. (The folder is not named
``verl``: pytest puts ``tests/`` on ``sys.path``, where a ``verl`` folder would pass for the package.) The tiny tokenizer and
processors come from ``tests/train/tiny_models.py`` (built offline from configs, no downloads).
"""

import dataclasses
import importlib.util
import sys
from pathlib import Path

import pytest

collect_ignore = [] if importlib.util.find_spec("verl") else ["verl_helpers.py"]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))


@dataclasses.dataclass(frozen=True)
class Exports:
    """The ``prompts`` exports of both datasets, inline and shared, made with the real commands."""

    root: Path
    folders: dict
    sources: dict

    def files(self, dataset: str, media: str = "inline", config: str = "prompts", split: str = "train") -> list[str]:
        return [str(p) for p in sorted((self.folders[dataset, media] / config).glob(f"{split}-*.parquet"))]

    def card(self, dataset: str, media: str = "inline") -> str:
        return (self.folders[dataset, media] / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def exports(tmp_path_factory) -> Exports:
    import datasets

    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math.cli import main as clevr_math_cli
    from clotho_aqa.cli import main as clotho_aqa_cli
    from clotho_aqa.synth import write_synthetic_release

    root = tmp_path_factory.mktemp("verl_exports")
    # verl's RLHFDataset loads each Parquet file with datasets.load_dataset: keep its cache here
    datasets.config.HF_DATASETS_CACHE = str(root / "hf_cache")
    sources = {
        "clevr": (clevr_math_cli, write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"),
                                                     progress=False)),
        "clotho": (clotho_aqa_cli, write_synthetic_release(root / "release", num_files=5, seed=0).root),
    }
    folders = {}
    for name, (cli, source) in sources.items():
        for media in ("inline", "shared"):
            folders[name, media] = root / f"{name}_{media}"
            argv = ["export", "--data_dir", str(source), "--out", str(folders[name, media]), "--media", media,
                    "--config", "prompts", "--cache_dir", str(root / "cache"), "--quiet"]
            assert cli(argv) == 0
    return Exports(root, folders, {name: source for name, (_, source) in sources.items()})
