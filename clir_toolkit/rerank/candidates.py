"""Reranking candidates: the top ``depth`` documents of a run, and the run they rerank into.

The steps of :func:`clir_toolkit.rerank.score.score_run` that do not depend on which kind of
model scores (Liu, *Neural CLIR*, §6.1: a neural model reranks the top of a BM25 ranking):

* :func:`read_candidates`: each query's top ``depth`` documents, in the order trec_eval
  reads the run (score descending, ties by docid);
* :func:`rerank_rows`: the new run. With λ, each score is min-max normalised over the
  query's reranked candidates first, ``score = λ·neural + (1 − λ)·first_stage``; documents
  below ``depth`` keep their first-stage order beneath the reranked ones.

How a model scores the candidates in between is its family's: word ids in batches
(:mod:`clir_toolkit.rerank.word.batches`) or sentence vectors
(:mod:`clir_toolkit.rerank.sentence.tuned_model`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.errors import ClirError
from clir_toolkit.params import Param, check_options, declare

if TYPE_CHECKING:
    import torch

    from clir_toolkit.collection import Collection
    from clir_toolkit.formats import RunRow

DEFAULT_DEPTH = 100

CPU_BATCH_PAIRS = 256
"""Pairs per scoring batch on the CPU when none is asked. K-NRM's forward pass cuts a batch
into blocks that fit the CPU's cache anyway (:data:`clir_toolkit.rerank.word.knrm.CPU_BLOCK_BYTES`),
so the size hardly matters there: 3,657 pairs/s at 256 and 3,776 at 1,024 (``clir bench
rerank --device cpu``, one thread)."""

GPU_BATCH_PAIRS = 4096
"""Pairs per scoring batch on a GPU when none is asked. A batch costs a dozen kernel launches
whatever its size, so small batches leave the GPU waiting: K-NRM (10 × 300 tokens, 300-d,
fp32) scored 174,863 pairs/s at 256, 702,854 at 1,024 and 1,003,836 at 4,096 on an H100
(``clir bench rerank --device cuda --batch-size N``). A batch of 4,096 documents of 300
pieces gathers 2.5 GB of 512-d vectors, which a GPU of 8 GB still holds."""

SCORE_PARAMS = declare(
    Param("depth", int, DEFAULT_DEPTH, "candidates reranked per query", minimum=1,
          flag="--depth"),
    Param("batch_size", int, None,
          f"pairs scored per batch (default: {CPU_BATCH_PAIRS} on the CPU, "
          f"{GPU_BATCH_PAIRS} on a GPU)", minimum=1, optional=True, flag="--batch-size"),
    Param("interpolate", float, doc="λ of λ·neural + (1 − λ)·first stage", minimum=0,
          maximum=1, optional=True, flag="--interpolate"),
)  # fmt: skip
"""The options of :func:`clir_toolkit.rerank.score.score_run` that a value can be wrong for."""


def batch_pairs(batch_size: int | None, device: torch.device) -> int:
    """The pairs of a scoring batch: ``batch_size`` when asked, else the device's default
    (:data:`GPU_BATCH_PAIRS` on CUDA, :data:`CPU_BATCH_PAIRS` otherwise)."""
    if batch_size is not None:
        return batch_size
    return GPU_BATCH_PAIRS if device.type == "cuda" else CPU_BATCH_PAIRS


def check_score_options(depth: int, batch_size: int | None, interpolate: float | None) -> None:
    """Refuse a value of :data:`SCORE_PARAMS` out of its range, in one line."""
    check_options(
        {"depth": depth, "batch_size": batch_size, "interpolate": interpolate},
        SCORE_PARAMS.values(),
    )


@dataclass(frozen=True)
class ScoreReport:
    """What :func:`clir_toolkit.rerank.score.score_run` did."""

    output: Path
    queries: int
    reranked: int
    kept_below_depth: int
    device: str
    seconds: float


def _min_max(values: Sequence[float]) -> list[float]:
    """Scale to [0, 1] by the query's minimum and maximum (all 0 when they are equal)."""
    low, high = min(values), max(values)
    if high == low:
        return [0.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def rerank_rows(
    ranked: Mapping[str, Sequence[RunRow]],
    neural: Mapping[tuple[str, str], float],
    depth: int,
    interpolate: float | None = None,
    tag: str = "rerank",
) -> list[RunRow]:
    """New run rows: the top ``depth`` of each query rescored, the rest shifted below them.

    ``ranked`` holds each query's rows in trec_eval order; ``neural`` the model score of each
    reranked (qid, docid). With ``interpolate = λ`` the new score is
    ``λ·minmax(neural) + (1 − λ)·minmax(first stage)`` over the query's reranked rows.
    """
    from clir_toolkit.formats import RunRow

    rows: list[RunRow] = []
    for qid, query_rows in ranked.items():
        top, rest = list(query_rows[:depth]), list(query_rows[depth:])
        if not top:
            continue
        scores = [neural[(qid, row.docid)] for row in top]
        if interpolate is not None:
            first_stage = _min_max([row.score for row in top])
            scores = [
                interpolate * n + (1.0 - interpolate) * b
                for n, b in zip(_min_max(scores), first_stage, strict=True)
            ]
        rows.extend(
            RunRow(qid, row.docid, 0, score, tag) for row, score in zip(top, scores, strict=True)
        )
        if rest:
            # Keep the first-stage order and gaps below the lowest reranked score.
            shift = min(scores) - 1.0 - max(row.score for row in rest)
            rows.extend(RunRow(qid, row.docid, 0, row.score + shift, tag) for row in rest)
    return rows


def ranked_by_query(run: Sequence[RunRow]) -> dict[str, list[RunRow]]:
    """Each query's rows in the order trec_eval reads them."""
    from clir_toolkit.formats import sort_run

    ranked: dict[str, list[RunRow]] = {}
    for row in sort_run(run):
        ranked.setdefault(row.qid, []).append(row)
    return ranked


@dataclass
class RunCandidates:
    """What reranking a run starts from: the collection, the queries and the candidates."""

    collection: Collection
    query_texts: dict[str, str]
    ranked: dict[str, list[RunRow]]  # each query's rows in trec_eval order
    candidates: dict[str, list[str]]  # each query's top ``depth`` docids

    @property
    def pairs(self) -> set[tuple[str, str]]:
        """Every (qid, docid) to score."""
        return {(qid, docid) for qid, docids in self.candidates.items() for docid in docids}


def read_candidates(
    collection: str | Path, topics: str | Path, run: str | Path, depth: int
) -> RunCandidates:
    """Open the collection, read the topics and the run, take each query's top ``depth``.

    Every query of the run needs a topic: a run made from other topics is one ClirError.
    """
    from clir_toolkit.collection import open_collection
    from clir_toolkit.formats import read_run, read_topics

    coll = open_collection(collection)
    query_texts = {topic.qid: topic.query for topic in read_topics(topics)}
    ranked = ranked_by_query(read_run(run))
    missing = [qid for qid in ranked if qid not in query_texts]
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ClirError(
            f"{topics}: no topic for {len(missing)} query id(s) of the run {run} ({shown}); "
            "pass the topics the run was made from"
        )
    candidates = {qid: [row.docid for row in rows[:depth]] for qid, rows in ranked.items()}
    return RunCandidates(coll, query_texts, ranked, candidates)


