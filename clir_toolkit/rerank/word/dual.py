"""The dual encoder of *Cross-Lingual Document Retrieval with Smooth Learning* (Liu et al.).

Source: J. Liu, X. Zhang, D. Goldwasser and X. Wang, *Cross-Lingual Document Retrieval with
Smooth Learning*:
§3.1–3.2 (separate query and document embeddings, average pooling + tanh), §3.3 (Smooth
Cosine Similarity, equation 1, Figure 1) and §5 "Average Pooling and Other Neural
Architectures" (the DSSM-CNN and DSSM-LSTM encoders they compare with).

A query and a document are encoded separately into vectors of one size, then compared:

* ``encoder="avg"`` (the paper's choice, §3.2): ``f(text) = tanh(mean of its word
  embeddings)``, the mean taken over real tokens only. No parameters besides embeddings.
* ``encoder="cnn"`` (DSSM-CNN, Shen et al. 2014, as configured in §5): a convolution over
  word 3-grams with ``filters`` filters and tanh, max-pooling over positions (real tokens
  only), then a dense layer to ``hidden`` units with tanh.
* ``encoder="lstm"`` (DSSM-LSTM, Palangi et al. 2016, as configured in §5): a bidirectional
  LSTM with ``hidden`` units per direction, whose two final states are concatenated, then a
  dense layer to ``hidden`` units with tanh. The paper says "the first hidden state for the
  forward LSTM and the last hidden state for the backward LSTM"; read as positions, those
  states would each have seen one word, so we take the states in which each direction has
  read the whole text: the forward LSTM after the last real token and the backward LSTM
  after the first token (PyTorch's ``h_n`` of a packed sequence, so padding is never read).
  For cnn and lstm, dropout (``dropout``, 0.4 in §5) is applied to the word embeddings while
  training; query and document have two modules of the same structure, as in §5.

Relevance is the **Smooth Cosine Similarity** (eq. 1):
``r_eps(q, d) = f_q(q) . f_d(d) / ((||f_q(q)|| + eps) (||f_d(d)|| + eps))``. With ``eps > 0``
its gradient is bounded by ``2 / eps`` everywhere (Appendix A.1), whereas the gradient of the
plain cosine (``eps = 0``) grows like ``1 / ||f_q(q)||`` as a representation shrinks towards
zero: the exploding gradients of Figure 1. The paper uses ``eps = 1`` (Table 2).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from clir_toolkit.errors import UsageError
from clir_toolkit.rerank.word.embedding import PADDING_ID, Side, copy_rows, token_mask

ENCODERS = ("avg", "cnn", "lstm")
"""Names of the text encoders, as ``clir rerank train --encoder`` spells them."""

COSINE_GUARD = 1e-12
"""With ``epsilon = 0`` only: the smallest denominator, so that 0/0 gives 0, not NaN."""


def smooth_cosine(q: Tensor, d: Tensor, epsilon: float) -> Tensor:
    """Smooth Cosine Similarity (Liu et al., eq. 1), row by row.

    ``r_eps(q, d) = q . d / ((||q|| + eps) (||d|| + eps))``

    Args:
        q: ``[B, p]`` query representations.
        d: ``[B, p]`` document representations.
        epsilon: the smoothness ``eps >= 0``; ``0`` gives the plain cosine.

    Returns:
        ``[B]`` in float32 (or float64 for float64 inputs), in [-1, 1].
    """
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    dtype = torch.promote_types(torch.promote_types(q.dtype, d.dtype), torch.float32)
    q, d = q.to(dtype), d.to(dtype)
    dot = (q * d).sum(dim=-1)
    q_norm = torch.linalg.vector_norm(q, dim=-1)
    d_norm = torch.linalg.vector_norm(d, dim=-1)
    if epsilon > 0:
        return dot / ((q_norm + epsilon) * (d_norm + epsilon))
    return dot / (q_norm * d_norm).clamp_min(COSINE_GUARD)


class ConvolutionalEncoder(nn.Module):
    """DSSM-CNN (§5): word 3-gram convolution, tanh, max over real positions, dense, tanh."""

    def __init__(self, dim: int, filters: int, hidden: int) -> None:
        super().__init__()
        # padding=1 centres a 3-word window on every token; the window around the last token
        # sees a zero vector beyond it, which is exactly what a padding token contributes.
        self.convolution = nn.Conv1d(dim, filters, kernel_size=3, padding=1)
        self.dense = nn.Linear(filters, hidden)

    def forward(self, embedded: Tensor, mask: Tensor) -> Tensor:
        windows = torch.tanh(self.convolution(embedded.transpose(1, 2)))  # [B, filters, L]
        windows = windows.masked_fill(~mask.unsqueeze(1), float("-inf"))
        pooled = windows.max(dim=-1).values
        pooled = torch.where(mask.any(dim=1, keepdim=True), pooled, torch.zeros_like(pooled))
        return torch.tanh(self.dense(pooled))


class RecurrentEncoder(nn.Module):
    """DSSM-LSTM (§5): BiLSTM, the final state of each direction, dense, tanh."""

    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.lstm = nn.LSTM(dim, hidden, batch_first=True, bidirectional=True)
        self.dense = nn.Linear(2 * hidden, hidden)

    def forward(self, embedded: Tensor, mask: Tensor) -> Tensor:
        # Texts are padded at the end (rerank.data.vocabulary does so); an empty text reads one zero
        # vector.
        lengths = mask.sum(dim=1).clamp_min(1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded, lengths, batch_first=True, enforce_sorted=False
        )
        _, (final, _) = self.lstm(packed)  # final: [2, B, hidden], forward then backward
        both = torch.cat([final[0], final[1]], dim=-1)
        return torch.tanh(self.dense(both))


class DualEncoder(nn.Module):
    """Two encoders and the Smooth Cosine Similarity: ``forward(q, d) = r_eps(f_q(q), f_d(d))``.

    ``forward(query_ids, doc_ids)`` takes ``LongTensor[B, n]`` and ``LongTensor[B, m]`` (id 0
    pads at the end, id 1 is the out-of-vocabulary word) and returns ``Tensor[B]`` in [-1, 1].
    :meth:`encode_docs` lets a scorer encode each document once and cache it;
    ``smooth_cosine(encode_queries(q), encode_docs(d), model.epsilon)`` equals ``forward``.
    """

    model_type = "dual"
    sparse_gradients = True  # its embedding lookups train with lazy Adam (word/optimiser.py)

    def __init__(
        self,
        query_vocab_size: int,
        doc_vocab_size: int,
        dim: int = 300,
        encoder: str = "avg",
        epsilon: float = 1.0,
        dropout: float = 0.4,
        hidden: int = 64,
        filters: int = 300,
    ) -> None:
        super().__init__()
        if encoder not in ENCODERS:
            raise UsageError(f"unknown encoder {encoder!r} (choose one of {', '.join(ENCODERS)})")
        if query_vocab_size < 2 or doc_vocab_size < 2:
            raise UsageError("a vocabulary needs at least the padding and the OOV ids (2 rows)")
        if min(dim, hidden, filters) < 1:
            raise UsageError("dim, hidden and filters must be positive")
        if epsilon < 0:
            raise UsageError(f"epsilon must be >= 0 (0 is the plain cosine), got {epsilon}")
        if not 0.0 <= dropout < 1.0:
            raise UsageError(f"dropout must lie in [0, 1), got {dropout}")
        self._config: dict[str, Any] = {
            "query_vocab_size": int(query_vocab_size),
            "doc_vocab_size": int(doc_vocab_size),
            "dim": int(dim),
            "encoder": encoder,
            "epsilon": float(epsilon),
            "dropout": float(dropout),
            "hidden": int(hidden),
            "filters": int(filters),
        }
        self.encoder = encoder
        self.epsilon = float(epsilon)
        self.query_embedding = nn.Embedding(query_vocab_size, dim, padding_idx=0)
        self.doc_embedding = nn.Embedding(doc_vocab_size, dim, padding_idx=0)
        # Average pooling has no dropout in the paper; cnn and lstm drop embeddings (§5).
        self.embedding_dropout = nn.Dropout(dropout if encoder != "avg" else 0.0)
        self.query_encoder = self._make_encoder(encoder, dim, hidden, filters)
        self.doc_encoder = self._make_encoder(encoder, dim, hidden, filters)

    @staticmethod
    def _make_encoder(encoder: str, dim: int, hidden: int, filters: int) -> nn.Module | None:
        if encoder == "cnn":
            return ConvolutionalEncoder(dim, filters, hidden)
        if encoder == "lstm":
            return RecurrentEncoder(dim, hidden)
        return None  # average pooling has no parameters of its own

    @property
    def output_dim(self) -> int:
        """Size of an encoded query or document: ``dim`` for avg, ``hidden`` otherwise."""
        return int(self._config["dim"] if self.encoder == "avg" else self._config["hidden"])

    def config(self) -> dict[str, Any]:
        """The constructor's arguments, JSON-serialisable: ``DualEncoder(**config)`` rebuilds it."""
        return dict(self._config)

    def load_embeddings(self, side: Side, vectors: Tensor, rows: Tensor) -> None:
        """Initialise rows of the ``"query"`` or ``"doc"`` table from pre-trained vectors."""
        if side not in ("query", "doc"):
            raise ValueError(f'side must be "query" or "doc", got {side!r}')
        copy_rows(self.query_embedding if side == "query" else self.doc_embedding, vectors, rows)

    def encode_queries(self, ids: Tensor) -> Tensor:
        """``f_q``: ``LongTensor[B, n]`` -> ``Tensor[B, output_dim]``."""
        return self._encode(self.query_embedding, self.query_encoder, ids)

    def encode_docs(self, ids: Tensor) -> Tensor:
        """``f_d``: ``LongTensor[B, m]`` -> ``Tensor[B, output_dim]``."""
        return self._encode(self.doc_embedding, self.doc_encoder, ids)

    def _encode(self, table: nn.Embedding, encoder: nn.Module | None, ids: Tensor) -> Tensor:
        if encoder is None:
            # Average pooling (§3.2): tanh of the mean over real tokens. embedding_bag leaves
            # padding out of sum and count, and never builds the [B, L, dim] tensor.
            mean = F.embedding_bag(
                ids, table.weight, mode="mean", padding_idx=PADDING_ID, sparse=table.sparse
            )
            return torch.tanh(mean)
        mask = token_mask(ids)
        embedded = table(ids) * mask.unsqueeze(-1).to(table.weight.dtype)
        result: Tensor = encoder(self.embedding_dropout(embedded), mask)
        return result

    def forward(self, query_ids: Tensor, doc_ids: Tensor) -> Tensor:
        """Smooth cosine of the encoded query and document: ``Tensor[B]``."""
        if query_ids.shape[0] != doc_ids.shape[0]:
            raise ValueError(
                f"{query_ids.shape[0]} queries but {doc_ids.shape[0]} documents: one per pair"
            )
        return smooth_cosine(
            self.encode_queries(query_ids), self.encode_docs(doc_ids), self.epsilon
        )

    def extra_repr(self) -> str:
        return f"encoder={self.encoder}, epsilon={self.epsilon:g}"
