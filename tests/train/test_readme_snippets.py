"""The README blocks that need TRL, run with TRL (``make test``'s tests/test_doc_snippets.py runs the
rest of every README block, and these up to their ``from trl import`` line).

Each block runs as written but for its placeholders: ``model=...`` becomes a tiny model folder
(processor saved beside it), ``train_dataset=...`` a small problem set (the ``prompts`` rows, images
inline), and the
trainer config gets a CPU run length in place of ``max_steps=1000``. Then the trainer the block
made trains two steps.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

import datasets  # noqa: E402

from clevr_math import problems, stream  # noqa: E402
from tiny_models import tiny_llava  # noqa: E402
from train_helpers import STEPS, step_logs, tokenizer_texts  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from test_doc_snippets import needs_trl, python_blocks  # noqa: E402

RUN_LENGTH = (f"max_steps={STEPS}, per_device_train_batch_size=4, num_generations=2, max_completion_length=8, "
              "use_cpu=True, report_to=[], logging_steps=1, save_strategy='no', disable_tqdm=True")


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    sample = datasets.Dataset.from_list(list(stream(seed=0, num_questions=16, num_shards=1)))
    return tiny_llava(tmp_path_factory.mktemp("model"), tokenizer_texts(sample, columns=("prompt",)))


def _blocks_with_trl() -> dict[str, str]:
    found = {}
    for doc in ("README.md", "builder_utils/evaluation/README.md"):
        for number, block in enumerate(python_blocks(doc), 1):
            if needs_trl(block):
                found[f"{doc} block {number}"] = block
    return found


def test_the_blocks_that_need_trl_are_the_two_grpo_ones():
    assert sorted(_blocks_with_trl()) == ["README.md block 3", "builder_utils/evaluation/README.md block 2"]


@pytest.mark.parametrize("name", sorted(_blocks_with_trl()))
def test_readme_trl_block_makes_a_trainer_that_trains(name, kit, tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    code = _blocks_with_trl()[name]
    code = code.replace("model=...", f"model={str(kit.folder)!r}")
    code = code.replace("train_dataset=...)", "train_dataset=PROMPTS, args=ARGS)")
    code, lengths = re.subn(r"max_steps=1000", RUN_LENGTH, code)
    code = code.replace('output_dir="grpo"', f"output_dir={str(tmp_path / 'grpo')!r}")
    from trl import GRPOConfig

    scope = {"PROMPTS": problems(size=8, seed=0),
             "ARGS": eval(f"GRPOConfig(output_dir={str(tmp_path / 'eval')!r}, {RUN_LENGTH})", {"GRPOConfig": GRPOConfig})}
    exec(compile(code, name, "exec"), scope)
    trainer = scope["trainer"]
    trainer.train()
    logs = step_logs(trainer.state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STEPS + 1))
    assert all({"rewards/accuracy_reward/mean", "rewards/format_reward/mean"} <= set(log) for log in logs)
    assert lengths == (1 if name.startswith("README.md") else 0)
