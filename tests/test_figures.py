"""Figures quoted in prose are their tables' (clir_toolkit.experiments.figures, clir figures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError
from clir_toolkit.experiments.figures import check, find_cell, read_tables, refresh
from tests.conftest import assert_one_line_error, run_clir

TABLE = """\
# Results

## manpages-en-fr — test (195 queries)

| run | nDCG@10 | R@100 |
| --- | ---: | ---: |
| bm25-dict (baseline) | 0.4325 | 0.7610 |
| **pipeline** | **0.6292▲ (0.875)** | 0.8750▲ |

## Rerankers

| run | lang | training |
|---|---|---|
| tuned-use-m3 | fr | 10.1 min |
| tuned-use-m3 | de | 2.5 min |

## Speed

| step | wall s | Anserini | wall s |
|---|---:|---|---:|
| clir index | 74.3 | IndexCollection | 68.9 |

## Reranked runs against their own first stage

### manpages-en-fr — test (195 queries)

| run | nDCG@10 |
|---|---|
| pipeline | 0.6100 |
"""

NOTE = """\
# Notes

The pipeline scores [0.6292▲](RESULTS.md "manpages-en-fr — test; pipeline; nDCG@10")
against [0.4325](RESULTS.md "manpages-en-fr — test; bm25-dict; nDCG@10") for BM25.
"""


@pytest.fixture
def results(tmp_path: Path) -> Path:
    # The second "manpages-en-fr — test" heading is renamed: the note's addresses name one cell.
    (tmp_path / "RESULTS.md").write_text(TABLE.replace("### manpages", "### all of "), "utf-8")
    (tmp_path / "NOTES.md").write_text(NOTE, encoding="utf-8")
    return tmp_path


def test_a_cell_is_found_by_its_section_row_and_column(results: Path) -> None:
    (results / "RESULTS.md").write_text(TABLE, encoding="utf-8")
    cells = read_tables(results / "RESULTS.md")
    assert find_cell(cells, "manpages-en-fr — test; bm25-dict; R@100").text == "0.7610"
    nested = "Reranked runs against their own first stage > manpages-en-fr — test"
    assert find_cell(cells, f"{nested}; pipeline; nDCG@10").text == "0.6100"
    with pytest.raises(ClirError, match="names several cells .* 'PARENT > SECTION'"):
        find_cell(cells, "manpages-en-fr — test; pipeline; nDCG@10")
    with pytest.raises(ClirError, match="no cell at"):
        find_cell(cells, "manpages-en-fr — dev; pipeline; nDCG@10")
    # Two rows of one table named alike: another column's value tells them apart.
    assert find_cell(cells, "Rerankers; tuned-use-m3 [lang=de]; training").text == "2.5 min"
    with pytest.raises(ClirError, match=r"several rows \(lines 14, 15\).*\[COLUMN=VALUE\]"):
        find_cell(cells, "Rerankers; tuned-use-m3; training")
    # A header the table repeats (the toolkit's time, then Anserini's) names its first column.
    assert find_cell(cells, "Speed; clir index; wall s").text == "74.3"


def test_figures_that_match_their_tables_pass_and_a_changed_table_is_caught(
    results: Path,
) -> None:
    assert check([results / "NOTES.md"]) == []
    # The table is generated again and a figure moves: the note no longer says what it says.
    (results / "RESULTS.md").write_text(
        TABLE.replace("0.6292▲ (0.875)", "0.6301 (0.870)").replace("### manpages", "### all of "),
        encoding="utf-8",
    )
    [stale] = check([results / "NOTES.md"])
    assert (stale.line, stale.quoted, stale.expected) == (3, "0.6292▲", "0.6301")
    assert refresh(results / "NOTES.md") == 1
    assert '[0.6301](RESULTS.md "manpages-en-fr — test; pipeline; nDCG@10")' in (
        results / "NOTES.md"
    ).read_text(encoding="utf-8")
    assert check([results / "NOTES.md"]) == [] and refresh(results / "NOTES.md") == 0


def test_clir_figures_check_lists_stale_figures_and_exits_1(results: Path) -> None:
    assert run_clir("figures", "--check", str(results)).returncode == 0
    note = (results / "NOTES.md").read_text(encoding="utf-8")
    (results / "NOTES.md").write_text(note.replace("[0.4325]", "[0.43]"), encoding="utf-8")
    result = run_clir("figures", "--check", str(results))
    assert result.returncode == 1
    assert "NOTES.md:4: '0.43'" in result.stdout and "the table says 0.4325" in result.stdout
    assert "1 figures differ from their tables" in result.stderr
    assert (results / "NOTES.md").read_text(encoding="utf-8") != note  # --check changes nothing
    result = run_clir("figures", str(results / "NOTES.md"))
    assert result.returncode == 0 and "1 figures rewritten" in result.stdout
    assert (results / "NOTES.md").read_text(encoding="utf-8") == note


def test_an_address_that_finds_no_cell_is_one_line_and_changes_nothing(results: Path) -> None:
    note = NOTE.replace("[0.4325]", "[0.5]").replace("; bm25-dict;", "; bm25-dictionary;")
    (results / "NOTES.md").write_text(note, encoding="utf-8")
    result = run_clir("figures", str(results / "NOTES.md"))
    assert_one_line_error(result, f"{results / 'NOTES.md'}:4: no cell at",
                          "'manpages-en-fr — test; bm25-dictionary; nDCG@10'")  # fmt: skip
    assert (results / "NOTES.md").read_text(encoding="utf-8") == note
