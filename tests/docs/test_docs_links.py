"""The README stays short, says what CI runs, and every link in the docs leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose(text: str, *, spans: bool = False) -> list[str]:
    """The lines of a Markdown page outside fenced code blocks, code spans removed
    unless ``spans``."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line if spans else _CODE_SPAN.sub("", line))
    return out


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, counts = set(), dict[str, int]()
    for line in prose(path.read_text(encoding="utf-8"), spans=True):
        m = _HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(f"{base}-{n}" if n else base)  # a repeated heading gets -1, -2, ...
    return found


def links(path: Path) -> list[str]:
    return [t for line in prose(path.read_text(encoding="utf-8")) for t in _LINK.findall(line)]


def broken(path: Path) -> list[str]:
    """Every relative link of ``path`` that names no file, or no heading of that file."""
    bad = []
    for target in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    return bad


def test_the_readme_is_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 350, f"README.md has {len(lines)} lines; move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken(page) == []


def test_the_readme_links_a_page_for_every_door() -> None:
    targets = {t.partition("#")[0] for t in links(ROOT / "README.md")}
    doors = ["extract", "branches", "retrieval", "importers", "serving", "inspector"]
    doors += ["langgraph", "scaling", "branchbench", "redaction", "performance", "core"]
    assert {f"docs/{d}.md" for d in doors} <= targets
    assert "SECURITY.md" in targets


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    [command] = [line for line in ci if "pytest" in line and not line.startswith("#")]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    shown = [line.strip() for line in section.splitlines() if line.startswith("    ")]
    assert command in shown, (command, shown)
    demo = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/branchmem demo"
    assert demo in shown


def test_the_checker_sees_what_is_broken(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other page\n\n## Its part, `code` too\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md) [ok](other.md#its-part-code-too) [ok](#page)"
        " ![ok](other.md) [web](https://example.com/x)\n"
        "[gone](missing.md) [no part](other.md#nothing) [no anchor](#nowhere)\n"
        "`[in code](missing2.md)`\n```\n[in a block](missing3.md)\n```\n"
    )
    assert broken(page) == [
        "missing.md: no such file",
        "other.md#nothing: no heading #nothing in other.md",
        "#nowhere: no heading #nowhere in page.md",
    ]


def test_headings_get_the_anchors_github_gives() -> None:
    assert slug("Erasure and the server's files") == "erasure-and-the-servers-files"
    assert slug("Measuring recall: the scenario sets") == "measuring-recall-the-scenario-sets"
    assert slug("`Store.search` options") == "storesearch-options"
    assert slug("Files, erasure and privacy") == "files-erasure-and-privacy"
