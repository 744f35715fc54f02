"""The ``!function`` entries of the CLEVR-Math lmms-eval tasks, over :mod:`clevr_math.evaluate`.

``process_results`` keeps what the scorer needs of each question; the aggregations score the
whole list at once with the same extraction and accuracy as ``clevr-math evaluate`` (and log the
per-category table), so the harness and the command give the same numbers.

Example:
    >>> doc = {"question_id": "q1", "question": "Add 2 cubes. How many cubes are there?", "label": 5,
    ...        "category": 2, "template": "addition", "template_index": 1, "num_operations": 1}
    >>> clevr_math_doc_to_text(doc, {"pre_prompt": "", "post_prompt": " Answer with a number."})
    'Add 2 cubes. How many cubes are there? Answer with a number.'
    >>> records = [clevr_math_process_results(doc, ["There are \\\\boxed{5} cubes."])["accuracy"]]
    >>> clevr_math_accuracy(records)
    1.0
"""

from __future__ import annotations

import logging

from builder_utils.evaluation.evaluate import system_result
from builder_utils.evaluation.report import breakdown_table
from clevr_math.config import CATEGORIES
from clevr_math.evaluate import SPEC, math_question

logger = logging.getLogger("clevr_math")


def clevr_math_doc_to_visual(doc: dict) -> list:
    """The question's image, as RGB.

    Example:
        >>> from PIL import Image
        >>> clevr_math_doc_to_visual({"image": Image.new("RGBA", (4, 3))})[0].mode
        'RGB'
    """
    return [doc["image"].convert("RGB")]


def clevr_math_doc_to_text(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> str:
    """``pre_prompt + question + post_prompt``.

    Example:
        >>> clevr_math_doc_to_text({"question": "How many?"})
        'How many?'
    """
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}{kwargs.get('post_prompt', '')}"


def _record(doc: dict, prediction: str) -> dict:
    category = doc["category"]
    return {
        "question_id": doc["question_id"],
        "answer": str(doc["label"]),
        "category": CATEGORIES[category] if isinstance(category, int) and category < len(CATEGORIES) else str(category),
        "template": f"{doc['template']}[{doc['template_index']}]",
        "num_operations": int(doc["num_operations"]),
        "prediction": prediction,
    }


def clevr_math_process_results(doc: dict, results: list) -> dict:
    """One record per metric: the question's keys and the model's text.

    Example:
        >>> doc = {"question_id": "q", "label": 0, "category": 5, "template": "subtraction-multihop",
        ...        "template_index": 0, "num_operations": 2}
        >>> clevr_math_process_results(doc, ["zero"])["accuracy"]["category"]
        'multihop'
    """
    record = _record(doc, results[0] if results else None)
    return {"accuracy": record, "unparseable": record}


def _result(records: list[dict]) -> dict:
    questions = [math_question(r["question_id"], r["answer"], r["category"], r["template"], r["num_operations"])
                 for r in records]
    return system_result(SPEC, questions, {r["question_id"]: r["prediction"] for r in records})


def clevr_math_accuracy(records: list[dict]) -> float:
    """Accuracy of the records (the per-category table goes to the log).

    Example:
        >>> clevr_math_accuracy([{"question_id": "q", "answer": "3", "category": "insertion",
        ...                       "template": "addition[0]", "num_operations": 1, "prediction": "four"}])
        0.0
    """
    result = _result(records)
    logger.info("CLEVR-Math accuracy by category:\n%s", breakdown_table("category", {"model": result}, "by_category"))
    return result["overall"]["accuracy"]


def clevr_math_unparseable(records: list[dict]) -> float:
    """Share of predictions with no integer answer.

    Example:
        >>> clevr_math_unparseable([{"question_id": "q", "answer": "3", "category": "insertion",
        ...                          "template": "addition[0]", "num_operations": 1, "prediction": "unsure"}])
        1.0
    """
    overall = _result(records)["overall"]
    return overall["unparseable"] / overall["total"] if overall["total"] else 0.0
