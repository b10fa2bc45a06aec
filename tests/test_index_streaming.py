"""The corpus written into named pipes while an indexer reads them (index/streaming.py),
without Lucene: readers are threads of this process."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from clir_toolkit.errors import FormatError
from clir_toolkit.index.streaming import PipeFeed, can_stream, streaming_threads

pytestmark = pytest.mark.skipif(not can_stream(), reason="no named pipes on this system")


def read_all(pipe: Path, into: dict[Path, str | None]) -> threading.Thread:
    """A thread that opens ``pipe`` for reading (waiting for a writer) and reads it whole
    (None: the pipe was gone when it came to open it)."""

    def read() -> None:
        try:
            with open(pipe, encoding="utf-8") as handle:
                into[pipe] = handle.read()
        except FileNotFoundError:
            into[pipe] = None

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_line_i_goes_to_pipe_i_mod_n(tmp_path: Path) -> None:
    lines = [f'{{"id": "d{i}", "contents": "mot {i}"}}\n' for i in range(10_000)]
    feed = PipeFeed(lines, tmp_path, 3)
    read: dict[Path, str | None] = {}
    readers = [read_all(pipe, read) for pipe in feed.pipes]
    feed(lambda: True, lambda: None)
    for reader in readers:
        reader.join(10)
    assert feed.documents == 10_000
    assert [pipe.name for pipe in feed.pipes] == ["docs.jsonl", "docs-1.jsonl", "docs-2.jsonl"]
    for k, pipe in enumerate(feed.pipes):
        assert read[pipe] == "".join(lines[k::3])


def test_an_error_of_the_corpus_ends_every_pipe(tmp_path: Path) -> None:
    """A bad line: the pipes are closed (their readers read an end) and the error is noted as
    the corpus' own."""

    def lines() -> Iterator[str]:
        yield '{"id": "a", "contents": "x"}\n'
        raise FormatError(tmp_path / "corpus.jsonl", 2, "a bad line")

    feed = PipeFeed(lines(), tmp_path, 2)
    read: dict[Path, str | None] = {}
    readers = [read_all(pipe, read) for pipe in feed.pipes]
    with pytest.raises(FormatError) as raised:
        feed(lambda: True, lambda: None)
    assert feed.corpus_error is raised.value
    for reader in readers:
        reader.join(10)
        assert not reader.is_alive()
    assert read == dict.fromkeys(feed.pipes, "")  # the line waited for 64 KiB, never written


def test_a_reader_waiting_for_a_pipe_never_opened_is_let_through(tmp_path: Path) -> None:
    """The indexer ended before it opened the first pipe: the writer gives up, a thread
    waiting to open another pipe gets it and its end, and one that comes later finds no
    pipe (whichever the reader here is: it may come before the writer gives up, or after)."""
    feed = PipeFeed(iter(["never written\n"]), tmp_path, 2)
    read: dict[Path, str | None] = {}
    waiting = read_all(feed.pipes[1], read)
    feed(lambda: False, lambda: None)
    waiting.join(10)
    assert not waiting.is_alive() and read[feed.pipes[1]] in ("", None)
    assert not any(pipe.exists() for pipe in feed.pipes)
    assert feed.documents == 0


@pytest.mark.parametrize(("threads", "pipes"), [(1, 1), (2, 1), (3, 2), (8, 7)])
def test_lucene_gets_one_thread_fewer_than_the_build(threads: int, pipes: int) -> None:
    assert streaming_threads(threads) == pipes
