"""Qrels (relevance judgements), one judgement per line: ``qid iteration docid relevance``.

The iteration column is historical and ignored by trec_eval; relevance is an integer grade
(0 = not relevant; some collections use -1 or -2 for "junk" or "unjudged"), kept within the
32-bit C ``int`` that pytrec_eval stores it in.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable

from clir_toolkit.errors import FormatError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats.checks import INT32_MAX, INT32_MIN, Unique, check_id, parse_int
from clir_toolkit.formats.lines import blank_line, empty_file, iter_lines
from clir_toolkit.formats.records import PathLike, Qrel

_GRADE_FIX = "grades are 0, 1, 2 ...: pytrec_eval keeps them in a 32-bit C int"


def read_qrels(path: PathLike) -> list[Qrel]:
    """Read TREC qrels: ``qid iteration docid relevance`` per line, whitespace-separated."""
    qrels: list[Qrel] = []
    unique = Unique(path)
    for number, text in iter_lines(path):
        columns = text.split()
        if not columns:
            raise blank_line(path, number)
        if len(columns) != 4:
            raise FormatError(
                path,
                number,
                f"expected 4 columns (qid iteration docid relevance), found {len(columns)}",
            )
        qid, iteration, docid, grade = columns
        check_id(path, number, "qid", qid)
        check_id(path, number, "docid", docid)
        relevance = parse_int(path, number, "relevance", grade, fix=_GRADE_FIX)
        unique.add((qid, docid), number, f"docid {docid} is judged twice for query {qid}")
        qrels.append(Qrel(qid, docid, relevance, iteration))
    if not qrels:
        raise empty_file(path, "one 'qid 0 docid relevance' line per judgement")
    return qrels


def write_qrels(path: PathLike, qrels: Iterable[Qrel]) -> None:
    """Write ``qid 0 docid relevance`` lines in the given order."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()
    for qrel in qrels:
        check_id(path, None, "qid", qrel.qid)
        check_id(path, None, "docid", qrel.docid)
        if (qrel.qid, qrel.docid) in seen:
            raise FormatError(path, None, f"docid {qrel.docid} is judged twice for {qrel.qid}")
        seen.add((qrel.qid, qrel.docid))
        lines.append(f"{qrel.qid} 0 {qrel.docid} {_grade(path, qrel)}\n")
    with atomic_write(path) as handle:
        handle.writelines(lines)


def _grade(path: PathLike, qrel: Qrel) -> int:
    """The relevance of ``qrel`` as :func:`read_qrels` would read it back (a C int)."""
    where = f"relevance of docid {qrel.docid} for query {qrel.qid}"
    try:
        if isinstance(qrel.relevance, bool):
            raise TypeError
        value = operator.index(qrel.relevance)  # int, numpy integers; not 1.5
    except TypeError:
        raise FormatError(
            path, None, f"{where} is not an integer: {qrel.relevance!r}", _GRADE_FIX
        ) from None
    if not INT32_MIN <= value <= INT32_MAX:
        raise FormatError(
            path, None, f"{where} is out of range ({INT32_MIN} to {INT32_MAX})", _GRADE_FIX
        )
    return value
