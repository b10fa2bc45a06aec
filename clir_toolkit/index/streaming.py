"""The corpus streamed into Lucene while it indexes: the pre-pass of ``clir index`` overlapped
with Anserini's ``IndexCollection``.

:func:`clir_toolkit.index.build_index` reads the corpus once in Python, validating every
document and writing the normalised ``{"id", "contents"}`` lines that Lucene indexes
(:func:`normalised_lines`). Written to files first, that pass is time Lucene waits: at
1,000,000 documents on 2 cores it was the difference between ``clir index`` and Anserini's
own ``IndexCollection`` (docs/speed.md). Instead, the scratch directory holds one named pipe
(FIFO) per indexing thread, ``IndexCollection`` reads them as it reads files, and this
process writes the lines into them while Lucene indexes: the two run at once, on two cores.
The index is the same (the same documents in the same files, ``docs.jsonl`` and
``docs-K.jsonl``, document i in file i mod threads, as :func:`write_normalised_corpus`
writes them).

What keeps it from waiting forever:

- **one pipe per indexing thread**: ``IndexCollection`` gives each thread one file at a
  time, so with more files than threads one file would not be read before another ends,
  and the writer, which fills them in turn, would wait on it;
- each pipe is **opened without blocking**, again and again until Lucene's thread has opened
  its end, and the writer gives up when the indexer has ended before (its failure is then
  raised);
- the lines go to the pipes' **raw descriptors** (``os.write``), 64 KiB at a time, with no
  buffer behind them: closing a pipe after a failure never blocks on a flush;
- on any failure or interrupt of the writer (a bad document, Ctrl-C) the pipes are closed
  first, so Lucene reads their end (a pipe not opened yet is opened, removed and closed at
  once), and the indexer is rolled back after
  (:func:`clir_toolkit.index.build.run_lucene_indexer`): the index directory, still a
  temporary one, is removed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from clir_toolkit.analysis import AnalyzerSpec, pretokenize
from clir_toolkit.collection import Collection
from clir_toolkit.errors import ClirError
from clir_toolkit.formats import iter_corpus

CHUNK_BYTES = 1 << 16
"""Bytes gathered for one pipe before they are written (a Linux pipe holds 64 KiB)."""
REPORT_EVERY = 4096
"""Documents written between two updates of the progress bar."""


def normalised_lines(collection: Collection, spec: AnalyzerSpec) -> Iterator[str]:
    """The lines Lucene indexes, one a document, validated as they are read
    (:func:`clir_toolkit.formats.iter_corpus`); languages Lucene cannot analyse are
    tokenised here (:func:`clir_toolkit.analysis.pretokenize`)."""
    for doc in iter_corpus(collection.corpus):
        contents = pretokenize(spec, doc.contents) if spec.pretokenized else doc.contents
        yield json.dumps({"id": doc.id, "contents": contents}, ensure_ascii=False) + "\n"


def corpus_file_names(count: int) -> list[str]:
    """``docs.jsonl``, ``docs-1.jsonl``, …: the files (or pipes) of one Lucene index."""
    return ["docs.jsonl", *(f"docs-{k}.jsonl" for k in range(1, count))]


def streaming_threads(threads: int) -> int:
    """Lucene's indexing threads (and pipes) when ``threads`` build the index: one fewer, the
    writer in this process being the other (at least one). At 200,000 DDTP documents on 2
    cores, one Lucene thread beside the writer took 15.3 s, two took 17.6 s: Lucene's two
    threads and the writer then share two cores (and two threads' segments take more
    merging); Anserini's ``IndexCollection`` itself took 14.9 s (2026-11-29, beside another
    job; docs/speed.md has the measured table)."""
    return max(1, threads - 1)


def can_stream() -> bool:
    """Whether this system has named pipes (POSIX)."""
    return hasattr(os, "mkfifo")


class PipeFeed:
    """Writes ``lines`` into ``count`` named pipes made in ``directory``, line i into pipe
    i mod ``count``, while an indexer reads them: the ``feed`` of
    :func:`~clir_toolkit.index.build.run_lucene_indexer`. :attr:`documents` counts the lines
    written; :attr:`corpus_error` is the corpus' own error (a bad line), if reading it
    failed."""

    def __init__(self, lines: Iterable[str], directory: Path, count: int) -> None:
        self.lines = lines
        self.pipes = [directory / name for name in corpus_file_names(count)]
        for pipe in self.pipes:
            os.mkfifo(pipe)
        self.documents = 0
        self.corpus_error: ClirError | None = None

    def __call__(self, alive: Callable[[], bool], report: Callable[[], None]) -> None:
        """Write every line; ``alive``: whether the indexer still runs; ``report``: update
        the progress bar."""
        descriptors: list[int] = []
        try:
            for pipe in self.pipes:
                descriptor = _open_for_writing(pipe, alive)
                if descriptor is None:
                    return
                descriptors.append(descriptor)
            pending: list[list[bytes]] = [[] for _ in descriptors]
            sizes = [0] * len(descriptors)
            for number, line in enumerate(_noting_errors(self, self.lines)):
                k = number % len(descriptors)
                data = line.encode("utf-8")
                pending[k].append(data)
                sizes[k] += len(data)
                if sizes[k] >= CHUNK_BYTES:
                    _write_all(descriptors[k], b"".join(pending[k]))
                    pending[k], sizes[k] = [], 0
                self.documents = number + 1
                if number % REPORT_EVERY == 0:
                    report()
            for descriptor, chunks in zip(descriptors, pending, strict=True):
                _write_all(descriptor, b"".join(chunks))
        finally:
            for descriptor in descriptors:
                os.close(descriptor)
            for pipe in self.pipes[len(descriptors) :]:
                _release_reader(pipe)


def _noting_errors(feed: PipeFeed, lines: Iterable[str]) -> Iterator[str]:
    """``lines``, and the error of the corpus they are read from noted in ``feed``."""
    try:
        yield from lines
    except ClirError as exc:
        feed.corpus_error = exc
        raise


def _open_for_writing(pipe: Path, alive: Callable[[], bool]) -> int | None:
    """``pipe`` opened for writing once its reader has opened it; None if the indexer
    ended first."""
    while True:
        try:
            descriptor = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            if not alive():
                return None
            time.sleep(0.002)
            continue
        os.set_blocking(descriptor, True)
        return descriptor


def _release_reader(pipe: Path) -> None:
    """End a pipe this process never opened (it stopped first): an indexing thread that
    waits to open it for reading gets it, and its end at once (Linux lets a process open a
    pipe for reading and writing without waiting, fifo(7)); the pipe is removed before that
    end, so that a thread that comes later finds no file and fails instead of waiting."""
    with contextlib.suppress(OSError):
        descriptor = os.open(pipe, os.O_RDWR | os.O_NONBLOCK)
        pipe.unlink()
        os.close(descriptor)


def _write_all(descriptor: int, data: bytes) -> None:
    """Write all of ``data`` (a pipe may take part of it at a time)."""
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]
