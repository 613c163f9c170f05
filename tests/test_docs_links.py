"""Every relative link in README.md and docs/*.md leads somewhere: the file exists and, for a
``#anchor``, a heading of that file has that anchor under GitHub's rules. Also checks the prose
references ``docs/FILE.md, "Section"`` name a heading of that file, since pages cite each other
that way and a renamed heading breaks them silently."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) and ![alt](target); the target ends at the first space or ')'.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"`[^`]*`")
PROSE_REFERENCE = re.compile(r"([\w./-]+\.md)\)?,\s+\"([^\"]+)\"")


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: its rendered text lower-cased, every character but
    letters, digits, marks, '_', '-' and spaces dropped, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link renders as its text
    text = text.replace("`", "").replace("*", "")
    kept = []
    for char in text.lower():
        category = unicodedata.category(char)
        if char in "_- " or category[0] in "LN" or category[0] == "M":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of ``page``; a repeated one gets GitHub's -1, -2 suffixes."""
    seen: Counter[str] = Counter()
    found = set()
    for _, line in _prose_lines(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        anchor = github_anchor(match.group(2))
        found.add(anchor if not seen[anchor] else f"{anchor}-{seen[anchor]}")
        seen[anchor] += 1
    return found


def headings(page: Path) -> list[str]:
    """The text of every heading of ``page``, without its markdown."""
    return [
        match.group(2).replace("`", "")
        for _, line in _prose_lines(page.read_text(encoding="utf-8"))
        if (match := HEADING.match(line))
    ]


def broken_links(page: Path) -> list[str]:
    """Each relative link of ``page`` whose file or anchor does not exist, as 'line: target'."""
    problems = []
    for number, line in _prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(CODE_SPAN.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            destination = (page.parent / path_part).resolve() if path_part else page
            if not destination.exists():
                problems.append(f"{page.name}:{number}: {target} (no such file)")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                problems.append(f"{page.name}:{number}: {target} (no such heading)")
    return problems


def broken_prose_references(page: Path) -> list[str]:
    """Each ``FILE.md, "Section"`` reference whose file or section heading does not exist."""
    problems = []
    for number, line in _prose_lines(page.read_text(encoding="utf-8")):
        for name, section in PROSE_REFERENCE.findall(line):
            candidates = [ROOT / name, page.parent / name, ROOT / "docs" / Path(name).name]
            destination = next((c for c in candidates if c.is_file()), None)
            if destination is None:
                problems.append(f"{page.name}:{number}: {name} (no such file)")
            elif not any(h.startswith(section) for h in headings(destination)):
                problems.append(f"{page.name}:{number}: {name}, {section!r} (no such heading)")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page: Path):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_section_reference_names_a_heading(page: Path):
    assert broken_prose_references(page) == []


def test_anchors_follow_githubs_rules():
    assert github_anchor("Runtime uncertainty: issue #18's goals") == (
        "runtime-uncertainty-issue-18s-goals"
    )
    assert github_anchor("`policy-lookahead` plans (`sim/x.py`, B)") == (
        "policy-lookahead-plans-simxpy-b"
    )
    assert github_anchor("2026-11-24 · A node is slow") == "2026-11-24--a-node-is-slow"


def test_a_broken_link_or_reference_is_found(tmp_path: Path):
    (tmp_path / "other.md").write_text("# Other\n\n## Real section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#real-section) [ok](#page) [web](https://example.org/x)\n"
        "[gone](missing.md) [bad](other.md#no-section) `[code](missing.md)`\n"
        '```\n[fenced](missing.md)\n```\nsee other.md, "Real section"; other.md, "Nowhere"\n',
        encoding="utf-8",
    )
    assert broken_links(page) == [
        "page.md:4: missing.md (no such file)",
        "page.md:4: other.md#no-section (no such heading)",
    ]
    assert broken_prose_references(page) == ["page.md:8: other.md, 'Nowhere' (no such heading)"]
