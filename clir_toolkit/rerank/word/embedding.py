"""Word-embedding tables shared by the reranker's models: padding, masks, pre-trained rows.

Both models (:mod:`clir_toolkit.rerank.word.knrm`, :mod:`clir_toolkit.rerank.word.dual`) read
token ids that :mod:`clir_toolkit.rerank.data.vocabulary` wrote: id 0 pads a text to its
tensor's length and id 1 stands for every word outside the vocabulary. Padding must never
change a score, so the models take the mask below from the ids instead of trusting row 0 of
a table to stay zero.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor, nn

PADDING_ID = 0
"""The id that pads a text (row 0 of every embedding table)."""

OOV_ID = 1
"""The id of every word outside the vocabulary; an ordinary, trainable row."""

Side = Literal["query", "doc"]


def token_mask(ids: Tensor) -> Tensor:
    """``True`` where ``ids`` holds a token, ``False`` where it holds padding."""
    return ids != PADDING_ID


def copy_rows(table: nn.Embedding, vectors: Tensor, rows: Tensor) -> None:
    """Initialise ``table.weight[rows]`` with ``vectors`` (pre-trained embeddings).

    ``vectors`` is ``[n, dim]`` and ``rows`` the ``n`` ids they belong to, as a loader of a
    ``.vec`` file finds them in the vocabulary. Rows not named keep their random values; the
    padding row cannot be set, because padding must stay a zero vector.
    """
    if vectors.dim() != 2 or vectors.shape[1] != table.embedding_dim:
        raise ValueError(
            f"vectors have shape {tuple(vectors.shape)}, but the table needs "
            f"[n, {table.embedding_dim}]"
        )
    rows = torch.as_tensor(rows, dtype=torch.long)
    if rows.dim() != 1 or rows.shape[0] != vectors.shape[0]:
        raise ValueError(f"{vectors.shape[0]} vectors need as many row ids, got {rows.numel()}")
    if rows.numel() == 0:
        return
    if int(rows.min()) <= PADDING_ID or int(rows.max()) >= table.num_embeddings:
        raise ValueError(
            f"row ids must lie in 1..{table.num_embeddings - 1} (row 0 is the padding row)"
        )
    with torch.no_grad():
        weight = table.weight
        weight[rows.to(weight.device)] = vectors.to(device=weight.device, dtype=weight.dtype)
