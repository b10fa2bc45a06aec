"""Stage 2: neural reranking of first-stage runs.

Models: :mod:`~clir_toolkit.rerank.knrm` (K-NRM, Xiong et al. 2017, trained on bilingual data
as in the thesis *Neural CLIR*) and :mod:`~clir_toolkit.rerank.dual` (the dual encoder with
Smooth Cosine Similarity of Liu et al., *Cross-Lingual Document Retrieval with Smooth
Learning*). Losses: :mod:`~clir_toolkit.rerank.losses` (SOSL and its baselines, K-NRM's
pairwise hinge). Analysis: :mod:`~clir_toolkit.rerank.bins` (the thesis' kernel bins).
Data, training and scoring: :mod:`~clir_toolkit.rerank.data`, ``train``, ``score``.

Importing this package does not import torch; its modules do.
"""
