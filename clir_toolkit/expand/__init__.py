"""Query expansion around translation (thesis §5.2).

* :mod:`.wordnet` — before translation: WordNet synonyms of each English term join the
  term's alternatives, and are translated with it.
* :mod:`.feedback` — after translation: Rocchio (equation 5.1) or RM3 pseudo-relevance
  feedback adds terms of the top-ranked target-language documents, read from the index's
  stored document vectors.

What ``--expand`` offers is one module each in :mod:`.expanders` (``wordnet``), registered in
:mod:`clir_toolkit.registry` with the options it reads.
"""
