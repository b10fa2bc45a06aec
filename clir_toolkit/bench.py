"""Speed benchmarks (``clir bench``): measured figures, never timed tests.

``bench commands`` times whole commands from a cold shell, each in a fresh process (the
lines of docs/speed.md's table): ``clir --help``, ``clir search`` of one query (untranslated
and with ``--translate dict``), and ``clir search`` of every topic (``--threads 1``, then the
default: one thread per core) against Anserini's own ``SearchCollection`` with as many threads
on the same index and topics, in turns, whose run it compares with ours.

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

import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit import jvm
from clir_toolkit.analysis import lucene_analyzer, pretokenize
from clir_toolkit.bench_compare import runs_compared
from clir_toolkit.compute.threads import usable_cores
from clir_toolkit.errors import ResourceError
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


# --- whole commands from a cold shell (``clir bench commands``) -------------------------------
#
# Each command runs in a fresh process, as a user types it: Python's start-up and imports, the
# JVM's start, reading the topics and writing the run all count. The operating system's own
# accounting of each finished process (``os.wait4``) gives its CPU time and peak memory.


@dataclass(frozen=True)
class ProcessFigures:
    """One finished process: wall and CPU (user + system) seconds, peak resident MiB."""

    wall: float
    cpu: float
    peak_mib: float


@dataclass(frozen=True)
class CommandRow:
    """One line of the table: a command's runs, and those of the command it is compared with
    (taken in turns with it, so that both see the same load)."""

    name: str
    command: list[str]
    runs: list[ProcessFigures]
    baseline_name: str | None = None
    baseline: list[ProcessFigures] | None = None
    note: str = ""


#: A small Python process that starts the command timed and reports the command's own
#: figures (wall, exit status, CPU, peak KiB) into the file named first. Forked straight from
#: the benchmark, a command would report the benchmark's resident size as its own peak when
#: that is larger: Linux counts the pages a fork copies in the child's peak, and the
#: benchmark grows with the runs it compares (a 1,000,000-row run made every later command
#: of ``clir bench scale`` seem to peak at 808 MiB).
_MEASURE = """
import json, os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump([time.perf_counter() - started, os.waitstatus_to_exitcode(status),
               usage.ru_utime + usage.ru_stime, usage.ru_maxrss], out)
"""


def run_process(command: Sequence[str]) -> ProcessFigures:
    """Run ``command`` to its end, its output thrown away; a failure is one error line. The
    figures are the command's alone (see :data:`_MEASURE`)."""
    with tempfile.TemporaryDirectory(prefix="clir-bench-") as scratch, \
            tempfile.TemporaryFile() as errors:  # fmt: skip
        report = Path(scratch) / "figures.json"
        subprocess.run([sys.executable, "-I", "-S", "-c", _MEASURE, str(report), *command],
                       stdout=subprocess.DEVNULL, stderr=errors, check=False)  # fmt: skip
        wall, status, cpu, peak_kib = json.loads(report.read_text(encoding="utf-8"))
        if status != 0:
            errors.seek(0)
            lines = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise ResourceError(
                f"'{' '.join(command)}' failed (exit {status}): "
                f"{lines[-1] if lines else 'no message'}"
            )
    return ProcessFigures(wall, cpu, peak_kib / 1024)  # ru_maxrss is in KiB on Linux


def time_commands(
    command: Sequence[str], baseline: Sequence[str] | None, runs: int, warmup: int
) -> tuple[list[ProcessFigures], list[ProcessFigures] | None]:
    """``runs`` timed runs of ``command`` (and of ``baseline`` in turns with it, A B A B …)
    after ``warmup`` untimed ones of each: the file cache is then as warm for both."""
    ours: list[ProcessFigures] = []
    theirs: list[ProcessFigures] = []
    for turn in range(warmup + runs):
        figures = run_process(command)
        other = run_process(baseline) if baseline is not None else None
        if turn >= warmup:
            ours.append(figures)
            if other is not None:
                theirs.append(other)
    return ours, (theirs if baseline is not None else None)


def anserini_search_command(
    index: str | Path, topics: Path, output: Path, hits: int, threads: int
) -> list[str] | None:
    """Anserini's own ``SearchCollection`` over the same index and TSV topics (BM25 with
    ``clir search``'s default k1 and b); None when the index was analysed in Python
    (pre-tokenised languages), which Anserini's command line cannot reproduce."""
    info = read_index_info(index)
    if info.analyzer.pretokenized:
        return None
    jars = [str(path) for path in jvm.class_path() if path.suffix == ".jar"]
    java = jvm.find_java_home() / "bin" / "java"
    return [
        str(java), "-cp", ":".join(jars), "io.anserini.search.SearchCollection",
        "-index", str(index), "-topics", str(topics), "-topicReader", "TsvString",
        "-output", str(output), "-bm25", "-bm25.k1", str(DEFAULT_K1), "-bm25.b", str(DEFAULT_B),
        "-language", info.language, "-hits", str(hits), "-threads", str(threads),
    ]  # fmt: skip


def bench_commands(
    index: str | Path,
    topics: Sequence[Topic],
    *,
    hits: int = 100,
    runs: int = 5,
    warmup: int = 1,
    translate: str | None = "dict",
    anserini: bool = True,
) -> list[CommandRow]:
    """Time the commands of the speed table from a cold shell (see docs/speed.md)."""
    from clir_toolkit.formats.topics import write_topics_tsv

    clir = [sys.executable, "-m", "clir_toolkit.cli"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="clir-bench-") as scratch_dir:
        scratch = Path(scratch_dir)
        one, every = scratch / "one.tsv", scratch / "topics.tsv"
        write_topics_tsv(one, topics[:1])
        write_topics_tsv(every, topics)
        search = [*clir, "search", "--index", str(index), "--quiet"]

        def row(name: str, command: list[str], baseline_name: str | None = None,
                baseline: list[str] | None = None) -> CommandRow:  # fmt: skip
            ours, theirs = time_commands(command, baseline, runs, warmup)
            return CommandRow(name, command, ours, baseline_name, theirs)

        rows.append(row("clir --help", [*clir, "--help"]))
        one_query = [*search, "--topics", str(one), "--output", str(scratch / "one.trec")]
        rows.append(row("clir search, one query", one_query))
        if translate:
            rows.append(row(f"clir search --translate {translate}, one query",
                            [*one_query, "--translate", translate]))  # fmt: skip
        ours_run, theirs_run = scratch / "clir.trec", scratch / "anserini.trec"
        every_query = [*search, "--topics", str(every), "--output", str(ours_run),
                       "--hits", str(hits)]  # fmt: skip
        for threads in sorted({1, usable_cores()}):
            # --threads 1, then the command's default: one thread per usable core
            command = [*every_query, "--threads", "1"] if threads == 1 else every_query
            option = "--threads 1" if threads == 1 else f"(default threads: {threads})"
            name = f"clir search --hits {hits} {option}, {len(topics)} topics"
            baseline = anserini_search_command(index, every, theirs_run, hits, threads)
            if not anserini or baseline is None:
                rows.append(row(name, command))
                continue
            baseline_name = f"Anserini SearchCollection -hits {hits} -threads {threads}"
            timed = row(name, command, baseline_name, baseline)
            rows.append(dataclasses.replace(timed, note=runs_compared(ours_run, theirs_run, hits)))
    return rows


def _java_set_up() -> str:
    """What ``clir resource java`` made for the commands timed (both change their speed)."""
    from clir_toolkit import jvm

    try:
        archive = jvm.class_archive_path().is_file()
    except (OSError, ResourceError):
        archive = False
    made = {"class archive": archive, "HitReader": jvm.hit_reader_jar() is not None}
    return "Java: " + ", ".join(f"{name} {'yes' if it else 'no'}" for name, it in made.items())


def format_bench_commands(rows: Sequence[CommandRow], load: float | None) -> str:
    """The table: medians of each command's runs, and the baseline's over the command's
    (the median of the pairwise ratios: above 1, the toolkit is faster or smaller)."""
    runs = len(rows[0].runs) if rows else 0
    lines = [
        f"whole commands from a cold shell: median of {runs} runs each"
        + (f"; load average {load:.1f} at the start" if load is not None else ""),
        _java_set_up(),
        f"{'command':<56} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9}",
    ]

    def medians(figures: Sequence[ProcessFigures]) -> str:
        wall = statistics.median(f.wall for f in figures)
        cpu = statistics.median(f.cpu for f in figures)
        peak = statistics.median(f.peak_mib for f in figures)
        return f"{wall:>7.3f} {cpu:>7.3f} {peak:>9.0f}"

    for row in rows:
        lines.append(f"{row.name:<56} {medians(row.runs)}")
        if row.baseline is None or row.baseline_name is None:
            continue
        lines.append(f"{row.baseline_name:<56} {medians(row.baseline)}")
        pairs = list(zip(row.baseline, row.runs, strict=True))
        lines.append(
            "  ratio baseline / clir (pair by pair, median): "
            f"wall {statistics.median(b.wall / a.wall for b, a in pairs):.2f}x, "
            f"CPU {statistics.median(b.cpu / a.cpu for b, a in pairs):.2f}x, "
            f"peak memory {statistics.median(b.peak_mib / a.peak_mib for b, a in pairs):.2f}x"
        )
        if row.note:
            lines.append(f"  {row.note}")
    return "\n".join(lines)
