"""The reranker ``dual``: the dual encoder scored by the Smooth Cosine Similarity, trained
with SOSL (Liu, Zhang, Goldwasser and Wang, *Cross-Lingual Document Retrieval with Smooth
Learning*).

The model is :class:`clir_toolkit.rerank.word.dual.DualEncoder`; this module registers it
with the paper's training defaults (§5 "Experimental Setup": SOSL, Adam with learning rate
0.01) and passes it the text encoder (``--encoder``) and smoothness (``--epsilon``) asked.
"""

from __future__ import annotations

from typing import Any

from clir_toolkit.registry import register
from clir_toolkit.rerank.word.train_config import TrainConfig


def dual_options(config: TrainConfig) -> dict[str, Any]:
    """The dual encoder's own keyword arguments for ``config``: its text encoder, and ε
    when one is given (else the model's default, 1)."""
    options: dict[str, Any] = {"encoder": config.encoder}
    if config.epsilon is not None:
        options["epsilon"] = config.epsilon
    return options


@register("rerankers", "dual", order=2, default_loss="sosl", default_lr=0.01,
          train_options=dual_options)
def dual(query_vocab_size: int, doc_vocab_size: int, **options: Any) -> Any:
    """The dual encoder: two text encoders compared by the smooth cosine (eq. 1)."""
    from clir_toolkit.rerank.word.dual import DualEncoder

    return DualEncoder(query_vocab_size, doc_vocab_size, **options)
