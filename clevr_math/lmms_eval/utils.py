"""The ``!function`` entries of the CLEVR-Math lmms-eval tasks, on :data:`clevr_math.scoring.SPEC`
(builder_utils/evaluation/README.md, lmms-eval section); it imports neither ``datasets`` nor the builder.
"""

from __future__ import annotations

import logging
from collections import defaultdict

from builder_utils.evaluation.lmms import mean_score, sample_record, user_turn
from clevr_math.categories import CATEGORIES
from clevr_math.scoring import SPEC, math_question

__all__ = ["clevr_math_accuracy", "clevr_math_doc_to_messages", "clevr_math_doc_to_text", "clevr_math_doc_to_visual",
           "clevr_math_process_results", "mean_score"]

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


def clevr_math_doc_to_messages(doc: dict, lmms_eval_specific_kwargs: dict | None = None) -> list[dict]:
    """The chat messages of a question: one user turn with the image, then the prompt text.

    Example:
        >>> from PIL import Image
        >>> turn = clevr_math_doc_to_messages({"image": Image.new("RGB", (4, 3)), "question": "How many?"})[0]
        >>> turn["role"], [part["type"] for part in turn["content"]], turn["content"][1]["text"]
        ('user', ['image', 'text'], 'How many?')
    """
    return user_turn(clevr_math_doc_to_text(doc, lmms_eval_specific_kwargs), images=clevr_math_doc_to_visual(doc))


def _category(value) -> str:
    return CATEGORIES[value] if isinstance(value, int) and 0 <= value < len(CATEGORIES) else str(value)


def clevr_math_process_results(doc: dict, results: list) -> dict:
    """Per metric, the question's record: ``score``, ``image_filename`` (the cluster key) and the category.

    Example:
        >>> doc = {"question_id": "q", "label": 0, "category": 5, "template": "subtraction-multihop",
        ...        "template_index": 0, "num_operations": 2, "image_filename": "a.png"}
        >>> records = clevr_math_process_results(doc, ["zero"])
        >>> records["accuracy"]["score"], records["unparseable"]["score"], records["accuracy"]["category"]
        (1.0, 0.0, 'multihop')
    """
    prediction = results[0] if results else ""
    category = _category(doc["category"])
    question = math_question(doc["question_id"], str(doc["label"]), category,
                             f"{doc['template']}[{doc['template_index']}]", int(doc["num_operations"]))
    scored = SPEC.score(question, prediction)
    fields = {"question_id": doc["question_id"], "image_filename": doc["image_filename"], "category": category}
    return {
        "accuracy": sample_record([s.correct for s in scored], **fields),
        "unparseable": sample_record([s.status == "unparseable" for s in scored], **fields),
    }


def clevr_math_accuracy(records: list[dict]) -> float | None:
    """Accuracy of the records (the accuracy per category goes to the log).

    Example:
        >>> clevr_math_accuracy([{"correct": 0, "targets": 1, "score": 0.0, "category": "insertion"}])
        0.0
    """
    by_category: dict[str, list[dict]] = defaultdict(list)
    for record in records:
        by_category[record["category"]].append(record)
    logger.info("CLEVR-Math accuracy by category: %s",
                ", ".join(f"{name} {mean_score(rows):.3f} ({len(rows)})" for name, rows in sorted(by_category.items())))
    return mean_score(records)
