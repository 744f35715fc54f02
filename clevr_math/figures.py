"""A CLEVR-Math problem as one figure: :func:`figure` (README, "A figure per problem").

The chain of thought names each object it counts with its pixel position in the image ("the small
gray rubber cylinder, located near (178, 167)"), so the figure rings those objects, numbered by the
step that first names them, in that step's colour.
"""

from __future__ import annotations

import re

from builder_utils.figures import COLOURS, Line, Marker, as_image, compose
from clevr_math.categories import CATEGORIES

__all__ = ["figure", "referred_objects"]

_OBJECT = re.compile(r"the ([^,:;]+?), located near \((\d+), (\d+)\)")
_STEP = re.compile(r"^Step (\d+): (.*)$")
_MUTED = "#666666"


def referred_objects(cot: str) -> list[tuple[int, str, int, int]]:
    """``(step, description, x, y)`` for each object the chain of thought names, at its first mention.

    Example:
        >>> referred_objects("Step 1: There are 4 objects in the scene.\\n"
        ...                  "Step 2: There is 1 gray cylinder: the small gray rubber cylinder, located near (178, 167).")
        [(2, 'small gray rubber cylinder', 178, 167)]
    """
    found: dict[tuple[int, int], tuple[int, str, int, int]] = {}
    for line in cot.splitlines():
        step = _STEP.match(line)
        if step is None:
            continue
        for match in _OBJECT.finditer(step.group(2)):
            x, y = int(match.group(2)), int(match.group(3))
            found.setdefault((x, y), (int(step.group(1)), match.group(1), x, y))
    return list(found.values())


def _category(row: dict, features) -> str:
    value = row.get("category")
    if isinstance(value, int):  # a ClassLabel id: the features' names, else the builder's fixed order
        names = features["category"].names if features is not None and "category" in features else CATEGORIES
        return names[value] if 0 <= value < len(names) else str(value)
    return "" if value is None else str(value)


def _reasoning(row: dict, steps_marked: set[int]) -> list[Line]:
    cot = row.get("cot") or ""
    if not cot:  # released questions have no chain of thought; their program still says how
        program = " -> ".join(f"{node['function']}({', '.join(node['value_inputs'])})" if node["value_inputs"]
                              else node["function"] for node in row.get("program") or [])
        return [Line(program, "Program", _MUTED)] if program else []
    lines = []
    for text in cot.splitlines():
        step = _STEP.match(text)
        if step is None:
            lines.append(Line(text))
            continue
        number = int(step.group(1))
        colour = COLOURS[(number - 1) % len(COLOURS)] if number in steps_marked else _MUTED
        lines.append(Line(step.group(2), f"{number}.", colour))
    return lines


def figure(row: dict, features=None, image=None):
    """One CLEVR-Math problem as a figure (a ``PIL.Image``; a notebook shows it inline): the image with the
    objects the reasoning names ringed and numbered by step, the question, the answer and the reasoning
    (``cot``, or the ``program`` when there is none).

    ``row``: a row of any configuration (``image``), of the ``prompts`` layout or of
    :func:`clevr_math.stream` (``images``), decoded or not; ``features`` (``ds.features``) turns the
    ``category`` number into its name; ``image`` draws another image than the row's.

    Example::

        from datasets import load_dataset
        import clevr_math
        ds = load_dataset("demo_output/clevr_math/hub", "general", split="train")
        clevr_math.figure(ds[0], ds.features)            # shown inline by Jupyter
        clevr_math.figure(next(iter(clevr_math.stream(seed=0)))).save("problem.png")
    """
    media = as_image(image if image is not None else row["image"] if "image" in row else row["images"])
    objects = referred_objects(row.get("cot") or "")
    markers = [Marker(x, y, str(step), COLOURS[(step - 1) % len(COLOURS)]) for step, _, x, y in objects]
    template = str(row.get("template", ""))
    if row.get("template_index") is not None:
        template += f"[{row['template_index']}]"
    operations = row.get("num_operations")
    title = "  ·  ".join(part for part in (
        str(row.get("question_id", "")), _category(row, features), template,
        f"{operations} operation{'s' if operations != 1 else ''}" if operations is not None else "") if part)
    answer = row.get("label", row.get("answer"))
    lines = [Line(str(row["question"]), "Q"), Line(str(answer), "A"), *_reasoning(row, {s for s, *_ in objects})]
    return compose(title, media, lines, markers)
