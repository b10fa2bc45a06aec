"""Run fusion: several rankings of the same queries combined into one (``clir fuse``).

Each run gives, per query, a score to each document it retrieved. Fusion works query by
query on those scores:

1. **Normalisation** (:data:`NORMALISATIONS`), so that scores of different systems (BM25
   sums, cosines in [-1, 1]) can be added: ``minmax`` maps a query's scores to [0, 1]
   (all 0 when they are equal), ``max`` divides them by their maximum, ``sum`` shifts
   them to start at 0 and divides by their sum, ``zmuv`` centres them on their mean and
   divides by their standard deviation (zero mean, unit variance), ``none`` keeps them.
2. **Combination** (:data:`METHODS`), a document missing from a run counting 0 there:

   ``rrf``
       reciprocal rank fusion (Cormack, Clarke and Büttcher, 2009):
       ``sum_r w_r / (k + rank_r(d))`` with ``k`` = 60, ranks from 1 in the order trec_eval
       reads the run; scores and their normalisation play no part.
   ``combsum`` / ``combmnz``
       (Fox and Shaw, 1994) the sum of the normalised scores, ``w_r``-weighted;
       ``combmnz`` multiplies it by the number of runs that retrieved the document.
   ``interpolate``
       the weighted sum ``sum_r w_r * s_r(d)`` with weights that default to ``1/n``: with
       two runs and ``--weights 0.5 0.5`` the linear interpolation of a hybrid search.

Weights default to 1 (``1/n`` for ``interpolate``). The fused run keeps each query's top
``depth`` documents, sorted and tie-broken by docid as trec_eval reads a run
(:func:`clir_toolkit.formats.write_run`). The definitions are those of ranx's ``fuse``
(its ``min-max``, ``max``, ``sum`` and ``zmuv`` norms, its ``rrf``, ``sum``, ``mnz`` and
``wsum`` methods), which the tests use as the oracle.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.errors import UsageError
from clir_toolkit.formats import RunRow, read_run, sort_run, write_run
from clir_toolkit.params import Param, check_options, declare

#: A query's scores: docid → score.
Scores = dict[str, float]

NORMALISATIONS: tuple[str, ...] = ("minmax", "max", "sum", "zmuv", "none")
METHODS: tuple[str, ...] = ("rrf", "interpolate", "combsum", "combmnz")
DEFAULT_RRF_K = 60
DEFAULT_DEPTH = 1000

FUSION_PARAMS = declare(
    Param("method", str, "rrf", "how the runs combine: reciprocal rank fusion, weighted sum "
          "(interpolate), CombSUM or CombMNZ of normalised scores", choices=METHODS,
          flag="--method"),
    Param("normalise", str, "minmax", "per-query score normalisation before combsum, "
          "combmnz and interpolate", choices=NORMALISATIONS, flag="--normalise"),
    Param("weights", float, doc="one weight per run", shape="list", minimum=0, optional=True,
          note="default: 1 each; 1/n each for interpolate", metavar="W", flag="--weights"),
    Param("rrf_k", int, DEFAULT_RRF_K, "k of reciprocal rank fusion, 1/(k + rank)", minimum=1,
          flag="--rrf-k"),
    Param("depth", int, DEFAULT_DEPTH, "documents kept per query in the fused run", minimum=1,
          flag="--depth"),
)  # fmt: skip
"""The options of :func:`fuse_runs` (``clir fuse``)."""


LARGE = 1e150
"""A query whose scores reach this magnitude has them divided by their largest magnitude
before normalising: every normalisation here is unchanged by a positive scale, and their
differences, sums and squares then stay finite (scores of ±1e308 overflowed to inf and NaN).
Ordinary scores are normalised as they are, to the last bit."""


def normalise(scores: Mapping[str, float], how: str) -> Scores:
    """A query's scores normalised as ``how`` says (:data:`NORMALISATIONS`)."""
    if how not in NORMALISATIONS:
        raise UsageError(f"unknown normalisation '{how}' (use one of: {', '.join(NORMALISATIONS)})")
    if not scores or how == "none":
        return dict(scores)
    values = list(scores.values())
    low, high = min(values), max(values)
    magnitude = max(abs(low), abs(high))
    if magnitude > LARGE:
        scores = {d: s / magnitude for d, s in scores.items()}
        values = list(scores.values())
        low, high = min(values), max(values)
    if how == "minmax":
        span = high - low
        return {d: (s - low) / span if span else 0.0 for d, s in scores.items()}
    if how == "max":
        return {d: s / high if high else 0.0 for d, s in scores.items()}
    if how == "sum":
        total = sum(s - low for s in values)
        return {d: (s - low) / total if total else 0.0 for d, s in scores.items()}
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((s - mean) ** 2 for s in values) / len(values))
    return {d: (s - mean) / deviation if deviation else 0.0 for d, s in scores.items()}


def ranked_docids(scores: Mapping[str, float]) -> list[str]:
    """A query's docids in the order trec_eval reads them: score descending, ties by docid
    descending."""
    return sorted(scores, key=lambda docid: (scores[docid], docid), reverse=True)


def fuse_query(
    runs: Sequence[Mapping[str, float]],
    method: str,
    weights: Sequence[float],
    normalisation: str = "minmax",
    rrf_k: int = DEFAULT_RRF_K,
) -> Scores:
    """One query's fused scores from its scores in each run (an empty mapping: the run did
    not retrieve anything for it)."""
    fused: Scores = {}
    retrieved_by: dict[str, int] = {}
    for scores, weight in zip(runs, weights, strict=True):
        if method == "rrf":
            contributions = {
                docid: 1.0 / (rrf_k + rank)
                for rank, docid in enumerate(ranked_docids(scores), start=1)
            }
        else:
            contributions = normalise(scores, normalisation)
        for docid, value in contributions.items():
            fused[docid] = fused.get(docid, 0.0) + weight * value
            retrieved_by[docid] = retrieved_by.get(docid, 0) + 1
    if method == "combmnz":
        return {docid: score * retrieved_by[docid] for docid, score in fused.items()}
    return fused


def by_query(rows: Sequence[RunRow]) -> dict[str, Scores]:
    """A run's rows as ``{qid: {docid: score}}``, queries in the order they first appear."""
    queries: dict[str, Scores] = {}
    for row in rows:
        queries.setdefault(row.qid, {})[row.docid] = row.score
    return queries


def fusion_weights(method: str, runs: int, weights: Sequence[float] | None) -> list[float]:
    """The weights of ``runs`` runs: as given (one per run), else the method's default."""
    if weights is None:
        return [1.0 / runs if method == "interpolate" else 1.0] * runs
    if len(weights) != runs:
        raise UsageError(f"--weights needs one weight per run: {runs} runs, {len(weights)} weights")
    return [float(w) for w in weights]


def fuse(
    runs: Sequence[Sequence[RunRow]],
    method: str = "rrf",
    *,
    weights: Sequence[float] | None = None,
    normalisation: str = "minmax",
    rrf_k: int = DEFAULT_RRF_K,
    depth: int = DEFAULT_DEPTH,
    tag: str = "fused",
) -> list[RunRow]:
    """The fused run of ``runs`` (each a list of rows): every query of any run, its top
    ``depth`` documents by fused score, sorted as trec_eval reads a run."""
    check_options(
        {"method": method, "normalise": normalisation, "weights": weights, "rrf_k": rrf_k,
         "depth": depth},
        FUSION_PARAMS.values(),
    )  # fmt: skip
    if not runs:
        raise UsageError("fusion needs at least one run")
    chosen = fusion_weights(method, len(runs), weights)
    queries = [by_query(rows) for rows in runs]
    qids = list(dict.fromkeys(qid for run in queries for qid in run))
    rows: list[RunRow] = []
    for qid in qids:
        fused = fuse_query(
            [run.get(qid, {}) for run in queries], method, chosen, normalisation, rrf_k
        )
        for docid in ranked_docids(fused)[:depth]:
            rows.append(RunRow(qid, docid, 0, fused[docid], tag))
    return sort_run(rows)


@dataclass(frozen=True)
class FuseReport:
    """What :func:`fuse_runs` did, for the command line's summary."""

    output: Path
    runs: int
    queries: int
    rows: int
    seconds: float


def fuse_runs(
    paths: Sequence[str | Path],
    output: str | Path,
    method: str = "rrf",
    *,
    weights: Sequence[float] | None = None,
    normalisation: str = "minmax",
    rrf_k: int = DEFAULT_RRF_K,
    depth: int = DEFAULT_DEPTH,
    tag: str | None = None,
) -> FuseReport:
    """Read the TREC runs ``paths``, fuse them (:func:`fuse`) and write ``output``
    atomically: an error leaves an existing ``output`` as it was."""
    started = time.perf_counter()
    if len(paths) < 2:
        raise UsageError(f"clir fuse needs at least two runs (got {len(paths)})")
    runs = [read_run(path) for path in paths]
    rows = fuse(
        runs, method, weights=weights, normalisation=normalisation, rrf_k=rrf_k, depth=depth,
        tag=method if tag is None else tag,
    )  # fmt: skip
    write_run(output, rows)
    queries = len({row.qid for row in rows})
    return FuseReport(Path(output), len(runs), queries, len(rows), time.perf_counter() - started)
