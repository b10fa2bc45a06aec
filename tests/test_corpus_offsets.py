"""A corpus read where its documents' lines start (clir_toolkit.formats.corpus_offsets): the
same documents as a pass over the whole file, found once and kept by the corpus' fingerprint."""

from __future__ import annotations

import gzip
import json
import unicodedata
from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import iter_corpus
from clir_toolkit.formats.corpus_offsets import corpus_offsets
from clir_toolkit.rerank.data.documents import load_documents
from tests.conftest import TINY_FR

LINES = [
    {"id": "a", "contents": "premier document"},
    {"id": "b", "title": "Titre", "text": unicodedata.normalize("NFD", "écrit décomposé")},
    {"docid": 7, "contents": "un identifiant numérique"},
    {"id": "d", "contents": "dernier\u2028ligne"},
]


def write_corpus(path: Path, bom: bool = True) -> Path:
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in LINES) + "\n"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def test_the_documents_are_those_a_pass_over_the_corpus_reads(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    offsets = corpus_offsets(corpus, sha256_file(corpus), tmp_path / "cache")
    assert offsets is not None
    every = {doc.id: doc.contents for doc in iter_corpus(corpus)}
    assert offsets.read(["d", "b", "7", "a", "missing"]) == every
    assert every["b"] == "Titre\nécrit décomposé"  # composed, title first, as iter_corpus reads


def test_the_offsets_are_found_once_and_a_changed_corpus_gets_its_own(tmp_path: Path) -> None:
    corpus, cache = write_corpus(tmp_path / "corpus.jsonl"), tmp_path / "cache"
    corpus_offsets(corpus, sha256_file(corpus), cache)
    (made,) = cache.glob("offsets-*.json")
    before = made.stat().st_mtime_ns
    assert corpus_offsets(corpus, sha256_file(corpus), cache) is not None
    assert made.stat().st_mtime_ns == before
    corpus.write_text(json.dumps({"id": "z", "contents": "autre"}) + "\n", encoding="utf-8")
    offsets = corpus_offsets(corpus, sha256_file(corpus), cache)
    assert offsets is not None and offsets.read(["z", "a"]) == {"z": "autre"}
    assert len(list(cache.glob("offsets-*.json"))) == 2


def test_a_damaged_offsets_file_is_found_again_not_trusted(tmp_path: Path) -> None:
    corpus, cache = write_corpus(tmp_path / "corpus.jsonl", bom=False), tmp_path / "cache"
    corpus_offsets(corpus, sha256_file(corpus), cache)
    (made,) = cache.glob("offsets-*.json")
    made.write_text('{"docids": ["a"], "offsets": ', encoding="utf-8")
    offsets = corpus_offsets(corpus, sha256_file(corpus), cache)
    assert offsets is not None and offsets.read(["d"]) == {"d": "dernier\u2028ligne"}


def test_a_gzipped_corpus_is_read_in_one_pass(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps(LINES[0]) + "\n")
    assert corpus_offsets(corpus, sha256_file(corpus), tmp_path / "cache") is None
    assert load_documents(corpus, ["a"], tmp_path / "cache") == {"a": "premier document"}


def test_load_documents_with_a_cache_reads_what_it_reads_without(tmp_path: Path) -> None:
    corpus = TINY_FR / "corpus.jsonl"
    docids = [doc.id for doc in iter_corpus(corpus)][::3]
    assert load_documents(corpus, docids, tmp_path) == load_documents(corpus, docids)
    with pytest.raises(ClirError, match="not in the corpus"):
        load_documents(corpus, ["no-such-doc"], tmp_path)


def test_a_line_that_is_not_the_document_its_offset_names_is_one_error(tmp_path: Path) -> None:
    from clir_toolkit.errors import FormatError
    from clir_toolkit.formats.corpus_offsets import CorpusOffsets

    corpus = write_corpus(tmp_path / "corpus.jsonl", bom=False)
    offsets = CorpusOffsets(corpus, ["a", "b"], [0, 0])  # b's offset is a's line
    with pytest.raises(FormatError, match="holds a, not b") as caught:
        offsets.read(["b"])
    assert "\n" not in str(caught.value)
