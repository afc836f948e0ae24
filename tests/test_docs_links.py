"""Every link in README.md and docs/*.md leads somewhere: a relative link to a file in the
repository, its `#anchor` to a heading there, an external link well-formed (not fetched:
the tests run without network). The Markdown is parsed with markdown-it-py, so a link
written inside a code span or a fenced block is not a link, as on GitHub."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_MD = MarkdownIt("commonmark").enable("table")


def _tokens(page: Path) -> list[Token]:
    return _MD.parse(page.read_text(encoding="utf-8"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to `-`
    (github-slugger's rule, which keeps letters, digits, `_` and `-` of any script)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The heading anchors of a page; a repeated heading gets -1, -2, … as on GitHub."""
    found: set[str] = set()
    tokens = _tokens(page)
    for opening, inline in pairwise(tokens):
        if opening.type != "heading_open":
            continue
        words = inline.children or []
        text = "".join(c.content for c in words if c.type in ("text", "code_inline"))
        base = anchor = slug(text)
        n = 0
        while anchor in found:
            n += 1
            anchor = f"{base}-{n}"
        found.add(anchor)
    return found


def links(page: Path) -> Iterator[tuple[int, str]]:
    """(line, target) of every link and image on a page."""
    for block in _tokens(page):
        for child in block.children or []:
            target = child.attrs.get("href") or child.attrs.get("src")
            if child.type in ("link_open", "image") and isinstance(target, str):
                yield (block.map[0] + 1 if block.map else 0), target


def problem(page: Path, target: str) -> str | None:
    """Why `target`, linked from `page`, leads nowhere; None when it resolves."""
    parts = urlsplit(target)
    if parts.scheme in ("http", "https"):
        return None if parts.netloc and " " not in target else "not a well-formed URL"
    if parts.scheme or parts.netloc:
        return f"a {parts.scheme or 'network'} link, neither relative nor http(s)"
    path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
    if not path.is_relative_to(ROOT) or not path.exists():
        return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} does not exist"
    if parts.fragment and (path.suffix != ".md" or unquote(parts.fragment) not in anchors(path)):
        return f"no heading #{parts.fragment} in {path.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(page: Path) -> None:
    broken = [
        f"{page.relative_to(ROOT)}:{line}: {target}: {why}"
        for line, target in links(page)
        if (why := problem(page, target)) is not None
    ]
    assert not broken, "\n".join(broken)


def test_the_pages_have_links_to_check() -> None:
    """The parser finds the links (a README whose links all vanished would pass above)."""
    readme = [target for _, target in links(ROOT / "README.md")]
    assert "docs/architecture.md" in readme
    assert "docs/workbench.md#reading-maskscope-check" in readme


def test_github_slugs() -> None:
    assert slug("Reading maskscope check") == "reading-maskscope-check"
    assert slug("Engines: one schema, every production engine") == (
        "engines-one-schema-every-production-engine"
    )
    assert slug("Builds: CPU, GPU and your own model") == "builds-cpu-gpu-and-your-own-model"


def test_the_readme_stays_short() -> None:
    """Issue 25: the README is what the project is, the two commands and links; the manual
    lives in docs/."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 250
