"""Lucene's BM25 written out in Python, term by term: what one document's score is made of.

:class:`~clir_toolkit.search.Searcher` scores with Lucene's ``BM25Similarity`` (Robertson
and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009, eq. 3.15 with
Lucene's idf and without the constant factor ``k1 + 1``, which does not change a ranking).
For a term t of a query and a document d:

``score(t, d) = boost · idf(t) · tf / (tf + k1 · (1 − b + b · |d| / avgdl))``

``idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5))``, N the documents with the field, avgdl its
mean length, and ``|d|`` the document's length *as Lucene stores it*: one byte per document
(:func:`encoded_length`), exact below 40 tokens and within 1/8 above. A query's score is
the sum over its clauses. Pirkola's pseudo-term (a ``SynonymQuery``) is one clause whose
statistics are pooled from its tokens (:func:`synonym_statistics`).

These functions explain a score; they are not used to rank (Lucene does that), and they
are the reference of the ``pirkola`` assignment (``clir assignment start pirkola``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from clir_toolkit import jvm


def bm25(tf: float, df: int, doc_length: float, docs: int, avg_length: float, k1: float,
         b: float) -> float:  # fmt: skip
    """One clause's BM25 score with boost 1 (see the module docstring); 0 when tf is 0."""
    if tf <= 0:
        return 0.0
    idf = math.log(1 + (docs - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * doc_length / avg_length))


def synonym_statistics(
    weights: Mapping[str, float], tf: Mapping[str, int], df: Mapping[str, int]
) -> tuple[float, int]:
    """A pseudo-term's (tf, df) in one document, as Lucene's ``SynonymQuery`` pools them:
    the weighted sum of its tokens' frequencies in the document, and the largest document
    frequency of its tokens (Pirkola, 1998, takes the union of their postings; Lucene
    approximates its size by the largest)."""
    frequency = sum(weight * tf.get(token, 0) for token, weight in weights.items())
    return frequency, max(df.get(token, 0) for token in weights)


def encoded_length(tokens: int) -> int:
    """A document length as Lucene's norms keep it (``SmallFloat.intToByte4`` then
    ``byte4ToInt``): what BM25 divides by avgdl."""
    small_float = jvm.java_class("org.apache.lucene.util.SmallFloat")
    return int(small_float.byte4ToInt(small_float.intToByte4(int(tokens))))
