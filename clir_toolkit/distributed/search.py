"""Query-parallel search on Ray (``clir search --ray ...``): the topics split across workers.

BM25 scores one query at a time (feedback included: its first pass, its learned terms and
its second pass read only the index), so the queries can be searched anywhere. The driver
translates and expands the topics (as one process does: MT batches and their numerics stay
the same), cuts the queries into contiguous chunks, and gives each to a Ray task; each
worker opens the index with its own JVM (:func:`clir_toolkit.search.search_rows`), and the
driver gathers the rows and writes the run with the same writer (sorted, ties by docid). The
run file is therefore byte-for-byte the one process's. A task whose worker dies is run again
by Ray (``max_retries``); nothing is written until every chunk is back.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.distributed.cluster import ClusterSpec, connected
from clir_toolkit.formats import RunRow
from clir_toolkit.search import (
    DEFAULT_B,
    DEFAULT_HITS,
    DEFAULT_K1,
    SearchStats,
    search_rows,
    write_search_run,
)

if TYPE_CHECKING:
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.query import StructuredQuery

#: How often Ray runs a chunk again when its worker dies.
RETRIES = 3


def chunks(items: Sequence[Any], count: int) -> list[list[Any]]:
    """``items`` cut into at most ``count`` contiguous, non-empty runs of near-equal length."""
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return [chunk for chunk in out if chunk]


def _search_chunk(index: str, queries: list[StructuredQuery], options: dict[str, Any]) -> Any:
    """What one worker does: search its queries (its JVM starts with the first). The rows
    travel back as columns (qids, docids, ranks, scores), ten times faster to pickle than
    row objects."""
    rows, empty = search_rows(index, queries, progress=False, **options)
    columns = ([r.qid for r in rows], [r.docid for r in rows], [r.rank for r in rows],
               [r.score for r in rows])  # fmt: skip
    return columns, empty


def gather(ray: Any, pending: list[Any]) -> list[Any]:
    """The tasks' results in order; a task's own error (a damaged index, say) is raised as
    the error it is, one line, instead of Ray's wrapper with the worker's traceback."""
    try:
        return list(ray.get(pending))
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise


def search_rows_on(
    ray: Any, index: str | Path, queries: Sequence[StructuredQuery], workers: int | None,
    options: dict[str, Any],
) -> tuple[list[RunRow], list[str]]:  # fmt: skip
    """:func:`clir_toolkit.search.search_rows` on a connected cluster, in ``workers`` chunks
    (default: the cluster's CPUs): the same rows, in the same order."""
    count = workers or int(ray.cluster_resources().get("CPU", 1))
    task = ray.remote(max_retries=RETRIES, retry_exceptions=False)(_search_chunk)
    index = str(Path(index).resolve())
    pending = [task.remote(index, chunk, options) for chunk in chunks(queries, count)]
    results = gather(ray, pending)
    tag = options.get("tag", "clir")
    rows: list[RunRow] = [
        RunRow(qid, docid, rank, score, tag)
        for (qids, docids, ranks, scores), _ in results
        for qid, docid, rank, score in zip(qids, docids, ranks, scores, strict=True)
    ]
    empty = [qid for _, chunk_empty in results for qid in chunk_empty]
    return rows, empty


def search_to_run_on_ray(
    cluster: ClusterSpec,
    index: str | Path,
    queries: Sequence[StructuredQuery],
    output: str | Path,
    *,
    workers: int | None = None,
    hits: int = DEFAULT_HITS,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    structure: str = "or",
    tag: str = "clir",
    progress: bool = True,
    feedback: Feedback | None = None,
    worker_env: dict[str, str] | None = None,
) -> SearchStats:
    """:func:`clir_toolkit.search.search_to_run` with the queries searched on ``cluster``:
    in ``workers`` chunks (default: the cluster's CPUs), the same run file."""
    started = time.perf_counter()
    options = {"hits": hits, "k1": k1, "b": b, "structure": structure, "tag": tag,
               "feedback": feedback}  # fmt: skip
    with connected(cluster, worker_env) as ray:
        rows, empty = search_rows_on(ray, index, queries, workers, options)
    return write_search_run(output, rows, empty, len(queries), tag, progress, started)


@dataclass(frozen=True)
class RayBench:
    """``clir bench search --ray``: the warm Ray search against one process, same queries."""

    cluster: str
    workers: int
    queries: int
    start_seconds: float
    ray_seconds: float
    one_process_seconds: float


def bench_search_on_ray(
    cluster: ClusterSpec, index: str | Path, queries: Sequence[StructuredQuery], *,
    workers: int | None, repeat: int, options: dict[str, Any],
) -> RayBench:  # fmt: skip
    """Time the queries' rows on the cluster (warmed once: every worker has its JVM and the
    index open) and in this process, best of ``repeat`` each; the cluster's start apart."""
    from clir_toolkit.bench import best_time

    started = time.perf_counter()
    with connected(cluster) as ray:
        start = time.perf_counter() - started
        count = workers or int(ray.cluster_resources().get("CPU", 1))
        spread = best_time(lambda: search_rows_on(ray, index, queries, count, options), repeat)
    one = best_time(lambda: search_rows(index, queries, progress=False, **options), repeat)
    return RayBench(cluster.label, count, len(queries), start, spread, one)


def format_ray_bench(r: RayBench) -> str:
    """The bench's lines: queries/s on the cluster and in one process, and their ratio."""
    return "\n".join([
        f"{r.queries} queries; Ray cluster {r.cluster} started in {r.start_seconds:.1f} s "
        "(not counted); best of warm runs",
        f"{'one process':<40} {r.one_process_seconds:>8.3f} s "
        f"{r.queries / r.one_process_seconds:>10.1f} queries/s",
        f"{f'Ray, {r.workers} workers':<40} {r.ray_seconds:>8.3f} s "
        f"{r.queries / r.ray_seconds:>10.1f} queries/s",
        f"ratio Ray / one process (queries/s): {r.one_process_seconds / r.ray_seconds:.2f}",
    ])  # fmt: skip
