"""Assignment ``rocchio``: Rocchio's pseudo-relevance feedback on translated queries.

The references are :func:`clir_toolkit.expand.feedback.rocchio_weights` and
:func:`clir_toolkit.expand.feedback.top_terms`, which ``clir search --prf rocchio`` uses;
the agreement check feeds both implementations the feedback documents that the toolkit's
first pass finds for the dev queries (dictionary translation, Pirkola's structure).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from clir_toolkit.teaching.grading import Assignment, Lookup, Timing, checks, close

SKELETON = '''"""Assignment rocchio: pseudo-relevance feedback after translation.

Rocchio (1971) moves a query vector towards the centroid of the relevant documents:
q' = alpha * q + beta * centroid(R). Without judgements, *pseudo*-relevance feedback takes
the top k documents of a first search as R. After dictionary translation this repairs the
query in the document language: the feedback documents contain the right translations
(and their context words), which the dictionary could not choose among (thesis §5.4).

The toolkit represents each feedback document by tf-idf weights over its index terms,

    w(t, d) = (tf(t, d) / |d|) * ln(N / df(t))        (|d| = sum of d's frequencies)

takes their mean over the k documents as the centroid, keeps its heaviest terms and scales
them so that together they weigh beta times the query's terms.
Grade it with:  clir assignment check rocchio
"""

from collections.abc import Callable


def rocchio_weights(vectors: list[dict[str, int]], n_docs: int,
                    df: Callable[[str], int]) -> dict[str, float]:
    """The centroid of the feedback documents: for every term of any of them, the mean over
    the documents of w(t, d) (0 in a document without t). ``vectors`` are the documents'
    term frequencies, ``n_docs`` is N, ``df(term)`` a term's document frequency (count a
    df of 0 as 1)."""
    raise NotImplementedError


def top_terms(weights: dict[str, float], k: int, total: float) -> dict[str, float]:
    """The ``k`` heaviest terms of ``weights`` (equal weights: alphabetical order first),
    scaled so that their weights sum to ``total``; {} when they weigh nothing."""
    raise NotImplementedError
'''

QUERIES = 60
"""Dev queries whose feedback documents the agreement check uses."""
FEEDBACK_DOCS = 10


def _reference() -> ModuleType:
    from clir_toolkit.expand.feedback import rocchio_weights, top_terms

    return SimpleNamespace(rocchio_weights=rocchio_weights, top_terms=top_terms)  # type: ignore[return-value]


def _hand_example(student: ModuleType, collection: Path | None) -> None:
    import math

    df = Lookup({"a": 1, "b": 10, "c": 5}, default=0)
    vectors = [{"a": 2, "b": 2}, {"b": 1, "c": 3}]
    weights = student.rocchio_weights(vectors, 10, df)
    expected = {"a": (2 / 4) * math.log(10) / 2, "b": 0.0, "c": (3 / 4) * math.log(2) / 2}
    assert set(weights) == set(expected), (
        f"the centroid has the terms {sorted(weights)}, expected {sorted(expected)}"
    )
    for term, value in expected.items():
        close(weights[term], value, f"the weight of {term!r} in the hand example")


def _non_negative_and_scaled(student: ModuleType, collection: Path | None) -> None:
    weights = {"x": 0.5, "y": 0.25, "z": 0.25, "w": 0.1, "v": 0.0}
    top = student.top_terms(weights, 3, 6.0)
    assert list(top) == ["x", "y", "z"], (
        f"top_terms kept {list(top)}: the 3 heaviest, ties in alphabetical order (y before z)"
    )
    close(sum(top.values()), 6.0, "the sum of the kept weights")
    assert all(value >= 0 for value in top.values()), "feedback weights must be non-negative"
    close(top["x"] / top["y"], 2.0, "the ratio of two kept weights (scaling keeps it)")
    assert student.top_terms({"a": 0.0}, 5, 3.0) == {}, "terms that weigh nothing: {}"


def feedback_inputs(collection: Path, queries: int = QUERIES) -> list[tuple[Any, ...]]:
    """(vectors, N, df) of the first pass of each dev query, as ``--prf rocchio`` sees them."""
    from clir_toolkit.search import Searcher
    from clir_toolkit.teaching.fixtures import dev_queries, prepared_index

    inputs = []
    with Searcher(prepared_index(collection)) as searcher:
        for query in dev_queries(collection, queries):
            lucene_query = searcher.lucene_query(query, "syn")
            if lucene_query is None:
                continue
            hits = searcher.search_lucene(lucene_query, FEEDBACK_DOCS)
            vectors = [searcher.document_vector(h.docid) for h in hits]
            df = {t: searcher.document_frequency(t) for v in vectors for t in v}
            inputs.append((vectors, searcher.documents, df))
    return inputs


def _agrees_on_feedback_documents(student: ModuleType, collection: Path | None) -> str:
    from clir_toolkit.teaching.fixtures import collection_or_default

    where = collection_or_default(collection)
    reference = _reference()
    inputs = feedback_inputs(where)
    assert inputs, f"{where}: no dev query found a document"
    for vectors, docs, df in inputs:
        mine = student.rocchio_weights(vectors, docs, Lookup(df))
        theirs = reference.rocchio_weights(vectors, docs, df.__getitem__)
        assert set(mine) == set(theirs), "the centroid must hold every term of the documents"
        assert all(value >= 0 for value in mine.values()), "tf-idf weights are non-negative"
        for term in theirs:
            close(mine[term], theirs[term], f"the weight of {term!r}", rtol=1e-9, atol=1e-12)
        top = student.top_terms(theirs, 10, 1.5)
        expected = reference.top_terms(theirs, 10, 1.5)
        assert list(top) == list(expected), f"top_terms kept {list(top)}, not {list(expected)}"
        close([top[t] for t in expected], list(expected.values()), "the kept weights")
    return f"{len(inputs)} dev queries of {where.name}, {FEEDBACK_DOCS} documents each"


def _feedback_vectors() -> list[dict[str, int]]:
    import random

    rng = random.Random(5)
    return [{f"t{rng.randint(0, 3000)}": rng.randint(1, 9) for _ in range(300)}
            for _ in range(10)]  # fmt: skip


def _twenty_centroids(functions: Any, vectors: list[dict[str, int]]) -> None:
    for _ in range(20):
        functions.top_terms(functions.rocchio_weights(vectors, 20_000, lambda t: 7), 20, 1.0)


FAST_ENOUGH = Timing(prepare=_feedback_vectors, run=_twenty_centroids, factor=20, floor=0.2,
                     what="20 feedback centroids of 10 documents")  # fmt: skip


ASSIGNMENT = Assignment(
    name="rocchio",
    title="Rocchio pseudo-relevance feedback on translated queries",
    teaches="the vector-space view of feedback (a centroid of tf-idf vectors), why feedback "
    "after translation repairs ambiguous dictionary translations, and how the learned "
    "terms are weighted against the query",
    minutes=60,
    functions=("rocchio_weights", "top_terms"),
    skeleton=SKELETON,
    reference=_reference,
    checks=checks(
        ("centroid of a hand example", 2, _hand_example),
        ("top terms: non-negative, scaled to beta", 2, _non_negative_and_scaled),
        ("agrees on the dev queries' feedback documents", 4, _agrees_on_feedback_documents),
        ("timing ceiling", 1, FAST_ENOUGH),
    ),
)
