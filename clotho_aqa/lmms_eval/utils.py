"""The ``!function`` entries of the Clotho-AQA lmms-eval task, over :mod:`clotho_aqa.evaluate`.

Each question's record (its 3 annotator answers, type and the model's text) goes to every
metric; each aggregation scores all records with the extraction and labellings of
``clotho-aqa evaluate``, so the harness and the command give the same numbers. The vocabulary
for single-word extraction is the answers of the evaluated questions.

Example:
    >>> doc = {"question_id": "a.wav#0", "question": "Is it raining?", "answers": ["yes", "yes", "no"],
    ...        "answer_type": "yes_no"}
    >>> clotho_aqa_doc_to_text(doc, {"pre_prompt": "", "yes_no_post_prompt": " Answer yes or no."})
    'Is it raining? Answer yes or no.'
    >>> records = [clotho_aqa_process_results(doc, ["Yes, it is."])["yes_no_majority"]]
    >>> clotho_aqa_yes_no_majority(records), clotho_aqa_yes_no_unfiltered(records)
    (1.0, 0.6666666666666666)
"""

from __future__ import annotations

from builder_utils.evaluation.evaluate import system_result
from clotho_aqa.evaluate import SPEC, aqa_question

METRICS = {
    "yes_no_unfiltered": "yes_no/unfiltered",
    "yes_no_unanimous": "yes_no/unanimous",
    "yes_no_majority": "yes_no/majority",
    "single_word_top1": "single_word/unfiltered",
    "single_word_majority_top1": "single_word/majority",
}


def clotho_aqa_doc_to_audio(doc: dict) -> list:
    """The clip, as ``datasets`` decodes it (lmms-eval's audio models take it from here).

    Example:
        >>> clotho_aqa_doc_to_audio({"audio": {"array": [0.0], "sampling_rate": 44100}})[0]["sampling_rate"]
        44100
    """
    return [doc["audio"]]


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


def clotho_aqa_process_results(doc: dict, results: list) -> dict:
    """The same record for every metric.

    Example:
        >>> sorted(clotho_aqa_process_results({"question_id": "q", "question": "Is it?", "answers": ["no"] * 3,
        ...                                    "answer_type": "yes_no"}, ["no"]))[:2]
        ['single_word_majority_top1', 'single_word_top1']
    """
    record = {
        "question_id": doc["question_id"],
        "question": doc["question"],
        "answers": list(doc["answers"]),
        "answer_type": doc["answer_type"],
        "prediction": results[0] if results else None,
    }
    return {metric: record for metric in METRICS}


def _accuracy(records: list[dict], labelling: str) -> float | None:
    questions = [aqa_question(r["question_id"], r["question"], r["answers"], r["answer_type"]) for r in records]
    vocabulary = {a for q in questions if q.kind == "single_word" for a in q.answers}
    result = system_result(SPEC, questions, {r["question_id"]: r["prediction"] for r in records}, "questions",
                           vocabulary)
    return result["by_labelling"][labelling]["accuracy"]


def clotho_aqa_yes_no_unfiltered(records: list[dict]) -> float | None:
    """Binary accuracy, every annotator answer a target.

    Example:
        >>> record = {"question_id": "q", "question": "Is it wet?", "answers": ["yes", "yes", "no"],
        ...           "answer_type": "yes_no", "prediction": "yes"}
        >>> clotho_aqa_yes_no_unfiltered([record])
        0.6666666666666666
    """
    return _accuracy(records, METRICS["yes_no_unfiltered"])


def clotho_aqa_yes_no_unanimous(records: list[dict]) -> float | None:
    """Binary accuracy on the questions whose 3 annotators agree.

    Example:
        >>> record = {"question_id": "q", "question": "Is it wet?", "answers": ["no", "no", "no"],
        ...           "answer_type": "yes_no", "prediction": "No."}
        >>> clotho_aqa_yes_no_unanimous([record])
        1.0
    """
    return _accuracy(records, METRICS["yes_no_unanimous"])


def clotho_aqa_yes_no_majority(records: list[dict]) -> float | None:
    """Binary accuracy against the majority vote.

    Example:
        >>> record = {"question_id": "q", "question": "Is it wet?", "answers": ["yes", "no", "no"],
        ...           "answer_type": "yes_no", "prediction": "yes"}
        >>> clotho_aqa_yes_no_majority([record])
        0.0
    """
    return _accuracy(records, METRICS["yes_no_majority"])


def clotho_aqa_single_word_top1(records: list[dict]) -> float | None:
    """Single-word top-1 accuracy, every annotator answer a target.

    Example:
        >>> record = {"question_id": "q", "question": "What is heard?", "answers": ["rain", "rain", "water"],
        ...           "answer_type": "single_word", "prediction": "Rain."}
        >>> clotho_aqa_single_word_top1([record])
        0.6666666666666666
    """
    return _accuracy(records, METRICS["single_word_top1"])


def clotho_aqa_single_word_majority_top1(records: list[dict]) -> float | None:
    """Single-word top-1 accuracy against the majority answer.

    Example:
        >>> record = {"question_id": "q", "question": "What is heard?", "answers": ["rain", "rain", "water"],
        ...           "answer_type": "single_word", "prediction": "Rain."}
        >>> clotho_aqa_single_word_majority_top1([record])
        1.0
    """
    return _accuracy(records, METRICS["single_word_majority_top1"])
