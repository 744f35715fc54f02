"""The safety suite's rows for the Python APIs (issue 37, causes 8, 9, 10, 16 and 17): what a careless
or hostile caller hands the rewards, the curricula, ``clevr_math.stream`` and ``problems``.

8. **Rewards compare numbers as numbers.** A gold ``3.0`` (a Parquet integer column with a null,
   as verl's ``ground_truth``), ``numpy.float64(3)``, ``numpy.int64(3)`` or ``"3.0"`` scores a right
   "3" as 1.0, in every reward of CLEVR-Math; a boolean or another type is refused.
9. **Every weight and threshold is finite.** ``format_weight`` NaN or infinite, a curriculum's
   ``raise_above`` / ``lower_below`` not finite or a boolean.
10. **Curricula refuse a bad step.** ``step`` or ``problems`` negative or NaN, a state dict whose
    level is out of range, an infinite observation: a ``ValueError`` naming the argument.
16. **Wrong types are ValueErrors**, never a TypeError, a KeyError or a string scored character
    by character.
17. **Every public API argument is checked at the call**, one ``ValueError`` naming it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import clevr_math
import clevr_math.rewards as clevr
import clotho_aqa.audio as clotho_audio
import clotho_aqa.rewards as clotho
from clevr_math import AdaptiveCurriculum, Curriculum, Difficulty

RIGHT = ["3", "<think>2 + 1</think><answer>3</answer>", "\\boxed{3}"]


# --- cause 8: numbers as numbers -------------------------------------------------------------

GOLDS = {"int": 3, "float 3.0": 3.0, "numpy.float64": np.float64(3), "numpy.int64": np.int64(3),
         "numpy.int32": np.int32(3), "string 3.0": "3.0", "string ' 3 '": " 3 "}


@pytest.mark.parametrize("gold", list(GOLDS.values()), ids=list(GOLDS))
@pytest.mark.parametrize("completion", RIGHT)
def test_cause_8_an_integral_number_gold_scores_a_right_answer_one(gold, completion):
    assert clevr.accuracy_reward([completion], answer=[gold]) == [1.0]
    assert clevr.compute_score("clevr_math", completion, gold) == 1.0
    assert clevr.compute_score(data_sources=np.array(["clevr_math"]), solution_strs=np.array([completion]),
                               ground_truths=np.array([gold], dtype=object), extra_infos=np.array([{}])) == [1.0]


def test_cause_8_a_wrong_answer_still_scores_zero_and_a_fraction_is_no_integer():
    assert clevr.accuracy_reward(["4", "2"], answer=[3.0, 2.5]) == [0.0, 0.0]
    assert clevr.compute_score("clevr_math", "3", np.float64(3.5)) == 0.0


BAD_GOLDS = {"True": True, "False": False, "numpy.bool_": np.bool_(True), "nan": math.nan, "inf": math.inf,
             "a list": [3], "a dict": {"answer": 3}, "bytes": b"3"}


@pytest.mark.parametrize("gold", list(BAD_GOLDS.values()), ids=list(BAD_GOLDS))
def test_cause_8_a_gold_that_is_no_number_or_string_is_refused(gold):
    with pytest.raises(ValueError, match=r"accuracy_reward: answer\[0\] must be a (finite )?number or a string"):
        clevr.accuracy_reward(["3"], answer=[gold])
    with pytest.raises(ValueError, match="compute_score: ground_truth must be a (finite )?number or a string"):
        clevr.compute_score("clevr_math", "3", gold)


@pytest.mark.parametrize("gold", [True, np.bool_(False), 2.5 + 1j], ids=["True", "numpy.bool_", "complex"])
def test_cause_8_clotho_refuses_a_boolean_or_complex_answer(gold):
    with pytest.raises(ValueError, match=r"answers\[0\]\[1\] must be a number or a string"):
        clotho.accuracy_reward(["yes"], answers=[["yes", gold, "no"]])


# --- cause 9: finite weights and thresholds ------------------------------------------------------

@pytest.mark.parametrize("module", [clevr, clotho], ids=["clevr_math", "clotho_aqa"])
@pytest.mark.parametrize("weight", [math.nan, math.inf, -math.inf, True, "0.5", -0.5],
                         ids=["nan", "inf", "-inf", "True", "a string", "negative"])
def test_cause_9_format_weight_must_be_a_finite_number(module, weight):
    with pytest.raises(ValueError, match="compute_score: format_weight must be a finite number"):
        module.compute_score("x", "<think>.</think><answer>3</answer>", "3", format_weight=weight)
    with pytest.raises(ValueError, match="format_weight"):  # the batch form too, before any row
        module.compute_score(solution_strs=["3"], ground_truths=["3"], format_weight=weight)


@pytest.mark.parametrize("weight", [math.nan, math.inf, 1.5, -0.1, True], ids=["nan", "inf", "1.5", "-0.1", "True"])
def test_cause_9_easyr1_format_weight_is_a_share(weight):
    from clevr_math.trainer_rewards import compute_score_sequential

    with pytest.raises(ValueError, match="compute_score: format_weight must be a finite number >= 0 and <= 1"):
        compute_score_sequential({"response": "<think>.</think><answer>3</answer>", "ground_truth": "3"},
                             format_weight=weight)


def test_cause_9_a_finite_weight_still_weighs():
    assert clevr.compute_score("x", "<think>.</think><answer>3</answer>", 3.0, format_weight=0.5) == \
        {"score": 1.5, "accuracy": 1.0, "format": 1.0}


@pytest.mark.parametrize("raise_above, lower_below", [(math.nan, None), (math.inf, None), (True, None),
                                                      (0.8, math.nan), (0.8, -math.inf), (0.8, False)])
def test_cause_9_curriculum_thresholds_must_be_finite_numbers(raise_above, lower_below):
    with pytest.raises(ValueError, match="(raise_above|lower_below) must be a finite number"):
        AdaptiveCurriculum.over("max_answer", [10, 20], reward="r", window=2, raise_above=raise_above,
                                lower_below=lower_below)


# --- cause 10: curricula ---------------------------------------------------------------------------

def _fixed():
    return Curriculum.raising("num_operations", [1, 2, 3], every=10)


def _adaptive():
    return AdaptiveCurriculum.over("max_answer", [10, 20, 30], reward="r", window=2, raise_above=0.8, delay=0)


CURRICULUM_ROWS = {
    "difficulty(step=-1)": (lambda: _fixed().difficulty(step=-1), "step must be an integer >= 0"),
    "difficulty(step=nan)": (lambda: _fixed().difficulty(step=math.nan), "step must be an integer >= 0"),
    "difficulty(step=2.5)": (lambda: _fixed().difficulty(step=2.5), "step must be an integer >= 0"),
    "difficulty(step=True)": (lambda: _fixed().difficulty(step=True), "step must be an integer >= 0"),
    "difficulty(problems=-5)": (lambda: _fixed().difficulty(problems=-5), "problems must be an integer >= 0"),
    "by problems, difficulty(-5)": (lambda: Curriculum([(0, {}), (5, {"max_answer": 20})], by="problems").difficulty(-5),
                                    "problems must be an integer >= 0"),
    "step = -1": (lambda: setattr(_fixed(), "step", -1), "step must be an integer >= 0"),
    "adaptive difficulty(step=-1)": (lambda: _adaptive().difficulty(step=-1), "step must be an integer >= 0"),
    "load_state_dict(current=-1)": (lambda: _adaptive().load_state_dict({**_adaptive().state_dict(), "current": -1}),
                                    r"state\['current'\] must be an integer in 0..2"),
    "load_state_dict(current=99)": (lambda: _adaptive().load_state_dict({**_adaptive().state_dict(), "current": 99}),
                                    r"state\['current'\] must be an integer in 0..2"),
    "load_state_dict(current='1')": (lambda: _adaptive().load_state_dict({**_adaptive().state_dict(), "current": "1"}),
                                     r"state\['current'\] must be an integer"),
    "load_state_dict(recent=[nan])": (lambda: _adaptive().load_state_dict({**_adaptive().state_dict(),
                                                                           "recent": [math.nan]}),
                                      r"state\['recent'\]\[0\] must be a finite number"),
    "load_state_dict(ignored=-1)": (lambda: _adaptive().load_state_dict({**_adaptive().state_dict(), "ignored": -1}),
                                    r"state\['ignored'\] must be an integer"),
    "load_state_dict(changes=[[0, 7]])": (lambda: _adaptive().load_state_dict({**_adaptive().state_dict(),
                                                                               "changes": [[0, 7]]}),
                                          r"state\['changes'\]\[0\] level must be an integer in 0..2"),
    "load_state_dict({})": (lambda: _adaptive().load_state_dict({}), "state lacks current"),
    "load_state_dict(None)": (lambda: _adaptive().load_state_dict(None), "state must be a dict"),
    "observe(inf)": (lambda: _adaptive().observe(math.inf), "value must be a finite number"),
    "observe(nan)": (lambda: _adaptive().observe(math.nan), "value must be a finite number"),
    "observe('1.0')": (lambda: _adaptive().observe("1.0"), "value must be a finite number"),
    "schedule of non-pairs": (lambda: Curriculum([5]), r"schedule\[0\] must be a \(threshold, difficulty\) pair"),
    "schedule a string": (lambda: Curriculum("ab"), "schedule must be a non-empty list"),
    "a level that is a number": (lambda: Curriculum([(0, 5)]), "the difficulty must be a Difficulty or a dict"),
    "raising(values='abc')": (lambda: Curriculum.raising("max_answer", "abc", every=1), "values must be a list"),
    "by='steps'": (lambda: Curriculum([(0, {})], by="steps"), "by must be one of step, problems"),
}


@pytest.mark.parametrize("call, message", list(CURRICULUM_ROWS.values()), ids=list(CURRICULUM_ROWS))
def test_cause_10_a_curriculum_refuses_bad_input_with_one_value_error(call, message):
    with pytest.raises(ValueError, match=message) as refused:
        call()
    assert "\n" not in str(refused.value)


def test_cause_10_a_refused_state_changes_nothing_and_observe_still_works():
    curriculum = _adaptive()
    curriculum.observe(1.0)
    before = curriculum.state_dict()
    with pytest.raises(ValueError):
        curriculum.load_state_dict({**before, "current": 1, "changes": [[0, 9]]})
    assert curriculum.state_dict() == before
    assert curriculum.observe(1.0) == 1 and curriculum.difficulty().max_answer == 20


# --- cause 16: wrong types are ValueErrors ----------------------------------------------------------

TYPE_ROWS = {
    "accuracy_reward([3])": (lambda: clevr.accuracy_reward([3]), r"completions\[0\]: a completion must be a string"),
    "clotho accuracy_reward([3])": (lambda: clotho.accuracy_reward([3], answers=[["3"]]), "a completion must be a string"),
    "format_reward([3])": (lambda: clevr.format_reward([3]), r"format_reward: completions\[0\]"),
    "a message part {'text': 5}": (
        lambda: clevr.accuracy_reward([[{"role": "assistant", "content": [{"type": "text", "text": 5}]}]], answer=["5"]),
        "a text part's text must be a string, got int 5"),
    "a message that is a string in a list": (lambda: clevr.accuracy_reward([["3"]], answer=["3"]),
                                             "a message must be a dict"),
    "a message content that is a number": (lambda: clevr.format_reward([[{"role": "assistant", "content": 3}]]),
                                           "a message's content must be a string or a list of parts"),
    "compute_score(solution_strs=None)": (lambda: clevr.compute_score(solution_strs=None, ground_truths=["3"]),
                                          "solution_strs must be a list"),
    "compute_score(solution_strs='33', ground_truths=['3', '3'])": (
        lambda: clevr.compute_score(solution_strs="33", ground_truths=["3", "3"]), "solution_strs must be a list"),
    "compute_score(ground_truths='33')": (lambda: clevr.compute_score(solution_strs=["3", "3"], ground_truths="33"),
                                          "ground_truths must be a list"),
    "compute_score(extra_infos={})": (lambda: clotho.compute_score(solution_strs=["3"], extra_infos={}),
                                      "extra_infos must be a list"),
    "compute_score(return_dict='yes')": (lambda: clevr.compute_score("x", "3", "3", return_dict="yes"),
                                         "return_dict must be True or False"),
    "compute_score(format_style=['boxed'])": (lambda: clevr.compute_score("x", "3", "3", format_style=["boxed"]),
                                              "format_style must be one of"),
    "Clotho answer_type=['integer']": (lambda: clotho.accuracy_reward(["2"], answers=[["2"]], answer_type=["integer"]),
                                       r"answer_type\[0\] must be one of yes_no, single_word, got 'integer'"),
    "Clotho answer_type=[3]": (lambda: clotho.accuracy_reward(["2"], answers=[["2"]], answer_type=[3]),
                               r"answer_type\[0\] must be one of"),
    "Clotho labelling=['majority']": (lambda: clotho.make_accuracy_reward(["majority"]), "labelling must be one of"),
    "Clotho compute_score(labelling=['x'])": (lambda: clotho.compute_score("x", "yes", ["yes"], labelling=["x"]),
                                              "unknown labelling"),
    "Clotho vocabulary='rain'": (lambda: clotho.make_accuracy_reward(vocabulary="rain"), "vocabulary must be"),
    "Clotho ground_truth a dict": (lambda: clotho.compute_score("x", "yes", {"a": "yes"}),
                                   "ground_truth must be a number or a string"),
    "make_accuracy_reward(name=5)": (lambda: clevr.make_accuracy_reward(5), "name must be a str"),
    "make_format_reward(['boxed'])": (lambda: clevr.make_format_reward(["boxed"]), "style must be one of"),
}


@pytest.mark.parametrize("call, message", list(TYPE_ROWS.values()), ids=list(TYPE_ROWS))
def test_cause_16_a_wrong_type_is_one_value_error(call, message):
    with pytest.raises(ValueError, match=message) as refused:
        call()
    assert "\n" not in str(refused.value)


# --- cause 17: every public argument checked at the call -------------------------------------------

API_ROWS = {
    "stream(curriculum=5)": (lambda: clevr_math.stream(curriculum=5), "curriculum must be a Curriculum or None"),
    "stream(curriculum={...})": (lambda: clevr_math.stream(curriculum={"max_answer": 3}), "curriculum must be"),
    "stream(curriculum='easy')": (lambda: clevr_math.stream(curriculum="easy"), "curriculum must be"),
    "stream(curriculum=Difficulty())": (lambda: clevr_math.stream(curriculum=Difficulty()), "curriculum must be"),
    "problems(curriculum=5)": (lambda: clevr_math.problems(size=2, curriculum=5), "curriculum must be"),
    "stream(data_dir=3)": (lambda: clevr_math.stream(data_dir=3), "data_dir must be a path"),
    "stream(split=['train'])": (lambda: clevr_math.stream(split=["train"]), "split must be one of"),
    "stream(exclude=5)": (lambda: clevr_math.stream(exclude=5), "exclude must be"),
    "stream(exclude=[5])": (lambda: clevr_math.stream(exclude=[5]), r"exclude\[0\] must be a path"),
    "stream(prompt_style_name=3)": (lambda: clevr_math.stream(prompt_style_name=3), "prompt_style_name must be a str"),
    "stream(seed=-1)": (lambda: clevr_math.stream(seed=-1), "seed must be an integer"),
    "stream(seed=1.5)": (lambda: clevr_math.stream(seed=1.5), "seed must be an integer"),
    "stream(num_shards=0)": (lambda: clevr_math.stream(num_shards=0), "num_shards must be an integer"),
    "stream(num_questions=-5)": (lambda: clevr_math.stream(num_questions=-5), "num_questions must be an integer"),
    "stream(max_answer=nan)": (lambda: clevr_math.stream(max_answer=math.nan), "max_answer must be an integer"),
    "stream(adversarial=inf)": (lambda: clevr_math.stream(adversarial=math.inf), "adversarial must be a number in"),
    "problems(size=-5)": (lambda: clevr_math.problems(size=-5), "size must be an integer"),
    "problems(seed=True)": (lambda: clevr_math.problems(size=2, seed=True), "seed must be an integer"),
    "problems(data_dir=3)": (lambda: clevr_math.problems(3, size=2), "data_dir must be a path"),
    "AdaptiveCurriculum(window=0)": (lambda: AdaptiveCurriculum.over("max_answer", [10], reward="r", window=0,
                                                                     raise_above=0.5), "window must be an integer"),
    "AdaptiveCurriculum(levels=5)": (lambda: AdaptiveCurriculum(5, reward="r", window=1, raise_above=0.5),
                                     "levels must be a list"),
    "Curriculum.raising(every=0)": (lambda: Curriculum.raising("max_answer", [10], every=0), "every must be an integer"),
}


@pytest.mark.parametrize("call, message", list(API_ROWS.values()), ids=list(API_ROWS))
def test_cause_17_an_argument_is_checked_at_the_call(call, message):
    with pytest.raises(ValueError, match=message) as refused:
        call()  # at the call: no iteration of the stream is needed to see it
    assert "\n" not in str(refused.value)


def _world(tmp, **kwargs):
    from builder_utils.clevr.synth import write_clevr_folder

    return write_clevr_folder(kwargs.pop("out_dir", tmp / "w"), kwargs.pop("num_scenes", {"val": 1}),
                              seed=kwargs.pop("seed", 0), **{"progress": False, **kwargs})


WRITER_ROWS = {
    "write_clevr_folder(out_dir=5)": ({"out_dir": 5}, "out_dir must be a path"),
    "write_clevr_folder(out_dir=None)": ({"out_dir": None}, "out_dir must be a path"),
    "write_clevr_folder(splits=5)": ({"num_scenes": 1, "splits": 5}, "splits must be a list of non-empty strings"),
    "write_clevr_folder(render='no')": ({"render": "no"}, "render must be True or False"),
    "write_clevr_folder(progress=3)": ({"progress": 3}, "progress must be True or False"),
    "write_clevr_folder(overwrite='x')": ({"overwrite": "x"}, "overwrite must be True or False"),
    "write_clevr_folder(dask=5)": ({"dask": 5}, "dask must be a str or None"),
    "write_clevr_folder(images={})": ({"images": {}}, "images must be an ImageOptions"),
}


@pytest.mark.parametrize("kwargs, message", list(WRITER_ROWS.values()), ids=list(WRITER_ROWS))
def test_cause_17_the_world_writer_checks_every_argument_before_writing(kwargs, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        _world(tmp_path, **kwargs)
    assert not (tmp_path / "w").exists()  # nothing written


AUDIO_ROWS = {
    "decode_audio(42)": (lambda: clotho_audio.decode_audio(42), "decode_audio expects a row"),
    "decode_audio(sampling_rate=-1)": (lambda: clotho_audio.decode_audio({"array": [0.0], "sampling_rate": 8000},
                                                                         sampling_rate=-1), "sampling_rate must be"),
    "decode_audio(mono='yes')": (lambda: clotho_audio.decode_audio({"array": [0.0], "sampling_rate": 8000}, mono="yes"),
                                 "mono must be True or False"),
    "without_decoding(5)": (lambda: clotho_audio.without_decoding(5), "dataset must be a Dataset"),
}


@pytest.mark.parametrize("call, message", list(AUDIO_ROWS.values()), ids=list(AUDIO_ROWS))
def test_cause_17_audio_helpers_check_their_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _evaluation():
    from builder_utils import evaluation

    return evaluation


EVALUATION_ROWS = {
    "extract_ranked(3, 'integer')": (lambda: _evaluation().extract_ranked(3, "integer"), "prediction must be a str"),
    "extract_ranked('3', 'integer', limit=-1)": (lambda: _evaluation().extract_ranked("3", "integer", limit=-1),
                                                "limit must be an integer"),
    "extract_ranked('3', ['integer'])": (lambda: _evaluation().extract_ranked("3", ["integer"]), "unknown answer kind"),
    "extract_integer(None)": (lambda: _evaluation().extract_integer(None), "text must be a str"),
    "extract_yes_no(5)": (lambda: _evaluation().extract_yes_no(5), "text must be a str"),
    "extract_word(b'rain')": (lambda: _evaluation().extract_word(b"rain"), "text must be a str"),
    "answer_span(['3'])": (lambda: _evaluation().answer_span(["3"]), "text must be a str"),
    "score(['3'], 3)": (lambda: _evaluation().score(["3"], 3), "gold must be a str"),
    "score(5, '3')": (lambda: _evaluation().score(5, "3"), "answers must be a list"),
    "summarize(5)": (lambda: _evaluation().summarize(5), "items must be a list"),
    "summarize([1, 2])": (lambda: _evaluation().summarize([1, 2]), r"items\[0\] must be a Scored"),
    "summarize(top_k=0)": (lambda: _evaluation().summarize([], top_k=0), "top_k must be an integer"),
    "bootstrap_interval(5, 3)": (lambda: _evaluation().bootstrap_interval(5, 3), "correct must be an integer in 0..3"),
    "bootstrap_interval(1, -1)": (lambda: _evaluation().bootstrap_interval(1, -1), "total must be an integer"),
    "bootstrap_interval(level=nan)": (lambda: _evaluation().bootstrap_interval(1, 2, level=math.nan),
                                      "level must be a finite number"),
    "bootstrap_interval(level=1.5)": (lambda: _evaluation().bootstrap_interval(1, 2, level=1.5),
                                      "level must be a number between 0 and 1"),
    "ClevrMathConfig(name=5)": (lambda: clevr_math.ClevrMathConfig(name=5), "name must be a config name"),
    "ClothoAQAConfig(name=5)": (lambda: __import__("clotho_aqa").ClothoAQAConfig(name=5), "name must be a config name"),
    "ClevrMath(data_dir=5)": (lambda: clevr_math.ClevrMath(config_name="general", data_dir=5),
                              "data_dir must be a folder path"),
    "ClothoAQA(data_dir=[])": (lambda: __import__("clotho_aqa").ClothoAQA(config_name="yes_no_majority", data_dir=[]),
                               "data_dir must be a folder path"),
}


@pytest.mark.parametrize("call, message", list(EVALUATION_ROWS.values()), ids=list(EVALUATION_ROWS))
def test_cause_17_scoring_and_configs_check_their_arguments(call, message):
    with pytest.raises(ValueError, match=message) as refused:
        call()
    assert "\n" not in str(refused.value)
