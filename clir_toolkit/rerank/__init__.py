"""Stage 2: neural reranking of first-stage runs.

Models: :mod:`~clir_toolkit.rerank.knrm` (K-NRM, Xiong et al. 2017, trained on bilingual data
as in the thesis *Neural CLIR*) and :mod:`~clir_toolkit.rerank.dual` (the dual encoder with
Smooth Cosine Similarity of Liu et al., *Cross-Lingual Document Retrieval with Smooth
Learning*). Losses: :mod:`~clir_toolkit.rerank.losses`, one module each (SOSL and its baselines,
K-NRM's pairwise hinge). Analysis: :mod:`~clir_toolkit.rerank.bins` (the thesis' kernel bins).
Data: :mod:`~clir_toolkit.rerank.tokens`, ``vocabulary``, ``documents`` (the tensor cache),
``examples``. Training: :mod:`~clir_toolkit.rerank.train` (the procedure), ``train_config``,
``training_data``, ``embedding_init``, ``epoch``, ``checkpoint``. Scoring: ``model_file``,
``candidates``, ``score``.
Pretrained multilingual sentence encoders: :mod:`~clir_toolkit.rerank.pretrained` (their
cosine, no training) and :mod:`~clir_toolkit.rerank.tuned` (fine-tuned with the smooth cosine
and SOSL: the default of ``clir rerank train``).

Importing this package does not import torch; its modules do.
"""

from clir_toolkit import plugins
from clir_toolkit.plugins import Names

DEFAULT_ENCODER = "use-m3"
"""The encoder ``clir rerank train`` fine-tunes when no ``--model`` is given: the best
measured trained reranker (docs/encoders.md)."""

MODEL_NAMES = Names(("knrm", "dual"), plugins.RERANKERS)
"""``--model`` and ``[rerank] model``: K-NRM, the dual encoder, then installed reranker
plug-ins."""

LOSS_NAMES = Names(("sosl", "mse", "po", "3part", "hinge"), plugins.LOSSES)
"""``--loss`` and ``[rerank] loss``: the losses of :mod:`clir_toolkit.rerank.losses` (keys of
its ``LOSSES``), then installed loss plug-ins."""


def is_pairwise(loss: str) -> bool:
    """Whether the loss called ``loss`` takes (better, worse) scores instead of grades."""
    if LOSS_NAMES.is_plugin(loss):
        return getattr(plugins.load(plugins.LOSSES, loss), "pairwise", False) is True
    return loss == "hinge"
