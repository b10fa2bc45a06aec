"""The word-level rerankers: models that learn word embeddings from ids, trained from scratch.

The models: :mod:`.knrm` (K-NRM, Xiong et al. 2017, trained on bilingual data as in the
thesis *Neural CLIR*) and :mod:`.dual` (the dual encoder with Smooth Cosine Similarity of Liu
et al., *Cross-Lingual Document Retrieval with Smooth Learning*), over :mod:`.embedding`'s
tables; they are registered by name in :mod:`clir_toolkit.rerank.models`.
Training (``clir rerank train --model``): :mod:`.train_config` (the options),
:mod:`.prepare` (steps 1–3: inputs, :mod:`.training_data`, the model and
:mod:`.embedding_init`), :mod:`.train` (the epochs, :mod:`.epoch`, :mod:`.optimiser`,
:mod:`.checkpoint`; the model file). Scoring: :mod:`.model_file` (reading a model back),
:mod:`.batches` (candidates as ids, scored in batches). Analysis: :mod:`.bins` (the thesis'
kernel bins), :mod:`.bench` (speed). :mod:`.family` is the family's side of the reranker
contract (:mod:`clir_toolkit.rerank.contract`).
"""
