"""A word-level model's candidates: (query, document) pairs as word ids, scored in batches.

The word-level half of :func:`clir_toolkit.rerank.score.score_run` (the shared half, reading
the run and writing the new one, is :mod:`clir_toolkit.rerank.candidates`):

* :func:`encode_run` / :func:`encode_candidates`: the (query, candidate) pairs encoded as in
  training, each query once and each document through the tensor cache
  (:mod:`clir_toolkit.rerank.data.documents`);
* :func:`score_encoded`: every pair scored in the batches of :func:`batch_bounds`
  (:func:`score_batches`), on the GPU when there is one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.rerank.candidates import batch_pairs, read_candidates
from clir_toolkit.rerank.data.vocabulary import PAD_ID, Vocabulary

if TYPE_CHECKING:
    import torch

    from clir_toolkit.formats import RunRow
    from clir_toolkit.rerank.candidates import RunCandidates
    from clir_toolkit.rerank.data.documents import DocumentEncoder
    from clir_toolkit.rerank.word.model_file import LoadedReranker


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

    from clir_toolkit.rerank.data.vocabulary import encode_texts

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
    batch_size: int | None = None,
    precision: str = "fp32",
) -> dict[tuple[str, str], float]:
    """Model score of every (qid, docid) pair of ``encoded``, in batches of ``batch_size``
    (None: the device's default, :func:`clir_toolkit.rerank.candidates.batch_pairs`)."""
    bounds = batch_bounds(len(encoded.pairs), batch_pairs(batch_size, device))
    scores = score_batches(model, encoded, bounds, device, precision)
    return dict(zip(encoded.pairs, scores.tolist(), strict=True))


def encode_run(
    reranker: LoadedReranker,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    depth: int,
    cache_dir: str | Path | None = None,
) -> tuple[dict[str, list[RunRow]], EncodedCandidates]:
    """The run's rows by query, and its top ``depth`` candidates encoded for ``reranker``."""
    read = read_candidates(collection, topics, run, depth)
    return read.ranked, encode_read(reranker, read, cache_dir)


def encode_read(
    reranker: LoadedReranker, read: RunCandidates, cache_dir: str | Path | None = None
) -> EncodedCandidates:
    """The candidates of a run already read (:func:`read_candidates`), encoded for
    ``reranker``: each query once, each document through the tensor cache."""
    from clir_toolkit.rerank.data.documents import DocumentEncoder, cache_dir_for

    encoder = DocumentEncoder(
        read.collection.corpus,
        reranker.doc_vocab,
        reranker.max_doc_len,
        cache_dir_for(read.collection.root, cache_dir),
    )
    return encode_candidates(
        read.query_texts, read.candidates, reranker.query_vocab, reranker.max_query_len, encoder
    )
