"""ms-swift 4.6.0's own code on our ``swift`` exports: its dataset loader (the path ``swift rlhf
--dataset <file>`` takes, with GRPO's ``remove_unused_columns=False``), its media loaders, and its
reward call (``compute_rewards_per_func``, the function its GRPO trainer scores completions with)
on our reward classes registered by our plugin files, as ``--external_plugins`` imports them.
"""

from __future__ import annotations

import pytest

swift = pytest.importorskip("swift")

import torch  # noqa: E402
from swift.dataset import load_dataset as swift_load_dataset  # noqa: E402
from swift.rewards import orms  # noqa: E402
from swift.utils import import_external_file  # noqa: E402

from clevr_math import rewards as math_rewards  # noqa: E402
from clotho_aqa import rewards as aqa_rewards  # noqa: E402

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _load(path: str):
    # swift/arguments/rlhf_args.py: GRPO keeps the dataset's other columns for the rewards
    train, _ = swift_load_dataset([path], remove_unused_columns=False, strict=True, num_proc=1)
    return train


def _score(rows, completions, reward_names):
    from swift.rl_core.data import GRPOSample
    from swift.rl_core.grpo_algorithm import compute_rewards_per_func

    samples = []
    for row, completion in zip(rows, completions):
        sample = GRPOSample.from_row(dict(row))
        sample.messages.append({"role": "assistant", "content": completion})
        samples.append(sample)
    funcs = [orms[name](args=None) for name in reward_names]
    return compute_rewards_per_func(samples, funcs, None, device=torch.device("cpu")).T.tolist()


def test_clevr_math_rows_load_and_score(exports):
    import_external_file(str(ROOT / "clevr_math" / "swift_plugin.py"))
    train = _load(exports.file("clevr", "swift"))
    rows = list(train)
    assert len(rows) > 0
    from swift.template.base import Template

    for row in rows:
        assert [m["role"] for m in row["messages"]][-1] == "user"
        assert "<image>" in row["messages"][-1]["content"] and len(row["images"]) == 1
        # the template's own image loading (swift/template/base.py, Template._load_image): {bytes, path} dicts
        assert Template._load_image(row["images"][0], True).size == (480, 320)
        assert row["solution"].isdigit() and row["question_id"]
    right = [f"<think>count</think><answer>{row['solution']}</answer>" for row in rows]
    wrong = [f"<answer>{int(row['solution']) + 1}</answer>" for row in rows]
    accuracy, form = _score(rows + rows, right + wrong, ["clevr_math_accuracy", "clevr_math_format"])
    answers = [row["solution"] for row in rows] * 2
    assert accuracy == math_rewards.accuracy_reward(right + wrong, answer=answers) == [1.0] * len(rows) + [0.0] * len(rows)
    assert form == math_rewards.format_reward(right + wrong)


@pytest.mark.parametrize("config", ["swift", "swift_choices"])
def test_clotho_aqa_rows_load_their_audio_and_score(exports, config):
    import_external_file(str(ROOT / "clotho_aqa" / "swift_plugin.py"))
    train = _load(exports.file("clotho", config))
    rows = list(train)
    assert len(rows) > 0
    from swift.template.vision_utils import load_audio

    for row in rows:
        assert "<audio>" in row["messages"][-1]["content"] and len(row["audios"]) == 1
        samples = load_audio(row["audios"][0], 16_000)  # librosa, ms-swift's default backend
        assert samples.ndim == 1 and len(samples) > 0
    texts = [f"<answer>{row['solution'] or 'zzz'}</answer>" for row in rows]
    accuracy, _ = _score(rows, texts, ["clotho_aqa_accuracy", "clotho_aqa_format"])
    expected = aqa_rewards.accuracy_reward(texts, answer=[row["solution"] for row in rows],
                                           answers=[row.get("annotator_answers") for row in rows]
                                           if config == "swift" else None,
                                           answer_type=[row["answer_type"] for row in rows])
    assert accuracy == [v or 0.0 for v in expected]  # our classes give 0.0 where the TRL reward has none
