"""The sentence-encoder rerankers: pretrained multilingual sentence encoders.

:mod:`.pretrained` scores by the encoder's cosine, with no training (``clir rerank score
--pretrained``); :mod:`.tuned` fine-tunes two maps over the frozen encoder's vectors with the
smooth cosine and SOSL (the default of ``clir rerank train``), with :mod:`.tuned_config`
(its options) and :mod:`.tuned_examples` (its examples, drawn afresh each epoch);
:mod:`.tuned_model` is the fine-tuned model and its file, what scoring and ``clir search
--model`` read. :mod:`.family` is the family's side of the reranker contract
(:mod:`clir_toolkit.rerank.contract`).
"""
