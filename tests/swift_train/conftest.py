"""tests/swift_train/ runs ms-swift's own dataset loading and reward call on our ``swift`` exports; it
needs the venv of ``make test-swift`` (ms-swift 4.6.0, torch's CPU build, librosa for its audio loader).

Without ms-swift (``make test``, the shared venv) each test module skips itself with
``pytest.importorskip("swift")``. (The folder is not named ``swift``: pytest puts ``tests/`` on
``sys.path``, where a ``swift`` folder would pass for the package.)
"""

import dataclasses
from pathlib import Path

import pytest


@dataclasses.dataclass(frozen=True)
class Exports:
    """The ms-swift exports of both datasets (inline), made with the real commands."""

    folders: dict
    sources: dict

    def file(self, dataset: str, config: str, split: str = "train") -> str:
        files = sorted((self.folders[dataset] / config).glob(f"{split}-*.parquet"))
        assert len(files) == 1, files
        return str(files[0])


@pytest.fixture(scope="session")
def exports(tmp_path_factory) -> Exports:
    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math.cli import main as clevr_math_cli
    from clotho_aqa.cli import main as clotho_aqa_cli
    from clotho_aqa.synth import write_synthetic_release

    root = tmp_path_factory.mktemp("swift_exports")
    sources = {"clevr": write_clevr_folder(root / "CLEVR_v1.0", 3, seed=0, splits=("train", "val", "test"),
                                           progress=False),
               "clotho": write_synthetic_release(root / "release", num_files=5, seed=0).root}
    folders = {"clevr": root / "hub_clevr", "clotho": root / "hub_clotho"}
    common = ["--cache_dir", str(root / "cache"), "--quiet"]
    assert clevr_math_cli(["export", "--data_dir", str(sources["clevr"]), "--out", str(folders["clevr"]),
                           "--config", "general,swift", *common]) == 0
    assert clotho_aqa_cli(["export", "--data_dir", str(sources["clotho"]), "--out", str(folders["clotho"]),
                           "--config", "questions,swift,swift_choices", *common]) == 0
    return Exports(folders, {k: Path(v) for k, v in sources.items()})
