"""Building a Lucene index from a collection (Anserini's ``IndexCollection``).

The index stores, for every document, its id, term positions and a document vector (the
term-frequency vector Rocchio and RM3 feedback read back), but **not** its raw text by
default: Anserini's searcher loads every hit's stored fields, and with raw text stored a
batch of 1,053 queries ran the Java heap out of memory on a 2-core machine. The
collection's ``corpus.jsonl`` remains the document store; ``store_raw=True`` keeps raw
text in the index for users of pyserini's ``doc()``.

Steps:

1. Stream the corpus once, validating it (:func:`clir_toolkit.formats.iter_corpus`), into
   the normalised ``{"id", "contents"}`` lines Lucene indexes, in a scratch directory beside
   the index (``.IDX.*.tmp``, removed on exit, or by the next build if killed). Languages
   that Lucene cannot analyse (Chinese with jieba, Swahili, Tagalog, ...) are tokenised
   here, in Python (:mod:`clir_toolkit.analysis`). The lines go into named pipes that Lucene
   reads while they are written (:mod:`clir_toolkit.index.streaming`), or, for a sharded
   index, into files first.
2. Run ``IndexCollection`` on that directory, multi-threaded, into a temporary directory,
   with a progress bar fed by its document counter (Anserini's log lines only on request).
3. Write the sidecar ``clir-index.json`` (language, analyzer, collection fingerprint,
   document count) and move the index into place under the rules of
   :func:`clir_toolkit.files.atomic_directory`: only an earlier index (or an empty or
   missing directory) is ever replaced, one build at a time, and an interrupted build
   leaves the previous index as it was.
4. With ``dense``, encode every document with a sentence encoder and store the vectors
   beside the Lucene files (:mod:`clir_toolkit.vectors`), before the sidecar that names them;
   :func:`~clir_toolkit.index.dense.add_dense_vectors` adds them to an existing index
   without rebuilding Lucene.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit import __version__, jvm
from clir_toolkit.analysis import AnalyzerSpec, analyzer_for
from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.encoders import encoder_names
from clir_toolkit.errors import ClirError, FormatError, OutputError, ResourceError, UsageError
from clir_toolkit.files import absolute, atomic_directory, check_replaceable, scratch
from clir_toolkit.formats import count_lines
from clir_toolkit.index.dense import check_hnsw, encode_for_index
from clir_toolkit.index.layout import (
    INDEX_KIND,
    check_only_ours,
    count_documents,
    foreign_entry,
    shard_dirs,
)
from clir_toolkit.index.sidecar import SIDECAR, IndexInfo, write_sidecar
from clir_toolkit.index.streaming import (
    PipeFeed,
    can_stream,
    corpus_file_names,
    normalised_lines,
    streaming_threads,
)
from clir_toolkit.vectors import write_graph, write_vectors


def write_normalised_corpus(
    collection: Collection,
    spec: AnalyzerSpec,
    out_dir: Path,
    progress: bool = True,
    shards: int = 1,
    files: int = 1,
) -> int:
    """Validate the corpus and write the ``{"id", "contents"}`` JSONL that Lucene indexes:
    ``out_dir/docs.jsonl``, or with ``shards`` > 1 one ``out_dir/shard-NN/docs.jsonl`` per
    shard, document i going to shard i mod ``shards`` (:func:`shard_dirs`).

    ``files`` > 1 splits each shard's documents, in turn, into that many files
    (``docs.jsonl``, ``docs-1.jsonl``, …): ``IndexCollection`` gives each of its threads a
    file, so that a corpus in one file is indexed by one thread only (at 1,000,000 documents
    on 2 cores, 1.1 CPU seconds a second: docs/speed.md). Runs do not depend on it: search
    breaks ties by docid, and BM25's statistics are the index's, whatever its segments."""
    from clir_toolkit.progress import progress_bar

    count = 0
    targets = shard_dirs(out_dir, shards)
    for target in targets:
        target.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as opened:
        outs = [
            opened.enter_context(open(target / name, "w", encoding="utf-8"))
            for name in corpus_file_names(files)
            for target in targets
        ]
        lines = normalised_lines(collection, spec)
        for line in progress_bar(
            lines, desc="reading corpus", unit=" docs", show=progress, leave=False
        ):
            outs[count % len(outs)].write(line)
            count += 1
    if count == 0:
        raise FormatError(collection.corpus, None, "the corpus holds no documents")
    return count


def indexing_arguments(
    spec: AnalyzerSpec, input_dir: Path, index_dir: Path, threads: int, store_raw: bool
) -> list[str]:
    """Command-line arguments of Anserini's ``IndexCollection`` for this language."""
    args = [
        "-collection",
        "JsonCollection",
        "-generator",
        "DefaultLuceneDocumentGenerator",
        "-input",
        str(input_dir),
        "-index",
        str(index_dir),
        "-threads",
        str(threads),
        "-storePositions",
        "-storeDocvectors",
    ]
    if store_raw:
        args.append("-storeRaw")
    if spec.pretokenized:
        args.append("-pretokenized")
    elif spec.language != "en":  # English: Anserini's default analyzer
        args += ["-language", spec.language]
    return args


@dataclass(frozen=True)
class ShardJob:
    """One Lucene index to build: the normalised corpus in ``source/docs.jsonl`` into
    ``target``, with ``threads`` indexing threads."""

    source: Path
    target: Path
    threads: int
    store_raw: bool


def build_shard(spec: AnalyzerSpec, job: ShardJob, progress: bool) -> None:
    """Build one shard (or the whole index, when there is one shard) with Anserini."""
    arguments = indexing_arguments(spec, job.source, job.target, job.threads, job.store_raw)
    run_lucene_indexer(arguments, count_lines(job.source / "docs.jsonl"), progress=progress)


Feed = Callable[[Callable[[], bool], Callable[[], None]], None]
"""Writes the documents an indexer reads, given ``(alive, report)``: whether the indexer
still runs, and a call that updates the progress bar."""

ShardBuilder = Callable[[AnalyzerSpec, Sequence[ShardJob], bool], None]
"""Builds every shard of an index: ``(analyzer, jobs, progress)``."""


def build_shards_here(spec: AnalyzerSpec, jobs: Sequence[ShardJob], progress: bool) -> None:
    """The shards one after the other in this process (each with its own threads)."""
    for job in jobs:
        build_shard(spec, job, progress)


def run_lucene_indexer(
    arguments: list[str], documents: int | None, progress: bool, feed: Feed | None = None
) -> None:
    """Run Anserini's ``IndexCollection`` with ``arguments``, showing a progress bar (of
    ``documents``, None: unknown).

    The indexer runs in a worker thread while this thread reads its document counter, so
    Ctrl-C (or SIGTERM) is answered at once: the indexer's ``IndexWriter`` is rolled back,
    the worker ends, and the exception goes on to remove the temporary directories. With
    ``feed``, this thread first writes the documents the indexer reads
    (:class:`~clir_toolkit.index.streaming.PipeFeed`); if the writing fails because the
    indexer did, the indexer's failure is raised.
    """
    import threading

    from clir_toolkit.progress import progress_bar

    index_collection = jvm.java_class("io.anserini.index.IndexCollection")
    args = jvm.java_class("io.anserini.index.IndexCollection$Args")()
    jvm.java_class("org.kohsuke.args4j.CmdLineParser")(args).parseArgument(jvm.java_list(arguments))
    indexer = index_collection(args)
    failure: list[BaseException] = []

    def work() -> None:
        try:
            indexer.run()
        except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread)
            failure.append(exc)
        finally:
            jvm.detach_thread()

    worker = threading.Thread(target=work, name="lucene-indexer", daemon=True)
    counter = indexer.getCounters().indexed
    with progress_bar(total=documents, desc="indexing", unit=" docs", show=progress) as bar:
        worker.start()
        try:
            if feed is not None:
                feed(worker.is_alive, lambda: bar.update(int(counter.get()) - bar.n))
            while worker.is_alive():
                worker.join(0.2)
                bar.update(int(counter.get()) - bar.n)
        except BaseException as exc:
            jvm.abort_indexer(indexer)
            worker.join(30)
            if failure and isinstance(exc, BrokenPipeError):  # the indexer stopped reading
                raise failure[0] from None
            raise
        bar.update(int(counter.get()) - bar.n)
    if failure:
        raise failure[0]


def _indexing_failure(exc: BaseException, index_path: Path) -> ClirError:
    """The one-line error for a failed Lucene indexing run (a full disk named as such)."""
    import shutil

    detail = jvm.java_error_text(exc)
    free = shutil.disk_usage(absolute(index_path).parent).free
    if "No space left on device" in detail or free < (1 << 20):
        return OutputError(
            f"{index_path}: no space left on the device while indexing "
            f"({free // 1024} KiB free); free some space or choose another --index"
        )
    return ResourceError(f"Lucene indexing failed: {detail.splitlines()[0]}")


def build_index(
    collection_path: str | Path,
    index_path: str | Path,
    *,
    language: str | None = None,
    threads: int | None = None,
    store_raw: bool = False,
    verbose: bool = True,
    java_logs: bool = False,
    shards: int = 1,
    shard_builder: ShardBuilder | None = None,
    dense: str | None = None,
    dense_cache: str | Path | None = None,
    hnsw: int = 0,
    dense_vectors: str | Path | None = None,
    hnsw_threads: int = 1,
) -> IndexInfo:
    """Index a collection directory (or a bare corpus file) into ``index_path``.

    The document language comes from the collection's manifest (``doc_lang``) unless
    ``language`` is given; a bare corpus file needs ``language``. ``index_path`` must be
    new, empty, or an index built earlier (which is replaced only once the new one is
    complete); anything else is refused untouched. ``verbose`` shows progress bars;
    ``java_logs`` shows Anserini's own log lines. ``shards`` > 1 splits the documents into
    that many Lucene indexes under ``index_path`` (``shard-NN/``), searched as one
    (:func:`open_reader`): the same runs as one index, for corpora that one index (or one
    machine's build) cannot hold. ``shard_builder`` builds the shards (default: one after the
    other here; :func:`clir_toolkit.distributed.index.shard_builder_on_ray` builds them in
    parallel on a Ray cluster); ``threads`` are then each shard's indexing threads.
    ``dense`` names a sentence encoder (``use-m3``, ``e5-small``, ``hf:DIR``), or several
    joined by commas (the first is the index's :attr:`~IndexInfo.dense`), whose document
    vectors are stored with the index (:mod:`clir_toolkit.vectors`), encoded through the
    vector cache ``dense_cache`` (default: the collection's rerank cache); ``hnsw`` M > 0
    stores their HNSW graph too (:func:`clir_toolkit.vectors.write_graph`, built by
    ``hnsw_threads``: one, the default, makes the same graph every time); with
    ``dense_vectors``, the vectors are read from that file, made elsewhere by ``clir
    encode`` (:mod:`clir_toolkit.index.imported`), and checked before Lucene starts.
    """
    check_hnsw(hnsw, dense, hnsw_threads)
    encoders = [name for name in encoder_names(dense) if name is not None]
    if dense_vectors is not None and len(encoders) > 1:
        raise UsageError(f"--vectors holds one encoder's vectors; --dense {dense} names "
                         f"{len(encoders)}: add the others with --dense NAME alone")  # fmt: skip
    if shards < 1:
        raise UsageError(f"--shards must be at least 1 (got {shards})")
    check_replaceable(index_path, SIDECAR, INDEX_KIND)
    check_only_ours(index_path)
    collection = open_collection(collection_path)
    lang = language or collection.doc_lang
    if not lang:
        raise ClirError(
            f"{collection.corpus}: the document language is unknown "
            "(pass --language, e.g. --language fr, or add doc_lang to manifest.json)"
        )
    spec = analyzer_for(lang)
    imported = None  # vectors made elsewhere are checked before any work
    if dense is not None and dense_vectors is not None:
        imported = encode_for_index(collection, dense, None, verbose, Path(dense_vectors))
    elif dense_vectors is not None:
        raise UsageError("--vectors needs --dense ENCODER: the encoder that made them")
    threads = threads or os.cpu_count() or 1
    started = time.perf_counter()
    with (
        atomic_directory(
            index_path, marker=SIDECAR, what=INDEX_KIND, foreign=foreign_entry
        ) as index_dir,
        scratch(index_path) as corpus_dir,
    ):
        streamed = shards == 1 and shard_builder is None and can_stream()
        if not streamed:
            documents = write_normalised_corpus(
                collection, spec, corpus_dir, progress=verbose, shards=shards, files=threads
            )
        # Anserini logs a failure of its indexing threads (a full disk, say) before the
        # toolkit turns it into one line; its logs are for --debug only.
        jvm.set_log_level("INFO" if java_logs else "OFF")
        feed = None
        try:
            if streamed:  # the corpus read while Lucene indexes it (index/streaming.py)
                pipes = streaming_threads(threads)
                feed = PipeFeed(normalised_lines(collection, spec), corpus_dir, pipes)
                arguments = indexing_arguments(spec, corpus_dir, index_dir, pipes, store_raw)
                run_lucene_indexer(arguments, None, verbose, feed)
                documents = feed.documents
                if documents == 0:
                    raise FormatError(collection.corpus, None, "the corpus holds no documents")
            else:
                jobs = [
                    ShardJob(source, target, threads, store_raw)
                    for source, target in zip(
                        shard_dirs(corpus_dir, shards), shard_dirs(index_dir, shards), strict=True
                    )
                ]
                (shard_builder or build_shards_here)(spec, jobs, verbose)
            indexed = count_documents(index_dir, shards)
        except Exception as exc:
            if feed is not None and exc is feed.corpus_error:  # a bad line, named as such
                raise
            raise _indexing_failure(exc, Path(index_path)) from exc
        finally:
            jvm.set_log_level("WARN")
        if indexed != documents:
            raise _indexing_failure(
                ResourceError(
                    f"Lucene indexed {indexed} of {documents} documents from "
                    f"{collection.corpus} (run with --debug to see Anserini's messages)"
                ),
                Path(index_path),
            )
        records = []
        for encoder in encoders:
            docids, matrix, record = imported or encode_for_index(
                collection, encoder, dense_cache, verbose
            )
            record = dataclasses.replace(record, hnsw=hnsw)
            write_vectors(index_dir, docids, matrix, record)
            if hnsw:
                write_graph(index_dir, matrix, record, hnsw_threads)
            records.append(record)
        info = IndexInfo(
            language=spec.language,
            analyzer_kind=spec.kind,
            analyzer_name=spec.name,
            documents=documents,
            collection=str(Path(collection_path).resolve()),
            collection_sha256=collection.fingerprint(),
            store_raw=store_raw,
            created_by=f"clir_toolkit {__version__} (Anserini 1.7.1 via pyserini 1.6.0)",
            seconds=round(time.perf_counter() - started, 2),
            shards=shards,
            dense=records[0] if records else None,
            other_dense=tuple(records[1:]),
        )
        write_sidecar(index_dir, info)
    return info
