"""Figures quoted in prose, taken from the results tables they come from.

A figure that a note, a README or a docs page quotes from a generated table is written as a
markdown link to that table, with the cell's address as the link's title::

    K-NRM over the tuned hybrid scores
    [0.7205▲](RESULTS.md "manpages-en-fr — test; pipeline; nDCG@10")

The address is ``SECTION; ROW; COLUMN``:

- ``SECTION`` names the heading above the table, by its start ("manpages-en-fr — test"
  matches "manpages-en-fr — test (195 queries)"). Where the same heading appears twice, the
  one under another heading is named with its parent, as ``Reranked runs against their own
  first stage > manpages-en-fr — test``. An empty section means the file's only table.
- ``ROW`` is the row's first cell (without "(baseline)" or bold marks); where two rows of
  a table share it, the value of another column tells them apart: ``tuned-use-m3 [lang=de]``;
- ``COLUMN`` is the column's header (a header that a table repeats, as ``wall s`` for the
  toolkit and then for Anserini, names its first column).

The link's text is the cell's leading number with its significance mark (▲/▼), if any:
``0.7198▲`` from the cell ``0.7198▲ (0.875)``. :func:`refresh` rewrites every such text
from the tables as they are now (``clir figures``, and ``clir run`` for the notes beside
the tables it writes); :func:`check` lists the figures that no longer match, so that a
test fails when a document quotes a figure its table does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.files import atomic_write

#: A figure: ``[TEXT](PATH "SECTION; ROW; COLUMN")`` — a link to a markdown file with a title
#: of three parts separated by "; ".
FIGURE = re.compile(
    r'\[(?P<text>[^\]\n]*)\]\((?P<path>[^)\s]+\.md) "(?P<address>[^"\n]*;[^"\n]*;[^"\n]*)"\)'
)

#: The cell's leading number and its significance mark: "0.7198▲", "−0.012", "10.1", "93 %".
_LEADING_FIGURE = re.compile(r"[-−+]?\d[\d,]*(?:\.\d+)?(?: ?%)?[▲▼]?")


@dataclass(frozen=True)
class Cell:
    """One cell of a markdown table: where it is and what it says."""

    headings: tuple[str, ...]  # the headings above its table, outermost first (H2 down)
    row: str
    column: str
    text: str
    line: int  # its row's line in the file
    others: tuple[tuple[str, str], ...] = ()  # (column, text) of its row's other cells


@dataclass(frozen=True)
class Mismatch:
    """A figure that its table does not hold (``expected`` None: the address finds no cell)."""

    document: Path
    line: int
    address: str
    quoted: str
    expected: str | None
    reason: str

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.quoted!r} ({self.address}): {self.reason}"


def _cells_of_row(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _row_label(cell: str) -> str:
    return cell.replace("**", "").removesuffix(" (baseline)").strip()


def read_tables(path: Path) -> list[Cell]:
    """Every cell of the markdown tables in ``path``, with the headings above its table."""
    cells: list[Cell] = []
    headings: list[tuple[int, str]] = []
    header: list[str] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        heading = re.match(r"(#{2,6}) (.*)", line)
        if heading:
            level = len(heading.group(1))
            headings = [(lvl, text) for lvl, text in headings if lvl < level]
            headings.append((level, heading.group(2).strip()))
            header = None
            continue
        if not line.startswith("|"):
            header = None
            continue
        row = _cells_of_row(line)
        if header is None:
            header = row
            continue
        if all(re.fullmatch(r":?-+:?", cell) for cell in row):  # the separator line
            continue
        columns = [column.replace("**", "").strip() for column in header]
        others = tuple(zip(columns, (cell.replace("**", "") for cell in row), strict=False))
        for column, text in zip(columns[1:], row[1:], strict=False):
            cells.append(Cell(tuple(text for _, text in headings), _row_label(row[0]),
                              column, text, number, others))  # fmt: skip
    return cells


def _names(heading: str, part: str) -> bool:
    """Whether a section part names a heading: the whole heading, or its start up to a space."""
    return heading == part or heading.startswith(part + " ")


def find_cell(cells: Iterable[Cell], address: str) -> Cell:
    """The one cell at ``address`` ("SECTION; ROW; COLUMN"); ClirError if none or several."""
    parts = [part.strip() for part in address.split(";")]
    if len(parts) != 3:
        raise ClirError(f"{address!r}: a figure's address is 'SECTION; ROW; COLUMN'")
    section, row, column = parts
    path = [part.strip() for part in section.split(">")] if section else []
    qualifier = re.fullmatch(r"(.*?) \[([^=\]]+)=([^\]]*)\]", row)  # "tuned-use-m3 [lang=de]"
    if qualifier:
        row, given = qualifier.group(1), (qualifier.group(2), qualifier.group(3))
    found = [
        cell for cell in cells
        if cell.row == row and cell.column == column
        and (not qualifier or given in cell.others)
        and (not path or (len(cell.headings) >= len(path) and all(
            _names(heading, part)
            for heading, part in zip(cell.headings[-len(path):], path, strict=True))))
    ]  # fmt: skip
    leftmost: dict[tuple[tuple[str, ...], int], Cell] = {}
    for cell in found:  # a header that a table repeats names its first column
        leftmost.setdefault((cell.headings, cell.line), cell)
    found = list(leftmost.values())
    if not found:
        raise ClirError(f"no cell at {address!r}")
    if len({cell.headings for cell in found}) > 1:
        places = "; ".join(" > ".join(cell.headings) for cell in found)
        raise ClirError(f"{address!r} names several cells (under {places}): name the section "
                         "with its parent, as 'PARENT > SECTION'")  # fmt: skip
    if len(found) > 1:
        lines = ", ".join(str(cell.line) for cell in found)
        raise ClirError(f"{address!r} names several rows (lines {lines}): add the value of "
                        f"another column to the row, as '{row} [COLUMN=VALUE]'")  # fmt: skip
    return found[0]


def figure_of(cell: Cell) -> str:
    """What a figure quoting ``cell`` says: its leading number and significance mark."""
    text = cell.text.replace("**", "").strip()
    match = _LEADING_FIGURE.match(text)
    if not match:
        raise ClirError(f"the cell {cell.row!r} / {cell.column!r} holds no figure: {text!r}")
    return match.group(0)


def _prose_lines(lines: list[str]) -> Iterable[tuple[int, str]]:
    """(index, line) of the lines outside fenced code blocks, where figures are quoted."""
    fenced = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            yield index, line


def _quoted(line: str, match: re.Match[str]) -> bool:
    """Whether ``match`` is a figure, not an example of one inside `inline code`."""
    return line[: match.start()].count("`") % 2 == 0


def _figures(document: Path) -> Iterable[tuple[int, re.Match[str]]]:
    lines = document.read_text(encoding="utf-8").splitlines()
    for index, line in _prose_lines(lines):
        for match in FIGURE.finditer(line):
            if _quoted(line, match):
                yield index + 1, match


def _expected(document: Path, match: re.Match[str], tables: dict[Path, list[Cell]]) -> str:
    table = (document.parent / match.group("path")).resolve()
    if table not in tables:
        if not table.is_file():
            raise ClirError(f"{match.group('path')}: no such table")
        tables[table] = read_tables(table)
    return figure_of(find_cell(tables[table], match.group("address")))


def markdown_files(paths: list[Path]) -> list[Path]:
    """The markdown files named, and those below the directories named (hidden ones and
    virtual environments skipped)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(
                file for file in path.rglob("*.md")
                if not any(part.startswith(".") or part in ("node_modules", "site-packages")
                           for part in file.relative_to(path).parts[:-1])
            )  # fmt: skip
        elif path.is_file():
            found.append(path)
        else:
            raise ClirError(f"{path}: no such file or directory")
    return found


def check(documents: Iterable[Path]) -> list[Mismatch]:
    """The figures of ``documents`` that their tables do not hold (none: all are true)."""
    tables: dict[Path, list[Cell]] = {}
    mismatches = []
    for document in documents:
        for line, match in _figures(document):
            quoted, address = match.group("text"), match.group("address")
            try:
                expected = _expected(document, match, tables)
            except ClirError as error:
                mismatches.append(Mismatch(document, line, address, quoted, None, str(error)))
                continue
            if quoted != expected:
                mismatches.append(Mismatch(document, line, address, quoted, expected,
                                           f"the table says {expected}"))  # fmt: skip
    return mismatches


def refresh(document: Path) -> int:
    """Rewrite the figures of ``document`` from their tables; how many changed.

    An address that finds no cell is a :class:`FormatError` naming the document's line, and
    the document is then left as it was."""
    tables: dict[Path, list[Cell]] = {}
    lines = document.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = 0
    for number, line in _prose_lines(lines):

        def quote(match: re.Match[str], number: int = number, line: str = line) -> str:
            nonlocal changed
            if not _quoted(line, match):
                return match.group(0)
            try:
                expected = _expected(document, match, tables)
            except ClirError as error:
                raise FormatError(document, number + 1, str(error)) from None
            changed += expected != match.group("text")
            return f'[{expected}]({match.group("path")} "{match.group("address")}")'

        lines[number] = FIGURE.sub(quote, line)
    if changed:
        with atomic_write(document) as handle:
            handle.write("".join(lines))
    return changed
