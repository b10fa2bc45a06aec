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
