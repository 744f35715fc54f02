"""How CLEVR-Math is scored, as data: :data:`SPEC`, shared by ``clevr-math evaluate``, the
rewards and the lmms-eval tasks. It imports the spec alone: no ``datasets``, no report code.

Example:
    >>> SPEC.correct(math_question("q", "3", "insertion", "addition[0]", 1), "There are three.")
    True
"""

from __future__ import annotations

from typing import Any

from builder_utils.evaluation.spec import Baseline, ChartSpec, Extraction, Question, ScoringSpec, Section

__all__ = ["EXTRACTION", "MULTIHOP", "SPEC", "math_question"]

MULTIHOP = "multihop"
EXTRACTION = ("integer: the last number (digits before number words) of the answer span: the last \\boxed{}, "
              "<answer></answer> or {}, else the text after the last 'Answer:'/'answer is', else the whole text")


def _category_order(name: str) -> tuple:
    from clevr_math.categories import CATEGORIES

    return (CATEGORIES.index(name) if name in CATEGORIES else len(CATEGORIES), name)


#: How CLEVR-Math is scored: integer answers; breakdowns by category (the paper's order),
#: template, number of operations and hop (these two also the generalisation table); majority
#: and question-only prior baselines.
SPEC = ScoringSpec(
    dataset="clevr_math",
    title="CLEVR-Math",
    extractions={"integer": Extraction("integer")},
    sections=(
        Section("by_category", "category", order=_category_order),
        Section("by_template", "template"),
        Section("by_num_operations", "num_operations", "operations", table=False, generalisation=True,
                label="{} operation(s)"),
        Section("by_hop", "hop", order=lambda hop: hop == MULTIHOP, table=False, generalisation=True),
    ),
    charts=(
        ChartSpec("Accuracy by category", "by_category", "category"),
        ChartSpec("Accuracy by number of operations", "by_num_operations", "operations"),
    ),
    baselines=(Baseline("majority"), Baseline("category_prior", ("category",)),
               Baseline("template_prior", ("template", "category"))),
    extraction_note=EXTRACTION,
)


def math_question(question_id: str, answer: str, category: str, template: str, num_operations: int,
                  extra: Any = None) -> Question:
    """One CLEVR-Math question as the spec scores it; ``extra`` is what the program oracle runs
    (a :class:`builder_utils.clevr.evaluate.Program`).

    Example:
        >>> math_question("q", "3", "multihop", "m[0]", 2).keys["hop"]
        'multihop'
    """
    keys = {"category": category, "template": template, "num_operations": num_operations,
            "hop": MULTIHOP if category == MULTIHOP else "single-hop"}
    return Question(question_id, (answer,), "integer", keys, extra)
