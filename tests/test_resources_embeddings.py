"""fastText / MUSE .vec files: reading, filtering, normalising, writing, errors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.resources.embeddings import Embeddings, load_vec, save_vec

FIXTURES = Path(__file__).parent / "fixtures" / "resources"


def test_load_vec_with_header() -> None:
    embeddings = load_vec(FIXTURES / "tiny.vec")
    assert embeddings.words == ["file", "fichier", "copy", "copier"]
    assert embeddings.index == {"file": 0, "fichier": 1, "copy": 2, "copier": 3}
    assert embeddings.vectors.dtype == np.float32
    assert embeddings.vectors.shape == (4, 3)
    assert embeddings.dim == 3
    assert len(embeddings) == 4
    assert "copy" in embeddings and "absent" not in embeddings
    np.testing.assert_array_equal(embeddings.vector("copy"), [0, 3, 4])
    np.testing.assert_array_equal(embeddings.vector("fichier"), np.array([0.9, 0.1, 0], np.float32))


def test_load_vec_without_header() -> None:
    embeddings = load_vec(FIXTURES / "tiny-noheader.vec")
    assert embeddings.words == ["file", "copy"]
    assert embeddings.dim == 3


def test_limit_and_vocabulary() -> None:
    assert load_vec(FIXTURES / "tiny.vec", limit=2).words == ["file", "fichier"]
    assert load_vec(FIXTURES / "tiny.vec", vocabulary={"copy", "file"}).words == ["file", "copy"]
    assert load_vec(FIXTURES / "tiny.vec", limit=1, vocabulary={"copier", "copy"}).words == ["copy"]
    empty = load_vec(FIXTURES / "tiny.vec", limit=0)
    assert empty.vectors.shape == (0, 3)
    with pytest.raises(UsageError, match="limit"):
        load_vec(FIXTURES / "tiny.vec", limit=-1)


def test_unknown_word_raises_key_error() -> None:
    with pytest.raises(KeyError, match="no vector for 'absent'"):
        load_vec(FIXTURES / "tiny.vec").vector("absent")


def test_normalised_vectors_have_unit_length() -> None:
    embeddings = load_vec(FIXTURES / "tiny.vec")
    unit = embeddings.normalised()
    norms = np.linalg.norm(unit.vectors, axis=1)
    np.testing.assert_allclose(norms, [1, 1, 1, 0], rtol=1e-6)  # the zero vector stays zero
    np.testing.assert_allclose(unit.vector("copy"), [0, 0.6, 0.8], rtol=1e-6)
    assert unit.words == embeddings.words
    np.testing.assert_array_equal(embeddings.vector("copy"), [0, 3, 4])  # original untouched


def test_duplicate_words_keep_their_first_vector(tmp_path: Path) -> None:
    path = tmp_path / "dup.vec"
    path.write_text("3 2\nfile 1 0\nfile 0 1\ncopy 1 1\n", "utf-8")
    embeddings = load_vec(path)
    assert embeddings.words == ["file", "copy"]
    np.testing.assert_array_equal(embeddings.vector("file"), [1, 0])


@pytest.mark.parametrize(
    ("content", "line", "message"),
    [
        ("2 3\nfile 1 0 0\ncopy 1 0\n", 3, "2 numbers after 'copy', expected 3"),
        ("file 1 0\ncopy 1 0 0\n", 2, "3 numbers after 'copy', expected 2"),
        ("2 2\nfile 1 zero\ncopy 1 0\n", 2, "'zero' is not a number"),
        ("2 2\nfile 1 inf\ncopy 1 0\n", 2, "infinite, NaN or too large value"),
        ("2 2\nfile 1 1e300\ncopy 1 0\n", 2, "infinite, NaN or too large value"),
        ("1 2\nfile\n", 2, "0 numbers after 'file', expected 2"),
        ("2 2\nfile 1 0\n\ncopy 1 0\n", 3, "empty line"),
    ],
)
def test_bad_lines_name_file_and_line(
    tmp_path: Path, content: str, line: int, message: str
) -> None:
    path = tmp_path / "bad.vec"
    path.write_text(content, "utf-8")
    with pytest.raises(FormatError, match="^" + re.escape(f"{path}:{line}: {message}")):
        load_vec(path)


def test_header_count_must_match(tmp_path: Path) -> None:
    path = tmp_path / "truncated.vec"
    path.write_text("3 2\nfile 1 0\ncopy 1 0\n", "utf-8")
    with pytest.raises(FormatError, match="header announces 3 vectors but the file has 2"):
        load_vec(path)
    assert load_vec(path, limit=2).words == ["file", "copy"]  # reading a prefix is fine


def test_save_and_load_round_trip_exactly(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(5, 8)).astype(np.float32)
    words = ["file", "fichier", "l'ordinateur", "电脑", "copy"]
    path = tmp_path / "out" / "round.vec"
    save_vec(path, words, vectors)
    assert path.read_text("utf-8").splitlines()[0] == "5 8"
    loaded = load_vec(path)
    assert loaded.words == words
    np.testing.assert_array_equal(loaded.vectors, vectors)


def test_save_refuses_what_vec_cannot_hold(tmp_path: Path) -> None:
    path = tmp_path / "out.vec"
    path.write_text("previous\n", "utf-8")
    with pytest.raises(UsageError, match="white space"):
        save_vec(path, ["hard disk"], np.ones((1, 2)))
    with pytest.raises(UsageError, match="not unique"):
        save_vec(path, ["file", "file"], np.ones((2, 2)))
    with pytest.raises(UsageError, match="infinite or NaN"):
        save_vec(path, ["file"], np.array([[1.0, np.nan]]))
    with pytest.raises(UsageError, match="2 words but a vector matrix of shape"):
        save_vec(path, ["file", "copy"], np.ones((3, 2)))
    assert path.read_text("utf-8") == "previous\n"


def test_from_arrays() -> None:
    embeddings = Embeddings.from_arrays(["a", "b"], np.eye(2))
    assert embeddings.index == {"a": 0, "b": 1}
    assert embeddings.vectors.dtype == np.float32
    with pytest.raises(ValueError, match="unique"):
        Embeddings.from_arrays(["a", "a"], np.eye(2))
