"""Assignment ``pirkola``: Pirkola's structured query, scored with BM25 as Lucene scores it.

The references are :func:`clir_toolkit.search.searcher.pooled_tokens` (the pseudo-term the
searcher builds) and :mod:`clir_toolkit.search.bm25_formula` (Lucene's ``SynonymQuery``
statistics and BM25, in Python). The strongest check recomputes, with the student's three
functions, the scores Lucene gave the top documents of the dev queries (``clir search
--translate dict``, Pirkola's structure): they must agree to 1e-4.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from clir_toolkit.teaching.grading import Assignment, Timing, checks, close

SKELETON = '''"""Assignment pirkola: Pirkola's structured query, scored with BM25.

A dictionary gives an English query word several translations ("file" → fichier, dossier,
lime). Searching them as a bag of words lets a rare wrong translation dominate the score
(its idf is large). Pirkola (SIGIR 1998, "The effects of query structure and dictionary
setups in dictionary-based cross-language information retrieval") pools the translations
of one word into one *pseudo-term*: its term frequency in a document is the sum of its
translations' frequencies, its document frequency that of the union of their postings.
The toolkit searches with Lucene's SynonymQuery, which pools weighted translations:

    tf(P, d) = sum_t w_t * tf(t, d)        df(P) = max_t df(t)

(Lucene takes the largest df as the size of the union.) Each pseudo-term is then one BM25
clause, as Lucene computes it (Robertson & Zaragoza 2009, eq. 3.15, Lucene's idf):

    idf = ln(1 + (N - df + 0.5) / (df + 0.5))
    score(P, d) = idf * tf / (tf + k1 * (1 - b + b * |d| / avgdl))

and a document's score is the sum over the query's pseudo-terms.
Grade it with:  clir assignment check pirkola
"""

from collections.abc import Mapping, Sequence


def pseudo_term(alternatives: Sequence[tuple[list[str], float]]) -> dict[str, float]:
    """The tokens of one query word's translations, with their weights.

    ``alternatives`` holds each translation as (its analysed tokens, its weight); a phrase
    translation ("système de fichiers" → ["system", "fich"]) gives each of its tokens the
    translation's weight, and a token found in several translations sums their weights.
    Returns {token: weight}, in the order the tokens first occur.
    """
    raise NotImplementedError


def pseudo_term_statistics(
    weights: Mapping[str, float], tf: Mapping[str, int], df: Mapping[str, int]
) -> tuple[float, int]:
    """(tf, df) of the pseudo-term with token ``weights`` in one document: ``tf`` maps
    the document's tokens to their frequencies (a token absent from it occurs 0 times),
    ``df`` every token of ``weights`` to its document frequency."""
    raise NotImplementedError


def bm25(tf: float, df: int, doc_length: float, docs: int, avg_length: float, k1: float,
         b: float) -> float:
    """One clause's BM25 score (boost 1): 0 when ``tf`` is 0. ``docs`` is N, ``avg_length``
    avgdl, ``doc_length`` |d|."""
    raise NotImplementedError
'''

QUERIES = 40
"""Dev queries whose top documents the agreement check recomputes."""
HITS = 10


def _reference() -> ModuleType:
    from clir_toolkit.search import bm25_formula
    from clir_toolkit.search.searcher import pooled_tokens

    return SimpleNamespace(  # type: ignore[return-value]
        pseudo_term=pooled_tokens,
        pseudo_term_statistics=bm25_formula.synonym_statistics,
        bm25=bm25_formula.bm25,
    )


def _pooling(student: ModuleType, collection: Path | None) -> None:
    alternatives = [(["fichi"], 1.0), (["system", "fichi"], 0.5), (["dossi"], 0.25)]
    pooled = student.pseudo_term(alternatives)
    assert dict(pooled) == {"fichi": 1.5, "system": 0.5, "dossi": 0.25}, (
        f"pseudo_term({alternatives}) gave {dict(pooled)}: a phrase gives each of its tokens "
        "its weight, and a token's weights add up"
    )
    assert dict(student.pseudo_term([(["a"], 2.0)])) == {"a": 2.0}, "one translation, one token"


def _statistics(student: ModuleType, collection: Path | None) -> None:
    weights = {"fichi": 1.0, "dossi": 0.5, "lim": 0.25}
    tf, df = student.pseudo_term_statistics(weights, {"fichi": 3, "dossi": 2, "autre": 9},
                                            {"fichi": 40, "dossi": 90, "lim": 5})  # fmt: skip
    close(tf, 3 * 1.0 + 2 * 0.5, "tf of a pseudo-term (weighted sum over its tokens)")
    assert df == 90, f"df of a pseudo-term is the largest of its tokens' (90), not {df}"
    tf, _ = student.pseudo_term_statistics({"lim": 1.0}, {"fichi": 3}, {"lim": 5})
    close(tf, 0.0, "tf of a pseudo-term none of whose tokens is in the document")


def _bm25_values(student: ModuleType, collection: Path | None) -> None:
    import math

    idf = math.log(1 + (1000 - 10 + 0.5) / (10 + 0.5))
    expected = idf * 3 / (3 + 1.2 * (1 - 0.75 + 0.75 * 150 / 100))
    close(student.bm25(3, 10, 150, 1000, 100.0, 1.2, 0.75), expected, "bm25(tf=3, df=10, ...)")
    close(student.bm25(0, 10, 150, 1000, 100.0, 1.2, 0.75), 0.0, "bm25 with tf = 0")
    low = student.bm25(1, 10, 100, 1000, 100.0, 0.9, 0.4)
    high = student.bm25(1, 500, 100, 1000, 100.0, 0.9, 0.4)
    assert low > high > 0, "a rarer term (smaller df) must score higher, and idf stays > 0"


def recomputed_scores(functions: Any, collection: Path, queries: int = QUERIES,
                      hits: int = HITS) -> list[tuple[str, str, float, float]]:  # fmt: skip
    """(qid, docid, Lucene's score, the score ``functions`` give) for the top ``hits`` of
    the first ``queries`` dev queries, searched with Pirkola's structure."""
    from clir_toolkit.search import Searcher
    from clir_toolkit.search.bm25_formula import encoded_length
    from clir_toolkit.search.searcher import synonym_boost
    from clir_toolkit.teaching.fixtures import dev_queries, prepared_index

    out = []
    with Searcher(prepared_index(collection)) as searcher:
        docs, avg_length = searcher.collection_statistics()
        k1, b = searcher.k1, searcher.b
        for query in dev_queries(collection, queries):
            terms = [alternatives for term in query.terms
                     if (alternatives := searcher.analysed_term(term))]  # fmt: skip
            for hit in searcher.search(query, hits, structure="syn"):
                vector = searcher.document_vector(hit.docid)
                length = encoded_length(sum(vector.values()))
                score = 0.0
                for alternatives in terms:
                    weights = dict(functions.pseudo_term(alternatives))
                    top = max(weights.values())
                    boosts = {t: synonym_boost(w / top) if len(weights) > 1 else 1.0
                              for t, w in weights.items()}  # fmt: skip
                    df = {t: searcher.document_frequency(t) for t in boosts}
                    tf, pooled_df = functions.pseudo_term_statistics(boosts, vector, df)
                    score += top * functions.bm25(tf, pooled_df, length, docs, avg_length, k1, b)
                out.append((query.qid, hit.docid, hit.score, score))
    return out


def _agrees_with_lucene(student: ModuleType, collection: Path | None) -> str:
    from clir_toolkit.teaching.fixtures import collection_or_default

    where = collection_or_default(collection)
    rows = recomputed_scores(student, where)
    assert rows, f"{where}: no dev query found a document"
    for qid, docid, lucene, mine in rows:
        close(mine, lucene, f"query {qid}, document {docid}: the score", rtol=1e-4, atol=1e-5)
    return f"{len(rows)} scores of {where.name}'s dev queries"


def _pseudo_terms() -> tuple[Any, dict[str, int], dict[str, int]]:
    import random

    rng = random.Random(3)
    words = [f"w{i}" for i in range(200)]
    alternatives = [[([rng.choice(words) for _ in range(rng.randint(1, 3))], rng.random())
                     for _ in range(6)] for _ in range(2000)]  # fmt: skip
    tf = {w: rng.randint(0, 5) for w in words}
    df = {w: rng.randint(1, 900) for w in words}
    return alternatives, tf, df


def _pool_and_score(functions: Any, data: tuple[Any, dict[str, int], dict[str, int]]) -> None:
    alternatives, tf, df = data
    for alts in alternatives:
        weights = functions.pseudo_term(alts)
        freq, pooled = functions.pseudo_term_statistics(weights, tf, df)
        functions.bm25(freq, pooled, 120, 1000, 100.0, 0.9, 0.4)


FAST_ENOUGH = Timing(prepare=_pseudo_terms, run=_pool_and_score, factor=20, floor=0.2,
                     what="2,000 pseudo-terms pooled and scored")  # fmt: skip


ASSIGNMENT = Assignment(
    name="pirkola",
    title="Pirkola's structured query, scored with BM25 as Lucene does",
    teaches="why a bag of dictionary translations ranks badly (a rare wrong translation's "
    "idf), how pooling translations into one pseudo-term fixes it, what BM25's parts do, "
    "and how a score from Lucene is recomputed by hand (norm encoding included)",
    minutes=90,
    functions=("pseudo_term", "pseudo_term_statistics", "bm25"),
    skeleton=SKELETON,
    reference=_reference,
    checks=checks(
        ("pseudo-term: phrases and repeated tokens", 2, _pooling),
        ("pseudo-term statistics", 2, _statistics),
        ("BM25 of one clause", 2, _bm25_values),
        ("recomputes Lucene's scores (dev queries)", 4, _agrees_with_lucene),
        ("timing ceiling", 1, FAST_ENOUGH),
    ),
)
