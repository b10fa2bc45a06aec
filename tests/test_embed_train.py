"""Training aligned bilingual embeddings end to end on two small synthetic "languages".

Both languages are written by one Markov chain over 40 word types (each word has three
favourite successors): English words are ``w0``…``w39``, words of the other language
(``qaa``, ISO 639's code for local use) ``x0``…``x39``, and the two texts are *different*
samples of the chain. Skip-gram therefore learns spaces of the same shape in both
languages without ever seeing a translated sentence, and the alignment
must find that shape from the seed dictionary, as with real comparable text.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.translate.embed_cache import cached_text
from clir_toolkit.translate.embed_text import tokenizer_for
from clir_toolkit.translate.embed_train import (
    EmbedReport,
    format_report,
    report_path,
    train_bilingual_embeddings,
)
from clir_toolkit.translate.seed_pairs import seed_pairs, split_pairs

WORDS = 40


def markov_text(path: Path, prefix: str, sample_seed: int, sentences: int = 2000) -> Path:
    chain = np.random.default_rng(0)  # the same chain for both languages
    successors = [chain.choice(WORDS, 3, replace=False) for _ in range(WORDS)]
    rng = np.random.default_rng(sample_seed)
    lines = []
    for _ in range(sentences):
        word = int(rng.integers(WORDS))
        sentence = [word]
        for _ in range(9):
            if rng.random() < 0.9:
                word = int(successors[word][rng.choice(3, p=[0.6, 0.3, 0.1])])
            else:
                word = int(rng.integers(WORDS))
            sentence.append(word)
        lines.append(" ".join(f"{prefix}{i}" for i in sentence))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    folder = tmp_path_factory.mktemp("texts")
    english = markov_text(folder / "en.txt", "W", sample_seed=1)  # upper case: tokens lower it
    other = markov_text(folder / "qaa.txt", "x", sample_seed=2)
    dictionary = folder / "en-qaa.tsv"
    dictionary.write_text(
        "".join(f"w{i}\tx{i}\n" for i in range(WORDS)) + "hard disk\tx1 x2\n", encoding="utf-8"
    )
    return english, other, dictionary


def train(texts: tuple[Path, Path, Path], out: Path, **options: object) -> EmbedReport:
    english, other, dictionary = texts
    settings: dict = dict(
        source_text=english,
        target_text=other,
        dictionary=str(dictionary),
        dim=20,
        epochs=10,
        min_count=1,
        window=2,
        test_fraction=0.3,
        refine=1,
        use_cache=False,
        progress=False,
    )
    settings.update(options)
    return train_bilingual_embeddings("qaa", out, **settings)


@pytest.fixture(scope="module")
def trained(
    texts: tuple[Path, Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, EmbedReport]:
    out = tmp_path_factory.mktemp("vec") / "en-qaa.vec"
    return out, train(texts, out)


def test_the_vec_file_loads_into_the_embedding_translator(
    trained: tuple[Path, EmbedReport],
) -> None:
    from clir_toolkit.translate.embedding import EmbeddingSpace

    out, _ = trained
    space = EmbeddingSpace.load(out, "en", "qaa")
    assert set(space.source_index) == {f"w{i}" for i in range(WORDS)}
    assert set(space.target_words) == {f"x{i}" for i in range(WORDS)}
    norms = np.linalg.norm(space.source_vectors, axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)
    first_line = out.read_text(encoding="utf-8").splitlines()[0]
    assert first_line == f"{2 * WORDS} 20"


def test_held_out_words_are_translated_far_better_than_chance(
    trained: tuple[Path, EmbedReport],
) -> None:
    _, report = trained
    assert report.seed_pairs == WORDS  # the two-word "hard disk" entry is not a seed pair
    assert report.train_pairs + report.test_pairs == WORDS
    assert report.test_words == report.test_pairs >= 5
    chance = 1 / WORDS
    assert report.precision["csls"][1] >= 10 * chance
    assert report.precision["nn"][5] >= report.precision["nn"][1]


def test_the_report_is_written_beside_the_vectors(trained: tuple[Path, EmbedReport]) -> None:
    out, report = trained
    saved = json.loads(report_path(out).read_text(encoding="utf-8"))
    assert saved["vocabulary"] == {"en": WORDS, "qaa": WORDS}
    assert saved["corpus"]["en"] == {"lines": 2000, "tokens": 20000}
    assert saved["precision"]["csls"]["1"] == report.precision["csls"][1]
    summary = format_report(report)
    assert "CSLS" in summary and "held-out" in summary


def test_the_same_seed_gives_an_identical_file(
    texts: tuple[Path, Path, Path], trained: tuple[Path, EmbedReport], tmp_path: Path
) -> None:
    first, _ = trained
    again = tmp_path / "again.vec"
    train(texts, again)
    assert again.read_bytes() == first.read_bytes()
    other_seed = tmp_path / "seed2.vec"
    train(texts, other_seed, seed=2)
    assert other_seed.read_bytes() != first.read_bytes()


def test_too_few_seed_pairs_is_a_usage_error_that_leaves_nothing(
    texts: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    useless = tmp_path / "useless.tsv"
    useless.write_text("nothing\tx1\n", encoding="utf-8")
    out = tmp_path / "none.vec"
    with pytest.raises(UsageError, match="training pair"):
        train(texts, out, dictionary=str(useless))
    assert not out.exists() and not report_path(out).exists()


def test_a_language_without_a_default_dictionary_needs_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--dict"):
        train_bilingual_embeddings("qaa", tmp_path / "x.vec", progress=False)


def test_a_missing_text_file_is_named(texts: tuple[Path, Path, Path], tmp_path: Path) -> None:
    with pytest.raises(ClirError, match="missing.txt") as missing:
        train(texts, tmp_path / "x.vec", target_text=tmp_path / "missing.txt")
    assert not isinstance(missing.value, UsageError)  # a missing input: exit 1, not 2


def test_cached_vectors_give_the_same_file_and_english_is_trained_once(
    texts: tuple[Path, Path, Path], trained: tuple[Path, EmbedReport], tmp_path: Path
) -> None:
    uncached, _ = trained
    cache = tmp_path / "cache"
    first = train(texts, tmp_path / "first.vec", use_cache=True, cache_dir=cache)
    again = train(texts, tmp_path / "again.vec", use_cache=True, cache_dir=cache)
    assert first.reused_vectors == [] and again.reused_vectors == ["en", "qaa"]
    assert "reused from the cache" in format_report(again)
    for out in ("first.vec", "again.vec"):
        assert (tmp_path / out).read_bytes() == uncached.read_bytes()
    # Another target text: only the English side is reused.
    english, _, dictionary = texts
    other = markov_text(tmp_path / "yy.txt", "x", sample_seed=3)
    third = train((english, other, dictionary), tmp_path / "third.vec", use_cache=True,
                  cache_dir=cache)
    assert third.reused_vectors == ["en"]
    # Other settings are other entries.
    wider = train(texts, tmp_path / "wider.vec", use_cache=True, cache_dir=cache, dim=24)
    assert wider.reused_vectors == []


def test_a_damaged_cache_entry_is_trained_again(
    texts: tuple[Path, Path, Path], trained: tuple[Path, EmbedReport], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    train(texts, tmp_path / "first.vec", use_cache=True, cache_dir=cache)
    entries = sorted(cache.glob("skipgram-*.npz"))
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(b"not a numpy archive")
    report = train(texts, tmp_path / "again.vec", use_cache=True, cache_dir=cache)
    assert report.reused_vectors == []
    assert (tmp_path / "again.vec").read_bytes() == trained[0].read_bytes()


def test_collected_text_is_cached_until_a_source_changes(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "a", "contents": "Une ligne de texte"}\n', encoding="utf-8")
    cache = tmp_path / "cache"
    first = cached_text("qaa", [corpus], None, cache)
    assert first.read_text(encoding="utf-8") == "Une ligne de texte\n"
    assert cached_text("qaa", [corpus], None, cache) == first
    corpus.write_text('{"id": "a", "contents": "Deux lignes\\nde texte"}\n', encoding="utf-8")
    changed = cached_text("qaa", [corpus], None, cache)
    assert changed != first and not first.exists()  # the superseded entry is removed
    assert changed.read_text(encoding="utf-8") == "Deux lignes\nde texte\n"


def test_a_cache_that_cannot_be_written_is_skipped(
    texts: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    english, other, dictionary = texts
    corpus = tmp_path / "xx.jsonl"  # the "qaa" side is collected from a corpus, then cached
    corpus.write_text(
        "".join(
            json.dumps({"id": str(i), "contents": line}) + "\n"
            for i, line in enumerate(other.read_text(encoding="utf-8").splitlines())
        ),
        encoding="utf-8",
    )
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be\n")
    out = tmp_path / "blocked.vec"
    report = train(
        (english, other, dictionary),
        out,
        target_text=None,
        target_corpora=[corpus],
        man_root=None,
        use_cache=True,
        cache_dir=blocked,
    )
    assert report.reused_vectors == [] and report.vocabulary["qaa"] == WORDS
    assert out.is_file() and not any(tmp_path.glob("**/text-xx-*.txt"))


def test_the_split_is_by_english_word_and_stable() -> None:
    pairs = [(f"word{i}", f"mot{i}{suffix}") for i in range(200) for suffix in "ab"]
    train_pairs, test_pairs = split_pairs(pairs, 0.25)
    assert split_pairs(pairs, 0.25) == (train_pairs, test_pairs)
    assert {s for s, _ in train_pairs}.isdisjoint({s for s, _ in test_pairs})
    assert 60 <= len(test_pairs) <= 140  # about a quarter of 400 pairs, two per word


def test_seed_pairs_keep_single_words_known_on_both_sides() -> None:
    from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary

    dictionary = BilingualDictionary(
        {
            "file": ["fichier", "l'archive"],
            "hard disk": ["disque dur"],
            "copy": ["copie"],
            "42": ["42"],
        }
    )
    tokenize, _ = tokenizer_for("fr")
    pairs = seed_pairs(
        dictionary, ["file", "hard disk", "copy", "42"], ["fichier", "archive", "42"], tokenize
    )
    # "l'archive" is two French tokens; "copie" has no vector; numbers are not words.
    assert pairs == [("file", "fichier")]


def test_tokenizers() -> None:
    english, _ = tokenizer_for("en")
    assert english("The user's E-mail, twice.") == ["the", "user's", "e-mail", "twice"]
    french, _ = tokenizer_for("fr")
    assert french("L'option « Copier » 2 fois") == ["l", "option", "copier", "2", "fois"]
    chinese, description = tokenizer_for("zh")
    assert "jieba" in description
    assert "文件" in chinese("复制文件到目录")


def test_japanese_is_segmented_into_words() -> None:
    japanese, description = tokenizer_for("ja")
    tokens = japanese("ファイルをコピーする")
    assert "MeCab" in description
    assert "ファイル" in tokens and "コピー" in tokens
