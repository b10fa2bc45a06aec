"""The hybrid first stage: ``clir search --hybrid``, BM25 fused with dense runs.

``--hybrid`` fuses runs of the same topics: BM25 of the (translated, structured, expanded)
query, exactly the run ``clir search`` writes without it, and the dense run
(:mod:`clir_toolkit.search.dense`). Both are min-max normalised per query and interpolated,
``w·dense + (1 − w)·BM25`` with ``w`` the one the dense encoder declares
(:func:`hybrid_weight_of`; :func:`clir_toolkit.search.fusion.fuse`), a document missing
from one run counting 0 there. An index may hold the vectors of several encoders (``clir
index --dense`` once for each); ``--encoder e5-small,use-m3`` then fuses the dense run of
each, which share ``w`` equally: ``(w/n)·Σ denseᵢ + (1 − w)·BM25``, every run with weight
1/(n + 1) by default (the first stage the transfer matrix chose, docs/pipeline.md). It is
``clir fuse --method interpolate --normalisation minmax`` of those runs
(:mod:`clir_toolkit.search.fusion`), each searched :data:`HYBRID_DEPTH` deep.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.encoders import encoder_names
from clir_toolkit.errors import UsageError
from clir_toolkit.formats import RunRow, Topic
from clir_toolkit.index import read_dense_record
from clir_toolkit.params import check_options
from clir_toolkit.query import StructuredQuery
from clir_toolkit.search.dense import DENSE_PARAMS, dense_rows
from clir_toolkit.search.fusion import by_query, fuse
from clir_toolkit.search.runs import SearchStats, search_rows, write_search_run
from clir_toolkit.search.searcher import BM25_PARAMS, DEFAULT_HITS
from clir_toolkit.search.vector_search import DEFAULT_EF_SEARCH

if TYPE_CHECKING:
    from clir_toolkit.expand.feedback import Feedback


HYBRID_DEPTH = 1000
"""Documents of each run that ``--hybrid`` fuses (more when ``--hits`` asks for more): the top
of a hybrid run does not depend on ``--hits``, and a document ranked low by one run and high
by the other still gets both scores. On ddtp-en-fr-hard test, fusing the top 100 of each
instead of the top 1,000 gave 0.5847 nDCG@10 instead of 0.5964."""


def hybrid_encoders(
    encoder: str | Sequence[str] | None, model: str | Path | None
) -> list[str | None]:
    """:func:`encoder_names`, refusing a fine-tuned ``model`` with several encoders (its
    towers are one encoder's)."""
    names = encoder_names(encoder)
    if model is not None and len(names) > 1:
        raise UsageError(f"--model fine-tunes one encoder's towers; --encoder {encoder} names "
                         f"{len(names)}: leave out --model or name one encoder")  # fmt: skip
    return names


def hybrid_rows(
    index: str | Path,
    queries: Sequence[StructuredQuery],
    topics: Sequence[Topic],
    *,
    hybrid_weight: float | None = None,
    hits: int = DEFAULT_HITS,
    tag: str = "clir",
    encoder: str | Sequence[str] | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    approximate: bool = False,
    ef_search: int = DEFAULT_EF_SEARCH,
    **bm25: Any,
) -> tuple[list[RunRow], list[str]]:
    """The hybrid run's rows: BM25 of ``queries`` (with ``bm25``'s options: k1, b,
    structure, threads, feedback) and the dense run of ``topics`` by each encoder of
    ``encoder`` (:func:`encoder_names`), each :data:`HYBRID_DEPTH` deep (or ``hits`` if
    more), interpolated with the dense runs' weight ``hybrid_weight`` (None:
    :func:`hybrid_weight_of`), the top ``hits`` kept (:func:`fuse_hybrid`); and the topics
    that found nothing in any."""
    if hybrid_weight is None:
        hybrid_weight = hybrid_weight_of(index, encoder)
    depth = check_hybrid(queries, topics, hybrid_weight, hits)
    lexical, semantic = hybrid_components(
        index, queries, topics, depth=depth, tag=tag, encoder=encoder, model=model,
        progress=progress, approximate=approximate, ef_search=ef_search, **bm25,
    )  # fmt: skip
    return fuse_hybrid(lexical, semantic, topics, hybrid_weight, hits, tag)


def hybrid_components(
    index: str | Path,
    queries: Sequence[StructuredQuery],
    topics: Sequence[Topic],
    *,
    depth: int,
    tag: str = "clir",
    encoder: str | Sequence[str] | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    approximate: bool = False,
    ef_search: int = DEFAULT_EF_SEARCH,
    **bm25: Any,
) -> tuple[list[RunRow], list[list[RunRow]]]:
    """The runs a hybrid run fuses, ``depth`` deep: BM25 of ``queries`` and the dense run of
    ``topics`` by each encoder (:func:`encoder_names`). They do not depend on the weight: a
    recipe that chooses the weight on dev searches them once and fuses them at each weight
    (:func:`fuse_hybrid`)."""
    names = hybrid_encoders(encoder, model)
    lexical, _ = search_rows(index, queries, hits=depth, tag=tag, progress=progress, **bm25)
    semantic = [
        dense_rows(
            index, topics, hits=depth, tag=tag, encoder=name, model=model, progress=progress,
            approximate=approximate, ef_search=ef_search,
        )[0]
        for name in names
    ]  # fmt: skip
    return lexical, semantic


def check_hybrid(
    queries: Sequence[StructuredQuery], topics: Sequence[Topic], hybrid_weight: float, hits: int
) -> int:
    """Refuse a hybrid search's options before any work (a weight outside [0, 1], BM25
    queries that are not the topics'); the depth each of its runs is searched to."""
    check_options(
        {"hybrid_weight": hybrid_weight, "hits": hits},
        [DENSE_PARAMS["hybrid_weight"], BM25_PARAMS["hits"]],
    )
    if {q.qid for q in queries} != {t.qid for t in topics}:
        raise UsageError("the BM25 queries and the topics of --hybrid must have the same ids")
    return max(hits, HYBRID_DEPTH)


def hybrid_weight_of(index: str | Path, encoder: str | Sequence[str] | None = None) -> float:
    """w for a hybrid run over ``index`` with ``encoder`` (None: the index's vectors added
    last): :func:`default_weight_of_encoders`."""
    if encoder is None:
        encoder = read_dense_record(index)[1].encoder
    return default_weight_of_encoders(encoder)


def default_weight_of_encoders(encoder: str | Sequence[str]) -> float:
    """The default w of a hybrid run with the dense runs of ``encoder`` (one name or several,
    :func:`encoder_names`): the weight one encoder declares
    (:func:`clir_toolkit.encoders.default_hybrid_weight`); for n encoders, n/(n + 1), every
    run fused with the same weight (measured on the transfer matrix, docs/pipeline.md)."""
    from clir_toolkit.encoders import default_hybrid_weight

    names = [name for name in encoder_names(encoder) if name is not None]
    if len(names) > 1:
        return len(names) / (len(names) + 1)
    return default_hybrid_weight(names[0])


def fuse_hybrid(
    lexical: Sequence[RunRow],
    semantic: Sequence[Sequence[RunRow]],
    topics: Sequence[Topic],
    hybrid_weight: float,
    hits: int,
    tag: str,
) -> tuple[list[RunRow], list[str]]:
    """The hybrid run's rows from its BM25 rows and the rows of each of its dense runs,
    wherever they were searched (here, or on Ray): ``(w/n)·Σ denseᵢ + (1 − w)·BM25`` after
    per-query min-max normalisation, the top ``hits`` of each query; and the topics found by
    none."""
    shares = [hybrid_weight / len(semantic)] * len(semantic)
    rows = fuse(
        [lexical, *semantic], "interpolate", weights=[1.0 - hybrid_weight, *shares],
        normalisation="minmax", depth=hits, tag=tag,
    )  # fmt: skip
    found = by_query(rows)
    empty = [topic.qid for topic in topics if topic.qid not in found]
    return rows, empty


def hybrid_search_to_run(
    index: str | Path,
    queries: Sequence[StructuredQuery],
    topics: Sequence[Topic],
    output: str | Path,
    *,
    hybrid_weight: float | None = None,
    hits: int = DEFAULT_HITS,
    tag: str = "clir",
    encoder: str | Sequence[str] | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    feedback: Feedback | None = None,
    components: tuple[list[RunRow], list[list[RunRow]]] | None = None,
    **bm25: Any,
) -> SearchStats:
    """BM25 of ``queries`` fused with the dense run(s) of ``topics``; one TREC run written
    atomically (:func:`hybrid_rows`). ``components``: the runs, searched already with
    these options (:func:`hybrid_components`), only fused here. ``hybrid_weight``: w (None: the
    encoder's, :func:`hybrid_weight_of`)."""
    started = time.perf_counter()
    if hybrid_weight is None:
        hybrid_weight = hybrid_weight_of(index, encoder)
    if components is None:
        rows, empty = hybrid_rows(
            index, queries, topics, hybrid_weight=hybrid_weight, hits=hits, tag=tag,
            encoder=encoder, model=model, progress=progress, feedback=feedback, **bm25,
        )  # fmt: skip
    else:
        check_hybrid(queries, topics, hybrid_weight, hits)
        rows, empty = fuse_hybrid(*components, topics, hybrid_weight, hits, tag)
    return write_search_run(output, rows, empty, len(topics), tag, progress, started)
