"""The word-level reranker architectures, one module each: the ``rerankers`` kind's home.

Each module registers one architecture in :mod:`clir_toolkit.registry` (kind
``rerankers``), with the defaults its training takes when the command line or the recipe
leaves them out. What ``clir rerank train --model NAME`` builds is the registered factory,
called as ``factory(query_vocab_size, doc_vocab_size, dim=..., **options)`` — the call a
plug-in's model class takes (:mod:`clir_toolkit.plugins`) — and it reads the model files
it writes back the same way (:mod:`clir_toolkit.rerank.word.model_file`).

Traits a module declares (a plug-in's class may set the same names as attributes):
``default_loss`` and ``default_lr`` (else ``sosl`` and 1e-3); ``default_embeddings`` (the
vectors its tables start with when ``--embeddings`` is not given; else random);
``subword_lr`` and ``frozen_lr`` (the learning rate on USE-m3's subword table, and over
frozen tables); ``train_options`` (a function of the
:class:`~clir_toolkit.rerank.word.train_config.TrainConfig` giving the architecture's own
keyword arguments).

A new architecture is one new module here; the modules import torch inside their factories,
because listing the names imports them all.
"""
