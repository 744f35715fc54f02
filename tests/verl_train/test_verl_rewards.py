"""Our ``compute_score`` under verl 0.9.1's reward managers, loaded the way verl loads a custom
reward function (``get_custom_reward_fn``: the rewards file's path and name, and
``reward_kwargs`` from the config), on batches made of verl's own dataset rows of our exports.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path

import pytest

pytest.importorskip("verl")

import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager as LoopNaiveRewardManager  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402
from verl.workers.reward_manager import BatchRewardManager, NaiveRewardManager  # noqa: E402

from verl_helpers import audio_processor, dataset_config, export_texts, image_processor, response_batch  # noqa: E402

DATASETS = {"clevr": ("clevr_math.rewards", image_processor), "clotho": ("clotho_aqa.rewards", audio_processor)}


def _reward_fn(module: str, **reward_kwargs):
    """verl's loading of ``reward.custom_reward_function`` (path, name, reward_kwargs)."""
    path = Path(importlib.import_module(module).__file__)
    config = OmegaConf.create({"reward": {"custom_reward_function": {
        "path": str(path), "name": "compute_score", "reward_kwargs": reward_kwargs}}})
    return get_custom_reward_fn(config)


def _responses(rows) -> list[str]:
    """Per row, in turn: right and well formed, wrong and well formed, right and bare."""
    made = []
    for i, row in enumerate(rows):
        answer = row["answer"]  # the majority answer for Clotho-AQA
        made.append([f"<think>look</think><answer>{answer}</answer>", "<think>look</think><answer>zzz</answer>",
                     answer][i % 3])
    return made


@pytest.fixture(scope="module", params=list(DATASETS))
def batch(request, exports, tmp_path_factory):
    module, make = DATASETS[request.param]
    files = exports.files(request.param)
    processor = make(export_texts(files))
    ds = RLHFDataset(files, processor.tokenizer, dataset_config(tmp_path_factory.mktemp("verl_cache"),
                                                               filter_overlong_prompts=False), processor=processor)
    rows = [row for row in (ds[i] for i in range(len(ds))) if row["answer"] is not None][:6]
    responses = _responses(rows)
    return module, processor.tokenizer, rows, responses


def _expected(module, rows, responses, **kwargs):
    score = importlib.import_module(module).compute_score
    return [score(row["data_source"], text, row["reward_model"]["ground_truth"], dict(row["extra_info"]), **kwargs)
            for row, text in zip(rows, responses)]


def _last_token_rewards(tensor: torch.Tensor, data) -> list[float]:
    lengths = data.batch["attention_mask"][:, data.batch["prompts"].shape[-1]:].sum(-1)
    return [float(tensor[i, int(n) - 1]) for i, n in enumerate(lengths)]


def test_naive_manager_scores_with_reward_kwargs_and_logs_the_parts(batch):
    module, tokenizer, rows, responses = batch
    data = response_batch(tokenizer, rows, responses)
    manager = NaiveRewardManager(tokenizer, num_examine=0, compute_score=_reward_fn(module, format_weight=0.5))
    out = manager(data, return_dict=True)
    expected = _expected(module, rows, responses, format_weight=0.5)
    assert [e["accuracy"] for e in expected] == [1.0, 0.0, 1.0] * 2
    assert [e["format"] for e in expected] == [1.0, 1.0, 0.0] * 2
    assert _last_token_rewards(out["reward_tensor"], data) == [e["score"] for e in expected] == [1.5, 0.5, 1.0] * 2
    info = out["reward_extra_info"]  # what verl logs, one value per response
    assert {k: info[k] for k in ("score", "accuracy", "format")} == {
        k: [e[k] for e in expected] for k in ("score", "accuracy", "format")}


def test_naive_manager_without_kwargs_gives_the_accuracy(batch):
    module, tokenizer, rows, responses = batch
    data = response_batch(tokenizer, rows, responses)
    out = NaiveRewardManager(tokenizer, num_examine=0, compute_score=_reward_fn(module))(data, return_dict=True)
    assert _last_token_rewards(out["reward_tensor"], data) == [1.0, 0.0, 1.0] * 2
    assert dict(out["reward_extra_info"]) == {}  # a float: nothing else to log


def test_batch_manager_scores_every_response_in_one_call(batch):
    module, tokenizer, rows, responses = batch
    data = response_batch(tokenizer, rows, responses)
    # reward kwargs from both places verl takes them: the custom function's and the manager's own
    manager = BatchRewardManager(tokenizer, num_examine=1, compute_score=_reward_fn(module, format_weight=0.25),
                                 format_style="think_answer")
    out = manager(data, return_dict=True)
    expected = _expected(module, rows, responses, format_weight=0.25)
    assert _last_token_rewards(out["reward_tensor"], data) == [e["score"] for e in expected] == [1.25, 0.25, 1.0] * 2
    assert out["reward_extra_info"]["format"] == [e["format"] for e in expected] == [1.0, 1.0, 0.0] * 2
    assert data.batch["acc"].tolist() == [e["score"] for e in expected]


def test_reward_loop_naive_manager_passes_the_router_arguments(batch):
    """verl's default reward loop adds the reward-model router's arguments to the call."""
    module, tokenizer, rows, responses = batch
    data = response_batch(tokenizer, rows, responses)
    manager = LoopNaiveRewardManager(OmegaConf.create({}), tokenizer, _reward_fn(module, format_weight=1.0),
                                     reward_router_address="127.0.0.1:1", reward_model_tokenizer=tokenizer)
    results = [manager.loop.run_until_complete(manager.run_single(data[i:i + 1])) for i in range(len(data))]
    assert [r["reward_score"] for r in results] == [2.0, 1.0, 1.0] * 2
    assert [r["reward_extra_info"]["accuracy"] for r in results] == [1.0, 0.0, 1.0] * 2


def test_clotho_aqa_labelling_comes_from_the_reward_kwargs(exports):
    score = _reward_fn("clotho_aqa.rewards", labelling="any_of_3")
    assert score(data_source="clotho_aqa", solution_str="<answer>water</answer>",
                 ground_truth=["rain", "water", "rain"], extra_info={}) == 1.0
    majority = _reward_fn("clotho_aqa.rewards")
    assert majority(data_source="clotho_aqa", solution_str="<answer>water</answer>",
                    ground_truth=["rain", "water", "rain"], extra_info={}) == 0.0
