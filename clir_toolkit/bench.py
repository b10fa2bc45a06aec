"""Speed benchmarks (``clir bench``): measured figures, never timed tests.

``bench search`` times, in one warm process on the same index, queries and threads:

* ``clir search``: :func:`clir_toolkit.search.search_to_run`, which builds a Lucene query
  per topic, searches, and writes the TREC run;
* Anserini's ``SimpleSearcher.batch_search`` called directly (in chunks of 200 queries,
  as larger batches exhaust the heap when raw text is stored), with its results turned
  into Python (docid, score) pairs, which is what any caller has to do with them.

Each side is warmed up once and then timed ``repeat`` times; the best time is kept.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit import jvm
from clir_toolkit.analysis import lucene_analyzer, pretokenize
from clir_toolkit.formats import Topic
from clir_toolkit.index import read_index_info
from clir_toolkit.search import plain_queries, search_to_run

ANSERINI_CHUNK = 200


@dataclass(frozen=True)
class BenchSearchResult:
    index: str
    queries: int
    hits: int
    threads: int
    structure: str
    clir_seconds: float
    anserini_seconds: float

    @property
    def clir_qps(self) -> float:
        return self.queries / self.clir_seconds

    @property
    def anserini_qps(self) -> float:
        return self.queries / self.anserini_seconds


def best_time(action: Callable[[], object], repeat: int) -> float:
    """Run ``action`` once to warm up, then ``repeat`` times; the fastest wall time."""
    action()
    times = []
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return min(times)


def anserini_batch_search(
    index: str | Path, topics: Sequence[Topic], hits: int, k1: float, b: float, threads: int
) -> Callable[[], dict[str, list[tuple[str, float]]]]:
    """A closure running ``SimpleSearcher.batch_search`` over the topics, as pyserini would."""
    info = read_index_info(index)
    spec = info.analyzer
    searcher = jvm.java_class("io.anserini.search.SimpleSearcher")(str(index))
    searcher.set_analyzer(lucene_analyzer(spec))
    searcher.set_bm25(float(k1), float(b))

    def run() -> dict[str, list[tuple[str, float]]]:
        results: dict[str, list[tuple[str, float]]] = {}
        for start in range(0, len(topics), ANSERINI_CHUNK):
            chunk = topics[start : start + ANSERINI_CHUNK]
            texts = [pretokenize(spec, t.query) if spec.pretokenized else t.query for t in chunk]
            found = searcher.batch_search(
                jvm.java_list(texts), jvm.java_list([t.qid for t in chunk]), int(hits), int(threads)
            )
            for topic in chunk:
                results[topic.qid] = [(h.docid, float(h.score)) for h in found.get(topic.qid)]
        return results

    return run


def bench_search(
    index: str | Path,
    topics: Sequence[Topic],
    *,
    hits: int = 1000,
    k1: float = 0.9,
    b: float = 0.4,
    structure: str = "or",
    threads: int = 1,
    repeat: int = 3,
) -> BenchSearchResult:
    queries = plain_queries(topics)
    with tempfile.TemporaryDirectory(prefix="clir-bench-") as scratch:
        output = Path(scratch) / "run.trec"
        clir = best_time(
            lambda: search_to_run(
                index,
                queries,
                output,
                hits=hits,
                k1=k1,
                b=b,
                structure=structure,
                threads=threads,
                progress=False,
            ),
            repeat,
        )
    anserini = best_time(anserini_batch_search(index, topics, hits, k1, b, threads), repeat)
    return BenchSearchResult(str(index), len(queries), hits, threads, structure, clir, anserini)


def format_bench_search(result: BenchSearchResult) -> str:
    lines = [
        f"index {result.index}: {result.queries} queries, top {result.hits}, "
        f"{result.threads} thread(s), structure {result.structure}; best of warm runs",
        f"{'system':<38} {'seconds':>8} {'queries/s':>10}",
        f"{'clir search (query build + search + run)':<38} {result.clir_seconds:>8.3f} "
        f"{result.clir_qps:>10.1f}",
        f"{'Anserini batch_search (+ results)':<38} {result.anserini_seconds:>8.3f} "
        f"{result.anserini_qps:>10.1f}",
        f"ratio clir / Anserini (queries/s): {result.clir_qps / result.anserini_qps:.2f}",
    ]
    return "\n".join(lines)
