"""Stage 2: neural reranking of first-stage runs.

Models: :mod:`~clir_toolkit.rerank.knrm` (K-NRM, Xiong et al. 2017, trained on bilingual data
as in the thesis *Neural CLIR*) and :mod:`~clir_toolkit.rerank.dual` (the dual encoder with
Smooth Cosine Similarity of Liu et al., *Cross-Lingual Document Retrieval with Smooth
Learning*). Losses: :mod:`~clir_toolkit.rerank.losses` (SOSL and its baselines, K-NRM's
pairwise hinge). Analysis: :mod:`~clir_toolkit.rerank.bins` (the thesis' kernel bins).
Data, training and scoring: :mod:`~clir_toolkit.rerank.data`, ``train``, ``score``.
Pretrained multilingual sentence encoders: :mod:`~clir_toolkit.rerank.pretrained` (their
cosine, no training) and :mod:`~clir_toolkit.rerank.tuned` (fine-tuned with the smooth cosine
and SOSL: the default of ``clir rerank train``).

Importing this package does not import torch; its modules do.
"""

DEFAULT_ENCODER = "use-m3"
"""The encoder ``clir rerank train`` fine-tunes when no ``--model`` is given: the best
measured trained reranker (docs/encoders.md)."""
