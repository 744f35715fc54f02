"""Where a freshly rendered card meets the README.md already in the export folder.

What is kept and what is replaced: README.md (this package), "The card" (decided before any
build: :func:`card_state`). The generated parts are wrapped in ``<!-- export:NAME -->`` comments
(hidden on the Hub); a card without them keeps its whole body.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from huggingface_hub import DatasetCard
from huggingface_hub.repocard import REGEX_YAML_BLOCK

from builder_utils.hub.card import CardError, CardTemplate
from builder_utils.ownership import RECORD, OutputFolder, changed

README = "README.md"
ABSENT, OURS, EDITED = "absent", "ours", "edited"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_PARAGRAPHS = re.compile(r"(\n[ \t]*\n)")
_REGION = re.compile(r"<!-- export:(?P<name>[\w,]+) -->\n(?P<body>.*?)\n<!-- /export:(?P=name) -->", re.S)


def card_state(folder: OutputFolder) -> str:
    """``"absent"``, ``"ours"`` (unchanged) or ``"edited"``; a README.md not export's own is refused.

    Example:
        >>> import tempfile
        >>> with OutputFolder.open(tempfile.mkdtemp(), command="export") as folder:
        ...     card_state(folder)
        'absent'
    """
    path = folder.root / README
    if not path.exists() and not path.is_symlink():
        return ABSENT
    if path.is_symlink() or not path.is_file():
        raise CardError(f"{path}: not a regular file; export writes the dataset card there, move it away")
    if not REGEX_YAML_BLOCK.search(path.read_text(encoding="utf-8")):
        raise CardError(
            f"{path}: has no YAML block (--- ... ---), so it is not a dataset card written by export; "
            "export does not replace it: move it away, or export to another folder"
        )
    entry = folder.record.get(README)
    if entry is None:
        raise CardError(
            f"{path}: not written by export (not in {folder.root / RECORD}); export does not rewrite a card it "
            "did not write: move it away, or export to another folder"
        )
    return OURS if changed(folder.root, entry) is None else EDITED


def mark_generated(body: str) -> str:
    """Wrap each paragraph holding a ``{{placeholder}}`` in ``<!-- export:NAMES -->`` markers.

    A whole paragraph: a comment inside a code span or a table would show.

    Example:
        >>> print(mark_generated("Total: {{total_rows}} rows."))
        <!-- export:total_rows -->
        Total: {{total_rows}} rows.
        <!-- /export:total_rows -->
    """
    parts = _PARAGRAPHS.split(body)
    for index in range(0, len(parts), 2):  # odd indexes are the blank-line separators
        names = list(dict.fromkeys(_PLACEHOLDER.findall(parts[index])))
        if names:
            label = ",".join(names)
            parts[index] = f"<!-- export:{label} -->\n{parts[index]}\n<!-- /export:{label} -->"
    return "".join(parts)


def marked_template(template: CardTemplate, existing_keys: set[str] = frozenset()) -> CardTemplate:
    """The template with its generated paragraphs marked, without the YAML keys the hand-edited card sets.

    Example:
        >>> t = CardTemplate("t.md", {"license": "mit", "pretty_name": "X"}, "{{total_rows}}")
        >>> marked_template(t, {"pretty_name"}).metadata
        {'license': 'mit'}
    """
    metadata = {key: value for key, value in template.metadata.items() if key not in existing_keys}
    return dataclasses.replace(template, metadata=metadata, body=mark_generated(template.body))


def update_generated(existing_body: str, rendered_body: str) -> str:
    """``existing_body`` with each marked region replaced by the same (n-th of its name) of ``rendered_body``.

    Regions the new rendering no longer has stay.

    Example:
        >>> old = "Mine.\\n<!-- export:a -->\\nold\\n<!-- /export:a -->\\nNotes."
        >>> update_generated(old, "<!-- export:a -->\\nnew\\n<!-- /export:a -->")
        'Mine.\\n<!-- export:a -->\\nnew\\n<!-- /export:a -->\\nNotes.'
    """
    fresh: dict[str, list[str]] = {}
    for match in _REGION.finditer(rendered_body):
        fresh.setdefault(match["name"], []).append(match["body"])
    used: dict[str, int] = {}

    def replace(match: re.Match) -> str:
        name = match["name"]
        index = used.get(name, 0)
        used[name] = index + 1
        bodies = fresh.get(name, [])
        if index >= len(bodies):
            return match.group(0)
        return f"<!-- export:{name} -->\n{bodies[index]}\n<!-- /export:{name} -->"

    return _REGION.sub(replace, existing_body)


def merged_card(rendered: DatasetCard, existing: DatasetCard | None, state: str) -> DatasetCard:
    """The card to write: ``rendered`` (YAML already merged), the existing body kept if edited by hand.

    Example:
        >>> new = DatasetCard("---\\nlicense: mit\\n---\\n<!-- export:a -->\\nnew\\n<!-- /export:a -->\\n")
        >>> old = DatasetCard("---\\nlicense: mit\\n---\\nMine.\\n<!-- export:a -->\\nold\\n<!-- /export:a -->\\n")
        >>> merged_card(new, old, EDITED).text
        'Mine.\\n<!-- export:a -->\\nnew\\n<!-- /export:a -->\\n'
    """
    if state != EDITED or existing is None:
        return rendered
    body = update_generated(existing.text, rendered.text)
    return DatasetCard(f"---\n{rendered.data.to_yaml()}\n---\n{body}")
