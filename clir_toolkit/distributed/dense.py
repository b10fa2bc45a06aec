"""Dense and hybrid search on Ray (``clir search --dense|--hybrid --ray ...``): the queries
split across workers, the run file one process's.

A query's dense scores depend on its own vector alone (:mod:`clir_toolkit.search.dense`
searches one query at a time), so the queries can be searched anywhere once they are
vectors. The driver does what one process does first: it opens the index's vectors
(through the fine-tuned document tower, with ``--model``) and its HNSW graph (with
``--approximate``), loads the query encoder and encodes every topic in the batches one
process forms, so the query vectors are the same numbers. Then:

1. the document side (:class:`~clir_toolkit.search.vector_search.DenseDocuments`:
   docids, vectors, graph) goes into Ray's object store once, and every task reads it from
   there (the tasks of one machine share one copy of the vectors): no worker loads an
   encoder, applies a tower or reads the vectors file;
2. the query vectors are cut into contiguous chunks (``--workers``, default the cluster's
   CPUs), one Ray task each, which searches its queries with the code one process runs
   (:meth:`~clir_toolkit.search.vector_search.DenseDocuments.search`);
3. the driver gathers the hits in order, makes them rows with the same function and writes
   the run with the same writer (sorted, ties by docid): byte for byte one process's run.

``--hybrid`` searches its BM25 half with the query-parallel BM25 search of
:func:`clir_toolkit.distributed.search.search_rows_on` (the same rows as one process, each
worker with its own JVM, so the index's Lucene files must be readable by every node) and
its dense half as above (each encoder's, when it fuses several), all as deep as one process
searches them, and fuses them with the function one process calls
(:func:`clir_toolkit.search.hybrid.fuse_hybrid`).

A task whose worker dies is run again by Ray (``max_retries``); nothing is written until
every chunk is back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.distributed.cluster import RETRIES, ClusterSpec, chunks, connected, gather, put
from clir_toolkit.distributed.search import search_rows_on
from clir_toolkit.formats import RunRow, Topic
from clir_toolkit.search import DEFAULT_B, DEFAULT_HITS, DEFAULT_K1, SearchStats, write_search_run
from clir_toolkit.search.dense import DenseSearcher, check_dense
from clir_toolkit.search.hybrid import check_hybrid, fuse_hybrid, hybrid_encoders, hybrid_weight_of
from clir_toolkit.search.runs import cyclic_gc_paused, ranked_rows
from clir_toolkit.search.searcher import Hit
from clir_toolkit.search.vector_search import DEFAULT_EF_SEARCH, DenseDocuments

if TYPE_CHECKING:
    import numpy as np

    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.query import StructuredQuery

#: One query's hits as they travel back from a task: its id, docids and scores.
FoundColumns = tuple[str, list[str], list[float]]


def _search_vectors(
    documents: DenseDocuments, qids: list[str], vectors: np.ndarray, hits: int
) -> list[FoundColumns]:
    """What one task does: search its queries' vectors, in order. The hits travel back as
    columns, faster to pickle than objects."""
    found = []
    for qid, vector in zip(qids, vectors, strict=True):
        best = documents.search(vector, hits)
        found.append((qid, [hit.docid for hit in best], [hit.score for hit in best]))
    return found


def vector_rows_on(
    ray: Any,
    documents: DenseDocuments,
    qids: Sequence[str],
    vectors: np.ndarray,
    *,
    hits: int,
    tag: str,
    workers: int | None,
) -> tuple[list[RunRow], list[str]]:
    """The dense rows of the queries ``qids`` (their vectors ``vectors``, one row each)
    searched on a connected cluster in ``workers`` chunks (default: the cluster's CPUs): the
    rows of :func:`clir_toolkit.search.dense.dense_rows`, in the same order; and the ids of
    the queries that found nothing."""
    count = workers or int(ray.cluster_resources().get("CPU", 1))
    task = ray.remote(max_retries=RETRIES, retry_exceptions=False)(_search_vectors)
    shared = put(ray, documents)
    pending = []
    for chunk in chunks(range(len(qids)), count):
        start, end = chunk[0], chunk[-1] + 1
        pending.append(task.remote(shared, list(qids[start:end]), vectors[start:end], hits))
    with cyclic_gc_paused():
        found = [
            (qid, [Hit(d, s) for d, s in zip(docids, scores, strict=True)])
            for result in gather(ray, pending)
            for qid, docids, scores in result
        ]
        return ranked_rows(found, tag)


def _encoded(
    index: str | Path,
    topics: Sequence[Topic],
    *,
    encoder: str | None,
    model: str | Path | None,
    approximate: bool,
    ef_search: int,
    progress: bool,
) -> tuple[DenseDocuments, np.ndarray]:
    """The index's document side and the topics' query vectors, made in this process exactly
    as one process makes them (every refusal, too, comes from here, before Ray starts)."""
    searcher = DenseSearcher(index, encoder, model, approximate=approximate, ef_search=ef_search)
    vectors = searcher.query_vectors([topic.query for topic in topics], progress)
    return searcher.documents, vectors


def dense_search_to_run_on_ray(
    cluster: ClusterSpec,
    index: str | Path,
    topics: Sequence[Topic],
    output: str | Path,
    *,
    workers: int | None = None,
    hits: int = DEFAULT_HITS,
    tag: str = "clir",
    encoder: str | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    approximate: bool = False,
    ef_search: int = DEFAULT_EF_SEARCH,
    worker_env: dict[str, str] | None = None,
) -> SearchStats:
    """:func:`clir_toolkit.search.dense.dense_search_to_run` with the query vectors searched
    on ``cluster``, in ``workers`` chunks (default: the cluster's CPUs): the same run file."""
    started = time.perf_counter()
    check_dense(hits, ef_search)
    documents, vectors = _encoded(
        index, topics, encoder=encoder, model=model, approximate=approximate,
        ef_search=ef_search, progress=progress,
    )  # fmt: skip
    qids = [topic.qid for topic in topics]
    with connected(cluster, worker_env) as ray:
        rows, empty = vector_rows_on(
            ray, documents, qids, vectors, hits=hits, tag=tag, workers=workers
        )
    return write_search_run(output, rows, empty, len(topics), tag, progress, started)


def hybrid_search_to_run_on_ray(
    cluster: ClusterSpec,
    index: str | Path,
    queries: Sequence[StructuredQuery],
    topics: Sequence[Topic],
    output: str | Path,
    *,
    workers: int | None = None,
    hybrid_weight: float | None = None,
    hits: int = DEFAULT_HITS,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    structure: str = "or",
    tag: str = "clir",
    feedback: Feedback | None = None,
    encoder: str | Sequence[str] | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    approximate: bool = False,
    ef_search: int = DEFAULT_EF_SEARCH,
    worker_env: dict[str, str] | None = None,
) -> SearchStats:
    """:func:`clir_toolkit.search.hybrid.hybrid_search_to_run` with both halves searched on
    ``cluster`` (the BM25 queries and the query vectors each in ``workers`` chunks) and
    fused here: the same run file."""
    started = time.perf_counter()
    if hybrid_weight is None:
        hybrid_weight = hybrid_weight_of(index, encoder)
    depth = check_hybrid(queries, topics, hybrid_weight, hits)
    check_dense(depth, ef_search)
    encoded = [
        _encoded(index, topics, encoder=name, model=model, approximate=approximate,
                 ef_search=ef_search, progress=progress)
        for name in hybrid_encoders(encoder, model)
    ]  # fmt: skip
    qids = [topic.qid for topic in topics]
    bm25 = {"hits": depth, "k1": k1, "b": b, "structure": structure, "tag": tag,
            "feedback": feedback}  # fmt: skip
    with connected(cluster, worker_env) as ray:
        lexical, _ = search_rows_on(ray, index, queries, workers, bm25)
        semantic = [
            vector_rows_on(ray, documents, qids, vectors, hits=depth, tag=tag, workers=workers)[0]
            for documents, vectors in encoded
        ]
    rows, empty = fuse_hybrid(lexical, semantic, topics, hybrid_weight, hits, tag)
    return write_search_run(output, rows, empty, len(topics), tag, progress, started)
