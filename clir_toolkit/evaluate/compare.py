"""Comparing two runs query by query: which queries a system won and lost against a baseline.

A difference of means hides how it came about: a run can gain 0.05 nDCG@10 by helping every
query a little, or by helping a few queries a lot while hurting many others. The procedure
(``clir compare RUN_A RUN_B --qrels Q`` calls :func:`compare_runs`, then
:func:`format_comparison`, and with ``--plot``
:func:`~clir_toolkit.evaluate.compare_plot.write_plot`):

1. **Per-query values.** Both runs are evaluated on one measure by
   :func:`~clir_toolkit.evaluate.result.evaluate_runs`, as ``clir eval`` evaluates them:
   every query of the qrels counts, and a query a run has no answer for scores 0.
2. **Deltas.** For each query q, ``Δ(q) = B(q) − A(q)``, where A is the baseline. Query q
   is a *win* of B when ``Δ(q) > 0``, a *loss* when ``Δ(q) < 0`` and a *tie* otherwise
   (``|Δ(q)| <= TIE_TOLERANCE``, so that floating-point noise is not a difference). The mean
   of the deltas is the difference of the two means.
3. **Paired test.** The two-sided p-value of the paired t-test or the Wilcoxon signed-rank
   test on the per-query values (:func:`~clir_toolkit.evaluate.significance.paired_test`),
   the value ``clir eval --baseline`` reports for a single run (one test, no correction).
4. **Order.** The queries sorted from the largest gain to the largest loss, the order of the
   per-query difference charts of TREC track overviews and of Sakai's advice to report the
   distribution of the differences, not only a p-value (T. Sakai, "Statistical reform in
   information retrieval?", SIGIR Forum 48(1), 2014). The K largest wins and losses are
   listed with their query texts when the topics are given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.evaluate.measures import split_measure_names
from clir_toolkit.evaluate.result import _qid_order, evaluate_runs
from clir_toolkit.evaluate.significance import TESTS, paired_test

DEFAULT_MEASURE = "nDCG@10"


DEFAULT_TOP = 10
"""How many of the largest wins and of the largest losses are listed."""


TIE_TOLERANCE = 1e-9
"""Deltas no larger than this in absolute value are ties (floating-point noise)."""


TEST_NAMES = {"ttest": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test"}


@dataclass(frozen=True)
class QueryDelta:
    """One query: its score under the baseline A and under the compared run B."""

    qid: str
    baseline: float
    run: float
    text: str = ""

    @property
    def delta(self) -> float:
        """``B(q) − A(q)``: positive when the compared run does better on this query."""
        return self.run - self.baseline

    @property
    def outcome(self) -> str:
        """``"win"``, ``"loss"`` or ``"tie"`` for the compared run."""
        if self.delta > TIE_TOLERANCE:
            return "win"
        if self.delta < -TIE_TOLERANCE:
            return "loss"
        return "tie"


@dataclass(frozen=True)
class Comparison:
    """Run B against the baseline run A on one measure, query by query.

    ``queries`` holds every qrels query, sorted by delta from the largest gain to the largest
    loss (equal deltas by query id).
    """

    measure: str
    baseline: str
    run: str
    queries: list[QueryDelta]
    p_value: float
    test: str = "ttest"

    def _count(self, outcome: str) -> int:
        return sum(query.outcome == outcome for query in self.queries)

    @property
    def wins(self) -> int:
        return self._count("win")

    @property
    def ties(self) -> int:
        return self._count("tie")

    @property
    def losses(self) -> int:
        return self._count("loss")

    @property
    def mean_baseline(self) -> float:
        return sum(q.baseline for q in self.queries) / len(self.queries)

    @property
    def mean_run(self) -> float:
        return sum(q.run for q in self.queries) / len(self.queries)

    @property
    def mean_delta(self) -> float:
        """The mean of the per-query deltas, i.e. the difference of the two means."""
        return sum(q.delta for q in self.queries) / len(self.queries)

    def top_wins(self, k: int = DEFAULT_TOP) -> list[QueryDelta]:
        """The ``k`` queries with the largest gains, largest first."""
        return [q for q in self.queries if q.outcome == "win"][:k]

    def top_losses(self, k: int = DEFAULT_TOP) -> list[QueryDelta]:
        """The ``k`` queries with the largest losses, largest first."""
        losses = [q for q in self.queries if q.outcome == "loss"]
        return sorted(losses, key=lambda q: (q.delta, _qid_order(q.qid)))[:k]

    def summary(self) -> str:
        """One line: the means, the mean delta, wins/ties/losses and the p-value."""
        return (
            f"mean {self.mean_baseline:.4f} → {self.mean_run:.4f} "
            f"(Δ {self.mean_delta:+.4f}); W/T/L {self.wins}/{self.ties}/{self.losses}; "
            f"{TEST_NAMES[self.test]} p = {format_p(self.p_value)}"
        )


def format_p(p: float) -> str:
    """A p-value to four decimals, or in scientific notation below 0.0001."""
    return f"{p:.4f}" if p >= 1e-4 else f"{p:.1e}"


def _check_run_file(path: Path) -> None:
    if not path.is_file():
        problem = "is a directory, not a run" if path.is_dir() else "no such run file"
        raise ClirError(
            f"{path}: {problem} (give the path of a TREC run, such as clir search --output writes)"
        )


def _query_texts(topics: str | Path | None) -> dict[str, str]:
    from clir_toolkit.formats import read_topics

    if topics is None:
        return {}
    return {topic.qid: topic.query for topic in read_topics(topics)}


def compare_runs(
    qrels: str | Path,
    baseline: str | Path,
    run: str | Path,
    measure: str = DEFAULT_MEASURE,
    topics: str | Path | None = None,
    test: str = "ttest",
) -> Comparison:
    """Compare ``run`` (B) with ``baseline`` (A) query by query on one measure (see the
    module doc); ``topics``, when given, supplies each query's text.

    A run that answers none of the qrels queries is refused (by :func:`evaluate_runs`): it
    is almost always a run of another split or collection, and would only show every query
    as a loss or a win.
    """
    if test not in TESTS:
        raise UsageError(f"unknown test {test!r} (choose one of {', '.join(TESTS)})")
    names = split_measure_names(measure)
    if len(names) != 1:
        raise UsageError(
            f"compare one measure at a time, not {len(names)} ({' '.join(names) or 'none'}); "
            "clir eval shows several side by side"
        )
    paths = [Path(baseline), Path(run)]
    for path in paths:
        _check_run_file(path)
    texts = _query_texts(topics)
    result = evaluate_runs(qrels, paths, measures=names)
    name_a, name_b = result.runs
    values_a = result.per_query[name_a][result.measures[0]]
    values_b = result.per_query[name_b][result.measures[0]]
    queries = [QueryDelta(q, values_a[q], values_b[q], texts.get(q, "")) for q in result.qids]
    return Comparison(
        measure=result.measures[0],
        baseline=name_a,
        run=name_b,
        queries=sorted(queries, key=lambda q: (-q.delta, _qid_order(q.qid))),
        p_value=paired_test(
            [values_b[q] for q in result.qids], [values_a[q] for q in result.qids], test
        ),
        test=test,
    )


# --- the text table ---------------------------------------------------------------------------

QUERY_TEXT_WIDTH = 60
"""Query texts longer than this are cut (with ``…``) in the terminal table."""


def _shorten(text: str, width: int = QUERY_TEXT_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def query_rows(comparison: Comparison, queries: Sequence[QueryDelta]) -> list[list[str]]:
    """Table rows: query id, A's score, B's score, the signed delta (and the query text)."""
    texts = any(q.text for q in comparison.queries)
    return [
        [q.qid, f"{q.baseline:.4f}", f"{q.run:.4f}", f"{q.delta:+.4f}"]
        + ([_shorten(q.text)] if texts else [])
        for q in queries
    ]


def query_header(comparison: Comparison) -> list[str]:
    texts = any(q.text for q in comparison.queries)
    return ["qid", comparison.baseline, comparison.run, "Δ"] + (["query"] if texts else [])


def _aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """The query id and the text left-aligned, the three numbers right-aligned."""
    numeric = range(1, 4)
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(
            cell.rjust(widths[i]) if i in numeric else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ).rstrip()
        for row in [header, *rows]
    ]


def format_comparison(comparison: Comparison, top: int = DEFAULT_TOP) -> str:
    """The comparison as plain text: a headline, the summary line, then the ``top`` largest
    wins and losses, one query a line. No trailing newline."""
    n = len(comparison.queries)
    lines = [
        f"{comparison.measure} per query: {comparison.run} against the baseline "
        f"{comparison.baseline}, {n} {'query' if n == 1 else 'queries'} "
        "(every qrels query; missing ones score 0)",
        comparison.summary(),
    ]
    header = query_header(comparison)
    for title, queries, total in (
        ("Largest wins", comparison.top_wins(top), comparison.wins),
        ("Largest losses", comparison.top_losses(top), comparison.losses),
    ):
        lines.append("")
        if not queries:
            lines.append(f"{title}: none")
            continue
        lines.append(f"{title} ({len(queries)} of {total}):")
        lines += _aligned(header, query_rows(comparison, queries))
    return "\n".join(lines)
