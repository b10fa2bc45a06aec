"""Speed and size of dense retrieval (``clir bench dense``): measured figures, never timed tests.

For an index with stored vectors (``clir index --dense``, :mod:`clir_toolkit.vectors`), one
row per measurement:

* encoding: documents/s of each encoder over the first ``documents`` documents of the
  index's collection (cut to the encoder's characters, in the batches ``clir index --dense``
  uses), and queries/s over the topics' texts, at each thread count;
* search, query encoding excluded: queries/s of exact search (every vector) and, when the
  index has an HNSW graph, of approximate search, top ``hits``, one query at a time as
  ``clir search --dense`` does; and the graph's recall against exact search on those topics;
* size: disk per 10,000 documents (the vectors file's and the graph file's sizes) and memory
  per 10,000 documents: how much the resident set of a fresh process grows when it reads the
  vectors, then the graph (the array's own ``nbytes`` beside it).

Thread counts must really apply, and the BLAS and OpenMP libraries of the encoders read
theirs once, when they load. So every measurement at a thread count runs in a fresh process
(``python -m clir_toolkit.bench_dense JOB.json``) started with ``OMP_NUM_THREADS``,
``MKL_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS`` set to it, whose encoder is also made with
that many threads. The process' CPU time beside its wall time shows the threads that worked,
and the rate per CPU second depends less than the wall-clock rate on the other jobs of a
shared machine (which the table's load averages describe).
Each timing is warmed up once and repeated ``repeat`` times; the fastest is kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.compute.threads import usable_cores
from clir_toolkit.errors import ClirError, ResourceError

if TYPE_CHECKING:
    from clir_toolkit.vectors import DenseRecord

DEFAULT_DOCUMENTS = 200
"""Documents encoded per encoder and thread count: a few seconds for use-m3 on one thread."""

WARMUP_TEXTS = 8
"""Texts encoded once, untimed, before an encoding is timed (the first call's set-up)."""

PER = 10_000
"""Sizes are given per this many documents."""

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass(frozen=True)
class DenseBenchRow:
    """One line of the table: what was measured, under which setting, and the figure."""

    measurement: str
    setting: str
    figure: float
    unit: str
    note: str = ""


# --- what a worker process measures ------------------------------------------------------


def resident_bytes() -> int | None:
    """This process' resident set now (Linux: ``/proc/self/statm``); None elsewhere."""
    try:
        fields = Path("/proc/self/statm").read_text().split()
    except OSError:
        return None
    return int(fields[1]) * os.sysconf("SC_PAGE_SIZE")


def thread_pools() -> str:
    """The native thread pools loaded in this process and their sizes (``openblas 2,
    openmp 2``), as threadpoolctl (which use-m3 installs) sees them; empty without it."""
    try:
        import threadpoolctl
    except ImportError:
        return ""
    pools = threadpoolctl.threadpool_info()
    return ", ".join(f"{pool['internal_api']} {pool['num_threads']}" for pool in pools)


def best_of(action: Any, repeat: int) -> tuple[float, float]:
    """``action`` run once to warm up, then ``repeat`` times: the fastest run's wall time and
    the CPU time (every thread of the process) it took."""
    action()
    best = (float("inf"), 0.0)
    for _ in range(max(1, repeat)):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        best = min(best, (wall, cpu))
    return best


def measure_encoding(job: dict[str, Any]) -> dict[str, Any]:
    """Encode the job's texts (queries or documents) with its encoder and thread count."""
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.rerank.sentence.pretrained import encode_batched

    encoder = load_encoder(job["encoder"], threads=job["threads"], device="cpu")
    texts, query = job["texts"], job["query"]
    encode_batched(encoder, texts[:WARMUP_TEXTS], query, "", False)
    wall, cpu = best_of(lambda: encode_batched(encoder, texts, query, "", False), job["repeat"])
    return {"seconds": wall, "cpu": cpu, "count": len(texts), "pools": thread_pools()}


def measure_search(job: dict[str, Any]) -> dict[str, Any]:
    """Memory of the vectors and the graph as a fresh process reads them, then queries/s of
    exact and approximate search of the job's topics (query vectors computed first), and the
    graph's recall of the exact top ``hits``."""
    import numpy  # noqa: F401  (imported before the resident set is read: not counted)

    from clir_toolkit.index import read_index_info
    from clir_toolkit.search.dense import DenseSearcher
    from clir_toolkit.vectors import import_faiss, read_graph, read_vectors

    index, hits, repeat = Path(job["index"]), job["hits"], job["repeat"]
    record = read_index_info(index).dense
    assert record is not None  # checked before the worker started
    if record.hnsw:
        import_faiss()  # likewise
    before = resident_bytes()
    docids, vectors = read_vectors(index, record)
    with_vectors = resident_bytes()
    graph = read_graph(index, record) if record.hnsw else None
    with_graph = resident_bytes()
    result: dict[str, Any] = {"vectors_nbytes": int(vectors.nbytes)}
    if before is not None and with_vectors is not None and with_graph is not None:
        result["vectors_resident"] = with_vectors - before
        result["graph_resident"] = with_graph - with_vectors if graph is not None else None
    del docids, vectors, graph

    exact = DenseSearcher(index, threads=job["threads"])
    queries = exact.query_vectors(job["texts"])

    def search_all(searcher: DenseSearcher) -> list[Any]:
        return [searcher.search(vector, hits) for vector in queries]

    def found(searcher: DenseSearcher) -> list[set[str]]:
        return [{hit.docid for hit in ranked} for ranked in search_all(searcher)]

    result["exact"] = best_of(lambda: search_all(exact), repeat)
    if record.hnsw:
        approximate = DenseSearcher(
            index, threads=job["threads"], approximate=True, ef_search=job["ef_search"]
        )
        result["approximate"] = best_of(lambda: search_all(approximate), repeat)
        pairs = zip(found(exact), found(approximate), strict=True)
        recalls = [len(met & truth) / len(truth) for truth, met in pairs if truth]
        result["recall"] = sum(recalls) / len(recalls) if recalls else None
    result["queries"] = len(queries)
    result["pools"] = thread_pools()
    return result


def worker_main(argv: Sequence[str]) -> int:
    """``python -m clir_toolkit.bench_dense JOB.json``: one measurement, as JSON on stdout;
    a ClirError as its message alone on stderr (exit 1), which the parent reports."""
    job = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    try:
        measure = measure_encoding if job["kind"] == "encode" else measure_search
        print(json.dumps(measure(job)))
    except ClirError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


# --- the parent: a fresh process per measurement -----------------------------------------


def run_worker(job: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """Run one job in a fresh process with ``job["threads"]`` threads; its JSON result."""
    path = scratch / "job.json"
    path.write_text(json.dumps(job), encoding="utf-8")
    environment = dict(os.environ, **{name: str(job["threads"]) for name in THREAD_VARIABLES})
    done = subprocess.run(
        [sys.executable, "-m", "clir_toolkit.bench_dense", str(path)],
        capture_output=True, text=True, env=environment, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise ResourceError(
            f"measuring {job['kind']} with {job['threads']} thread(s) failed "
            f"(exit {done.returncode}): {lines[-1] if lines else 'no message'}"
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def first_texts(collection: str | Path, count: int) -> list[str]:
    """The texts of the first ``count`` documents of a collection, as ``--dense`` encodes them."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.formats import iter_corpus

    corpus = open_collection(collection).corpus
    return [doc.contents for doc in islice(iter_corpus(corpus), count)]


def _threads(count: int) -> str:
    return f"{count} thread" + ("s" if count != 1 else "")


def _timing_note(count: int, noun: str, seconds: float, cpu: float, pools: str) -> str:
    """``225 queries in 0.034 s wall, 0.034 s CPU``, with the rate per CPU second (on a
    shared machine the wall time counts the waits for a core, the CPU time does not) and the
    thread pools the worker ran with (the proof that its thread count applied)."""
    per_cpu = f"{count / cpu:,.1f} per CPU second" if cpu > 0 else "CPU time too short"
    note = f"{count}{noun} in {seconds:.3f} s wall, {cpu:.3f} s CPU: {per_cpu}"
    return f"{note}; thread pools: {pools}" if pools else note


def _rate_row(measurement: str, setting: str, result: dict[str, Any], unit: str) -> DenseBenchRow:
    seconds, cpu, count = result["seconds"], result["cpu"], result["count"]
    note = _timing_note(count, "", seconds, cpu, result["pools"])
    return DenseBenchRow(measurement, setting, count / seconds, unit, note)


def bench_dense(
    index: str | Path,
    queries: Sequence[str],
    *,
    encoders: Sequence[str] | None = None,
    threads: Sequence[int] = (1,),
    documents: int = DEFAULT_DOCUMENTS,
    hits: int = 100,
    ef_search: int | None = None,
    repeat: int = 3,
) -> list[DenseBenchRow]:
    """Measure what the module docstring lists on ``index`` and the topic texts ``queries``.

    ``encoders`` default to the one that made the index's vectors; ``documents`` 0 leaves out
    the document-encoding rows. Search rows are measured at every thread count, the sizes once.
    """
    from clir_toolkit.encoders import encoder_component, hf_directory
    from clir_toolkit.index import read_index_info
    from clir_toolkit.search.dense import DEFAULT_EF_SEARCH

    info = read_index_info(index)
    record = info.dense
    if record is None:
        raise ClirError(
            f"{index}: holds no dense vectors to measure (add them with: clir index "
            f"--collection {info.collection} --index {index} --dense)"
        )
    names = list(encoders or [record.encoder])
    for name in names:
        if hf_directory(name) is None:
            encoder_component(name)  # an unknown name: one UsageError listing the names
    ef = ef_search or DEFAULT_EF_SEARCH
    texts = first_texts(info.collection, documents) if documents > 0 else []
    rows: list[DenseBenchRow] = []
    with tempfile.TemporaryDirectory(prefix="clir-bench-dense-") as scratch_dir:
        scratch = Path(scratch_dir)
        for name in names:
            for count in threads:
                setting = f"{name}, {_threads(count)}"
                job = {"kind": "encode", "encoder": name, "threads": count, "repeat": repeat}
                if texts:
                    done = run_worker({**job, "texts": texts, "query": False}, scratch)
                    rows.append(_rate_row("encoding documents", setting, done, "documents/s"))
                done = run_worker({**job, "texts": list(queries), "query": True}, scratch)
                rows.append(_rate_row("encoding queries", setting, done, "queries/s"))
        sizes: dict[str, Any] | None = None
        for count in threads:
            job = {"kind": "search", "index": str(index), "threads": count, "repeat": repeat,
                   "texts": list(queries), "hits": hits, "ef_search": ef}  # fmt: skip
            done = run_worker(job, scratch)
            sizes = sizes or done
            rows += _search_rows(done, record.encoder, count, hits, ef)
    assert sizes is not None
    return rows + _size_rows(Path(index), record, sizes)


def _search_rows(
    done: dict[str, Any], encoder: str, count: int, hits: int, ef: int
) -> list[DenseBenchRow]:
    queries = done["queries"]
    setting = f"{encoder} vectors, {_threads(count)}"

    def rate(measurement: str, timing: list[float]) -> DenseBenchRow:
        seconds, cpu = timing
        note = _timing_note(queries, " queries", seconds, cpu, done["pools"])
        return DenseBenchRow(measurement, setting, queries / seconds, "queries/s", note)

    rows = [rate(f"exact search, top {hits}", done["exact"])]
    if "approximate" in done:
        rows.append(rate(f"HNSW search, top {hits}, ef {max(ef, hits)}", done["approximate"]))
        if done.get("recall") is not None:
            rows.append(DenseBenchRow(
                f"HNSW recall@{hits} against exact", setting, done["recall"], "",
                f"mean over {queries} queries",
            ))  # fmt: skip
    return rows


def _size_rows(index: Path, record: DenseRecord, done: dict[str, Any]) -> list[DenseBenchRow]:
    """Disk and memory per 10,000 documents, from the files and the worker's resident set."""
    scale = PER / record.documents

    def megabytes(size: float) -> float:
        return size * scale / 1e6

    unit = f"MB per {PER:,} documents"
    of_all = f"bytes for {record.documents:,} documents"
    vectors = (index / record.file).stat().st_size
    rows = [DenseBenchRow("disk: vectors", record.file, megabytes(vectors), unit,
                          f"{vectors:,} {of_all}")]  # fmt: skip
    if record.hnsw:
        graph = (index / record.graph_file).stat().st_size
        rows.append(DenseBenchRow(f"disk: HNSW graph, M {record.hnsw}", record.graph_file,
                                  megabytes(graph), unit, f"{graph:,} {of_all}"))  # fmt: skip
    nbytes = done["vectors_nbytes"]
    array = f"the float32 array alone: {megabytes(nbytes):.1f} MB"
    if done.get("vectors_resident") is None:  # no /proc: the array's size stands in
        return [*rows, DenseBenchRow("memory: vectors (array size)", "", megabytes(nbytes), unit,
                                     "resident set not measurable here")]  # fmt: skip
    growth = "resident set growth on reading"
    rows.append(DenseBenchRow("memory: vectors", growth, megabytes(done["vectors_resident"]),
                              unit, array))  # fmt: skip
    if done.get("graph_resident") is not None:
        rows.append(DenseBenchRow(f"memory: HNSW graph, M {record.hnsw}", growth,
                                  megabytes(done["graph_resident"]), unit))  # fmt: skip
    return rows


def format_bench_dense(
    rows: Sequence[DenseBenchRow],
    command: str,
    index: str | Path,
    loads: tuple[float | None, float | None],
) -> str:
    """A markdown table of the rows, under the command and the load it ran under."""

    def load(value: float | None) -> str:
        return "unknown" if value is None else f"{value:.2f}"

    lines = [
        f"command: {command}",
        f"index {index}; load average {load(loads[0])} at the start, {load(loads[1])} at the "
        f"end, {usable_cores()} usable cores; best of warm runs, each thread count in a fresh "
        "process",
        "",
        "| measurement | setting | figure | unit | note |",
        "|---|---|---:|---|---|",
    ]
    for row in rows:
        figure = f"{row.figure:.3f}" if not row.unit else f"{row.figure:,.1f}"
        lines.append(f"| {row.measurement} | {row.setting} | {figure} | {row.unit} | {row.note} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
