"""The training snippets of the exported cards, run as they are written, with TRL.

The card of an export shows, for each conversation and prompt configuration, the lines that
load it into ``SFTTrainer`` / ``GRPOTrainer``. Here each snippet is read from the exported
README and executed with ``REPO_ID`` = the export folder and ``MODEL_ID`` = a tiny model folder
(processor saved beside it, so TRL's ``AutoProcessor`` finds it). The only other change: the
trainer config gets a run length (two CPU steps) next to its ``output_dir``.
(``make test``, without TRL, runs the loading part of the same snippets: tests/test_hub_train_layouts.py.)
"""

from __future__ import annotations

import re

import pytest

pytest.importorskip("trl")

import datasets  # noqa: E402

from tiny_models import tiny_llava, tiny_qwen2_audio  # noqa: E402
from train_helpers import STEPS, print_steps, step_logs, tokenizer_texts  # noqa: E402

SNIPPET = re.compile(r"^### `(?P<config>[^`]+)` \((?P<kind>SFT|GRPO)\b[^\n]*\n+```python\n(?P<code>.*?)^```", re.M | re.S)
CONFIG_CALL = re.compile(r'\b(?P<cls>SFTConfig|GRPOConfig)\(output_dir="(?P<dir>\w+)"')
RUN_LENGTH = {
    "SFTConfig": dict(max_steps=STEPS, per_device_train_batch_size=2),
    # two completions of 8 tokens per prompt: GRPO's defaults (8 x 256) are hours on a CPU
    "GRPOConfig": dict(max_steps=STEPS, per_device_train_batch_size=4, num_generations=2, max_completion_length=8),
}
COMMON = dict(use_cpu=True, report_to=[], logging_steps=1, save_strategy="no", disable_tqdm=True)


def card_snippets(folder) -> dict[str, tuple[str, str]]:
    """``{config: (kind, code)}`` of the card's training section."""
    text = (folder / "README.md").read_text(encoding="utf-8")
    return {m["config"]: (m["kind"], m["code"]) for m in SNIPPET.finditer(text.split("## Training with TRL", 1)[1])}


def _runnable(code: str, folder, model, out) -> str:
    code, calls = CONFIG_CALL.subn(
        lambda m: f'{m["cls"]}(output_dir={str(out / m["dir"])!r}, **{RUN_LENGTH[m["cls"]] | COMMON!r}', code)
    assert calls == 1, code  # the snippet still makes its trainer config the way this test expects
    return code.replace("REPO_ID", str(folder)).replace("MODEL_ID", str(model))


def _run(code: str) -> dict:
    scope: dict = {}
    exec(compile(code, "<card snippet>", "exec"), scope)
    return scope


@pytest.fixture
def load_cache(tmp_path, monkeypatch):
    # the snippets' load_dataset calls write their cache under the test's folder, not the user's
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))


def test_clevr_card_snippets_train_with_trl(clevr_export, tmp_path, load_cache):
    snippets = card_snippets(clevr_export.folder)
    assert {config: kind for config, (kind, _) in snippets.items()} == {"conversations": "SFT", "prompts": "GRPO"}
    texts = tokenizer_texts(clevr_export.load("conversations"), clevr_export.load("prompts"))
    kit = tiny_llava(tmp_path / "model", texts)
    for config, (kind, code) in snippets.items():
        scope = _run(_runnable(code, clevr_export.folder, kit.folder, tmp_path / config))
        logs = step_logs(scope["trainer"].state.log_history)
        assert [log["step"] for log in logs] == list(range(1, STEPS + 1)), config
        print_steps(f"card snippet CLEVR-Math {config}", logs)
        if kind == "GRPO":  # our rewards, as the snippet imports them, scored every step
            assert all({"rewards/accuracy_reward/mean", "rewards/format_reward/mean"} <= set(log) for log in logs)
        else:
            assert all(log["loss"] > 0 for log in logs)


def test_clotho_card_snippets_sft_trains_on_the_clips_and_grpo_stops_at_trls_limit(clotho_export, tmp_path, load_cache):
    """The SFT snippet trains with the package's ``AudioSFTCollator``; TRL 1.16's ``GRPOTrainer``
    takes any processor for an image model and reads ``model.config.image_token_id``, which an
    audio model has not: the GRPO snippet loads its rows and stops there. The train venv has no
    torchcodec: the snippets read the clips undecoded themselves (``without_decoding``)."""
    import importlib.util

    assert importlib.util.find_spec("torchcodec") is None  # what the snippets must do without
    snippets = card_snippets(clotho_export.folder)
    assert {config: kind for config, (kind, _) in snippets.items()} == {"conversations": "SFT", "prompts": "GRPO"}
    assert all("without_decoding(" in code for _, code in snippets.values())
    kit = tiny_qwen2_audio(tmp_path / "model", tokenizer_texts(clotho_export.load("conversations")))
    kind, code = snippets["conversations"]
    scope = _run(_runnable(code, clotho_export.folder, kit.folder, tmp_path / "conversations"))
    logs = step_logs(scope["trainer"].state.log_history)
    assert [log["step"] for log in logs] == list(range(1, STEPS + 1)) and all(log["loss"] > 0 for log in logs)
    print_steps("card snippet Clotho-AQA conversations (AudioSFTCollator)", logs)
    kind, code = snippets["prompts"]
    with pytest.raises(AttributeError, match="'Qwen2AudioConfig' object has no attribute 'image_token_id'"):
        _run(_runnable(code, clotho_export.folder, kit.folder, tmp_path / "prompts"))
