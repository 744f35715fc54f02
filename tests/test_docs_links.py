"""Every relative link in the repository's Markdown points to an existing file, and an anchor
to an existing heading of it (as GitHub names headings), so moving text never leaves a dead link."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIPPED_DIRS = {".git", ".venv", ".venv-legacy", ".venv-audio", ".venv-harness", ".pytest_cache", "demo_output", "node_modules"}
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~)")


def markdown_files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        # every .venv-* of the Makefile's optional environments (their packages' own Markdown)
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".venv") and not d.endswith(".egg-info")]
        found.extend(Path(folder) / name for name in files if name.endswith(".md"))
    return sorted(found)


def prose_lines(path: Path):
    """(line number, line) outside fenced code blocks, inline code removed."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", "", line)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    names = set()
    for _, line in _heading_lines(path):
        base = slug(line)
        count = seen.get(base, 0)
        seen[base] = count + 1
        names.add(base if count == 0 else f"{base}-{count}")
    return names


def _heading_lines(path: Path):
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            yield number, line.lstrip("#")


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    problems = []
    for number, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):      # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{number}: {target}"
            if not linked.exists():
                problems.append(f"{where}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: no heading with that anchor")
    return problems


def test_slug_follows_github():
    assert slug(" Stratified split search (Clotho-AQA)") == "stratified-split-search-clotho-aqa"
    assert slug(" `builder_utils.hub`: export, and push") == "builder_utilshub-export-and-push"


def test_a_broken_link_is_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n[ok](#title) [gone](missing.md) [bad](#nothing)\n```\n[code](x.md)\n```\n")
    assert broken_links(page, root=tmp_path) == [
        "page.md:2: missing.md: no such file",
        "page.md:2: #nothing: no heading with that anchor",
    ]


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    assert broken_links(path) == []
