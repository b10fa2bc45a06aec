"""Reranking candidates: the top ``depth`` documents of a run, encoded, scored, re-sorted.

The steps of :func:`clir_toolkit.rerank.score.score_run` that do not depend on which kind of
model scores (Liu, *Neural CLIR*, §6.1: a neural model reranks the top of a BM25 ranking):

* :func:`read_candidates`: each query's top ``depth`` documents, in the order trec_eval
  reads the run (score descending, ties by docid);
* :func:`encode_candidates` / :func:`score_encoded`: the (query, candidate) pairs encoded as
  in training (documents from the tensor cache) and scored in the batches of
  :func:`batch_bounds` (:func:`score_batches`), on the GPU when there is one;
* :func:`rerank_rows`: the new run. With λ, each score is min-max normalised over the
  query's reranked candidates first, ``score = λ·neural + (1 − λ)·first_stage``; documents
  below ``depth`` keep their first-stage order beneath the reranked ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError
from clir_toolkit.params import Param, check_options, declare
from clir_toolkit.rerank.vocabulary import PAD_ID, Vocabulary

if TYPE_CHECKING:
    import torch

    from clir_toolkit.collection import Collection
    from clir_toolkit.formats import RunRow
    from clir_toolkit.rerank.documents import DocumentEncoder
    from clir_toolkit.rerank.model_file import LoadedReranker

DEFAULT_DEPTH = 100

SCORE_PARAMS = declare(
    Param("depth", int, DEFAULT_DEPTH, "candidates reranked per query", minimum=1,
          flag="--depth"),
    Param("batch_size", int, 256, "pairs scored per batch", minimum=1, flag="--batch-size"),
    Param("interpolate", float, doc="λ of λ·neural + (1 − λ)·first stage", minimum=0,
          maximum=1, optional=True, flag="--interpolate"),
)  # fmt: skip
"""The options of :func:`clir_toolkit.rerank.score.score_run` that a value can be wrong for."""


def check_score_options(depth: int, batch_size: int, interpolate: float | None) -> None:
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


def trim_padding(ids: torch.Tensor) -> torch.Tensor:
    """Drop the trailing columns that are padding in every row of a batch (at least one kept).

    Both models ignore padding, so scores do not change; the work shrinks with the longest
    text of the batch instead of the maximum length.
    """
    used = (ids != PAD_ID).any(dim=0).nonzero()
    length = int(used[-1]) + 1 if used.numel() else 1
    return ids[:, :length]


def batch_bounds(total: int, batch_size: int) -> list[tuple[int, int]]:
    """The batches ``total`` pairs are scored in: ``(start, stop)`` of each, in order.

    A pair's score may depend on the batch it is scored with: the batch's padding is trimmed
    to its longest text, and torch may sum in another order for another shape. Every scorer,
    in this process or on a cluster (:mod:`clir_toolkit.distributed.rerank`), cuts here, so
    that the scores are the same bit for bit.
    """
    return [(start, min(start + batch_size, total)) for start in range(0, total, batch_size)]


def score_batches(
    model: Any,
    encoded: EncodedCandidates,
    bounds: Sequence[tuple[int, int]],
    device: torch.device,
    precision: str = "fp32",
    show: bool = True,
) -> torch.Tensor:
    """Model scores (``float32``, on the CPU) of the pairs of the batches ``bounds``, in order.

    Each batch is the rows ``start:stop`` of ``encoded``'s pairs, its padding trimmed. The
    model is switched to eval mode (no dropout) and back to its previous mode afterwards.
    """
    import torch

    from clir_toolkit.compute.device import autocast
    from clir_toolkit.progress import progress_bar

    was_training = model.training
    model.eval()
    scores = []
    try:
        with torch.inference_mode():
            for start, stop in progress_bar(
                bounds, show=show, desc="scoring", unit="batch", leave=False
            ):
                q = trim_padding(encoded.queries[encoded.query_index[start:stop]]).to(device)
                d = trim_padding(encoded.documents[encoded.doc_index[start:stop]]).to(device)
                with autocast(precision, device):
                    batch_scores = model(q, d)
                scores.append(batch_scores.float().cpu())
    finally:
        model.train(was_training)
    return torch.cat(scores) if scores else torch.zeros(0)


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
class EncodedCandidates:
    """The (query, document) pairs to score, as rows of two padded id matrices."""

    pairs: list[tuple[str, str]]
    queries: torch.Tensor
    documents: torch.Tensor
    query_index: torch.Tensor
    doc_index: torch.Tensor


def encode_candidates(
    query_texts: Mapping[str, str],
    candidates: Mapping[str, Sequence[str]],
    query_vocab: Vocabulary,
    max_query_len: int,
    encoder: DocumentEncoder,
) -> EncodedCandidates:
    """Encode each query once and each candidate document through the tensor cache."""
    import torch

    from clir_toolkit.rerank.vocabulary import encode_texts

    qids = list(candidates)
    queries = encode_texts([query_texts[qid] for qid in qids], query_vocab, max_query_len)
    pairs = [(qid, docid) for qid in qids for docid in candidates[qid]]
    doc_rows, documents = encoder.encode(docid for _, docid in pairs)
    query_row = {qid: i for i, qid in enumerate(qids)}
    return EncodedCandidates(
        pairs=pairs,
        queries=queries,
        documents=documents,
        query_index=torch.tensor([query_row[qid] for qid, _ in pairs], dtype=torch.long),
        doc_index=torch.tensor([doc_rows[docid] for _, docid in pairs], dtype=torch.long),
    )


def score_encoded(
    model: Any,
    encoded: EncodedCandidates,
    device: torch.device,
    batch_size: int = 256,
    precision: str = "fp32",
) -> dict[tuple[str, str], float]:
    """Model score of every (qid, docid) pair of ``encoded``, in batches of ``batch_size``."""
    bounds = batch_bounds(len(encoded.pairs), batch_size)
    scores = score_batches(model, encoded, bounds, device, precision)
    return dict(zip(encoded.pairs, scores.tolist(), strict=True))


@dataclass
class RunCandidates:
    """What reranking a run starts from: the collection, the queries and the candidates."""

    collection: Collection
    query_texts: dict[str, str]
    ranked: dict[str, list[RunRow]]  # each query's rows in trec_eval order
    candidates: dict[str, list[str]]  # each query's top ``depth`` docids


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


def encode_run(
    reranker: LoadedReranker,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    depth: int,
    cache_dir: str | Path | None = None,
) -> tuple[dict[str, list[RunRow]], EncodedCandidates]:
    """The run's rows by query, and its top ``depth`` candidates encoded for ``reranker``."""
    from clir_toolkit.rerank.documents import DocumentEncoder, cache_dir_for

    read = read_candidates(collection, topics, run, depth)
    encoder = DocumentEncoder(
        read.collection.corpus,
        reranker.doc_vocab,
        reranker.max_doc_len,
        cache_dir_for(read.collection.root, cache_dir),
    )
    encoded = encode_candidates(
        read.query_texts, read.candidates, reranker.query_vocab, reranker.max_query_len, encoder
    )
    return read.ranked, encoded
