"""Where the toolkit's models compute: CPU threads and torch devices.

Both stages need these decisions: the first stage's Lucene searches and the sentence
encoders choose a thread count, the rerankers and the Hugging Face encoders a torch device
and precision. They live below both stages so that neither imports the other for them:

* :mod:`clir_toolkit.compute.threads`: how many CPU threads, decided once, unless the user
  decided;
* :mod:`clir_toolkit.compute.device`: ``--device auto|cpu|cuda`` and ``--precision``.
"""
