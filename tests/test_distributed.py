"""Query-parallel search on a local Ray cluster: the same run file as one process."""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.distributed.cluster import ClusterSpec, parse_cluster
from clir_toolkit.distributed.search import chunks
from tests.conftest import (
    TINY_FR,
    assert_one_line_error,
    run_clir,
    run_clir_killing_a_worker,
    write_big_collection,
)

pytest.importorskip("ray")  # installed by make setup (the [ray] extra is in [dev])


def test_chunks_are_contiguous_and_near_equal() -> None:
    items = list(range(10))
    parts = chunks(items, 3)
    assert [len(part) for part in parts] == [4, 3, 3]
    assert [item for part in parts for item in part] == items
    assert chunks(items, 50) == [[item] for item in items]
    assert chunks(["a"], 4) == [["a"]]


def test_cluster_values() -> None:
    assert parse_cluster("local:2") == ClusterSpec(local_cpus=2)
    assert parse_cluster("auto") == ClusterSpec(address="auto")
    assert parse_cluster("ray://head:10001") == ClusterSpec(address="ray://head:10001")


@pytest.mark.parametrize("workers", ["2", "3"])
def test_search_on_two_local_workers_writes_the_same_run(
    fr_index: Path, tmp_path: Path, workers: str
) -> None:
    """Dictionary translation with Pirkola's structure and Rocchio feedback, the topics cut
    into 2 or 3 chunks on a cluster of 2 CPUs: byte for byte the single process's run."""
    options = ["--topics", str(TINY_FR / "topics.dev.tsv"), "--translate", "dict",
               "--prf", "rocchio", "--fb-docs", "3", "--quiet"]  # fmt: skip
    one, spread = tmp_path / "one.trec", tmp_path / "ray.trec"
    assert run_clir("search", "--index", str(fr_index), "--output", str(one),
                    *options).returncode == 0  # fmt: skip
    result = run_clir("search", "--index", str(fr_index), "--output", str(spread), *options,
                      "--ray", "local:2", "--workers", workers)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()
    assert len(one.read_text().splitlines()) > 10


def test_a_bad_cluster_value_is_one_line(fr_index: Path, tmp_path: Path) -> None:
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.trec"),
                      "--ray", "local:0")  # fmt: skip
    assert_one_line_error(result, "--ray 'local:0'", "local:N", status=2)
    assert not (tmp_path / "r.trec").exists()


def test_a_killed_worker_is_retried_and_the_run_is_the_same(tmp_path: Path) -> None:
    """kill -9 a worker in the middle of its chunk: Ray runs the chunk again elsewhere, and
    the run file is still byte for byte the single process's; nothing is left half-written."""
    collection = write_big_collection(tmp_path / "big-fr", documents=20_000, topics=400)
    index = tmp_path / "idx"
    assert run_clir("index", "--collection", str(collection), "--index", str(index),
                    "--quiet").returncode == 0  # fmt: skip
    search = ["search", "--index", str(index), "--topics", str(collection / "topics.dev.tsv"),
              "--prf", "rocchio", "--quiet"]  # fmt: skip
    one, spread = tmp_path / "one.trec", tmp_path / "ray.trec"
    assert run_clir(*search, "--output", str(one)).returncode == 0
    result, killed = run_clir_killing_a_worker(
        *search, "--output", str(spread), "--ray", "local:2", "--workers", "2",
        name="_search_chunk",
    )  # fmt: skip
    assert killed is not None, "no worker was caught running its chunk"
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_bench_search_on_ray_prints_both_rates(fr_index: Path) -> None:
    topics = str(TINY_FR / "topics.dev.tsv")
    result = run_clir("bench", "search", "--index", str(fr_index), "--topics", topics,
                      "--ray", "local:2", "--repeat", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("one process") and lines[2].startswith("Ray, 2 workers")
    assert lines[3].startswith("ratio Ray / one process (queries/s): ")
