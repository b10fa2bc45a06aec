"""Assignment ``kernel-pooling``: K-NRM's kernel pooling and soft-TF features.

The references are :func:`clir_toolkit.rerank.word.knrm.kernel_pooling` (thesis eq. 3.3) and
:func:`clir_toolkit.rerank.word.knrm.soft_tf` (eq. 3.4's features). The student's pooling plugs
into a K-NRM model in place of the reference's (``model._pool``), and the model's scores of
real (query, document) pairs must not change.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from clir_toolkit.teaching.grading import Assignment, Timing, checks, close

SKELETON = '''"""Assignment kernel-pooling: K-NRM's kernel pooling (Xiong et al., SIGIR 2017).

K-NRM compares every query word q_i with every document word d_j by the cosine of their
embeddings: the translation matrix M[i, j] (thesis eq. 3.2; across languages, English
query words against French document words). Kernel pooling (eq. 3.3) turns each row of M
into K soft counts, one per RBF kernel of mean mu_k and width sigma_k:

    K_k(q_i) = sum_j exp(-(M[i, j] - mu_k)^2 / (2 sigma_k^2))

(mu = 1 with a tiny sigma counts exact matches; mu = 0.9, 0.7, ... count ever looser
ones). The soft-TF features (eq. 3.4) sum their logs over the query words,

    phi_k = sum_i log max(K_k(q_i), floor),

and the score is tanh(w . phi + b). Batches are padded: a padded document position must
add nothing to any K_k, and a padded query position nothing to phi.
Write both with tensor operations (no loop over the batch, the query or the document).
Grade it with:  clir assignment check kernel-pooling
"""

from collections.abc import Sequence

import torch
from torch import Tensor


def kernel_pooling(similarity: Tensor, doc_mask: Tensor, mus: Sequence[float],
                   sigmas: Sequence[float]) -> Tensor:
    """K_k(q_i) for every pair, query position and kernel.

    Args:
        similarity: float Tensor[B, n, m], the translation matrices.
        doc_mask: bool Tensor[B, m], True at real document words, False at padding.
        mus, sigmas: the K kernels' means and widths.

    Returns:
        float Tensor[B, n, K].
    """
    raise NotImplementedError


def soft_tf(kernels: Tensor, query_mask: Tensor, floor: float) -> Tensor:
    """phi_k for every pair: Tensor[B, K], from ``kernels`` [B, n, K] and ``query_mask``
    [B, n] (True at real query words)."""
    raise NotImplementedError
'''

MUS = (1.0, 0.9, 0.7, 0.5, 0.3, 0.1, -0.1, -0.3, -0.5, -0.7, -0.9)
SIGMAS = (1e-3,) + (0.1,) * 10


def _reference() -> ModuleType:
    from clir_toolkit.rerank.word.knrm import kernel_pooling, soft_tf

    return SimpleNamespace(kernel_pooling=kernel_pooling, soft_tf=soft_tf)  # type: ignore[return-value]


def _batch(seed: int, batch: int = 8, n: int = 6, m: int = 50) -> tuple[Any, Any, Any]:
    """Cosines in [-1, 1] with some exact matches, and ragged query and document lengths."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    similarity = torch.rand(batch, n, m, generator=generator) * 2 - 1
    exact = torch.rand(batch, n, m, generator=generator) < 0.05
    similarity = torch.where(exact, torch.ones_like(similarity), similarity)
    doc_lengths = torch.randint(1, m + 1, (batch,), generator=generator)
    query_lengths = torch.randint(1, n + 1, (batch,), generator=generator)
    doc_mask = torch.arange(m).unsqueeze(0) < doc_lengths.unsqueeze(1)
    query_mask = torch.arange(n).unsqueeze(0) < query_lengths.unsqueeze(1)
    return similarity, doc_mask, query_mask


def _shape_and_exact_matches(student: ModuleType, collection: Path | None) -> None:
    import torch

    similarity = torch.tensor([[[1.0, 0.2, 1.0, -0.4], [0.9, 0.9, 0.1, 1.0]]])
    mask = torch.tensor([[True, True, True, False]])
    pooled = student.kernel_pooling(similarity, mask, MUS, SIGMAS)
    assert tuple(pooled.shape) == (1, 2, len(MUS)), (
        f"kernel_pooling gave shape {tuple(pooled.shape)}, expected (B, n, K) = (1, 2, 11)"
    )
    close(pooled[0, :, 0], [2.0, 0.0], "the exact-match kernel's counts (padding excluded)",
          atol=1e-4)  # fmt: skip
    # Second query word, mu = 0.9, sigma = 0.1: two cosines of 0.9 count 1 each, 0.1 counts
    # exp(-0.8² / 0.02) ≈ 1e-14, the padded 1.0 nothing.
    close(pooled[0, 1, 1], 2.0, "the mu = 0.9 kernel of the second query word", atol=1e-5)


def _padding_ignored(student: ModuleType, collection: Path | None) -> None:
    import torch

    similarity, doc_mask, _ = _batch(1)
    pooled = student.kernel_pooling(similarity, doc_mask, MUS, SIGMAS)
    noise = torch.rand(similarity.shape[0], similarity.shape[1], 30) * 2 - 1
    wider = torch.cat([similarity, noise], dim=-1)
    wider_mask = torch.cat([doc_mask, torch.zeros(doc_mask.shape[0], 30, dtype=torch.bool)], -1)
    padded = student.kernel_pooling(wider, wider_mask, MUS, SIGMAS)
    close(padded, pooled, "kernels after 30 more padded document positions (any values)")
    changed = similarity.clone()
    changed[~doc_mask.unsqueeze(1).expand_as(changed)] = 1.0
    close(student.kernel_pooling(changed, doc_mask, MUS, SIGMAS), pooled,
          "kernels when the padded positions hold exact matches")  # fmt: skip


def _soft_tf_masks_queries(student: ModuleType, collection: Path | None) -> None:
    import math

    import torch

    kernels = torch.tensor([[[2.0, 0.0], [1.0, 5.0], [7.0, 7.0]]])
    mask = torch.tensor([[True, True, False]])
    features = student.soft_tf(kernels, mask, 1e-10)
    expected = [[math.log(2.0) + math.log(1.0), math.log(1e-10) + math.log(5.0)]]
    close(features, expected, "soft_tf: log counts (floored) summed over real query words")


def _agrees_in_a_model(student: ModuleType, collection: Path | None) -> str:
    import torch

    reference = _reference()
    for seed in range(3):
        similarity, doc_mask, query_mask = _batch(seed + 10, batch=16, n=8, m=200)
        close(student.kernel_pooling(similarity, doc_mask, MUS, SIGMAS),
              reference.kernel_pooling(similarity, doc_mask, MUS, SIGMAS),
              f"kernel_pooling of a random batch (seed {seed})")  # fmt: skip
        kernels = reference.kernel_pooling(similarity, doc_mask, MUS, SIGMAS)
        close(student.soft_tf(kernels, query_mask, 1e-10),
              reference.soft_tf(kernels, query_mask, 1e-10),
              f"soft_tf of a random batch (seed {seed})", rtol=1e-5, atol=1e-4)  # fmt: skip
    model, queries, docs = _subword_knrm()
    with torch.no_grad():
        expected = model(queries, docs)
        model._pool = student.kernel_pooling
        scores = model(queries, docs)
    close(scores, expected, "K-NRM's scores with your pooling", rtol=1e-5, atol=1e-6)
    return (
        f"3 random batches, and {len(scores)} English query / French page pairs scored by "
        "K-NRM on USE-m3's pretrained subword table"
    )


#: English queries and the French pages they look for (our own sentences): the pairs of the
#: in-model check, each query against each page.
PAIRS = (
    ("list directory contents", "ls affiche le contenu des répertoires et des fichiers"),
    ("copy files and directories", "cp copie les fichiers et les répertoires"),
    ("remove files or directories", "rm supprime des fichiers ou des répertoires vides"),
    ("search lines matching a pattern", "grep cherche les lignes qui correspondent à un motif"),
    ("send a signal to a process", "kill envoie un signal à un processus"),
    ("change user password", "passwd modifie le mot de passe d'un utilisateur"),
    ("sort lines of text files", "sort trie les lignes des fichiers texte"),
    ("report file system disk space usage", "df indique l'espace disque utilisé des systèmes"),
)


def _subword_knrm() -> tuple[Any, Any, Any]:
    """K-NRM as ``clir rerank train --model knrm`` starts it: one table of USE-m3's
    pretrained, cross-lingually aligned subword vectors for queries and pages, so that a
    query piece and its French translation have a high cosine and fall in the high kernels.
    Returns the model and the piece ids of every query against every page (64 pairs)."""
    import torch

    from clir_toolkit.rerank.data import subwords
    from clir_toolkit.rerank.word.knrm import KNRM

    query_pieces = [subwords.piece_tokens(query) for query, _ in PAIRS]
    page_pieces = [subwords.piece_tokens(page) for _, page in PAIRS]
    vocabulary = sorted({piece for pieces in query_pieces + page_pieces for piece in pieces})
    ids = {piece: row for row, piece in enumerate(vocabulary, start=2)}  # 0 pads, 1 unknown
    torch.manual_seed(0)
    size = len(vocabulary) + 2
    model = KNRM(size, size, dim=subwords.DIM, shared_embeddings=True).eval()
    model.load_embeddings(
        "doc", torch.from_numpy(subwords.piece_vectors(vocabulary)),
        torch.tensor(list(ids.values())),
    )  # fmt: skip

    def padded(lists: list[list[str]], width: int) -> Any:
        return torch.tensor([[ids[p] for p in pieces] + [0] * (width - len(pieces))
                             for pieces in lists])  # fmt: skip

    width_q = max(map(len, query_pieces))
    width_d = max(map(len, page_pieces))
    queries = padded(query_pieces, width_q).repeat_interleave(len(PAIRS), dim=0)
    docs = padded(page_pieces, width_d).repeat(len(PAIRS), 1)
    return model, queries, docs


def _pool_a_batch(functions: Any, batch: tuple[Any, Any, Any]) -> None:
    similarity, doc_mask, query_mask = batch
    kernels = functions.kernel_pooling(similarity, doc_mask, MUS, SIGMAS)
    functions.soft_tf(kernels, query_mask, 1e-10)


FAST_ENOUGH = Timing(prepare=lambda: _batch(7, batch=64, n=8, m=400), run=_pool_a_batch,
                     factor=10, floor=0.2, what="pooling 64 pairs of 8 × 400 words")  # fmt: skip


ASSIGNMENT = Assignment(
    name="kernel-pooling",
    title="K-NRM's kernel pooling and soft-TF features (thesis eq. 3.3–3.4)",
    teaches="interaction-based neural ranking: a translation matrix of embedding cosines, "
    "soft match counting with RBF kernels, why the log, and masking padded batches — the "
    "heart of K-NRM, written as tensor operations",
    minutes=60,
    functions=("kernel_pooling", "soft_tf"),
    skeleton=SKELETON,
    reference=_reference,
    checks=checks(
        ("shape, exact matches, padding excluded", 2, _shape_and_exact_matches),
        ("padded document positions change nothing", 2, _padding_ignored),
        ("soft-TF: floor, log, query mask", 2, _soft_tf_masks_queries),
        ("agrees with the reference in a K-NRM model", 3, _agrees_in_a_model),
        ("timing ceiling", 1, FAST_ENOUGH),
    ),
)
