"""Runs (system output), one retrieved document per line: ``qid Q0 docid rank score tag``.

``Q0`` is a literal placeholder and ``tag`` names the system. trec_eval ignores the rank
column: it re-sorts each query by score, descending, breaking ties by docid in *descending*
string order (``comp_sim_docno`` in trec_eval's ``form_res_rels.c``). :func:`write_run`
sorts the same way (:func:`sort_run`) and renumbers the ranks, so the order in the file is
the order every evaluator sees.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from clir_toolkit.errors import FormatError
from clir_toolkit.files import atomic_write, is_stdout
from clir_toolkit.formats.checks import Unique, check_id, parse_int, parse_number
from clir_toolkit.formats.lines import blank_line, empty_file, iter_lines
from clir_toolkit.formats.records import PathLike, RunRow


def read_run(path: PathLike) -> list[RunRow]:
    """Read a TREC run: ``qid Q0 docid rank score tag`` per line, in file order."""
    rows: list[RunRow] = []
    unique = Unique(path)
    for number, text in iter_lines(path):
        columns = text.split()
        if not columns:
            raise blank_line(path, number)
        if len(columns) != 6:
            raise FormatError(
                path,
                number,
                f"expected 6 columns (qid Q0 docid rank score tag), found {len(columns)}",
            )
        qid, _, docid, rank, score, tag = columns
        check_id(path, number, "qid", qid)
        check_id(path, number, "docid", docid)
        position = parse_int(path, number, "rank", rank)
        value = parse_number(path, number, "score", score, "fix the system's scores")
        unique.add((qid, docid), number, f"docid {docid} appears twice for query {qid}")
        rows.append(RunRow(qid, docid, position, value, tag))
    if not rows:
        raise empty_file(path, "one 'qid Q0 docid rank score tag' line per retrieved document")
    return rows


def _trec_eval_order(rows: Sequence[Any]) -> list[Any]:
    """Score descending, ties by docid descending (trec_eval's ``comp_sim_docno``)."""
    ordered = sorted(rows, key=lambda row: row.docid, reverse=True)
    ordered.sort(key=lambda row: row.score, reverse=True)  # stable: keeps the docid order
    return ordered


def sort_run(rows: Iterable[RunRow]) -> list[RunRow]:
    """Sort a run the way trec_eval reads it and renumber the ranks from 1.

    Queries keep the order in which they first appear; within a query, rows go by score
    descending, ties broken by docid in descending string order as trec_eval does.
    """
    by_query: dict[str, list[RunRow]] = {}
    for row in rows:
        by_query.setdefault(row.qid, []).append(row)
    result: list[RunRow] = []
    for query_rows in by_query.values():
        for rank, row in enumerate(_trec_eval_order(query_rows), start=1):
            result.append(RunRow(row.qid, row.docid, rank, row.score, row.tag))
    return result


def _format_score(score: float) -> str:
    """The shortest decimal that reads back as the same float.

    A fixed number of decimals (pyserini writes ``%.6f``) would print two close scores, such
    as the probabilities of a neural reranker, as the same number, and the ranking in the file
    would be lost when trec_eval re-sorts it. Adding 0.0 turns -0.0 into 0.0.
    """
    return repr(float(score) + 0.0)


class Scored(Protocol):
    """A retrieved document as a searcher returns it: its id and its score."""

    @property
    def docid(self) -> str: ...

    @property
    def score(self) -> float: ...


def write_run(path: PathLike, rows: Iterable[RunRow], tag: str | None = None) -> None:
    """Write a TREC run sorted by :func:`sort_run`; ``tag`` replaces every row's tag.

    Nothing is written, and an existing file is left as it was, when a row is invalid or a
    docid appears twice for a query.
    """
    by_query: dict[str, list[RunRow]] = {}
    for row in rows:
        by_query.setdefault(row.qid, []).append(row)
    _write_grouped(path, by_query, tag)


def write_ranked_run(
    path: PathLike, ranked: Iterable[tuple[str, Sequence[Scored]]], tag: str
) -> None:
    """Write the documents each query retrieved, ``(qid, hits)`` pairs, as a TREC run: the
    file :func:`write_run` writes of their rows, without making a row of each hit first (a
    tenth of a second for 100,000 hits); the same checks, the same order."""
    by_query: dict[str, list[Scored]] = {}
    for qid, hits in ranked:
        if hits:  # a query that found nothing has no line, as it has no row
            by_query.setdefault(qid, []).extend(hits)
    _write_grouped(path, by_query, tag)


def _write_grouped(path: PathLike, by_query: Mapping[str, Sequence[Any]], tag: str | None) -> None:
    """Check, then write atomically, each query's rows (or hits, when ``tag`` is given).

    A file that holds these very bytes already is left as it is (its time only is
    renewed): a run made again unchanged, as ``clir run`` of unchanged recipes makes its
    reranked runs, writes nothing, so it also works in a workspace that cannot be written."""
    _check_rows(path, by_query, tag)

    def blocks() -> Iterator[str]:
        for qid, query_rows in by_query.items():
            yield "".join(
                f"{qid} Q0 {row.docid} {rank} {_format_score(row.score)} "
                f"{row.tag if tag is None else tag}\n"
                for rank, row in enumerate(_trec_eval_order(query_rows), start=1)
            )

    if _holds_already(Path(path), blocks()):
        with contextlib.suppress(OSError):
            os.utime(path)
        return
    with atomic_write(path) as handle:
        for block in blocks():
            handle.write(block)


def _holds_already(path: Path, blocks: Iterable[str]) -> bool:
    """Whether the regular file ``path`` holds exactly the text of ``blocks``."""
    import hashlib

    from clir_toolkit.files import sha256_file

    try:
        if not path.is_file() or is_stdout(path):
            return False
        size = path.stat().st_size
    except OSError:
        return False
    digest, length = hashlib.sha256(), 0
    for block in blocks:
        data = block.encode("utf-8")
        length += len(data)
        if length > size:
            return False
        digest.update(data)
    try:
        return length == size and digest.hexdigest() == sha256_file(path)
    except OSError:
        return False


def _check_rows(path: PathLike, by_query: Mapping[str, Sequence[Any]], tag: str | None) -> None:
    """Refuse a run that could not be read back: a bad id or tag, a docid twice for a query,
    a score that is not a finite number; the first such row is named. A docid retrieved for
    many queries is checked once (1,000 topics × 100 hits name a few thousand documents)."""
    tags = {tag} if tag is not None else {row.tag for rows_ in by_query.values() for row in rows_}
    for value in tags:
        check_id(path, None, "tag", value)
    valid_docids: set[str] = set()
    for qid, query_rows in by_query.items():
        check_id(path, None, "qid", qid)
        seen: set[str] = set()
        for row in query_rows:
            if row.docid in seen:
                raise FormatError(
                    path,
                    None,
                    f"docid {row.docid} appears twice for query {qid}",
                    "keep one row per (query, document)",
                )
            seen.add(row.docid)
            if row.docid not in valid_docids:
                valid_docids.add(check_id(path, None, "docid", row.docid))
            try:
                finite = math.isfinite(row.score)
            except (TypeError, OverflowError):  # not a number, or an int beyond any float
                finite = False
            if not finite:
                raise FormatError(
                    path,
                    None,
                    f"score {row.score} of docid {row.docid} for query {qid} is not "
                    "a finite number",
                )
