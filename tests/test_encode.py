"""Vectors made elsewhere: ``clir encode`` writes a collection's vectors to a file, ``clir
index --dense ENCODER --vectors FILE`` stores them with an index as if encoded there, after
checking them against the collection and the encoder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import assert_one_line_error, run_clir


@pytest.fixture(scope="module")
def collection(tiny_fr_copy: Path) -> Path:
    """A copy of tiny-fr (its vector cache goes under the collection)."""
    return tiny_fr_copy


@pytest.fixture(scope="module")
def encoded(collection: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("vectors") / "vectors.npz"
    result = run_clir("encode", "--collection", str(collection), "--output", str(output),
                      "--device", "cpu")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "wrote the use-m3 vectors of 12 documents (512 dimensions)" in result.stdout
    return output


def _hybrid_run(collection: Path, index: Path, output: Path) -> bytes:
    result = run_clir("search", "--index", str(index), "--topics",
                      str(collection / "topics.dev.tsv"), "--hybrid", "--translate", "dict",
                      "--output", str(output), "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    return output.read_bytes()


def _index(collection: Path, index: Path, *extra: str) -> None:
    result = run_clir("index", "--collection", str(collection), "--index", str(index),
                      "--quiet", *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_imported_vectors_give_the_run_of_vectors_encoded_here(
    collection: Path, encoded: Path, tmp_path: Path
) -> None:
    with np.load(encoded) as data:
        assert sorted(data.files) == ["docids", "encoder", "fingerprint", "vectors"]
        assert data["vectors"].shape == (12, 512) and str(data["encoder"]) == "use-m3"
    _index(collection, tmp_path / "here", "--dense", "use-m3")
    _index(collection, tmp_path / "imported", "--dense", "use-m3", "--vectors", str(encoded))
    here = _hybrid_run(collection, tmp_path / "here", tmp_path / "here.trec")
    assert _hybrid_run(collection, tmp_path / "imported", tmp_path / "imported.trec") == here


def test_vectors_added_to_an_existing_index_and_in_another_order(
    collection: Path, encoded: Path, tmp_path: Path
) -> None:
    """A file from other tools: no encoder named, the documents in another order, rows not
    of unit length (scaled to it on import). The index records the encoder --dense names."""
    with np.load(encoded) as data:
        docids, vectors = list(data["docids"]), data["vectors"]
    shuffled = tmp_path / "other-tool.npz"
    np.savez(shuffled, docids=np.array(docids[::-1]), vectors=3.0 * vectors[::-1])
    _index(collection, tmp_path / "here", "--dense", "use-m3")
    _index(collection, tmp_path / "idx")
    result = run_clir("index", "--collection", str(collection), "--index", str(tmp_path / "idx"),
                      "--dense", "use-m3", "--vectors", str(shuffled))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "added the vectors of 12 documents (use-m3, 512 dimensions)" in result.stdout
    here = _hybrid_run(collection, tmp_path / "here", tmp_path / "here.trec").decode()
    there = _hybrid_run(collection, tmp_path / "idx", tmp_path / "there.trec").decode()
    rows = [line.split() for line in here.splitlines()]
    imported = [line.split() for line in there.splitlines()]
    assert [row[:4] for row in imported] == [row[:4] for row in rows]
    assert [float(row[4]) for row in imported] == pytest.approx([float(r[4]) for r in rows])


def _damaged(encoded: Path, path: Path, how: str) -> None:
    with np.load(encoded) as data:
        docids, vectors = list(data["docids"]), data["vectors"].copy()
        made_by = {"encoder": data["encoder"], "fingerprint": data["fingerprint"]}
    if how == "missing":
        docids, vectors = docids[:-1], vectors[:-1]
    elif how == "unknown":
        docids, vectors = [*docids, "not-a-doc"], np.vstack([vectors, vectors[:1]])
    elif how == "duplicate":
        docids = [*docids[:-1], docids[0]]
    elif how == "dimension":
        vectors = vectors[:, :100]
    elif how == "nan":
        vectors[3, 5] = np.nan
    elif how == "encoder":
        made_by = {"encoder": np.array("e5-small"), "fingerprint": np.array("e5 0.1")}
    if how == "text":
        path.write_text("not an archive\n", encoding="utf-8")
    else:
        np.savez(path, docids=np.array(docids), vectors=vectors, **made_by)


@pytest.mark.parametrize(
    ("how", "fragments"),
    [
        ("missing", ["1 document of", "without a vector (first: ", "nothing was changed"]),
        ("unknown", ["1 vector of documents not in it (first: not-a-doc)"]),
        ("duplicate", ["appears twice"]),
        ("dimension", ["vectors of shape (12, 100)", "use-m3 makes vectors of 512 dimensions"]),
        ("nan", ["is not finite"]),
        ("encoder", ["holds vectors of e5-small (e5 0.1); --dense names use-m3"]),
        ("text", ["unreadable vectors file"]),
    ],
)
def test_vectors_that_do_not_fit_are_one_line_and_nothing_is_written(
    collection: Path, encoded: Path, tmp_path: Path, how: str, fragments: list[str]
) -> None:
    vectors = tmp_path / f"{how}.npz"
    _damaged(encoded, vectors, how)
    index = tmp_path / "idx"
    result = run_clir("index", "--collection", str(collection), "--index", str(index),
                      "--dense", "use-m3", "--vectors", str(vectors))  # fmt: skip
    assert_one_line_error(result, f"{vectors}: ", *fragments, "clir encode --collection")
    assert not index.exists()


def test_vectors_without_the_encoder_that_made_them_are_refused(
    collection: Path, encoded: Path, tmp_path: Path
) -> None:
    result = run_clir("index", "--collection", str(collection), "--index",
                      str(tmp_path / "idx"), "--vectors", str(encoded))  # fmt: skip
    assert_one_line_error(result, "--vectors needs --dense ENCODER", status=2)
    assert not (tmp_path / "idx").exists()
