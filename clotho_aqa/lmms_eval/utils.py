"""The ``!function`` entries of the Clotho-AQA lmms-eval task, on :data:`clotho_aqa.scoring.SPEC`
(scoring, clustering by clip and audio: builder_utils/evaluation/README.md, lmms-eval section).

A question without a target under a labelling (e.g. no majority) has no ``score`` there.

Example (``unfiltered``: the share of the 3 annotator answers matched):
    >>> records = clotho_aqa_process_results({"question_id": "a.wav#0", "question": "Is it raining?",
    ...     "answers": ["yes", "yes", "no"], "answer_type": "yes_no", "file_name": "a.wav"}, ["Yes, it is."])
    >>> mean_score([records["yes_no_majority"]]), mean_score([records["yes_no_unfiltered"]])
    (1.0, 0.6666666666666666)
"""

from __future__ import annotations

from builder_utils.audio import decode_audio, without_decoding
from builder_utils.evaluation.lmms import mean_score, sample_record, user_turn
from clotho_aqa.answers import normalize_answer
from clotho_aqa.scoring import SPEC, aqa_question

__all__ = ["METRICS", "clotho_aqa_doc_to_audio", "clotho_aqa_doc_to_messages", "clotho_aqa_doc_to_text",
           "clotho_aqa_process_docs", "clotho_aqa_process_results", "mean_score"]

#: Metric name -> the spec's labelling it reports (single-word metrics: top-1).
METRICS = {
    "yes_no_unfiltered": "yes_no/unfiltered",
    "yes_no_unanimous": "yes_no/unanimous",
    "yes_no_majority": "yes_no/majority",
    "yes_no_any_of_3": "yes_no/any_of_3",
    "single_word_top1": "single_word/unfiltered",
    "single_word_unanimous_top1": "single_word/unanimous",
    "single_word_majority_top1": "single_word/majority",
    "single_word_any_of_3_top1": "single_word/any_of_3",
}
_LABELLINGS = {metric: SPEC.labelling(name) for metric, name in METRICS.items()}
CHAT_SAMPLING_RATE = 16_000


def clotho_aqa_process_docs(dataset):
    """The split with its audio left undecoded: the clip functions decode it with soundfile.

    Example::

        clotho_aqa_process_docs(load_exported("hub", "questions")["test"]).features["audio"].decode  # -> False
    """
    return without_decoding(dataset)


def clotho_aqa_doc_to_audio(doc: dict) -> list:
    """The clip as lmms-eval's audio models take it: ``{"array": mono float32, "sampling_rate"}``.

    Example:
        >>> import numpy as np
        >>> clip = clotho_aqa_doc_to_audio({"audio": {"array": np.zeros(4), "sampling_rate": 44100}})[0]
        >>> clip["array"].shape, clip["sampling_rate"]
        ((4,), 44100)
    """
    array, rate = decode_audio(doc, mono=True)
    return [{"array": array, "sampling_rate": rate}]


def clotho_aqa_doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    """``pre_prompt + question + post_prompt`` of the question's type.

    Example:
        >>> clotho_aqa_doc_to_text({"question": "What is heard?", "answer_type": "single_word"},
        ...                        {"single_word_post_prompt": " One word."})
        'What is heard? One word.'
    """
    kwargs = lmms_eval_specific_kwargs or {}
    post = kwargs.get(f"{doc['answer_type']}_post_prompt", kwargs.get("post_prompt", ""))
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}{post}"


def clotho_aqa_doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    """The chat messages of a question: one user turn with the clip (at ``audio_sampling_rate``), then the text.

    Example:
        >>> import numpy as np
        >>> doc = {"audio": {"array": np.zeros(44100), "sampling_rate": 44100}, "question": "Is it loud?",
        ...        "answer_type": "yes_no"}
        >>> turn = clotho_aqa_doc_to_messages(doc)[0]
        >>> [part["type"] for part in turn["content"]], turn["content"][0]["url"].shape
        (['audio', 'text'], (16000,))
    """
    kwargs = lmms_eval_specific_kwargs or {}
    array, _ = decode_audio(doc, sampling_rate=int(kwargs.get("audio_sampling_rate", CHAT_SAMPLING_RATE)), mono=True)
    return user_turn(clotho_aqa_doc_to_text(doc, kwargs), audios=[array])


def clotho_aqa_process_results(doc: dict, results: list) -> dict:
    """Per metric, the question's record: ``score`` under that labelling, ``file_name``.

    Example:
        >>> records = clotho_aqa_process_results({"question_id": "q", "question": "Is it?", "answers": ["no"] * 3,
        ...                                       "answer_type": "yes_no", "file_name": "a.wav"}, ["no"])
        >>> records["yes_no_unanimous"]["score"], "score" in records["single_word_top1"]
        (1.0, False)
    """
    prediction = results[0] if results else ""
    question = aqa_question(doc["question_id"], doc["question"], [normalize_answer(a) for a in doc["answers"]],
                            doc["answer_type"])
    fields = {"question_id": doc["question_id"], "file_name": doc["file_name"]}
    return {metric: sample_record([s.correct for s in SPEC.score(question, prediction, labelling)], **fields)
            for metric, labelling in _LABELLINGS.items()}
