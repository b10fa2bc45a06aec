"""K-NRM, the kernel-based neural ranking model (Xiong et al. 2017), trained bilingually.

Source: C. Xiong, Z. Dai, J. Callan, Z. Liu and R. Power, "End-to-end neural ad-hoc ranking
with kernel pooling", SIGIR 2017; as used for cross-language retrieval in the thesis
Q. Liu, *A Neural Approach to Cross-Lingual Information Retrieval* (M.S. thesis, Carnegie
Mellon University), §3.2, equation 3.4, and §6.1.3 (bilingual
training: English queries, Chinese documents, one vocabulary per language).

The model, layer by layer (thesis eq. 3.4), for a query ``q_1..q_n`` and a document
``d_1..d_m``:

1. **Embedding.** Each word becomes a vector. Query and document words have separate tables
   (the bilingual setting: the same spelling in two languages is two words);
   ``shared_embeddings=True`` ties the tables for monolingual use.
2. **Translation matrix** (eq. 3.2). ``M[i, j] = cos(v(q_i), v(d_j))``: every query word
   against every document word. The embeddings are normalised to unit length first, so that
   one batched matrix product gives all the cosines.
3. **Kernel pooling** (eq. 3.3). Each RBF kernel ``k`` counts, softly, the document words
   whose similarity to ``q_i`` lies near its mean ``mu_k``:
   ``K_k(q_i) = sum_j exp(-(M[i, j] - mu_k)^2 / (2 sigma_k^2))``. Eleven kernels:
   ``mu = 1.0`` with a tiny ``sigma`` (``exact_sigma``) counts exact matches; ten kernels
   with ``sigma = 0.1`` and ``mu = 0.9, 0.7, ..., -0.9`` count soft matches.
4. **Soft-TF features.** ``phi_k = sum_i log max(K_k(q_i), floor)``: a log-count of soft
   matches per kernel, summed over the query words.
5. **Learning to rank.** ``f(q, d) = tanh(w . phi + b)``, one score in (-1, 1). The weights
   ``w_k`` say what each kernel (each "bin" of similarities) contributes; the thesis, §6.2,
   reads them (see :mod:`clir_toolkit.rerank.word.bins`).

Padding: a padded document position contributes nothing to any ``K_k``, and a padded query
position contributes nothing to ``phi``.

One detail comes from the authors' released code, not from the equations: the soft-TF
features are multiplied by 0.01 before the linear layer (``SOFT_TF_SCALE``, "scale the
data"), and ``w`` starts uniform in [-0.014, 0.014]. A feature such as ``log 1e-10 * 10``
query words is about -230; unscaled, the initial ``tanh`` would sit saturated, with no
gradient. :meth:`KNRM.kernel_features` returns ``phi`` itself, unscaled.

Speed and precision. Scoring a pair costs one ``[n, dim] x [dim, m]`` product and eleven
passes over the ``n x m`` matrix. In inference (no gradient) the unit-length tables are
computed once and cached until the weights change, so that scoring only gathers rows.
The translation matrix and the kernels are always computed in float32, also under
``torch.autocast`` or with half-precision weights: the exact-match kernel, with
``sigma = 1e-3``, needs cosines accurate to about 1e-4, which float16 and bfloat16 products
do not give (nor does TF32, which PyTorch leaves off for matrix products by default; keep it
off). :func:`kernel_pooling` is a plain function of tensors, so a scorer may hand it to
``torch.compile`` (:meth:`KNRM.compile_pooling`), which fuses the eleven passes into one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from clir_toolkit.errors import UsageError
from clir_toolkit.rerank.word.embedding import Side, copy_rows, token_mask

DEFAULT_MUS = (1.0, 0.9, 0.7, 0.5, 0.3, 0.1, -0.1, -0.3, -0.5, -0.7, -0.9)
"""Kernel means of Xiong et al. (thesis Table 6.4): the exact-match kernel, then ten soft ones."""

EXACT_MU = 1.0
"""The kernel with this mean uses ``exact_sigma``: it counts exact matches."""

SOFT_TF_SCALE = 0.01
"""Soft-TF features are scaled by this before the ranking layer (Xiong et al.'s code)."""

MASKED_SIMILARITY = -1.0e4
"""Similarity given to padded document positions: so far from every mean that each kernel
gives exactly 0 there, with a finite gradient (no inf, no NaN)."""

CPU_BLOCK_BYTES = 8 * 2**20
"""On a CPU, inference scores pairs in blocks whose document vectors fill about this much
memory (a share of a typical L3 cache)."""

PoolingFunction = Callable[[Tensor, Tensor, Sequence[float], Sequence[float]], Tensor]


def kernel_pooling(
    similarity: Tensor, doc_mask: Tensor, mus: Sequence[float], sigmas: Sequence[float]
) -> Tensor:
    """RBF kernel pooling (thesis eq. 3.3): ``K_k(q_i)`` for every query position and kernel.

    Args:
        similarity: the translation matrix ``M``, ``[B, n, m]`` (float32).
        doc_mask: ``[B, m]``, ``True`` at real document tokens, ``False`` at padding.
        mus, sigmas: the kernels' means and widths, as Python floats.

    Returns:
        ``[B, n, K]``: ``K_k(q_i) = sum_j exp(-(M[i, j] - mu_k)^2 / (2 sigma_k^2))``, summed
        over the unpadded ``j`` only.

    The kernels are computed one at a time, so that memory holds one ``[B, n, m]`` matrix
    per step instead of ``K`` of them.
    """
    similarity = similarity.masked_fill(~doc_mask.unsqueeze(1), MASKED_SIMILARITY)
    pooled = []
    for mu, sigma in zip(mus, sigmas, strict=True):
        coefficient = -0.5 / (sigma * sigma)
        pooled.append(torch.exp(torch.square(similarity - mu) * coefficient).sum(dim=-1))
    return torch.stack(pooled, dim=-1)


def _pair_key(query: Any, doc: Any) -> bytes:
    """A 16-byte hash of a (query, document) pair's ids (numpy rows), padding left out."""
    import hashlib

    query, doc = np.trim_zeros(query, "b"), np.trim_zeros(doc, "b")
    digest = hashlib.blake2b(digest_size=16)
    digest.update(np.int64(len(query)).tobytes())
    digest.update(query.astype(np.int64).tobytes())
    digest.update(doc.astype(np.int64).tobytes())
    return digest.digest()


def soft_tf(kernels: Tensor, query_mask: Tensor, floor: float) -> Tensor:
    """Soft-TF features (thesis eq. 3.4): ``phi_k = sum_i log max(K_k(q_i), floor)``.

    Args:
        kernels: ``[B, n, K]``, :func:`kernel_pooling`'s output.
        query_mask: ``[B, n]``, ``True`` at real query tokens: padded ones add nothing.
        floor: the smallest count whose log is taken (``log 0`` is ``-inf``).

    Returns:
        ``[B, K]``: a log-count of soft matches per kernel, summed over the query words.
    """
    log_counts = torch.log(torch.clamp(kernels, min=floor))
    return (log_counts * query_mask.unsqueeze(-1)).sum(dim=1)


NORM_FLOOR = 1e-12
"""A vector's length is at least this when dividing by it (zero rows, padding, stay 0)."""


def _unit_rows(weight: Tensor) -> Tensor:
    """Each row of an embedding table scaled to unit length, in float32 (zero rows stay 0)."""
    return F.normalize(weight.float(), dim=-1, eps=NORM_FLOOR)


class KNRM(nn.Module):
    """Kernel-based neural ranking model with separate query and document vocabularies.

    ``forward(query_ids, doc_ids)`` takes ``LongTensor[B, n]`` and ``LongTensor[B, m]``
    (id 0 pads, id 1 is the out-of-vocabulary word) and returns one score per pair,
    ``Tensor[B]`` in (-1, 1). ``KNRM(**model.config())`` rebuilds the same architecture.
    """

    model_type = "knrm"
    sparse_gradients = True  # its embedding lookups train with lazy Adam (word/optimiser.py)

    def __init__(
        self,
        query_vocab_size: int,
        doc_vocab_size: int,
        dim: int = 300,
        mus: Sequence[float] | None = None,
        sigma: float = 0.1,
        exact_sigma: float = 1e-3,
        shared_embeddings: bool = False,
        soft_tf_floor: float = 1e-10,
    ) -> None:
        super().__init__()
        if query_vocab_size < 2 or doc_vocab_size < 2:
            raise UsageError("a vocabulary needs at least the padding and the OOV ids (2 rows)")
        if dim < 1:
            raise UsageError(f"embedding dimension must be positive, got {dim}")
        if sigma <= 0 or exact_sigma <= 0 or soft_tf_floor <= 0:
            raise UsageError("sigma, exact_sigma and soft_tf_floor must be positive")
        if shared_embeddings and query_vocab_size != doc_vocab_size:
            raise UsageError(
                "shared_embeddings needs one vocabulary: query and document vocabulary sizes "
                f"differ ({query_vocab_size} vs {doc_vocab_size})"
            )
        self.mus = tuple(float(mu) for mu in (DEFAULT_MUS if mus is None else mus))
        if not self.mus:
            raise UsageError("K-NRM needs at least one kernel")
        self.sigmas = tuple(exact_sigma if mu == EXACT_MU else sigma for mu in self.mus)
        self.exact_kernel = self.mus.index(EXACT_MU) if EXACT_MU in self.mus else None
        self._config: dict[str, Any] = {
            "query_vocab_size": int(query_vocab_size),
            "doc_vocab_size": int(doc_vocab_size),
            "dim": int(dim),
            "mus": list(self.mus),
            "sigma": float(sigma),
            "exact_sigma": float(exact_sigma),
            "shared_embeddings": bool(shared_embeddings),
            "soft_tf_floor": float(soft_tf_floor),
        }
        self.soft_tf_floor = float(soft_tf_floor)

        self.query_embedding = nn.Embedding(query_vocab_size, dim, padding_idx=0)
        self.doc_embedding = (
            self.query_embedding
            if shared_embeddings
            else nn.Embedding(doc_vocab_size, dim, padding_idx=0)
        )
        self.ranker = nn.Linear(len(self.mus), 1)
        nn.init.uniform_(self.ranker.weight, -0.014, 0.014)
        nn.init.zeros_(self.ranker.bias)

        self._pool: PoolingFunction = kernel_pooling
        # Features of (query, document) pairs while the tables are frozen, by pair.
        self._feature_memory: dict[bytes, Tensor] = {}
        self._feature_generation: tuple[Any, ...] = ()
        # Unit-length tables for inference, keyed by the weight tensor's identity and version.
        self._unit_cache: dict[str, tuple[tuple[Any, ...], Tensor]] = {}

    # -- construction ------------------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """The constructor's arguments, JSON-serialisable: ``KNRM(**config)`` rebuilds it."""
        return dict(self._config)

    def load_embeddings(self, side: Side, vectors: Tensor, rows: Tensor) -> None:
        """Initialise rows of the ``"query"`` or ``"doc"`` table from pre-trained vectors.

        ``vectors`` is ``[n, dim]``, ``rows`` the ids of the ``n`` words (a ``.vec`` file's
        words found in the vocabulary). With shared embeddings both sides are one table.
        """
        copy_rows(self._table(side), vectors, rows)

    def compile_pooling(self) -> KNRM:
        """Fuse kernel pooling with ``torch.compile`` (a GPU scorer's option; returns self)."""
        self._pool = torch.compile(kernel_pooling, dynamic=True)
        return self

    # -- the model ---------------------------------------------------------------------------

    def forward(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """Relevance scores ``tanh(w . (0.01 phi) + b)``, ``Tensor[B]`` in float32."""
        if query_ids.device.type == "cpu" and not torch.is_grad_enabled():
            # On a CPU, scoring a few pairs at a time keeps their document vectors in the
            # cache: twice the throughput of one large batch. Pairs are independent, so the
            # scores are the same.
            step = max(1, CPU_BLOCK_BYTES // (4 * doc_ids.shape[1] * self._config["dim"]))
            if query_ids.shape[0] > step:
                parts = zip(query_ids.split(step), doc_ids.split(step), strict=True)
                return torch.cat([self._score(queries, docs) for queries, docs in parts])
        return self._score(query_ids, doc_ids)

    def _score(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        features = self.kernel_features(query_ids, doc_ids)
        with torch.autocast(device_type=features.device.type, enabled=False):
            logits = self.ranker(features * SOFT_TF_SCALE).squeeze(-1)
        return torch.tanh(logits)

    def kernel_features(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """Soft-TF features ``phi_k = sum_i log max(K_k(q_i), floor)``: ``Tensor[B, K]``.

        With frozen embedding tables (:meth:`frozen`) a pair's features never change: they
        are computed once and remembered (:meth:`_remembered_features`).
        """
        if self.frozen():
            return self._remembered_features(query_ids, doc_ids)
        kernels = self.kernel_values(query_ids, doc_ids)
        return soft_tf(kernels, token_mask(query_ids), self.soft_tf_floor)

    def frozen(self) -> bool:
        """Whether training leaves both embedding tables as they are (no gradient)."""
        return not (
            self.query_embedding.weight.requires_grad or self.doc_embedding.weight.requires_grad
        )

    def _remembered_features(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """:meth:`kernel_features` of frozen tables, each pair computed once.

        Over frozen tables only the ranking layer learns, and the features of a (query,
        document) pair are the same in every epoch and every dev evaluation: remembering
        them makes an epoch after the first cost its ranking layer alone. A pair is known by
        a hash of its ids without their padding (a batch pads to its longest document); the
        memory is emptied when a table changes (``load_state_dict``, :meth:`load_embeddings`).
        """
        generation = tuple(
            (id(t.weight), t.weight.data_ptr(), t.weight._version)
            for t in (self.query_embedding, self.doc_embedding)
        )
        if self._feature_generation != generation:
            self._feature_memory, self._feature_generation = {}, generation
        memory = self._feature_memory
        keys = [
            _pair_key(query, doc)
            for query, doc in zip(query_ids.cpu().numpy(), doc_ids.cpu().numpy(), strict=True)
        ]
        first: dict[bytes, int] = {}  # a pair twice in a batch is computed once
        for i, key in enumerate(keys):
            if key not in memory:
                first.setdefault(key, i)
        missing = list(first.values())
        if missing:
            rows = torch.tensor(missing, dtype=torch.long, device=query_ids.device)
            with torch.no_grad():
                kernels = self.kernel_values(query_ids[rows], doc_ids[rows])
                features = soft_tf(kernels, token_mask(query_ids[rows]), self.soft_tf_floor)
            for i, row in zip(missing, features, strict=True):
                memory[keys[i]] = row
        return torch.stack([memory[key] for key in keys])

    def kernel_values(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """Kernel pooling output ``K_k(q_i)``: ``Tensor[B, n, K]`` (0 at padded queries too)."""
        similarity = self.translation_matrix(query_ids, doc_ids)
        with torch.autocast(device_type=similarity.device.type, enabled=False):
            kernels = self._pool(similarity, token_mask(doc_ids), self.mus, self.sigmas)
        return kernels * token_mask(query_ids).unsqueeze(-1)

    def translation_matrix(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """Cosine similarities ``M[b, i, j] = cos(v(q_i), v(d_j))``: ``Tensor[B, n, m]``.

        Always float32 (autocast is switched off here). Padded positions hold 0; the kernels
        mask them.
        """
        if query_ids.shape[0] != doc_ids.shape[0]:
            raise ValueError(
                f"{query_ids.shape[0]} queries but {doc_ids.shape[0]} documents: one per pair"
            )
        if torch.is_grad_enabled():
            return self._training_cosines(query_ids, doc_ids)
        queries = self._unit_vectors("query", query_ids)
        docs = self._unit_vectors("doc", doc_ids)
        with torch.autocast(device_type=queries.device.type, enabled=False):
            return torch.bmm(queries, docs.transpose(1, 2))

    def _training_cosines(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """The same cosines for training: dot products over the outer product of the norms.

        Dividing the ``[B, n, m]`` dot products is mathematically what normalising the
        gathered ``[B, L, dim]`` rows first is, but its backward pass works on tensors
        ``dim / n`` times smaller: measured 2.5 times fewer seconds per K-NRM step.
        """
        with torch.autocast(device_type=query_ids.device.type, enabled=False):
            queries = self.query_embedding(query_ids).float()
            docs = self.doc_embedding(doc_ids).float()
            dots = torch.bmm(queries, docs.transpose(1, 2))
            query_norms = queries.norm(dim=-1).clamp_min(NORM_FLOOR)
            doc_norms = docs.norm(dim=-1).clamp_min(NORM_FLOOR)
            return dots / (query_norms.unsqueeze(2) * doc_norms.unsqueeze(1))

    # -- helpers -----------------------------------------------------------------------------

    def _table(self, side: Side) -> nn.Embedding:
        if side == "query":
            return self.query_embedding
        if side == "doc":
            return self.doc_embedding
        raise ValueError(f'side must be "query" or "doc", got {side!r}')

    def _unit_vectors(self, side: Side, ids: Tensor) -> Tensor:
        """Unit-length float32 embeddings of ``ids`` for inference: ``[B, L, dim]``.

        Rows of a unit-length table normalised once (cached until an optimiser step,
        ``load_state_dict`` or :meth:`load_embeddings` changes the weights); training takes
        :meth:`_training_cosines` instead, whose gradients reach the embeddings.
        """
        table = self._table(side)
        weight = table.weight
        # ``_version`` counts in-place changes of a tensor (optimiser steps, copy_ ...).
        key = (id(weight), weight.data_ptr(), weight._version, weight.device, weight.dtype)
        slot = "query" if table is self.query_embedding else "doc"  # shared tables: one copy
        cached = self._unit_cache.get(slot)
        if cached is None or cached[0] != key:
            cached = (key, _unit_rows(weight.detach()))
            self._unit_cache[slot] = cached
        return F.embedding(ids, cached[1])

    def _apply(self, fn: Any, recurse: bool = True) -> KNRM:
        # .to(), .cuda(), .half() ... replace the weights: drop the cached tables with them.
        self._unit_cache = {}
        self._feature_memory, self._feature_generation = {}, ()
        return super()._apply(fn, recurse)

    def extra_repr(self) -> str:
        kernels = ", ".join(
            f"{mu:g}/{sigma:g}" for mu, sigma in zip(self.mus, self.sigmas, strict=True)
        )
        return f"kernels (mu/sigma)=[{kernels}]"
