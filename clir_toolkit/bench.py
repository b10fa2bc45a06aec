"""Speed benchmarks (``clir bench``): measured figures, never timed tests.

``bench search`` times, in one warm process on the same index, queries and threads:

* Anserini's ``SimpleSearcher.batch_search`` called directly on the topic strings (in
  chunks of 200 queries, as larger batches exhaust the heap when raw text is stored), its
  results turned into Python (docid, score) pairs — what any caller has to do with them;
* ``clir search`` on the same plain strings: :func:`clir_toolkit.search.search_to_run`,
  which builds a Lucene query per topic, searches, and writes the TREC run;
* with ``--translate``: the translation itself, and ``clir search`` of the translated,
  structured queries (``--structure``), whose rate is compared with the plain-string one.

Each measurement is warmed up once and then repeated ``repeat`` times; the best is kept.
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
from clir_toolkit.search import DEFAULT_B, DEFAULT_HITS, DEFAULT_K1, plain_queries, search_to_run
from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

ANSERINI_CHUNK = 200


@dataclass(frozen=True)
class BenchSearchResult:
    index: str
    queries: int
    hits: int
    threads: int
    structure: str
    anserini_seconds: float
    plain_seconds: float
    translation: str = "untranslated"
    translate_seconds: float | None = None
    structured_seconds: float | None = None


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
    spec = read_index_info(index).analyzer
    searcher = jvm.java_class("io.anserini.search.SimpleSearcher")(str(index))
    searcher.set_analyzer(lucene_analyzer(spec))
    searcher.set_bm25(float(k1), float(b))

    def run() -> dict[str, list[tuple[str, float]]]:
        results: dict[str, list[tuple[str, float]]] = {}
        for start in range(0, len(topics), ANSERINI_CHUNK):
            chunk = topics[start : start + ANSERINI_CHUNK]
            texts = [pretokenize(spec, t.query) if spec.pretokenized else t.query for t in chunk]
            qids = [t.qid for t in chunk]
            found = searcher.batch_search(
                jvm.java_list(texts), jvm.java_list(qids), int(hits), int(threads)
            )
            for qid in qids:
                results[qid] = [(h.docid, float(h.score)) for h in found.get(qid)]
        return results

    return run


def bench_search(
    index: str | Path,
    topics: Sequence[Topic],
    *,
    hits: int = DEFAULT_HITS,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    structure: str = "or",
    threads: int = 1,
    repeat: int = 3,
    translation: TranslationOptions | None = None,
) -> BenchSearchResult:
    plain = plain_queries(topics)
    language = read_index_info(index).language
    with tempfile.TemporaryDirectory(prefix="clir-bench-") as scratch:
        output = Path(scratch) / "run.trec"

        def clir(queries: Sequence, query_structure: str) -> Callable[[], object]:
            return lambda: search_to_run(
                index,
                queries,
                output,
                hits=hits,
                k1=k1,
                b=b,
                structure=query_structure,
                threads=threads,
                progress=False,
            )

        anserini = best_time(anserini_batch_search(index, topics, hits, k1, b, threads), repeat)
        plain_seconds = best_time(clir(plain, "or"), repeat)
        if translation is None or translation.translate == "none":
            return BenchSearchResult(
                str(index), len(plain), hits, threads, "or", anserini, plain_seconds
            )
        translated = build_queries(topics, translation, language)
        translate_seconds = best_time(lambda: build_queries(topics, translation, language), repeat)
        structured_seconds = best_time(clir(translated, structure), repeat)
    return BenchSearchResult(
        str(index),
        len(plain),
        hits,
        threads,
        structure,
        anserini,
        plain_seconds,
        translation.describe(),
        translate_seconds,
        structured_seconds,
    )


def format_bench_search(r: BenchSearchResult) -> str:
    def row(name: str, seconds: float) -> str:
        return f"{name:<48} {seconds:>8.3f} {r.queries / seconds:>10.1f}"

    lines = [
        f"index {r.index}: {r.queries} queries, top {r.hits}, {r.threads} thread(s); "
        f"best of warm runs",
        f"{'system':<48} {'seconds':>8} {'queries/s':>10}",
        row("Anserini batch_search, plain strings (+ results)", r.anserini_seconds),
        row("clir search, plain strings (build+search+run)", r.plain_seconds),
    ]
    ratio = r.anserini_seconds / r.plain_seconds
    lines.append(f"ratio clir / Anserini, plain strings (queries/s): {ratio:.2f}")
    if r.structured_seconds is not None and r.translate_seconds is not None:
        total = r.translate_seconds + r.structured_seconds
        lines += [
            row(f"translation only ({r.translation})", r.translate_seconds),
            row(f"clir search, translated, structure {r.structure}", r.structured_seconds),
            f"ratio structured / plain strings (queries/s): "
            f"{r.plain_seconds / r.structured_seconds:.2f}",
            f"share of time translating: {100 * r.translate_seconds / total:.1f} %",
        ]
    return "\n".join(lines)
