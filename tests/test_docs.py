"""The documentation that is generated from the code is up to date."""

from __future__ import annotations

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
