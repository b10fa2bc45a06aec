"""Stage 2: neural reranking of first-stage runs.

Two families of rerankers keep one contract (:mod:`~clir_toolkit.rerank.contract`: train to a
model file, load it, score a run's candidates), and :mod:`~clir_toolkit.rerank.score` asks a
model file which family it belongs to:

* :mod:`~clir_toolkit.rerank.word`: word-level models trained from scratch on word ids —
  K-NRM (Xiong et al. 2017, trained on bilingual data as in the thesis *Neural CLIR*) and the
  dual encoder with Smooth Cosine Similarity (Liu et al., *Cross-Lingual Document Retrieval
  with Smooth Learning*) — with their training procedure, model files and kernel bins;
* :mod:`~clir_toolkit.rerank.sentence`: pretrained multilingual sentence encoders, scored by
  their cosine (``pretrained``, no training) or fine-tuned with the smooth cosine and SOSL
  (``tuned``: the default of ``clir rerank train``).

Around them: :mod:`~clir_toolkit.rerank.models` (one file per word-level architecture: the
home of the ``rerankers`` kind of :mod:`clir_toolkit.registry`),
:mod:`~clir_toolkit.rerank.losses` (one file per training loss: the ``losses`` kind),
:mod:`~clir_toolkit.rerank.data` (tokens, vocabularies, the document cache, judged
examples), and what both families share: :mod:`~clir_toolkit.rerank.candidates` (a run's
candidates and the reranked run), :mod:`~clir_toolkit.rerank.training` (the dev measure,
the log, the report), :mod:`~clir_toolkit.rerank.model_io` (model files written, read and
checked) and the compute set-up (``device``, ``threads``, ``allocator``).

Importing this package does not import torch; its modules do.
"""

from clir_toolkit import registry

DEFAULT_ENCODER = "use-m3"
"""The encoder ``clir rerank train`` fine-tunes when no ``--model`` is given: the best
measured trained reranker (docs/encoders.md)."""

MODEL_NAMES = registry.names("rerankers")
"""``--model`` and ``[rerank] model``: the word-level architectures of
:mod:`clir_toolkit.rerank.models` (K-NRM, the dual encoder), then installed reranker
plug-ins."""

LOSS_NAMES = registry.names("losses")
"""``--loss`` and ``[rerank] loss``: the losses of :mod:`clir_toolkit.rerank.losses`, then
installed loss plug-ins."""


def is_pairwise(loss: str) -> bool:
    """Whether the loss called ``loss`` takes (better, worse) scores instead of grades."""
    return registry.component("losses", loss).trait("pairwise") is True

