"""``clir bench scale``: how the cost of each command grows with the collection.

A real collection is repeated to N documents (:func:`replicate_collection`): replica k of
document d is the same text under the docid ``d~k`` (the first copy keeps ``d``), so every
posting list grows N/n times, as in a larger collection of the same language, and the
topics and qrels are the source's (the qrels judge the first copies). For each N, each
command runs in a fresh process, as a user types it, ``runs`` times (their medians: wall and
CPU seconds, peak
resident memory: :func:`clir_toolkit.bench.run_process`), Anserini's own tools in turn where
they do the same work:

* ``clir index`` against ``IndexCollection`` with the same arguments and threads;
* ``clir search`` of the topics, top 1000, one thread and then the default (a thread per
  core), against ``SearchCollection`` with as many threads, whose run it compares with ours;
* ``clir search --translate dict`` (the default thread count);
* ``clir eval`` of the one-thread run and ``clir fuse`` of it with the dictionary run (runs of
  topics × 1000 rows);
* with ``rerank_topics``: ``clir rerank score`` of the dictionary run's first
  ``rerank_topics`` topics, top :data:`RERANK_DEPTH` each, by the pretrained encoder use-m3
  and, given ``rerank_model``, by that model (K-NRM). The collection's cache of encoded
  documents is removed before each run, its memo of the corpus' sha256 kept. The first of
  the two on a new collection also finds where the corpus' lines start (once per
  collection, kept in its cache: :mod:`clir_toolkit.formats.corpus_offsets`); the second
  reads them, as every later reranking of the collection does;
* up to ``dense_docs`` documents: ``clir index --dense use-m3`` on that index (encoding every
  document, the collection's cache of encoded documents removed first) and ``clir search
  --dense``.

The growth of each step between the smallest and the largest N is reported as the exponent
of a power law (wall ∝ N^e: 1 is linear; the start-up that every command pays makes it
smaller at small N).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from clir_toolkit import jvm
from clir_toolkit.bench import ProcessFigures, anserini_search_command, run_process
from clir_toolkit.bench_compare import runs_compared
from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.collection.builder import write_manifest
from clir_toolkit.compute.threads import usable_cores
from clir_toolkit.errors import ClirError
from clir_toolkit.files import atomic_directory
from clir_toolkit.formats import (
    Doc,
    iter_corpus,
    read_qrels,
    read_topics,
    write_corpus_jsonl,
    write_qrels,
)
from clir_toolkit.formats.topics import write_topics_tsv
from clir_toolkit.freshness import cache_key
from clir_toolkit.index.build import analyzer_for, indexing_arguments
from clir_toolkit.progress import log
from clir_toolkit.rerank.data.documents import default_cache_dir

#: The replica separator in docids: ``d~3`` is the fourth copy of ``d``.
REPLICA = "~"
#: Documents per query in the timed searches (a TREC run's depth).
HITS = 1000
#: Candidates per topic in the timed reranking (``clir rerank score --depth``).
RERANK_DEPTH = 100
#: The code a replicated collection is made by (part of its freshness key).
CODE = ("clir_toolkit.bench_scale",)


@dataclass(frozen=True)
class Step:
    """One timed command at one size, and Anserini's timing of the same work (or None)."""

    documents: int
    name: str
    ours: ProcessFigures
    anserini_name: str | None = None
    anserini: ProcessFigures | None = None
    note: str = ""


def replicate_collection(source: Path, out: Path, documents: int, split: str = "dev",
                         topics: int = 1000) -> Path:  # fmt: skip
    """Write (or reuse) the collection ``out``: ``source``'s documents repeated to
    ``documents`` (replica k of d under ``d~k``), the first ``topics`` topics of ``split``
    with their human translations and qrels. The same arguments give the same bytes; the
    collection is reused while they and this module's code are the same
    (:func:`~clir_toolkit.freshness.cache_key`, recorded in its manifest)."""
    collection = open_collection(source)
    made_from = cache_key(
        {"source": collection.fingerprint(), "documents": documents, "split": split,
         "topics": topics}, CODE,
    )  # fmt: skip
    manifest = out / "manifest.json"
    if manifest.is_file():
        with open(manifest, encoding="utf-8") as handle:
            if json.load(handle).get("made_from") == made_from:
                return out
    originals = list(iter_corpus(collection.corpus))
    chosen = read_topics(collection.split_file("topics", split))[:topics]
    qids = {topic.qid for topic in chosen}

    def replicas() -> Iterator[Doc]:
        for number in range(documents):
            copy, document = divmod(number, len(originals))
            doc = originals[document]
            yield replace(doc, id=f"{doc.id}{REPLICA}{copy}") if copy else doc

    with atomic_directory(out, marker="manifest.json", what="replicated collection") as tmp:
        write_corpus_jsonl(tmp / "corpus.jsonl", replicas())
        write_topics_tsv(tmp / f"topics.{split}.tsv", chosen)
        human = collection.split_file("topics-human", split)
        if human.is_file():
            write_topics_tsv(tmp / f"topics-human.{split}.tsv",
                             [t for t in read_topics(human) if t.qid in qids])  # fmt: skip
        write_qrels(tmp / f"qrels.{split}.txt",
                    [q for q in read_qrels(collection.split_file("qrels", split))
                     if q.qid in qids])  # fmt: skip
        name = f"{collection.manifest.get('name') or source.name}-x{documents}"
        write_manifest(tmp, {
            "name": name, "query_lang": collection.query_lang, "doc_lang": collection.doc_lang,
            "counts": {"documents": documents}, "made_from": made_from,
            "description": f"{source.name}'s documents repeated to {documents:,} "
            f"(clir bench scale); replica k of d is d{REPLICA}k",
        })  # fmt: skip
    return out


def _anserini_index_command(corpus_dir: Path, index: Path, language: str,
                            threads: int) -> list[str]:  # fmt: skip
    """Anserini's ``IndexCollection`` with the arguments ``clir index`` gives it."""
    jars = [str(path) for path in jvm.class_path() if path.suffix == ".jar"]
    java = jvm.find_java_home() / "bin" / "java"
    arguments = indexing_arguments(analyzer_for(language), corpus_dir, index, threads, False)
    return [str(java), "-cp", ":".join(jars), "io.anserini.index.IndexCollection", *arguments]


def median_figures(runs: Sequence[ProcessFigures]) -> ProcessFigures:
    """The median wall, CPU and peak memory of several runs of one command."""
    return ProcessFigures(statistics.median(r.wall for r in runs),
                          statistics.median(r.cpu for r in runs),
                          statistics.median(r.peak_mib for r in runs))  # fmt: skip


@dataclass
class _Timer:
    """Runs the steps of one size, ``runs`` times each (Anserini's in turn with ours, so
    that both see the same load), and keeps their median figures."""

    documents: int
    quiet: bool
    steps: list[Step]
    runs: int = 1

    def time(self, name: str, command: list[str], baseline_name: str | None = None,
             baseline: list[str] | None = None,
             before: Callable[[], object] | None = None) -> Step:  # fmt: skip
        """``before``: what makes each run start from the same state (a cache removed)."""
        log(self.quiet, f"{self.documents:,} documents: {name}")
        ours, theirs = [], []
        for _ in range(self.runs):
            if before is not None:
                before()
            ours.append(run_process(command))
            if baseline is not None:
                theirs.append(run_process(baseline))
        step = Step(self.documents, name, median_figures(ours),
                    baseline_name if theirs else None,
                    median_figures(theirs) if theirs else None)  # fmt: skip
        self.steps.append(step)
        return step


def bench_scale(
    source: Path,
    sizes: Sequence[int],
    workdir: Path,
    *,
    topics: int = 1000,
    split: str = "dev",
    dense_docs: int = 0,
    anserini: bool = True,
    runs: int = 1,
    quiet: bool = False,
    rerank_topics: int = 0,
    rerank_model: Path | None = None,
) -> list[Step]:
    """Time the steps of the module's list at each size of ``sizes`` (documents), ``runs``
    times each (their medians); the collections, indexes and runs are kept under
    ``workdir``/x{N}."""
    if rerank_model is not None and not rerank_model.is_file():
        raise ClirError(f"{rerank_model}: no such model file (--rerank-model: a model of clir "
                        "rerank train)")  # fmt: skip
    rerank = Reranking(rerank_topics, rerank_model)
    steps: list[Step] = []
    for documents in sorted(set(sizes)):
        here = workdir / f"x{documents}"
        here.mkdir(parents=True, exist_ok=True)
        log(quiet, f"{documents:,} documents: writing the collection")
        collection_dir = replicate_collection(source, here / "collection", documents, split,
                                              topics)  # fmt: skip
        _bench_one_size(collection_dir, here, split, dense_docs, anserini,
                        _Timer(documents, quiet, steps, runs), rerank)  # fmt: skip
    return steps


@dataclass(frozen=True)
class Reranking:
    """The reranking steps: the topics reranked (0: none) and the model beside use-m3."""

    topics: int = 0
    model: Path | None = None


def _bench_one_size(collection_dir: Path, here: Path, split: str, dense_docs: int,
                    anserini: bool, timer: _Timer,
                    rerank: Reranking = Reranking()) -> None:  # fmt: skip
    clir = [sys.executable, "-m", "clir_toolkit.cli"]
    cores = usable_cores()
    collection = open_collection(collection_dir)
    language = collection.doc_lang
    if language is None:
        raise ClirError(f"{collection_dir}: the manifest names no doc_lang")
    topics_file = collection.split_file("topics", split)
    qrels_file = collection.split_file("qrels", split)
    index, runs = here / "index", here / "runs"
    runs.mkdir(exist_ok=True)

    indexing = [*clir, "index", "--collection", str(collection_dir), "--index", str(index),
                "--quiet"]  # fmt: skip
    baseline = None
    if anserini and not analyzer_for(language).pretokenized:
        corpus_dir = here / "anserini-input"  # IndexCollection reads every file there
        shutil.rmtree(corpus_dir, ignore_errors=True)
        corpus_dir.mkdir()
        os.link(collection.corpus, corpus_dir / "corpus.jsonl")
        shutil.rmtree(here / "anserini-index", ignore_errors=True)
        baseline = _anserini_index_command(corpus_dir, here / "anserini-index", language, cores)
    def no_anserini_index() -> None:
        shutil.rmtree(here / "anserini-index", ignore_errors=True)

    timer.time("clir index", indexing, f"Anserini IndexCollection -threads {cores}", baseline,
               before=no_anserini_index)  # fmt: skip
    no_anserini_index()

    search = [*clir, "search", "--index", str(index), "--topics", str(topics_file),
              "--hits", str(HITS), "--quiet"]  # fmt: skip
    for threads in sorted({1, cores}):
        ours_run, theirs_run = runs / f"untranslated-{threads}.trec", runs / "anserini.trec"
        command = [*search, "--output", str(ours_run), "--threads", str(threads)]
        baseline = (anserini_search_command(index, topics_file, theirs_run, HITS, threads)
                    if anserini else None)  # fmt: skip
        step = timer.time(f"clir search --threads {threads}", command,
                          f"Anserini SearchCollection -threads {threads}", baseline)  # fmt: skip
        if step.anserini is not None:
            timer.steps[-1] = replace(step, note=runs_compared(ours_run, theirs_run, HITS))
    dictionary_run, one_thread = runs / "dict.trec", runs / "untranslated-1.trec"
    timer.time("clir search --translate dict",
               [*search, "--output", str(dictionary_run), "--translate", "dict"])  # fmt: skip
    timer.time("clir eval", [*clir, "eval", "--qrels", str(qrels_file), str(one_thread)])
    timer.time("clir fuse", [*clir, "fuse", str(one_thread), str(dictionary_run), "--output",
                             str(runs / "fused.trec"), "--quiet"])  # fmt: skip
    def uncached() -> None:
        # Encoded from scratch: with the collection's cache of encoded documents, which an
        # earlier run leaves behind, the step would time a copy.
        for cached in default_cache_dir(collection_dir).glob("docs-*"):
            cached.unlink()

    if rerank.topics:
        _bench_reranking(clir, collection, topics_file, dictionary_run, runs, rerank, timer,
                         uncached)  # fmt: skip
    if timer.documents <= dense_docs:

        timer.time("clir index --dense use-m3 (adds the vectors)",
                   [*indexing, "--dense", "use-m3"], before=uncached)  # fmt: skip
        timer.time("clir search --dense",
                   [*search, "--output", str(runs / "dense.trec"), "--dense"])  # fmt: skip


def _bench_reranking(clir: list[str], collection: Collection, topics: Path, first_stage: Path,
                     runs: Path, rerank: Reranking, timer: _Timer,
                     uncached: Callable[[], None]) -> None:  # fmt: skip
    """``clir rerank score`` of the first ``rerank.topics`` topics of ``first_stage``, top
    :data:`RERANK_DEPTH`, by use-m3 and by ``rerank.model``."""
    from clir_toolkit.formats import read_run, write_run
    from clir_toolkit.rerank.data.documents import corpus_fingerprint

    rows = read_run(first_stage)
    qids = list(dict.fromkeys(row.qid for row in rows))[: rerank.topics]
    kept = set(qids)
    head = runs / "rerank-input.trec"
    write_run(head, [row for row in rows if row.qid in kept and row.rank <= RERANK_DEPTH])
    corpus_fingerprint(collection.corpus, default_cache_dir(collection.root))  # its memo
    score = [*clir, "rerank", "score", "--collection", str(collection.root), "--topics",
             str(topics), "--run", str(head),
             "--depth", str(RERANK_DEPTH), "--quiet"]  # fmt: skip
    size = f"({len(qids)} topics × {RERANK_DEPTH})"
    timer.time(f"clir rerank score --pretrained use-m3 {size}",
               [*score, "--pretrained", "use-m3", "--output", str(runs / "use-m3.trec")],
               before=uncached)  # fmt: skip
    if rerank.model is not None:
        timer.time(f"clir rerank score --model {rerank.model.name} {size}",
                   [*score, "--model", str(rerank.model), "--output", str(runs / "model.trec")],
                   before=uncached)  # fmt: skip


def growth_exponent(steps: Sequence[Step], name: str) -> float | None:
    """The exponent e of wall ∝ N^e for one step, between its smallest and largest N."""
    points = sorted((s.documents, s.ours.wall) for s in steps if s.name == name)
    if len(points) < 2 or points[0][0] == points[-1][0]:
        return None
    (n1, w1), (n2, w2) = points[0], points[-1]
    return math.log(w2 / w1) / math.log(n2 / n1)


def format_bench_scale(steps: Sequence[Step], load: float | None) -> str:
    """A markdown table: one row per step and size, Anserini's figures beside ours where it
    does the same work, then each step's growth exponent."""
    lines = [
        "Each command in a fresh process (the median of its runs); wall and CPU seconds, peak "
        "resident MiB"
        + (f"; load average {load:.1f} at the start" if load is not None else "") + ".",
        "",
        "| documents | step | wall s | CPU s | peak MiB | Anserini | wall s | CPU s | peak MiB "
        "| Anserini / clir, wall |",
        "|---:|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for step in steps:
        ours = f"{step.ours.wall:.1f} | {step.ours.cpu:.1f} | {step.ours.peak_mib:.0f}"
        theirs = " | | | | "
        if step.anserini is not None:
            a = step.anserini
            theirs = (f" {step.anserini_name} | {a.wall:.1f} | {a.cpu:.1f} | {a.peak_mib:.0f} "
                      f"| {a.wall / step.ours.wall:.2f}× ")  # fmt: skip
        lines.append(f"| {step.documents:,} | {step.name} | {ours} |{theirs}|")
        if step.note:
            lines.append(f"| | {step.note} | | | | | | | | |")
    names = list(dict.fromkeys(step.name for step in steps))
    exponents = [(name, growth_exponent(steps, name)) for name in names]
    if any(e is not None for _, e in exponents):
        sizes = sorted({step.documents for step in steps})
        lines += ["", f"Growth of the wall time from {sizes[0]:,} to {sizes[-1]:,} documents "
                  "(wall ∝ N^e; 1 is linear):", ""]  # fmt: skip
        lines += [f"- {name}: e = {e:.2f}" for name, e in exponents if e is not None]
    return "\n".join(lines)
