"""The Markdown documents hold together: every relative link and picture resolves, anchors
included, the pages the others cite exist, the front pages stay short, and the rules page
agrees with the engine."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from trapy_rl.game.board import Board
from trapy_rl.game.render import render_ascii

ROOT = Path(__file__).resolve().parents[1]
FRONT = ("README.md", "BENCHMARKS.md", "RELIABILITY.md")
DOCS = sorted([*(ROOT / name for name in FRONT), *(ROOT / "docs").rglob("*.md")])
IDS = [str(path.relative_to(ROOT)) for path in DOCS]

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`]*`")
# [text](target) and ![alt](target), an optional "title"; the text may span lines.
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:, ...


def prose(text: str) -> str:
    """``text`` without fenced code blocks, and code spans reduced to a placeholder."""
    return CODE_SPAN.sub("code", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lower-cased, punctuation dropped (letters,
    digits, underscores, hyphens and spaces stay), spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").replace("*", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file; a repeated slug gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(path: Path) -> list[str]:
    """The link and image targets of a Markdown file, outside code."""
    text = prose(path.read_text(encoding="utf-8"))
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def broken_links(path: Path) -> list[str]:
    """Each relative target of ``path`` that names no file, or no heading of its file."""
    broken = []
    for target in links(path):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with the anchor #{anchor}")
    return broken


def test_the_documents_are_found() -> None:
    names = set(IDS)
    assert {"README.md", "BENCHMARKS.md", "docs/rules.md", "docs/architecture.md"} <= names
    assert "docs/experiments/README.md" in names


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_relative_links_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_a_broken_link_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading\n\n## `code`, and more (here)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[fine](there.md) [fine too](there.md#a-heading) [also](there.md#code-and-more-here)\n"
        "![picture](missing.png) [gone](nowhere.md) [no such\nheading](there.md#nope)\n"
        "`[in code](ignored.md)`\n```\n[in a block](ignored.md)\n```\n[web](https://example.org)\n"
    )
    assert broken_links(page) == [
        "missing.png: no such file",
        "nowhere.md: no such file",
        "there.md#nope: no heading with the anchor #nope",
    ]


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_no_document_points_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text
    for name in re.findall(r"[\w./-]*RULES\.md", text):
        assert (path.parent / name).exists() or (ROOT / name).exists(), (
            f"{name} is not in the repository; the rules are docs/rules.md"
        )


def test_front_pages_stay_short() -> None:
    for name, most in (("README.md", 280), ("BENCHMARKS.md", 450)):
        count = len((ROOT / name).read_text(encoding="utf-8").splitlines())
        assert count <= most, f"{name} has {count} lines, more than {most}"


def test_rules_page_agrees_with_the_engine() -> None:
    text = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    board = Board(10)
    diagram = render_ascii(np.zeros(board.num_cells, np.int8), board, show_names=True)
    rows = [line[3:] for line in diagram.splitlines()[:-1]]  # without row numbers and letters
    assert "\n".join(rows) in text
    indices = re.findall(r"^\| `([a-s]\d+)` \| (\d+) \|", text, re.MULTILINE)
    assert len(indices) >= 4
    for cell, index in indices:
        assert board.parse_action(cell) == int(index), cell
    assert f"**{board.swap_action}, is the swap**" in text.replace("\n", " ")
    regions = re.findall(r"^\| \d \| ([a-z-]+) \| `([a-s0-9 ]+)`", text, re.MULTILINE)
    assert len(regions) == 5
    for region, cells in regions:
        k = ("bottom-left", "bottom-right", "right", "top", "left").index(region)
        assert cells.split() == [board.names[c] for c in board.cells_of_region(k)], region
