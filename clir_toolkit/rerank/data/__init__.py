"""What a reranker reads: texts made tokens, tokens made ids, documents cached, judgements
made examples.

:mod:`.tokens` (the analysis of queries and documents: words, or the pieces of USE-m3's
subword table, :mod:`.subwords`), :mod:`.vocabulary` (tokens to ids, saved with a model),
:mod:`.documents` (the corpus' texts read once, and the on-disk caches of encoded documents
and document vectors), :mod:`.examples` (judged (query, document, grade) examples, the
pairs of the pairwise loss, parallel sentences). Both families of rerankers read them.
"""
