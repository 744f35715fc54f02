"""Offline checks of a dataset card's YAML against the Hub's rules.

The Hub validates it only on push; these run before, with what the installed libraries know:
``DatasetCardData``'s fields, ``datasets``' known values, and SPDX ids (``packaging.licenses``:
the Hub's are lower-case SPDX ids plus ``other`` and ``unknown``).
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import re
from collections.abc import Mapping

from huggingface_hub import DatasetCardData

# DatasetCardData fields that hold a string or a list of strings.
LIST_FIELDS = (
    "language", "license", "annotations_creators", "language_creators", "multilinguality",
    "size_categories", "source_datasets", "task_categories", "task_ids", "tags",
)
HUB_ONLY_LICENSES = ("other", "unknown")
_LICENSE_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")  # the Hub's slug rule for license_name
_SOURCE = re.compile(r"^(original|extended(\|[\w.-]+(/[\w.-]+)?)?)$")


@functools.lru_cache(maxsize=None)
def known_values() -> dict[str, frozenset[str]]:
    """Field -> the values ``datasets`` knows (empty when this ``datasets`` ships no list for it).

    Example:
        >>> "en" in known_values()["language"], "visual-question-answering" in known_values()["task_categories"]
        (True, True)
    """
    from builder_utils.datasets_adapter import CARD_METADATA_RESOURCES, card_metadata_module as metadata

    resources = importlib.resources.files(CARD_METADATA_RESOURCES)

    def load(name):
        try:
            return json.loads((resources / name).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}

    creators = load("creators.json")
    return {
        "language": frozenset(load("languages.json")),
        "size_categories": frozenset(load("size_categories.json")),
        "multilinguality": frozenset(load("multilingualities.json")),
        "annotations_creators": frozenset(creators.get("annotations", ())),
        "language_creators": frozenset(creators.get("language", ())),
        # deprecated in datasets (kept for old clients), still the list the Hub started from
        "task_categories": frozenset(getattr(metadata, "known_task_ids", {})),
    }


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def _license_problem(license_id: str) -> str | None:
    if license_id in HUB_ONLY_LICENSES:
        return None
    from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression

    try:
        canonical = canonicalize_license_expression(license_id)
    except InvalidLicenseExpression:
        return f"license {license_id!r} is not a Hub license id (SPDX, lower-case); use 'other' with license_name and license_link"
    if canonical.lower() != license_id:
        return f"license {license_id!r}: the Hub spells it {canonical.lower()!r}"
    return None


def metadata_problems(metadata: Mapping) -> list[str]:
    """What the Hub would reject or not recognise in a card's YAML metadata; empty if nothing.

    Example:
        >>> metadata_problems({"license": "mit", "size_categories": ["tiny"]})
        ["size_categories: unknown value 'tiny'"]
    """
    problems = []
    for field in LIST_FIELDS:
        if field in metadata and not all(isinstance(v, str) and v for v in _as_list(metadata[field])):
            problems.append(f"{field} must be a string or a list of strings, got {metadata[field]!r}")
    for field in ("pretty_name", "license_name", "license_link", "paperswithcode_id"):
        if field in metadata and not isinstance(metadata[field], str):
            problems.append(f"{field} must be a string, got {metadata[field]!r}")
    if problems:
        return problems
    # DatasetCardData keeps unknown keys as they are; its own fields must survive a round trip.
    data = DatasetCardData(**metadata).to_dict()
    problems += [f"{key}: huggingface_hub's DatasetCardData changes it" for key in metadata if data.get(key) != metadata[key]]
    for field, known in known_values().items():
        if known and field in metadata:
            problems += [f"{field}: unknown value {v!r}" for v in _as_list(metadata[field]) if v not in known]
    for source in _as_list(metadata.get("source_datasets", [])):
        if not _SOURCE.match(source):
            problems.append(f"source_datasets: {source!r} is neither 'original' nor 'extended|<dataset>'")
    licenses = _as_list(metadata.get("license", []))
    problems += [p for p in map(_license_problem, licenses) if p]
    if "other" in licenses:
        if not metadata.get("license_name") or not metadata.get("license_link"):
            problems.append("license 'other' needs license_name and license_link")
        elif not _LICENSE_NAME.match(metadata["license_name"]):
            problems.append(f"license_name {metadata['license_name']!r} must be a lower-case id (a-z, 0-9, '-', '.')")
    return problems
