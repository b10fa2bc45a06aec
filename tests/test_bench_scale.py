"""clir bench scale: the collection repeated to N documents, and the table of its steps."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from clir_toolkit.bench import run_process
from clir_toolkit.bench_scale import REPLICA, growth_exponent, replicate_collection
from clir_toolkit.collection import open_collection
from clir_toolkit.errors import ResourceError
from clir_toolkit.formats import read_qrels, read_run, read_topics
from tests.conftest import TINY_FR, assert_one_line_error, run_clir


def _ids(collection: Path) -> list[str]:
    lines = (collection / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines]


def test_the_repeated_collection_holds_n_distinct_documents_and_the_source_s_judgements(
    tmp_path: Path,
) -> None:
    out = replicate_collection(TINY_FR, tmp_path / "x30", 30, topics=2)
    source_ids = _ids(TINY_FR)
    ids = _ids(out)
    assert len(ids) == 30 == len(set(ids))  # 12 documents: two whole copies and 6 more
    assert ids[:12] == source_ids and ids[12] == f"{source_ids[0]}{REPLICA}1"
    assert ids[-1] == f"{source_ids[5]}{REPLICA}2"
    texts = [json.loads(line)["contents"] for line in
             (out / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]  # fmt: skip
    assert texts[12] == texts[0]
    collection = open_collection(out)
    assert collection.doc_lang == "fr" and collection.manifest["counts"]["documents"] == 30
    topics = read_topics(collection.split_file("topics", "dev"))
    assert [t.qid for t in topics] == [t.qid for t in read_topics(TINY_FR / "topics.dev.tsv")][:2]
    assert {q.qid for q in read_qrels(collection.split_file("qrels", "dev"))} == {
        t.qid for t in topics
    }


def test_the_repeated_collection_is_the_same_bytes_and_reused(tmp_path: Path) -> None:
    first = replicate_collection(TINY_FR, tmp_path / "a", 25)
    second = replicate_collection(TINY_FR, tmp_path / "b", 25)
    for name in ("corpus.jsonl", "topics.dev.tsv", "qrels.dev.txt", "manifest.json"):
        assert (first / name).read_bytes() == (second / name).read_bytes()
    made = (first / "corpus.jsonl").stat().st_mtime_ns
    assert replicate_collection(TINY_FR, first, 25) == first
    assert (first / "corpus.jsonl").stat().st_mtime_ns == made  # the same request: reused
    replicate_collection(TINY_FR, first, 26)
    assert len(_ids(first)) == 26  # another size: written again


def test_clir_bench_scale_times_every_step_at_every_size(tmp_path: Path) -> None:
    result = run_clir("bench", "scale", "--collection", str(TINY_FR), "--docs", "24", "36",
                      "--topics", "2", "--workdir", str(tmp_path), "--no-anserini",
                      "--runs", "2", "--rerank-topics", "1", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 2") or
            line.startswith("| 3")]  # fmt: skip
    steps = ["clir index", "clir search --threads 1", "clir search --translate dict",
             "clir eval", "clir fuse", "clir rerank score --pretrained use-m3 (1 topics × 100)"]
    # The reranked run is real: the first topic's candidates, rescored by use-m3.
    reranked = read_run(tmp_path / "x36" / "runs" / "use-m3.trec")
    assert reranked and len({row.qid for row in reranked}) == 1
    for size in ("24", "36"):
        named = [row.split(" | ")[1] for row in rows if row.startswith(f"| {size} ")]
        assert all(step in named for step in steps), named
    assert "- clir index: e = " in result.stdout and "the median of its runs" in result.stdout
    # The runs the steps made are real: the fused run ranks the repeated collection's docids.
    fused = (tmp_path / "x36" / "runs" / "fused.trec").read_text(encoding="utf-8").split()
    assert any(REPLICA in word for word in fused)


def test_a_missing_rerank_model_is_one_line_before_any_work(tmp_path: Path) -> None:
    result = run_clir("bench", "scale", "--collection", str(TINY_FR), "--docs", "24",
                      "--workdir", str(tmp_path / "w"), "--rerank-topics", "1",
                      "--rerank-model", str(tmp_path / "none.pt"))  # fmt: skip
    assert_one_line_error(result, "none.pt: no such model file")
    assert not (tmp_path / "w").exists()


def test_growth_exponent_of_a_linear_and_a_constant_step() -> None:
    from clir_toolkit.bench import ProcessFigures
    from clir_toolkit.bench_scale import Step

    steps = [Step(n, "linear", ProcessFigures(n / 100, 0, 0)) for n in (100, 1000, 10000)]
    steps += [Step(n, "flat", ProcessFigures(2.0, 0, 0)) for n in (100, 10000)]
    linear = growth_exponent(steps, "linear")
    assert linear is not None and abs(linear - 1.0) < 1e-9
    assert growth_exponent(steps, "flat") == 0.0
    assert growth_exponent(steps[:1], "linear") is None


def test_a_command_s_peak_memory_is_its_own_not_the_benchmark_s() -> None:
    """A command forked from a benchmark that holds 300 MiB used to report those 300 MiB as
    its own peak (Linux counts the pages a fork copies)."""
    held = bytearray(300 * 1024 * 1024)
    held[:: 4096] = b"\1" * len(held[:: 4096])  # touched: resident
    small = run_process([sys.executable, "-c", "pass"])
    assert small.peak_mib < 100 and len(held) > 0
    grows = "x = bytearray(200 * 1024 * 1024); x[::4096] = b'1' * len(x[::4096])"
    grown = run_process([sys.executable, "-c", grows])
    assert 200 < grown.peak_mib < 300
    with pytest.raises(ResourceError, match="failed .exit 3.: no message"):
        run_process([sys.executable, "-c", "raise SystemExit(3)"])


def test_the_median_of_several_runs_is_taken_figure_by_figure() -> None:
    from clir_toolkit.bench import ProcessFigures
    from clir_toolkit.bench_scale import median_figures

    runs = [ProcessFigures(1.0, 5.0, 300.0), ProcessFigures(9.0, 1.0, 100.0),
            ProcessFigures(2.0, 2.0, 200.0)]  # fmt: skip
    assert median_figures(runs) == ProcessFigures(2.0, 2.0, 200.0)
