"""Reading the originally released CLEVR-Math question files (``clevr-math-{train,val,test}.json``).

As the public generator wrote them (``.json`` template names, family indices per template file, answers
as strings or integers, either program spelling); rows get the regenerated rows' features, so published
numbers are reproduced by the same evaluation code.
"""

from __future__ import annotations

import os

from builder_utils.json_input import load_json
from builder_utils.clevr import MalformedProgram, load_metadata, normalize_program

# The public generator's 13 templates: file stem -> category of each template, in file order
# (the mapping by meaning documented for the paper's six categories).
RELEASED_TEMPLATES: dict[str, tuple[str, ...]] = {
    "addition": ("insertion", "insertion", "insertion"),
    "adversarial": ("adversarial", "adversarial", "adversarial"),
    "subtraction": (
        "remove_group",
        "remove_group",
        "remove_subset",
        "count_backwards",
        "remove_group",
        "remove_subset",
    ),
    "subtraction-multihop": ("multihop",),
}
# Position of each file's first template in the whole set, files in sorted order (as ours).
_FAMILY_OFFSET = {}
_offset = 0
for _stem in sorted(RELEASED_TEMPLATES):
    _FAMILY_OFFSET[_stem] = _offset
    _offset += len(RELEASED_TEMPLATES[_stem])


class ReleasedQuestionsError(ValueError):
    """A released question file that cannot be read; the message names the file and question."""


def released_file(directory: str, clevr_split: str) -> str:
    """Path of the released question file of a CLEVR split (``train``, ``val``, ``test``).

    Example:
        >>> released_file("/q", "val")
        '/q/clevr-math-val.json'
    """
    return os.path.join(directory, f"clevr-math-{clevr_split}.json")


def load_released_questions(path: str) -> list[dict]:
    """The ``questions`` list of a released file; :class:`ReleasedQuestionsError` if malformed.

    Example:
        >>> import json, os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "clevr-math-val.json")
        >>> with open(path, "w") as f:
        ...     json.dump({"questions": [{"question": "Subtract all red cubes. How many cubes are left?"}]}, f)
        >>> load_released_questions(path)[0]["question"]
        'Subtract all red cubes. How many cubes are left?'
    """
    doc = load_json(path, what="released questions file", error=ReleasedQuestionsError)
    if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
        raise ReleasedQuestionsError(f'{path}: expected a JSON object {{"info": ..., "questions": [...]}}')
    return doc["questions"]


def released_row(question: dict, where: str) -> dict:
    """The builder's fields of one released question (everything but the image path).

    Example:
        >>> row = released_row({"template_filename": "subtraction.json", "question_family_index": 3,
        ...     "image_filename": "CLEVR_val_000001.png", "image_index": 1, "question": "q?",
        ...     "answer": "2", "program": []}, "f.json: question 0")
        >>> row["category"], row["template"], row["label"]
        ('count_backwards', 'subtraction', 2)
    """
    try:
        stem = question["template_filename"]
        index = question["question_family_index"]
        image_filename = question["image_filename"]
        text = question["question"]
        raw_answer = question["answer"]
    except (KeyError, TypeError) as exc:
        raise ReleasedQuestionsError(f"{where}: missing field {exc}") from None
    stem = stem[: -len(".json")] if stem.endswith(".json") else stem
    categories = RELEASED_TEMPLATES.get(stem)
    if categories is None:
        raise ReleasedQuestionsError(
            f"{where}: unknown template_filename {question['template_filename']!r} "
            f"(expected one of {', '.join(s + '.json' for s in RELEASED_TEMPLATES)})"
        )
    if type(index) is not int or not 0 <= index < len(categories):
        raise ReleasedQuestionsError(
            f"{where}: question_family_index {index!r} out of range for {stem} (0..{len(categories) - 1})"
        )
    try:
        label = int(raw_answer)
    except (TypeError, ValueError):
        raise ReleasedQuestionsError(f"{where}: answer {raw_answer!r} is not an integer") from None
    try:
        program = normalize_program(question.get("program", []))
    except MalformedProgram as exc:
        raise ReleasedQuestionsError(f"{where}: program: {exc}") from None
    return {
        "template": stem,
        "id": image_filename,
        "question": text,
        "label": label,
        "image_filename": image_filename,
        "image_index": question.get("image_index"),
        "category": categories[index],
        "question_family_index": _FAMILY_OFFSET[stem] + index,
        "template_index": index,
        "program": program,
        "cot": None,
        # As the generator counts them: the arithmetic nodes of the program.
        "num_operations": sum(node["function"] in load_metadata().arithmetic for node in program),
        # Not in the released files; working them out would need the scene graphs.
        "intermediate_counts": None,
    }
