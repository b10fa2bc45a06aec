"""Whether a run of ``clir search`` is Anserini's ``SearchCollection`` run, up to ties
(``clir bench commands`` and ``clir bench scale`` print it beside their timings)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def anserini_rounded(printed: Sequence[float]) -> list[float]:
    """The 4-decimal scores behind the scores Anserini's ``SearchCollection`` prints, best
    first. Its ``ScoreTiesAdjusterReranker`` rounds each score to 4 decimals, then takes off
    1e-6 for each place since the last one whose rounded score was more than 1e-4 below
    the previous printed one: a long tie (a collection that repeats its documents has
    hundreds), or ties in neighbouring 1e-4 steps, drift below their rounded scores by 1e-6
    a place. Read back with the same rule: a score is one place further into the count when
    adding that many millionths puts it on the 1e-4 grid within 1e-4 of the previous printed
    score, and starts a new count otherwise."""
    def on_grid(value: float) -> bool:
        return abs(value * 1e4 - round(value * 1e4)) < 0.03  # float32: ±1e-6 a score

    rounded: list[float] = []
    dup = 0
    for place, score in enumerate(printed):
        counted = round(score + (dup + 1) * 1e-6, 4)  # one more place into the count
        if place and on_grid(score + (dup + 1) * 1e-6) and printed[place - 1] - counted <= 1.03e-4:
            dup += 1
            rounded.append(counted)
        else:
            dup = 0
            rounded.append(round(score, 4))
    return rounded


def equal_up_to_ties(
    ours: Sequence[tuple[str, float]], theirs: Sequence[tuple[str, float]], hits: int
) -> bool:
    """Whether two rankings of one query (docid, score), best first, hold the same documents
    with the same scores at the same ranks, tied documents in any order. Among documents
    tied at the cut-off, each system may keep different ones.

    ``theirs`` is Anserini's: each of its scores, back on the 4-decimal grid
    (:func:`anserini_rounded`), is ours to 4 decimals, and a tie is a score equal to 4
    decimals, the ties Anserini orders by docid."""
    if len(ours) != len(theirs):
        return False
    rounded = anserini_rounded([score for _, score in theirs])
    if any(abs(score - want) > 5.1e-5 for (_, score), want in zip(ours, rounded, strict=True)):
        return False
    start = 0
    while start < len(ours):
        tied = round(ours[start][1], 4)
        end = start
        while end < len(ours) and round(ours[end][1], 4) == tied:
            end += 1
        cut = end == hits
        if not cut and {d for d, _ in ours[start:end]} != {d for d, _ in theirs[start:end]}:
            return False
        start = end
    return True


def queries_that_differ(ours: Path, theirs: Path, hits: int) -> tuple[int, list[str]]:
    """(queries compared, the ids of those whose rankings differ beyond ties)."""
    from clir_toolkit.formats import read_run

    def rankings(path: Path) -> dict[str, list[tuple[str, float]]]:
        by_query: dict[str, list[tuple[int, str, float]]] = {}
        for row in read_run(path):
            by_query.setdefault(row.qid, []).append((row.rank, row.docid, row.score))
        return {qid: [(d, s) for _, d, s in sorted(rows)] for qid, rows in by_query.items()}

    a, b = rankings(ours), rankings(theirs)
    qids = sorted(a.keys() | b.keys())
    differ = [q for q in qids if not equal_up_to_ties(a.get(q, []), b.get(q, []), hits)]
    return len(qids), differ


def runs_compared(ours: Path, theirs: Path, hits: int) -> str:
    """What :func:`queries_that_differ` found, in a line."""
    compared, differ = queries_that_differ(ours, theirs, hits)
    shown = ", ".join(differ[:5]) + (" ..." if len(differ) > 5 else "")
    return f"runs: {compared - len(differ)} of {compared} queries the same up to ties" + (
        f" (differ: {shown})" if differ else ""
    )
