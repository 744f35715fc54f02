"""The R1-family trainers' own layouts (``clevr-math export --config r1v,easyr1,...``) held against
what each trainer's loader requires, and the reward wrappers scoring as ``evaluate`` does.

None of these trainers is installed here (EasyR1 installs as a package named ``verl``, which is
not on the package index; R1-V, VLM-R1, Reason-RFT and LMM-R1 are scripts of their repositories):
what each loader reads is written down as facts read in its source, cited file and line at each
check. ms-swift is on the package index: ``make test-swift`` runs its own dataset code and our
reward classes on an export (tests/swift_train/).

Sources read (repository @ commit):
- R1-V: Deep-Agent/R1-V @ bbbbe3d, ``src/r1-v/src/open_r1/grpo.py``.
- EasyR1: hiyouga/EasyR1 @ b44b311, ``verl/utils/dataset.py``, ``verl/workers/reward/function.py``,
  ``examples/config.yaml``.
- ms-swift: modelscope/ms-swift @ 3602360 (4.6.0.dev0), ``swift/dataset/preprocessor/core.py``,
  ``swift/rewards/orm.py``.
- VLM-R1: om-ai-lab/VLM-R1 @ 90052f4, ``src/open-r1-multimodal/src/open_r1/grpo_jsonl.py``.
- Reason-RFT: tanhuajie/Reason-RFT @ d0a8070, ``train/stage_rl/grpo.py``, ``train/stage_rl/reward.py``,
  ``train/stage_sft/data/dataset_info.json``, ``train/stage_sft/llamafactory/data/mm_plugin.py``.
- LMM-R1: TideDra/lmm-r1 @ f917f18, ``openrlhf/datasets/prompts_dataset.py``,
  ``openrlhf/models/lmm_kits/base/data_processor.py``, ``openrlhf/models/remote_rm/math_verifier.py``.
"""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import datasets
import pytest
import soundfile
from PIL import Image

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub.trainer_formats import FORMATS, SWIFT_ANSWERS, SWIFT_RESERVED
from builder_utils.prompts import prompt_style
from clevr_math import easyr1_sequential
from clevr_math import evaluation as math_eval
from clevr_math import rewards as math_rewards
from clevr_math import trainer_rewards as math_trainer
from clevr_math.cli import main as clevr_math_cli
from clotho_aqa import rewards as aqa_rewards
from clotho_aqa import trainer_rewards as aqa_trainer
from clotho_aqa.cli import main as clotho_aqa_cli
from clotho_aqa.scoring import ANSWER_VOCABULARY
from clotho_aqa.synth import write_synthetic_release

CLEVR_FORMATS = ["r1v", "easyr1", "swift", "vlm_r1", "reason_rft", "reason_rft_cot", "lmm_r1"]
#: R1-V's, Reason-RFT's and VLM-R1's solution extraction (R1-V grpo.py:72-73; Reason-RFT reward.py:21-22).
ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
#: Completions, one per line: {n} the answer, {m} a wrong one.
COMPLETIONS = ["<think>5 - 2</think><answer>{n}</answer>", "<think>count</think> <answer>{m}</answer>", "{n}",
               "There are {n} left.", "<answer>{n}</answer>", "Answer: {m}", "I cannot tell.", ""]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("trainer_formats")
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)
    release = write_synthetic_release(root / "release", num_files=5, seed=0).root
    out = {"clevr": root / "hub_clevr", "clevr_direct": root / "hub_clevr_direct", "clotho": root / "hub_clotho"}
    common = ["--cache_dir", str(root / "cache"), "--quiet"]
    assert clevr_math_cli(["export", "--data_dir", str(clevr), "--out", str(out["clevr"]), "--config",
                           ",".join(["general", *CLEVR_FORMATS, "r1v_multihop"]), *common]) == 0
    assert clevr_math_cli(["export", "--data_dir", str(clevr), "--out", str(out["clevr_direct"]), "--config",
                           "easyr1,swift,lmm_r1", "--prompt_style", "direct", *common]) == 0
    assert clotho_aqa_cli(["export", "--data_dir", str(release), "--out", str(out["clotho"]), "--config",
                           "questions,swift,swift_choices,r1_aqa", *common]) == 0
    return {"out": out, "clevr": clevr, "release": release, "cache": root / "load_cache", "root": root}


def _load(exports, name, config, split="train"):
    rows = datasets.load_dataset(str(exports["out"][name]), config, split=split, cache_dir=str(exports["cache"]))
    return _Rows(rows)


class _Rows:
    """A loaded split whose columns read as plain lists (datasets 5 gives lazy ``Column`` objects)."""

    def __init__(self, rows):
        self.rows = rows

    def __getitem__(self, key):
        return list(self.rows[key]) if isinstance(key, str) else self.rows[key]

    def __getattr__(self, name):
        return getattr(self.rows, name)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)


def _general(exports, split="train"):
    return _load(exports, "clevr", "general", split)


def _same_questions(rows, general):
    """Each trainer row is its question's: same order, same ids as ``general``."""
    assert rows["question_id"] == general["question_id"]


def test_every_trainer_layout_is_a_registered_configuration_each_dataset_can_export(exports):
    clevr_configs = datasets.get_dataset_config_names(str(exports["out"]["clevr"]))
    assert set(CLEVR_FORMATS) | {"r1v_multihop"} <= set(clevr_configs)
    # only ms-swift (and R1-AQA, multiple choice) read audio among these trainers: the other layouts are
    # not offered for Clotho-AQA, and CLEVR-Math has no multiple-choice one
    assert sorted(datasets.get_dataset_config_names(str(exports["out"]["clotho"]))) == \
        ["questions", "r1_aqa", "swift", "swift_choices"]
    assert clevr_math_cli(["export", "--data_dir", str(exports["clevr"]), "--out", str(exports["root"] / "no"),
                           "--config", "swift_choices", "--quiet"]) == 2
    assert clotho_aqa_cli(["export", "--data_dir", str(exports["release"]), "--out", str(exports["root"] / "no"),
                           "--config", "r1v", "--quiet"]) == 2


def test_r1v_rows(exports):
    rows, general = _load(exports, "clevr", "r1v"), _general(exports)
    _same_questions(rows, general)
    # grpo.py:164: the image branch is taken when the features have "image"; :157 reads
    # example["problem"] into its own template (its prompt, not ours: the bare question);
    # trainer/grpo_trainer.py:361 hands x["image"] (a PIL image) to the processor.
    assert isinstance(rows.features["image"], datasets.Image)
    assert rows["problem"] == general["question"]
    assert all(isinstance(image, Image.Image) for image in rows["image"][:3])
    for solution, label in zip(rows["solution"], general["label"]):
        # grpo.py:72-73: the ground truth is the stripped text inside the tags; string match at :80
        assert ANSWER_TAG.search(solution).group(1).strip() == str(label)
        assert re.fullmatch(r"<answer> \d+ </answer>", solution)
    multihop = _load(exports, "clevr", "r1v_multihop", "test")  # follows `multihop`: its multi-hop test questions
    assert len(multihop) and all(re.fullmatch(r"<answer> \d+ </answer>", s) for s in multihop["solution"])


def test_easyr1_rows(exports):
    rows, general = _load(exports, "clevr", "easyr1"), _general(exports)
    _same_questions(rows, general)
    instruction = prompt_style("think_answer").instruction
    for row, question, label in zip(rows, general["question"], general["label"]):
        # dataset.py:166-171: the prompt_key text is split at "<image>", one image part per marker,
        # and :233-237 every item of image_key is processed: as many markers as images
        assert row["problem"].count("<image>") == len(row["images"]) == 1
        assert row["problem"] == f"<image>{question} {instruction}"
        # dataset.py:56-62: a path, a {"bytes"} dict, bytes or a PIL image
        assert isinstance(row["images"][0], Image.Image)
        # dataset.py:313: ground_truth = example.pop(answer_key); examples/config.yaml: answer_key answer
        assert row["answer"] == str(label) and row["answer"].isdigit()
    direct = _load(exports, "clevr_direct", "easyr1")
    assert direct[0]["problem"].endswith(prompt_style("direct").instruction) and "<think>" not in direct[0]["problem"]


def _swift_checks(rows, marker, media):
    for row in rows:
        # core.py:83: roles among system/user/assistant/tool...; GRPO prompts end with the user turn
        assert [m["role"] for m in row["messages"]][-1] == "user"
        assert {m["role"] for m in row["messages"]} <= {"system", "user"}
        text = "".join(m["content"] for m in row["messages"])
        assert text.count(marker) == len(row[media]) == 1
        # the answer as text; a Clotho-AQA question without a majority has none (its rewards read the annotators')
        assert row["solution"] is None or (isinstance(row["solution"], str) and row["solution"])
    # core.py:26-42 (standard_keys) and :376-387 (ResponsePreprocessor's automatic mapping of
    # answer/answers/solution/... to the response): a column of ours under one of those names would
    # be taken as the response or a label; `solution` is kept aside for the rewards at :333-340
    assert not (set(rows.column_names) - {"messages", "images", "audios", "solution"}) & SWIFT_RESERVED


def test_swift_rows_images(exports):
    rows, general = _load(exports, "clevr", "swift"), _general(exports)
    _same_questions(rows, general)
    _swift_checks(rows, "<image>", "images")
    assert rows["solution"] == [str(label) for label in general["label"]]  # every CLEVR-Math question has one
    assert rows[0]["messages"][0] == {"role": "system", "content": prompt_style("think_answer").instruction}
    assert _load(exports, "clevr_direct", "swift")[0]["messages"][0]["content"] == prompt_style("direct").instruction


def test_swift_rows_audio_are_the_clips_raw_bytes(exports):
    rows, questions = _load(exports, "clotho", "swift"), _load(exports, "clotho", "questions")
    assert rows["question_id"] == questions["question_id"]
    _swift_checks(rows, "<audio>", "audios")
    # ms-swift reads raw bytes or a path (not samples, not {bytes, path} dicts): the file's bytes as stored
    assert rows.features["audios"] == datasets.List(datasets.Value("binary"))
    stored = questions.rows.cast_column("audio", datasets.Audio(decode=False))["audio"]
    for row, clip in zip(rows, stored):
        assert row["audios"][0] == clip["bytes"]
        samples, rate = soundfile.read(io.BytesIO(row["audios"][0]))
        assert rate > 0 and len(samples) > 0
    # the annotators' answers under a name ms-swift leaves alone
    assert rows[SWIFT_ANSWERS] == questions["answers"] and "answers" not in rows.column_names


def _vlm_r1_items(jsonl: Path, image_folder: Path) -> list[dict]:
    """grpo_jsonl.py:963-990, step by step: what its loop makes of each JSONL line."""
    items = []
    for line in jsonl.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        assert isinstance(item["image"], str)  # :968 (a list is also taken, :972)
        item["image_path"] = [str(image_folder / item["image"])]
        item["problem"] = item["conversations"][0]["value"].replace("<image>", "")  # :979
        solution = item["conversations"][1]["value"]  # :982-984
        item["solution"] = solution.replace("<answer>", "").replace("</answer>", "").strip()
        items.append(item)
    return items


def test_vlm_r1_rows_as_jsonl(exports, tmp_path):
    rows, general = _load(exports, "clevr", "vlm_r1"), _general(exports)
    _same_questions(rows, general)
    jsonl = tmp_path / "train.jsonl"
    rows.rows.to_json(str(jsonl), lines=True)
    items = _vlm_r1_items(jsonl, exports["clevr"] / "images" / "train")
    for item, question, label in zip(items, general["question"], general["label"]):
        assert item["conversations"][0]["value"].count("<image>") == 1 and item["conversations"][0]["from"] == "human"
        assert item["problem"] == question and item["solution"] == str(label)
        assert all(Path(p).is_file() for p in item["image_path"])  # :997 asserts they exist
        # :990: the row's method wins over the command line's; an unknown one falls to the default (:860)
        assert item["accu_reward_method"] == "clevr_math"


def test_reason_rft_rows(exports):
    rows, general = _load(exports, "clevr", "reason_rft"), _general(exports)
    _same_questions(rows, general)
    # grpo.py:228: load_dataset(dataset_name, name=dataset_config); :233 tests 'geomath' in example['id']
    # (a string); :242 the image branch when the row has "image"; :251 example["problem"]
    assert rows.features["id"] == datasets.Value("string") and isinstance(rows.features["image"], datasets.Image)
    assert all("geomath" not in i for i in rows["id"])
    assert rows["problem"] == general["question"]
    for solution, label in zip(rows["solution"], general["label"]):
        # reward.py:21-22: the stripped text inside the tags, compared as a string at :29
        assert ANSWER_TAG.search(solution).group(1).strip() == str(label)


def test_reason_rft_cot_sft_rows(exports):
    rows, general = _load(exports, "clevr", "reason_rft_cot"), _general(exports)
    _same_questions(rows, general)
    for row, label in zip(rows, general["label"]):
        # dataset_info.json (clevr_math_cot_sft): sharegpt, columns messages=messages, images=image,
        # tags role/content/user/assistant
        assert [m["role"] for m in row["messages"]] == ["user", "assistant"]
        # mm_plugin.py:272-283: as many <image> placeholders as images; :112-135 PIL images taken
        assert sum(m["content"].count("<image>") for m in row["messages"]) == len(row["image"]) == 1
        assert isinstance(row["image"][0], Image.Image)
        answer = row["messages"][1]["content"]
        assert re.fullmatch(r"<think>.+</think><answer>\d+</answer>", answer, re.DOTALL)
        assert ANSWER_TAG.search(answer).group(1) == str(label)
        assert math_rewards.format_reward([answer]) == [1.0]


def test_lmm_r1_rows_carry_their_image_inside_the_message(exports):
    rows, general = _load(exports, "clevr", "lmm_r1"), _general(exports)
    _same_questions(rows, general)
    images = {p.name: p.read_bytes() for p in (exports["clevr"] / "images" / "train").glob("*.png")}
    for row, label, name in zip(rows, general["label"], general["image_filename"]):
        # data_processor.py:131-132: json.loads of the string; then qwen_vl_utils.process_vision_info
        # on the typed parts ({"type": "image", "image": ...}: a path, a URL or a base64 data URI)
        messages = json.loads(row["message"])
        assert [m["role"] for m in messages] == ["system", "user"]
        parts = messages[-1]["content"]
        assert [p["type"] for p in parts] == ["image", "text"] and parts[1]["text"] == row["question"]
        header, payload = parts[0]["image"].split("base64,", 1)
        assert header.startswith("data:image") and base64.b64decode(payload) == images[name]
        # math_verifier.py:94-95: labels are wrapped in $...$ when not already; math_verify parses $N$
        assert row["answer"] == f"${label}$"
    direct = json.loads(_load(exports, "clevr_direct", "lmm_r1")[0]["message"])
    assert direct[0]["content"] == prompt_style("direct").instruction


def _majority_questions(exports, split="train"):
    questions = _Rows(_load(exports, "clotho", "questions", split).remove_columns("audio"))
    return [q for q in questions if q["majority_answer"] is not None]


def _check_options(options, answer, golds, answer_type):
    assert answer in options and len(set(options)) == len(options)
    if answer_type == "yes_no":
        assert sorted(options) == ["no", "yes"]
    else:  # the answer and three words of the release's answers, none an annotator's
        assert len(options) == 4 and set(options) - {answer} <= ANSWER_VOCABULARY - set(golds) - {"yes", "no"}


def test_swift_choices_rows(exports):
    rows, questions = _load(exports, "clotho", "swift_choices"), _majority_questions(exports)
    # a question without a majority answer has no single right option: left out
    assert rows["question_id"] == [q["question_id"] for q in questions] and len(rows) > 0
    _swift_checks(rows, "<audio>", "audios")
    for row, question in zip(rows, questions):
        assert row["solution"] == question["majority_answer"]
        _check_options(row["choices"], row["solution"], question["answers"], question["answer_type"])
        assert row["messages"][-1]["content"].endswith(", ".join(row["choices"]) + ".")
    assert "choices" not in SWIFT_RESERVED
    # the reward classes on these rows: the right option scores 1, another 0 (the majority labelling)
    columns = {name: rows[name] for name in rows.column_names if name not in ("audios", "messages")}
    right = [f"<think>.</think><answer>{s}</answer>" for s in rows["solution"]]
    wrong = [f"<answer>{next(o for o in c if o != s)}</answer>" for s, c in zip(rows["solution"], rows["choices"])]
    assert aqa_trainer.SwiftAccuracy(args=None)(right + wrong, **{k: v * 2 for k, v in columns.items()}) == \
        [1.0] * len(rows) + [0.0] * len(rows)


def test_r1_aqa_rows_as_jsonl(exports, tmp_path):
    rows, questions = _load(exports, "clotho", "r1_aqa"), _majority_questions(exports)
    assert rows["question_id"] == [q["question_id"] for q in questions]
    jsonl = tmp_path / "train.jsonl"
    rows.rows.to_json(str(jsonl), lines=True)
    clips = exports["release"] / "audio_files"
    for line, question in zip(jsonl.read_text(encoding="utf-8").splitlines(), questions):
        obj = json.loads(line)
        # src/dataset/dataset.py:34: torchaudio.load(obj["audio_path"]): the clip's own file name
        assert (clips / obj["audio_path"]).is_file()
        # :37-38: the options prompt and the solution are made for dataset_name AVQA only; :22-23 the
        # question and the options; :27-28 the solution is the option at `answer`, in <answer> tags
        assert obj["dataset_name"] == "AVQA" and obj["question_text"] == question["question"]
        solution = f"<answer>{obj['multi_choice'][obj['answer']]}</answer>"
        assert solution == f"<answer>{question['majority_answer']}</answer>"
        _check_options(obj["multi_choice"], question["majority_answer"], question["answers"], question["answer_type"])
        # its accuracy reward (src/utils/rewards.py:8-38) and ours agree on the right option
        assert aqa_trainer.r1_aqa_accuracy([solution, "<answer>zzz</answer>"], solution=[solution] * 2,
                                           answer=[obj["answer"]] * 2) == [1.0, 0.0]


def test_choices_are_drawn_by_seed(exports, tmp_path):
    again = tmp_path / "again"
    assert clotho_aqa_cli(["export", "--data_dir", str(exports["release"]), "--out", str(again), "--config",
                           "r1_aqa", "--cache_dir", str(tmp_path / "cache"), "--quiet"]) == 0
    first = _load(exports, "clotho", "r1_aqa")["multi_choice"]
    second = datasets.load_dataset(str(again), "r1_aqa", split="train", cache_dir=str(tmp_path / "lc"))["multi_choice"]
    assert first == list(second)
    single = [options for options in first if len(options) == 4]
    assert single and len({tuple(sorted(o)) for o in single}) > 1  # not one fixed set of distractors


# -- the rewards, in each trainer's signature, against evaluate --------------------------------

def _texts(general, template):
    return [template.format(n=label, m=label + 1) for label in general["label"]]


@pytest.mark.parametrize("template", COMPLETIONS)
def test_clevr_math_wrappers_score_as_evaluate(exports, template):
    general = _general(exports, "test")
    texts = _texts(general, template)
    report = math_eval.evaluate(exports["out"]["clevr"], "general", split="test",
                                predictions=dict(zip(general["question_id"], texts)),
                                cache_dir=exports["root"] / "eval_cache", resamples=10)
    trl = math_rewards.accuracy_reward(texts, answer=[str(label) for label in general["label"]])
    assert sum(trl) == report["overall"]["correct"] and len(trl) == report["overall"]["total"]
    # EasyR1 (function.py:60-66 sequential, :87-95 batch): ground_truth = the row's `answer`
    easy = _load(exports, "clevr", "easyr1", "test")
    inputs = [{"response": t, "response_length": len(t), "ground_truth": g} for t, g in zip(texts, easy["answer"])]
    batch = math_trainer.compute_score(inputs)
    assert [s["accuracy"] for s in batch] == trl
    assert batch == [easyr1_sequential.compute_score(one) for one in inputs]
    formats = math_rewards.format_reward(texts)
    assert [s["format"] for s in batch] == formats
    assert [s["overall"] for s in batch] == [0.5 * a + 0.5 * f for a, f in zip(trl, formats)]
    # ms-swift (orm.py:16-31): built with args, called with the completions and the row columns
    swift = _load(exports, "clevr", "swift", "test")
    columns = {name: swift[name] for name in swift.column_names if name not in ("images", "messages")}
    assert math_trainer.SwiftAccuracy(args=None)(texts, trainer_state=None, **columns) == trl
    assert math_trainer.SwiftFormat(args=None)(texts, **columns) == formats
    # VLM-R1: accuracy_reward (grpo_jsonl.py:826-831) calls the row's method with the content and
    # the solution it rewrote as "<answer> N </answer>" (:1002)
    vlm = _load(exports, "clevr", "vlm_r1", "test")
    sols = [f"<answer> {row['conversations'][1]['value']} </answer>" for row in vlm]
    assert [math_trainer.vlm_r1_accuracy(t, s) for t, s in zip(texts, sols)] == trl


@pytest.mark.parametrize("template", ["<think>.</think><answer>{w}</answer>", "{w}", "It is {w}.", "<answer>zzz</answer>",
                                      ""])
def test_clotho_swift_wrapper_scores_as_the_trl_reward(exports, template):
    rows = _load(exports, "clotho", "swift", "test")
    questions = _Rows(_load(exports, "clotho", "questions", "test").remove_columns("audio"))
    texts = [template.format(w=q["majority_answer"] or q["answers"][0]) for q in questions]
    trl = aqa_rewards.accuracy_reward(texts, answer=questions["majority_answer"], answers=questions["answers"],
                                      answer_type=questions["answer_type"])
    columns = {name: rows[name] for name in rows.column_names if name not in ("audios", "messages")}
    assert aqa_trainer.SwiftAccuracy(args=None)(texts, **columns) == [v or 0.0 for v in trl]
    assert aqa_trainer.SwiftFormat(args=None)(texts, **columns) == aqa_rewards.format_reward(texts)


def test_wrappers_refuse_the_other_call_shape():
    with pytest.raises(ValueError, match="list of dicts"):
        math_trainer.compute_score({"response": "3", "ground_truth": "3"})
    with pytest.raises(ValueError, match="one dict per response"):
        easyr1_sequential.compute_score([{"response": "3", "ground_truth": "3"}])
    with pytest.raises(ValueError, match="sol must be a string"):
        math_trainer.vlm_r1_accuracy("3", 3)


def test_format_declarations_are_checked():
    fmt = FORMATS["r1v"]
    with pytest.raises(ValueError, match="media form"):
        type(fmt)("x", "X", fmt.build, fmt.features, media_form="folder")


# -- rows made in memory: the stream and the problem sets ----------------------------------------

@pytest.mark.parametrize("name", CLEVR_FORMATS)
def test_problem_sets_and_the_stream_write_the_exports_layout(exports, name):
    from clevr_math import problems, stream

    plain = problems(size=5, seed=2)
    rows = problems(size=5, seed=2, trainer_format=name)
    exported = _load(exports, "clevr", name)
    # the same columns and types as the export of that configuration, row for row of the plain set
    assert rows.features == exported.features
    assert rows["question_id"] == plain["question_id"]
    streamed = list(stream(seed=2, num_questions=5, num_shards=1, trainer_format=name))
    assert [r["question_id"] for r in streamed] == plain["question_id"]
    first = rows[0]
    if "solution" in first:
        assert ANSWER_TAG.search(first["solution"]) or first["solution"] == str(plain[0]["label"])


def test_a_layout_the_stream_cannot_write_is_refused_before_it_starts():
    from clevr_math import StreamError, problems

    with pytest.raises(StreamError, match="does not serve CLEVR-Math"):
        problems(size=5, trainer_format="swift_choices")


# -- difficulty on every row ---------------------------------------------------------------------

def test_every_trainer_row_carries_its_difficulty(exports):
    general = _general(exports)
    scenes = json.loads((exports["clevr"] / "scenes" / "CLEVR_train_scenes.json").read_text())["scenes"]
    objects = {scene["image_filename"]: len(scene["objects"]) for scene in scenes}
    # the builder's own column, from the scene graph
    assert general["num_objects"] == [objects[name] for name in general["image_filename"]]
    expected = [{"operations": ops, "objects": objects[name], "answer": label}
                for ops, name, label in zip(general["num_operations"], general["image_filename"], general["label"])]
    for name in CLEVR_FORMATS:
        assert _load(exports, "clevr", name)["difficulty"] == expected, name
    # the stream's rows count their own scene's objects
    from clevr_math import problems

    streamed = problems(size=4, seed=1, trainer_format="r1v")
    plain = problems(size=4, seed=1)
    assert [d["objects"] for d in streamed["difficulty"]] == \
        [len(json.loads(scene)["objects"]) for scene in plain["scene"]]
    # Clotho-AQA: how many of the three annotators gave the most common answer
    for config in ("swift", "swift_choices", "r1_aqa"):
        rows = _load(exports, "clotho", config)
        questions = {q["question_id"]: q for q in _Rows(_load(exports, "clotho", "questions").remove_columns("audio"))}
        for row in rows:
            answers = questions[row["question_id"]]["answers"]
            most = max(answers.count(a) for a in answers)
            assert row["difficulty"] == {"agreement": pytest.approx(most / 3), "annotators": 3}


def test_format_flag_writes_the_trainers_configuration(exports, tmp_path, capsys):
    out = tmp_path / "by_format"
    assert clevr_math_cli(["export", "--data_dir", str(exports["clevr"]), "--out", str(out), "--format", "r1v,easyr1",
                           "--cache_dir", str(exports["root"] / "cache"), "--quiet"]) == 0
    assert sorted(datasets.get_dataset_config_names(str(out))) == ["easyr1", "r1v"]
    assert datasets.load_dataset(str(out), "r1v", split="train", cache_dir=str(tmp_path / "lc"))["solution"] == \
        _load(exports, "clevr", "r1v")["solution"]
    # the help names every trainer layout there is
    with pytest.raises(SystemExit):
        clevr_math_cli(["export", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(name in help_text for name in FORMATS)
    # a layout the dataset does not serve: one line, exit 2
    assert clotho_aqa_cli(["export", "--data_dir", str(exports["release"]), "--out", str(tmp_path / "no"),
                           "--format", "lmm_r1", "--quiet"]) == 2


@pytest.mark.parametrize("path, kind", [("clevr_math/trainer_rewards.py", "batch"),
                                        ("clevr_math/easyr1_sequential.py", "sequential")])
def test_easyr1_loads_our_reward_files_by_path(path, kind):
    """EasyR1's AutoRewardManager (function.py:117-134): the file imported by path under the name
    custom_reward_fn, REWARD_NAME / REWARD_TYPE read from it, the function partial'd with the
    config's reward_function_kwargs; then called per response (:60-66) or per batch (:95)."""
    import functools
    import importlib.util
    import sys

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("custom_reward_fn", root / path)
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.get("custom_reward_fn")
    try:
        sys.modules["custom_reward_fn"] = module
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            sys.modules.pop("custom_reward_fn", None)
        else:
            sys.modules["custom_reward_fn"] = saved
    assert getattr(module, "REWARD_TYPE", "batch") == kind and module.REWARD_NAME == "clevr_math"
    reward_fn = functools.partial(module.compute_score, format_weight=0.2)
    inputs = [{"response": "<think>3 - 1</think><answer>2</answer>", "response_length": 12, "ground_truth": "2"},
              {"response": "It is 3.", "response_length": 4, "ground_truth": "2"}]
    scores = reward_fn(inputs) if kind == "batch" else [reward_fn(one) for one in inputs]
    assert [s["overall"] for s in scores] == [1.0, 0.0] and [s["accuracy"] for s in scores] == [1.0, 0.0]
