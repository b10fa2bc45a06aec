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

import contextlib
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.distributed.cluster import RETRIES, ClusterSpec, chunks, connected, gather
from clir_toolkit.formats import RunRow
from clir_toolkit.index import read_index_info
from clir_toolkit.search import (
    DEFAULT_B,
    DEFAULT_HITS,
    DEFAULT_K1,
    SearchStats,
    search_rows,
    write_search_run,
)

if TYPE_CHECKING:
    from clir_toolkit.analysis import AnalyzerSpec
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.query import StructuredQuery


def _search_chunk(index: str, queries: list[StructuredQuery], options: dict[str, Any]) -> Any:
    """What one worker does: search its queries (its JVM starts with the first). The rows
    travel back as columns (qids, docids, ranks, scores), ten times faster to pickle than
    row objects."""
    rows, empty = search_rows(index, queries, progress=False, **options)
    columns = ([r.qid for r in rows], [r.docid for r in rows], [r.rank for r in rows],
               [r.score for r in rows])  # fmt: skip
    return columns, empty


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
    """``clir bench search --ray``: the warm Ray search against one process, same queries;
    with ``shards`` > 1 the cluster searches a sharded copy of the index, built there
    (``shard_build_seconds``) while one process built the unsharded copy
    (``one_build_seconds``)."""

    cluster: str
    workers: int
    queries: int
    start_seconds: float
    ray_seconds: float
    one_process_seconds: float
    identical: bool
    shards: int = 1
    documents: int = 0
    one_build_seconds: float = 0.0
    shard_build_seconds: float = 0.0


def bench_search_on_ray(
    cluster: ClusterSpec, index: str | Path, queries: Sequence[StructuredQuery], *,
    workers: int | None, repeat: int, options: dict[str, Any], shards: int = 1,
) -> RayBench:  # fmt: skip
    """Time the queries' rows on the cluster (warmed once: every worker has its JVM and the
    index open) and in this process, best of ``repeat`` each; the cluster's start apart.
    With ``shards`` > 1, the collection of ``index`` is first indexed again in a scratch
    directory beside it: by this process into one index, and by the cluster into ``shards``
    shards built in parallel; each then searches its own copy. The rows are compared."""
    from clir_toolkit.bench import best_time

    rows: dict[str, Any] = {}
    started = time.perf_counter()
    with connected(cluster) as ray:
        start = time.perf_counter() - started
        count = workers or int(ray.cluster_resources().get("CPU", 1))
        copies = _fresh_copies(ray, index, shards) if shards > 1 else _as_it_is(index)
        with copies as (one, sharded, one_build, shard_build):

            def on_ray() -> None:
                rows["ray"] = search_rows_on(ray, sharded, queries, count, options)

            def here() -> None:
                rows["one"] = search_rows(one, queries, progress=False, **options)

            spread = best_time(on_ray, repeat)
            alone = best_time(here, repeat)
            documents = read_index_info(one).documents
    return RayBench(cluster.label, count, len(queries), start, spread, alone,
                    identical=rows["ray"] == rows["one"], shards=shards, documents=documents,
                    one_build_seconds=one_build, shard_build_seconds=shard_build)  # fmt: skip


@contextlib.contextmanager
def _as_it_is(index: str | Path) -> Iterator[tuple[Path, Path, float, float]]:
    yield Path(index), Path(index), 0.0, 0.0


@contextlib.contextmanager
def _fresh_copies(
    ray: Any, index: str | Path, shards: int
) -> Iterator[tuple[Path, Path, float, float]]:
    """Two new indexes of ``index``'s collection in a scratch directory, removed after:
    one built here (all cores), one of ``shards`` shards built on the connected cluster;
    with the seconds each took."""
    from clir_toolkit.distributed.index import build_shards_on
    from clir_toolkit.index import ShardJob, build_index

    def on_cluster(spec: AnalyzerSpec, jobs: Sequence[ShardJob], progress: bool) -> None:
        build_shards_on(ray, spec, jobs, progress)

    info = read_index_info(index)
    with tempfile.TemporaryDirectory(prefix=".bench-", dir=Path(index).resolve().parent) as tmp:
        one, sharded = Path(tmp) / "one", Path(tmp) / "sharded"
        seconds = []
        for target, count, builder in ((one, 1, None), (sharded, shards, on_cluster)):
            started = time.perf_counter()
            build_index(info.collection, target, language=info.language, shards=count,
                        threads=1 if builder else None, shard_builder=builder,
                        verbose=False)  # fmt: skip
            seconds.append(time.perf_counter() - started)
        yield one, sharded, seconds[0], seconds[1]


def format_ray_bench(r: RayBench) -> str:
    """The bench's lines: queries/s on the cluster and in one process, and their ratio."""
    lines = []
    if r.shards > 1:
        lines += [
            f"indexing {r.documents} documents: one process, one index "
            f"{r.one_build_seconds:.1f} s; Ray {r.cluster}, {r.shards} shards "
            f"{r.shard_build_seconds:.1f} s",
        ]
    where = f"Ray, {r.workers} workers" + (f", {r.shards} shards" if r.shards > 1 else "")
    lines += [
        f"{r.queries} queries; Ray cluster {r.cluster} started in {r.start_seconds:.1f} s "
        "(not counted); best of warm runs",
        f"{'one process, one index':<40} {r.one_process_seconds:>8.3f} s "
        f"{r.queries / r.one_process_seconds:>10.1f} queries/s",
        f"{where:<40} {r.ray_seconds:>8.3f} s {r.queries / r.ray_seconds:>10.1f} queries/s",
        f"ratio Ray / one process (queries/s): {r.one_process_seconds / r.ray_seconds:.2f}",
        "runs: " + ("identical" if r.identical else "DIFFERENT (please report this)"),
    ]
    return "\n".join(lines)
