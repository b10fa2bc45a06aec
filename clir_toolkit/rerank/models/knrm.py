"""The reranker ``knrm``: K-NRM, kernel pooling over the cosines of word pairs (Xiong et al.
2017, trained on bilingual data as in Q. Liu's thesis *Neural CLIR*).

The model is :class:`clir_toolkit.rerank.word.knrm.KNRM`; this module registers it with its
training defaults: the pairwise hinge loss and learning rate 1e-3 of the K-NRM paper (§3.2),
USE-m3's pretrained subword table as its starting vectors, and the learning rates measured
on that table (:data:`~clir_toolkit.rerank.word.train_config.SUBWORD_KNRM_LR`) and over
frozen tables (:data:`~clir_toolkit.rerank.word.train_config.FROZEN_KNRM_LR`).
"""

from __future__ import annotations

from typing import Any

from clir_toolkit.registry import register
from clir_toolkit.rerank.data.subwords import SOURCE as SUBWORD_SOURCE
from clir_toolkit.rerank.word.train_config import (
    FROZEN_KNRM_LR,
    SUBWORD_KNRM_LR,
    TrainConfig,
    uses_subwords,
)


def knrm_options(config: TrainConfig) -> dict[str, Any]:
    """K-NRM's own keyword arguments for ``config`` (resolved).

    On the subword table, one vocabulary of pieces serves both languages: one table, so that
    a piece of a query and the same piece of a document have cosine 1 (the exact-match
    kernel). ``exact_match = "no"`` keeps the ten soft kernels only (thesis §6.2.1: "by
    removing that kernel from kernel-pooling layer, we can disable exact-match").
    """
    from clir_toolkit.rerank.word.knrm import DEFAULT_MUS, EXACT_MU

    options: dict[str, Any] = {"shared_embeddings": True} if uses_subwords(config) else {}
    if config.exact_match == "no":
        options["mus"] = [mu for mu in DEFAULT_MUS if mu != EXACT_MU]
    return options


@register(
    "rerankers", "knrm", order=1, default_loss="hinge", default_lr=1e-3,
    default_embeddings=SUBWORD_SOURCE, subword_lr=SUBWORD_KNRM_LR, frozen_lr=FROZEN_KNRM_LR,
    train_options=knrm_options, exact_match_kernel=True,
)  # fmt: skip
def knrm(query_vocab_size: int, doc_vocab_size: int, **options: Any) -> Any:
    """K-NRM: kernel pooling over the cosines of query and document words (thesis ch. 3)."""
    from clir_toolkit.rerank.word.knrm import KNRM

    return KNRM(query_vocab_size, doc_vocab_size, **options)
