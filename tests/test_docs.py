"""The documentation that is generated from the code is up to date."""

from __future__ import annotations

import re
from pathlib import Path

from clir_toolkit.cli.reference import markdown

ROOT = Path(__file__).resolve().parent.parent


def test_the_command_line_reference_is_the_parser_s_own() -> None:
    """docs/cli.md is what `python -m clir_toolkit.cli.reference` writes from the parser:
    an option added, removed or reworded without making it again fails here."""
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert committed == markdown(), (
        "docs/cli.md is stale: python -m clir_toolkit.cli.reference > docs/cli.md"
    )


def test_every_command_of_the_parser_has_a_section() -> None:
    text = markdown()
    for command in ("collection build manpages", "index", "search", "rerank train", "run"):
        assert f"## `clir {command}`" in text or f"# `clir {command}`" in text


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces → -."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_link_of_the_readme_and_docs_resolves() -> None:
    """A relative link names a file of the repository, and its #anchor a heading there: a page
    moved or a heading renamed without its links fails here."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):  # https:, mailto: — not ours to check
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and linked.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
                if anchor not in {_anchor(h) for h in headings}:
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_every_module_over_400_lines_says_why_in_the_design_notes() -> None:
    """A module over 400 lines stays whole only with a reason in docs/design.md's "Modules
    about one thing": one that grows past it unnoticed fails here (split it by concern into
    a package, or say there why it is one thing)."""
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = design.split("## Modules about one thing", 1)[1].split("\n## ", 1)[0]
    package = ROOT / "clir_toolkit"
    long_modules = sorted(
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > 400
    )
    unexplained = [module for module in long_modules if f"`{module}` (" not in section]
    assert unexplained == [], f"over 400 lines, not in docs/design.md: {unexplained}"


def test_every_figure_quoted_in_prose_is_its_table_s() -> None:
    """A figure that a note, the README or a docs page quotes from a results table, written
    as [FIGURE](RESULTS.md "SECTION; ROW; COLUMN"), is what that table says now: a table
    generated again without `clir figures` run over the prose fails here."""
    from clir_toolkit.experiments.figures import check, markdown_files

    stale = check(markdown_files([ROOT]))
    assert not stale, "\n".join(str(m) for m in stale) + "\n(clir figures . rewrites them)"
