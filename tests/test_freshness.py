"""The one freshness rule: a product is remade when the code it depends on changes, and only
then — not for a docstring or a comment, not for a module it does not import.

Every test edits a copy of the package in a temporary directory, which the rule is pointed
at (``freshness.PACKAGE``); the real source is never touched.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clir_toolkit import freshness
from clir_toolkit.experiments.rerank_training import MODEL_CODE
from clir_toolkit.experiments.search_runner import RUN_CODE
from clir_toolkit.freshness import (
    code_fingerprint,
    digest,
    is_fresh,
    mark_fresh,
    source_fingerprint,
)


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the toolkit's source, which the freshness rule reads instead of the real one."""
    copy = tmp_path / "src" / "clir_toolkit"
    shutil.copytree(freshness.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(freshness, "PACKAGE", copy)
    return copy


def replace_in(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def edit_docs(path: Path) -> None:
    """Reword the module's docstring and add a comment: what a reader sees, not the code."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith('"""'), path
    path.write_text('"""Reworded. ' + text[3:] + "\n# A comment added.\n", encoding="utf-8")


def edit_code(path: Path) -> None:
    """A change to what the module does when it runs."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\nEDITED_BY_A_TEST = 1\n")


def product(tmp_path: Path, name: str, code: tuple[str, ...]) -> tuple[Path, str]:
    """A file made by ``code``, marked fresh, and its key."""
    path = tmp_path / name
    path.write_text("made\n", encoding="utf-8")
    key = digest({"inputs": name})
    mark_fresh(path, key, code=code)
    assert is_fresh(path, key, code)
    return path, key


def test_a_docstring_or_comment_edit_keeps_runs_and_models_fresh(
    package: Path, tmp_path: Path
) -> None:
    run, run_key = product(tmp_path, "run.trec", RUN_CODE)
    model, model_key = product(tmp_path, "model.pt", MODEL_CODE)
    whole = source_fingerprint(package)
    for module in ("search/searcher.py", "rerank/losses/sosl.py", "analysis.py"):
        edit_docs(package / module)
    replace_in(package / "rerank/sentence/tuned.py", "def ", "def \\\n")  # the layout, not the code
    assert source_fingerprint(package) == whole
    assert is_fresh(run, run_key, RUN_CODE)
    assert is_fresh(model, model_key, MODEL_CODE)


def test_a_code_change_makes_stale_only_what_imports_the_module(
    package: Path, tmp_path: Path
) -> None:
    run, run_key = product(tmp_path, "run.trec", RUN_CODE)
    model, model_key = product(tmp_path, "model.pt", MODEL_CODE)
    edit_code(package / "cli" / "compare.py")  # neither imports the command line
    assert is_fresh(run, run_key, RUN_CODE) and is_fresh(model, model_key, MODEL_CODE)
    edit_code(package / "rerank" / "losses" / "sosl.py")  # a loss: models, not BM25 runs
    assert is_fresh(run, run_key, RUN_CODE)
    assert not is_fresh(model, model_key, MODEL_CODE)
    edit_code(package / "search" / "searcher.py")  # imported by the run's module, indirectly
    assert not is_fresh(run, run_key, RUN_CODE)


def test_a_product_that_declares_nothing_depends_on_every_module(
    package: Path, tmp_path: Path
) -> None:
    undeclared = tmp_path / "undeclared.tsv"
    undeclared.write_text("made\n", encoding="utf-8")
    key = digest({"inputs": "undeclared"})
    mark_fresh(undeclared, key)
    edit_docs(package / "cli" / "compare.py")
    assert is_fresh(undeclared, key)
    edit_code(package / "cli" / "compare.py")
    assert not is_fresh(undeclared, key)


def test_imports_that_only_type_checkers_read_are_not_dependencies(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nfrom . import b\nif TYPE_CHECKING:\n    import pkg.c\n"
    )
    (package / "b.py").write_text("def f():\n    from pkg.d import g\n")
    for name in ("c", "d", "e"):
        (package / f"{name}.py").write_text("x = 1\n")
    before = code_fingerprint(["pkg.a"], package)
    for name in ("c", "e"):
        edit_code(package / f"{name}.py")
    assert code_fingerprint(["pkg.a"], package) == before
    edit_code(package / "d.py")  # imported inside a function of a module a imports
    assert code_fingerprint(["pkg.a"], package) != before


def test_a_sidecar_of_an_older_format_is_not_fresh(tmp_path: Path) -> None:
    run, key = product(tmp_path, "run.trec", RUN_CODE)
    sidecar = tmp_path / "run.trec.json"
    record = json.loads(sidecar.read_text(encoding="utf-8"))
    sidecar.write_text(json.dumps({**record, "format": "clir-toolkit-fresh/2"}), "utf-8")
    assert not is_fresh(run, key, RUN_CODE)


def test_the_dictionary_cache_is_remade_when_its_parser_or_source_changes(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clir_toolkit.resources.dictionary import freedict
    from tests.test_resources_dictionary import ENG_FRA, write_dictd

    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "clir-data"))
    parsed: list[str] = []
    parse = freedict._freedict_phrases

    def counting(pair: str, directory: Path) -> dict[str, list[str]]:
        parsed.append(pair)
        return parse(pair, directory)

    monkeypatch.setattr(freedict, "_freedict_phrases", counting)

    def load() -> None:
        freedict._load_freedict.cache_clear()
        freedict.load_freedict("eng-fra", tmp_path / "dict")

    write_dictd(tmp_path / "dict", "eng-fra", ENG_FRA)
    load()
    load()
    assert len(parsed) == 1  # cached
    edit_docs(package / "resources" / "dictionary" / "freedict.py")
    load()
    assert len(parsed) == 1  # a docstring is not the parser
    edit_code(package / "resources" / "dictionary" / "dictd.py")  # read by the parser
    load()
    assert len(parsed) == 2
    write_dictd(tmp_path / "dict", "eng-fra", [*ENG_FRA, "mouse /maʊs/\nsouris\n"])
    load()
    assert len(parsed) == 3
    freedict._load_freedict.cache_clear()


def test_collected_text_is_collected_again_when_its_code_changes(
    package: Path, tmp_path: Path
) -> None:
    from clir_toolkit.translate.embed_cache import cached_text

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "contents": "Une ligne de texte"}\n', encoding="utf-8")
    cache = tmp_path / "cache"
    first = cached_text("qaa", [corpus], None, cache)
    edit_docs(package / "translate" / "embed_text.py")
    assert cached_text("qaa", [corpus], None, cache) == first
    edit_code(package / "translate" / "embed_text.py")
    again = cached_text("qaa", [corpus], None, cache)
    assert again != first and not first.exists()  # the superseded entry is removed
    assert again.read_text(encoding="utf-8") == "Une ligne de texte\n"


def test_encoded_documents_are_encoded_again_when_the_encoding_code_changes(
    package: Path, tmp_path: Path
) -> None:
    from clir_toolkit.rerank.data.documents import DocumentEncoder
    from clir_toolkit.rerank.data.vocabulary import Vocabulary
    from tests.conftest import TINY_FR

    vocabulary = Vocabulary.build([["ls", "fichiers"]], "fr")
    cache = tmp_path / "cache"

    def cache_path() -> Path:
        return DocumentEncoder(TINY_FR / "corpus.jsonl", vocabulary, 12, cache).cache_path

    first = cache_path()
    edit_docs(package / "rerank" / "data" / "vocabulary.py")
    edit_code(package / "rerank" / "losses" / "sosl.py")  # not how documents are encoded
    assert cache_path() == first
    edit_code(package / "rerank" / "data" / "vocabulary.py")
    assert cache_path() != first


def test_the_parse_memo_is_checked_against_the_source_and_a_damaged_one_ignored(
    package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parsed modules are remembered on disk (a dictionary load would otherwise parse a
    dozen modules each time); a memo of other code, or a damaged one, is never trusted."""
    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "data"))
    freshness._code.cache_clear()
    expected = code_fingerprint(RUN_CODE)
    memos = sorted((tmp_path / "data" / "cache" / "code").glob("*.json"))
    assert len(memos) > 10  # one per module of the run's code
    freshness._code.cache_clear()
    assert code_fingerprint(RUN_CODE) == expected  # read back from the memos
    searcher = tmp_path / "data" / "cache" / "code" / "clir_toolkit.search.searcher.json"
    searcher.write_text("{not json", encoding="utf-8")
    freshness._code.cache_clear()
    assert code_fingerprint(RUN_CODE) == expected
    edit_code(package / "search" / "searcher.py")  # the memo now describes other code
    freshness._code.cache_clear()
    assert code_fingerprint(RUN_CODE) != expected


def test_an_edited_document_makes_the_index_and_its_vectors_stale(tmp_path: Path) -> None:
    """The collection's fingerprint covers its documents, not its manifest alone: one
    letter changed (the corpus's size unchanged) and the index is no longer the
    collection's: `clir index --dense` indexes the new text again with its vectors instead of
    adding them to the old postings (and `clir run` rebuilds what was made from it)."""
    import os

    from clir_toolkit.collection import CACHE_DIR, CORPUS_HASH, open_collection
    from clir_toolkit.index import is_index_of
    from tests.conftest import TINY_FR, run_clir

    collection = tmp_path / "tiny-fr"
    shutil.copytree(TINY_FR, collection, ignore=shutil.ignore_patterns(".cache"))
    index = tmp_path / "index"
    assert run_clir("index", "--collection", str(collection), "--index", str(index)).returncode == 0
    assert is_index_of(index, collection)
    before = open_collection(collection).fingerprint()
    assert (collection / CACHE_DIR / CORPUS_HASH).is_file()
    assert open_collection(collection).fingerprint() == before  # read back from the cache

    corpus = collection / "corpus.jsonl"
    text = corpus.read_text(encoding="utf-8")
    corpus.write_text(text.replace("afficher", "affichez", 1), encoding="utf-8")
    stat = corpus.stat()
    os.utime(corpus, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert corpus.stat().st_size == len(text.encode("utf-8"))
    assert open_collection(collection).fingerprint() != before
    assert not is_index_of(index, collection)
    added = run_clir("index", "--collection", str(collection), "--index", str(index), "--dense")
    assert added.returncode == 0, added.stderr
    assert "indexed 12 documents" in added.stdout and "with use-m3 vectors" in added.stdout
    assert is_index_of(index, collection)
