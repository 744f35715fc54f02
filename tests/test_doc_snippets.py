"""Every ```python block of README.md and the package READMEs runs as written, after `make demo`.

The blocks of one file run in order in one namespace (later blocks use earlier names), in a folder
that holds what the READMEs say they need: `make demo`'s `demo_output/` (made smaller), the
`hub/clevr_math` export the Hub README's comment names, and a stand-in `CLEVR_blender` world (the
README's Blender snippet says to render one first; the Pillow renderer makes the same layout).
A block that needs TRL runs here up to its `from trl import` line; tests/train/test_readme_snippets.py
runs it whole. The exported cards' blocks: tests/test_cards.py and tests/train/test_trl_card_snippets.py.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import datasets
import pytest

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub import export_builder
from builder_utils.hub.trainer_card import snippet_before_trl

ROOT = Path(__file__).resolve().parent.parent
DOCS = ("README.md", "clevr_math/README.md", "clotho_aqa/README.md", "builder_utils/clevr/README.md",
        "builder_utils/evaluation/README.md", "builder_utils/hub/README.md", "builder_utils/splits/README.md")
CODE_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# Blocks that are not run here, by a line they hold, and why (checked: each still appears).
ELSEWHERE = {
    '_config("single_word_unanimous"': "an entry for clotho_aqa/config.py, not a script: "
                                      "tests/test_clotho_aqa_builder.py adds this very entry and builds it",
    "SLURMCluster(": "needs dask_jobqueue and a SLURM cluster: not run by any test",
}


def python_blocks(doc: str) -> list[str]:
    """The ```python blocks of ``doc`` (a path relative to the checkout)."""
    return CODE_BLOCK.findall((ROOT / doc).read_text(encoding="utf-8"))


def needs_trl(block: str) -> bool:
    return any(line.startswith("from trl import") for line in block.splitlines())


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder laid out as the READMEs assume after `make demo` (smaller)."""
    from clevr_math import ClevrMath
    from clevr_math.demo import run_demo as clevr_math_demo
    from clotho_aqa.demo import run_demo as clotho_aqa_demo

    work = tmp_path_factory.mktemp("readme")
    demo = work / "demo_output"
    with contextlib.redirect_stdout(io.StringIO()):
        clevr_math_demo(str(demo / "clevr_math"), num_scenes=8, rows=1)
        clotho_aqa_demo(demo / "clotho_aqa", stream=io.StringIO())
    export_builder(ClevrMath, work / "hub" / "clevr_math", card_template="clevr_math",
                   data_dir=demo / "clevr_math" / "CLEVR_v1.0", configs=["general", "multihop", "prompts"],
                   media="shared", cache_dir=work / "cache", progress=False)
    write_clevr_folder(work / "CLEVR_blender", {"train": 4, "val": 2}, seed=0, progress=False)
    return work


def test_the_skipped_blocks_are_still_there():
    blocks = [b for doc in DOCS for b in python_blocks(doc)]
    for marker, why in ELSEWHERE.items():
        assert sum(marker in b for b in blocks) == 1, (marker, why)
    from test_clotho_aqa_builder import NEW_ENTRY  # the entry that test adds and builds: this block, word for word

    assert any(b == NEW_ENTRY for b in blocks)


@pytest.mark.parametrize("doc", DOCS)
def test_readme_python_blocks_run_as_written(doc, workdir, monkeypatch, tmp_path):
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    namespace: dict = {"__name__": "__readme__"}
    ran = 0
    for number, block in enumerate(python_blocks(doc), 1):
        if any(marker in block for marker in ELSEWHERE):
            continue
        code = snippet_before_trl(block) if needs_trl(block) else block
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{doc} block {number}", "exec"), namespace)
        ran += 1
    assert ran >= 1
