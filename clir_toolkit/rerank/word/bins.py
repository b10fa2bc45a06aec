"""Kernel bin analysis of a trained K-NRM (thesis *Neural CLIR*, §6.2, Table 6.4).

Each RBF kernel of K-NRM collects the query-document word pairs whose cosine similarity lies
near its mean ``mu_k``: it is a *bin* of similarities, and its learned weight ``w_k`` says
whether pairs in that bin are evidence for relevance (positive) or against it (negative);
the larger ``|w_k|``, the more decisive the bin (thesis §3.2 and §6.2, Figure 6.2).

The thesis' analysis, reproduced by :func:`kernel_bin_analysis`: for every query ``q_1..q_n``
and document ``d_1..d_m`` of a test set, form the ``n * m`` word pairs ``(q_i, d_j)``, assign
each pair to its closest bin, and report per bin its mean, weight and size (number of pairs).
Here:

* only real tokens pair up (padding is no word);
* a pair whose cosine is 1 within 1e-6 (an exact match: the same word, or two words whose
  embeddings coincide) goes to the exact-match kernel (``mu = 1``, tiny ``sigma``);
* any other pair goes to the soft kernel whose ``mu`` is nearest its cosine (ties to the
  kernel listed first). A cosine of 0.97 is thus counted in the ``mu = 0.9`` bin, not in
  the exact-match bin, whose kernel gives it practically no weight.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from clir_toolkit.rerank.word.embedding import token_mask
from clir_toolkit.rerank.word.knrm import KNRM

EXACT_TOLERANCE = 1e-6
"""A pair is an exact match when its cosine is at least ``1 - EXACT_TOLERANCE``."""

CHUNK = 256
"""Pairs of texts processed at once, to bound memory on large test sets."""


@dataclass(frozen=True)
class BinRow:
    """One kernel (bin) of a K-NRM model, as a row of the thesis' Table 6.4."""

    bin: int
    """1-based position of the kernel, as the thesis numbers bins."""
    mu: float
    sigma: float
    weight: float
    """The learned weight ``w_k`` of the kernel's soft-TF feature in the ranking layer."""
    pairs: int
    """How many unpadded query-document word pairs fall in this bin."""
    exact: bool
    """Whether this is the exact-match kernel."""


@torch.no_grad()
def kernel_bin_analysis(model: KNRM, query_ids: Tensor, doc_ids: Tensor) -> list[BinRow]:
    """Assign every real (query word, document word) pair to its bin; count pairs per bin.

    Args:
        model: a (trained) :class:`~clir_toolkit.rerank.word.knrm.KNRM`.
        query_ids: ``LongTensor[N, n]``, the queries of ``N`` query-document pairs.
        doc_ids: ``LongTensor[N, m]``, their documents.

    Returns:
        One :class:`BinRow` per kernel, in the model's kernel order.
    """
    if query_ids.shape[0] != doc_ids.shape[0]:
        raise ValueError(f"{query_ids.shape[0]} queries but {doc_ids.shape[0]} documents")
    device = model.ranker.weight.device
    mus = torch.tensor(model.mus, device=device)
    exact = model.exact_kernel
    # Soft kernels only compete for non-exact pairs: hide the exact kernel from "nearest".
    candidates = torch.ones(len(model.mus), dtype=torch.bool, device=device)
    if exact is not None and len(model.mus) > 1:
        candidates[exact] = False
    counts = torch.zeros(len(model.mus), dtype=torch.long, device=device)
    for start in range(0, query_ids.shape[0], CHUNK):
        queries = query_ids[start : start + CHUNK].to(device)
        docs = doc_ids[start : start + CHUNK].to(device)
        similarity = model.translation_matrix(queries, docs)  # [b, n, m]
        real = token_mask(queries).unsqueeze(2) & token_mask(docs).unsqueeze(1)
        values = similarity[real]
        distance = (values.unsqueeze(1) - mus).abs()
        distance[:, ~candidates] = float("inf")
        nearest = distance.argmin(dim=1)
        if exact is not None:
            nearest[values >= 1.0 - EXACT_TOLERANCE] = exact
        counts += torch.bincount(nearest, minlength=len(model.mus))
    weights = model.ranker.weight.detach()[0].float().cpu().tolist()
    return [
        BinRow(
            bin=k + 1,
            mu=model.mus[k],
            sigma=model.sigmas[k],
            weight=weights[k],
            pairs=int(counts[k]),
            exact=k == exact,
        )
        for k in range(len(model.mus))
    ]


def format_bins(rows: list[BinRow]) -> str:
    """An aligned text table of the bins (columns of the thesis' Table 6.4, plus shares)."""
    total = sum(row.pairs for row in rows)
    header = ("bin", "mu", "sigma", "weight", "pairs", "share")
    body = [
        (
            f"{row.bin}" + (" (exact)" if row.exact else ""),
            f"{row.mu:g}",
            f"{row.sigma:g}",
            f"{row.weight:.4f}",
            f"{row.pairs:,}",
            f"{100.0 * row.pairs / total:.2f}%" if total else "-",
        )
        for row in rows
    ]
    widths = [max(len(line[c]) for line in [header, *body]) for c in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(width) if c == 0 else cell.rjust(width)
            for c, (cell, width) in enumerate(zip(line, widths, strict=True))
        )
        for line in [header, *body]
    ]
    return "\n".join(lines) + "\n"


def bins_for_run(
    model_path: str | Path,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    depth: int = 10,
) -> list[BinRow]:
    """The kernel-bin analysis over the top ``depth`` candidates of every query of a run."""
    from clir_toolkit.errors import UsageError
    from clir_toolkit.rerank.word.batches import encode_run
    from clir_toolkit.rerank.word.model_file import load_model

    reranker = load_model(model_path, "cpu")
    if reranker.model_type != "knrm":
        raise UsageError(
            f"{model_path}: kernel bins exist only for K-NRM models, "
            f"not for '{reranker.model_type}'"
        )
    _, encoded = encode_run(reranker, collection, topics, run, depth)
    queries = encoded.queries[encoded.query_index]
    documents = encoded.documents[encoded.doc_index]
    return kernel_bin_analysis(reranker.model, queries, documents)
