"""The docs hold together: the index reaches every page, and every relative
link and anchor in the project's Markdown resolves (GitHub's heading anchors)."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from .conftest import ROOT

DOCS = ROOT / "docs"
INDEX = DOCS / "index.md"

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_HTML_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")


def _prose(text: str) -> list[str]:
    """The lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_ " or cat[0] in "LN" or cat == "Mn":
            kept.append("-" if ch == " " else ch)
    return "".join(kept)


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("Comparing two bots: `compare`", "comparing-two-bots-compare"),
        ("Resilience & limits (v1.1)", "resilience--limits-v11"),
        ("The [ladder](ladder.md) \u2013 a season", "the-ladder--a-season"),
        ("Zählen der Stiche", "zählen-der-stiche"),
    ],
)
def test_slug_is_githubs(heading: str, anchor: str) -> None:
    assert slug(heading) == anchor


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    for line in _prose(path.read_text(encoding="utf-8")):
        out.update(_HTML_ID.findall(line))
        m = _HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def markdown_files() -> list[Path]:
    skip = {".venv", "node_modules", ".git", "build", "dist"}
    return sorted(
        p
        for p in ROOT.rglob("*.md")
        if not skip.intersection(p.relative_to(ROOT).parts) and not p.name.startswith(".")
    )


def links(path: Path) -> list[str]:
    return [t for line in _prose(path.read_text(encoding="utf-8")) for t in _LINK.findall(line)]


def broken_links(path: Path) -> list[str]:
    """Each relative link of *path* whose file or heading anchor is missing."""
    broken = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    return broken


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    broken = broken_links(path)
    assert not broken, f"{path.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_checker_finds_a_missing_file_and_anchor(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# Title\n\n## Twice\n\n## Twice\n")
    page = tmp_path / "a.md"
    page.write_text(
        "[ok](b.md#title) [ok](b.md#twice-1) [ok](#here) ![x](c.png)\n"
        "[bad](b.md#nope) [bad](c.md)\n\n```\n[in code](ignored.md)\n```\n## Here\n"
    )
    (tmp_path / "c.png").write_bytes(b"")
    assert broken_links(page) == [
        "b.md#nope: no heading with anchor #nope in b.md",
        "c.md: no such file",
    ]


def test_the_index_reaches_every_page_and_the_readme_links_it() -> None:
    assert "docs/index.md" in links(ROOT / "README.md")
    linked = {(DOCS / t.partition("#")[0]).resolve() for t in links(INDEX) if "://" not in t}
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {INDEX.resolve()}
    missing = sorted(str(p.relative_to(DOCS)) for p in pages - linked)
    assert not missing, f"docs/index.md does not link {missing}"
