"""``clir search --threads N``: queries searched N at a time, the run as with one thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from clir_toolkit.formats import read_topics
from clir_toolkit.query import StructuredQuery
from clir_toolkit.search import Searcher
from clir_toolkit.search.searcher import in_threads
from tests.conftest import TINY_FR, run_clir


def test_results_come_in_the_order_of_the_items_whatever_thread_finishes_first() -> None:
    def slow_for_small(n: int) -> int:
        time.sleep(0.001 * (20 - n))  # the first items finish last
        return n * n

    ended: list[str] = []
    results = list(
        in_threads(
            slow_for_small, range(20), 4, lambda: ended.append(threading.current_thread().name)
        )
    )
    assert results == [n * n for n in range(20)]
    assert sorted(ended) == [f"search-{i}" for i in range(4)]


def test_an_error_in_a_thread_is_raised_to_the_caller_and_stops_the_others() -> None:
    done: list[int] = []

    def fails_at_five(n: int) -> int:
        if n == 5:
            raise ValueError("item 5")
        done.append(n)
        return n

    with pytest.raises(ValueError, match="item 5"):
        list(in_threads(fails_at_five, range(10_000), 3))
    assert len(done) < 10_000
    assert not [t for t in threading.enumerate() if t.name.startswith("search-")]  # all ended


@pytest.mark.java
def test_several_threads_give_each_query_the_hits_of_one_thread(fr_index: Path) -> None:
    topics = read_topics(TINY_FR / "topics-human.dev.tsv")
    queries = [StructuredQuery.plain(f"{t.qid}-{i}", t.query) for i in range(50) for t in topics]
    with Searcher(fr_index) as one, Searcher(fr_index, threads=3) as three:
        assert list(three.batch_search(queries, 5, progress=False)) == list(
            one.batch_search(queries, 5, progress=False)
        )


@pytest.mark.java
def test_a_searcher_left_to_its_default_threads_uses_every_usable_core(fr_index: Path) -> None:
    from clir_toolkit.compute.threads import usable_cores

    with Searcher(fr_index, threads=None) as searcher:
        assert searcher.threads == usable_cores()


@pytest.mark.java
def test_clir_search_without_threads_writes_the_run_of_one_thread(
    fr_index: Path, tmp_path: Path
) -> None:
    runs = []
    for threads in ([], ["--threads", "1"]):
        output = tmp_path / f"run{len(runs)}.trec"
        done = run_clir(
            "search", "--index", str(fr_index), "--topics", str(TINY_FR / "topics.dev.tsv"),
            "--output", str(output), "--quiet", *threads,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(output.read_bytes())
    assert runs[0] == runs[1]


@pytest.mark.java
@pytest.mark.parametrize("structure", ["syn", "and", "or"])
def test_threads_switching_at_every_instruction_still_give_each_query_its_own_hits(
    fr_index: Path, structure: str
) -> None:
    """A stress test of the searching threads: Python hands its lock from thread to thread
    every microsecond (``sys.setswitchinterval``), eight threads build and search 200
    structured queries at once, five times over, and every run equals one thread's.

    Each query's alternatives are new texts (a word of its own beside the French words), so
    that every query is analysed and built anew through Java: the query cache cannot hide
    a call that reached another thread's builder or token list. Before those calls were
    made under ``jvm.OBJECT_CALLS``, 6 of 10 such runs of 444 dictionary-translated topics
    differed from one thread's, and under load a multi-threaded hybrid search failed with
    ``ConcurrentModificationException``."""
    import sys

    from clir_toolkit.query import Alternative, QueryTerm

    words = [("fichier", "répertoire", "copier"), ("commande", "liste"), ("droits", "nom")]

    def term(source: str, alternatives: tuple[str, ...], unique: str) -> QueryTerm:
        texts = (*alternatives, f"{alternatives[0]} {unique}")
        return QueryTerm(source, tuple(Alternative(t, 1.0 / (i + 1)) for i, t in enumerate(texts)))

    queries = [
        StructuredQuery(
            f"q{i}", tuple(term(f"s{j}", w, f"mot{i}x{j}") for j, w in enumerate(words))
        )
        for i in range(200)
    ]
    with Searcher(fr_index) as one:
        expected = list(one.batch_search(queries, 5, structure, progress=False))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(5):
            with Searcher(fr_index, threads=8) as eight:
                assert list(eight.batch_search(queries, 5, structure, progress=False)) == expected
    finally:
        sys.setswitchinterval(interval)
