"""The reranker's data: tokens, vocabularies, the document tensor cache, training examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.formats import Qrel, RunRow
from clir_toolkit.rerank.data import tokens
from clir_toolkit.rerank.data.documents import DocumentEncoder, load_documents
from clir_toolkit.rerank.data.examples import (
    Example,
    epoch_pairs,
    index_examples,
    parallel_examples,
    read_parallel_tsv,
    relevance_examples,
)
from clir_toolkit.rerank.data.tokens import rerank_tokens
from clir_toolkit.rerank.data.vocabulary import OOV_ID, PAD_ID, Vocabulary
from tests.conftest import TINY_FR

# --- tokens ----------------------------------------------------------------------------------


def test_tokens_are_lower_case_words_without_stop_words() -> None:
    assert rerank_tokens("fr", "Afficher le CONTENU d'un répertoire.") == [
        "afficher",
        "contenu",
        "répertoire",
    ]
    assert rerank_tokens("en", "How to list the Directory contents") == [
        "list",
        "directory",
        "contents",
    ]


def test_chinese_is_segmented_like_the_index() -> None:
    from clir_toolkit.analysis import analyzer_for, python_tokens

    text = "复制文件和目录"
    assert rerank_tokens("zh", text) == python_tokens(analyzer_for("zh"), text)
    assert "文件" in rerank_tokens("zh", text)


def test_unspaced_scripts_become_character_bigrams() -> None:
    # Kana in a French text (Japanese itself is segmented by MeCab, as the index does it).
    assert rerank_tokens("fr", "コピー cp") == ["コピ", "ピー", "cp"]


# --- vocabulary ------------------------------------------------------------------------------


def test_vocabulary_keeps_words_seen_min_count_times_and_maps_the_rest_to_oov() -> None:
    texts = [["chat", "chien", "chat"], ["chien", "souris"], ["chat"]]
    vocab = Vocabulary.build(texts, "fr", min_count=2)
    assert vocab.words == ["<pad>", "<oov>", "chat", "chien"]  # by frequency, then name
    assert "souris" not in vocab
    assert vocab.encode(["chien", "souris", "chat"], 5) == [3, OOV_ID, 2, PAD_ID, PAD_ID]
    assert vocab.encode(["chat"] * 10, 3) == [2, 2, 2]  # truncated to max_len


def test_vocabulary_max_size_keeps_the_most_frequent_words() -> None:
    vocab = Vocabulary.build([["a", "b", "b", "c", "c", "c"]], "fr", max_size=2)
    assert vocab.words[2:] == ["c", "b"]
    assert len(vocab) == 4


def test_vocabulary_round_trips_through_json(tmp_path: Path) -> None:
    vocab = Vocabulary.build([["été", "hiver", "été"]], "fr")
    path = tmp_path / "vocab.json"
    vocab.save(path)
    again = Vocabulary.load(path)
    assert again.words == vocab.words and again.language == "fr"
    assert again.fingerprint() == vocab.fingerprint()
    assert Vocabulary.build([["hiver"]], "fr").fingerprint() != vocab.fingerprint()


def test_a_broken_vocabulary_file_is_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "vocab.json"
    path.write_text(json.dumps({"language": "fr", "words": ["a", "b"]}), encoding="utf-8")
    with pytest.raises(FormatError, match="vocab.json"):
        Vocabulary.load(path)


# --- documents and the tensor cache ----------------------------------------------------------


def test_load_documents_reads_only_the_wanted_ones() -> None:
    texts = load_documents(TINY_FR / "corpus.jsonl", ["cp.1", "ls.1"])
    assert set(texts) == {"cp.1", "ls.1"}
    assert texts["cp.1"].startswith("cp — copier")


def test_a_document_missing_from_the_corpus_is_an_error() -> None:
    with pytest.raises(ClirError, match=r"corpus.jsonl: 1 document.*nope\.1"):
        load_documents(TINY_FR / "corpus.jsonl", ["cp.1", "nope.1"])


real_tokens = tokens.rerank_tokens  # the tokeniser itself, before any test wraps it


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    copy = tmp_path / "tiny-fr"
    shutil.copytree(TINY_FR, copy)
    return copy


@pytest.fixture
def token_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each text the real tokeniser is asked to tokenise."""
    calls: list[str] = []
    real = tokens.rerank_tokens

    def counting(language: str, text: str) -> list[str]:
        calls.append(text)
        return real(language, text)

    monkeypatch.setattr(tokens, "rerank_tokens", counting)
    return calls


def _vocab() -> Vocabulary:
    texts = load_documents(TINY_FR / "corpus.jsonl", ["ls.1", "cp.1", "rm.1"])
    return Vocabulary.build([real_tokens("fr", t) for t in texts.values()], "fr")


def test_the_tensor_cache_is_reused_without_tokenising_again(
    collection: Path, token_calls: list[str]
) -> None:
    vocab = _vocab()
    cache = collection / ".cache" / "rerank"
    first = DocumentEncoder(collection / "corpus.jsonl", vocab, 12, cache)
    rows, ids = first.encode(["ls.1", "cp.1", "grep.1"])
    assert len(token_calls) == 3
    assert ids.shape == (3, 12)
    assert first.cache_path.is_file()

    again = DocumentEncoder(collection / "corpus.jsonl", vocab, 12, cache)
    rows2, ids2 = again.encode(["cp.1", "ls.1"])
    assert len(token_calls) == 3  # nothing tokenised the second time
    assert ids2[rows2["ls.1"]].tolist() == ids[rows["ls.1"]].tolist()
    assert ids[rows["ls.1"]].tolist()[0] == vocab.id("ls")

    again.encode(["ls.1", "rm.1"])  # only the new document is read and tokenised
    assert len(token_calls) == 4


def test_the_cache_key_changes_with_the_vocabulary_the_length_and_the_corpus(
    collection: Path, token_calls: list[str]
) -> None:
    vocab = _vocab()
    cache = collection / ".cache" / "rerank"
    corpus = collection / "corpus.jsonl"
    paths = {DocumentEncoder(corpus, vocab, 12, cache).cache_path}
    paths.add(DocumentEncoder(corpus, vocab, 20, cache).cache_path)
    paths.add(DocumentEncoder(corpus, Vocabulary.build([["x"]], "fr"), 12, cache).cache_path)
    DocumentEncoder(corpus, vocab, 12, cache).encode(["ls.1"])
    with corpus.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"id": "new.1", "contents": "nouveau"}) + "\n")
    changed = DocumentEncoder(corpus, vocab, 12, cache)
    paths.add(changed.cache_path)
    assert len(paths) == 4
    calls_before = len(token_calls)
    changed.encode(["ls.1"])
    assert len(token_calls) == calls_before + 1  # the edited corpus is tokenised again


def test_given_tokens_are_used_instead_of_reading_the_corpus(
    collection: Path, token_calls: list[str]
) -> None:
    vocab = Vocabulary.build([["alpha"]], "fr")
    encoder = DocumentEncoder(collection / "corpus.jsonl", vocab, 4, collection / "cache")
    rows, ids = encoder.encode(["ls.1"], tokens={"ls.1": ["alpha", "zzz"]})
    assert ids[rows["ls.1"]].tolist() == [vocab.id("alpha"), OOV_ID, PAD_ID, PAD_ID]
    assert token_calls == []


# --- training examples -----------------------------------------------------------------------

QRELS = [
    Qrel("q1", "ls.1", 2),
    Qrel("q1", "mkdir.1", 1),
    Qrel("q1", "cat.1", 0),
    Qrel("q2", "cp.1", 2),
    Qrel("q3", "rm.1", 0),  # no relevant document: q3 teaches nothing
]
RUN = [
    RunRow("q1", "cat.1", 1, 9.0),
    RunRow("q1", "ls.1", 2, 8.0),
    RunRow("q1", "date.1", 3, 7.0),
    RunRow("q1", "cp.1", 4, 6.0),
    RunRow("q1", "rm.1", 5, 5.0),
    RunRow("q2", "mv.1", 1, 3.0),
    RunRow("q2", "cp.1", 2, 2.0),
    RunRow("q3", "rm.1", 1, 1.0),
]


def test_examples_are_the_qrels_positives_and_the_runs_top_non_relevant_candidates() -> None:
    examples = relevance_examples(QRELS, RUN, negatives_per_query=3)
    assert examples == [
        Example("q1", "ls.1", 2),
        Example("q1", "mkdir.1", 1),  # relevant though the run missed it
        Example("q1", "cat.1", 0),  # judged 0: a negative
        Example("q1", "date.1", 0),
        Example("q1", "cp.1", 0),  # the third negative: rm.1 is beyond the cut
        Example("q2", "cp.1", 2),
        Example("q2", "mv.1", 0),
    ]


def test_examples_keep_only_the_given_queries_and_cap_grades_at_two() -> None:
    qrels = [Qrel("q1", "ls.1", 3), Qrel("q2", "cp.1", 2)]
    examples = relevance_examples(qrels, RUN, negatives_per_query=1, qids={"q1"})
    assert examples == [Example("q1", "ls.1", 2), Example("q1", "cat.1", 0)]


def _drawn_pairs(seed: int, per_query: int | None) -> set[tuple[str, str, str]]:
    """The (query, better, worse) triples of one epoch drawn from QRELS and RUN."""
    import torch

    examples = relevance_examples(QRELS, RUN, negatives_per_query=2)
    qids = sorted({e.qid for e in examples})
    docids = sorted({e.docid for e in examples})
    encoded = index_examples(
        examples,
        {q: i for i, q in enumerate(qids)},
        {d: i for i, d in enumerate(docids)},
        torch.zeros((len(qids), 1), dtype=torch.long),
        torch.zeros((len(docids), 1), dtype=torch.long),
    )
    pairs = epoch_pairs(encoded, torch.Generator().manual_seed(seed), per_query)
    assert pairs.worse_index is not None and pairs.grades is None
    triples = [
        (qids[q], docids[b], docids[w])
        for q, b, w in zip(pairs.query_index.tolist(), pairs.doc_index.tolist(),
                           pairs.worse_index.tolist(), strict=True)
    ]  # fmt: skip
    assert len(triples) == len(set(triples))
    return set(triples)


# q1: ls (2), mkdir (1), cat and date (0); q2: cp (2), mv (0).
ALL_PAIRS = {
    ("q1", "ls.1", "mkdir.1"), ("q1", "ls.1", "cat.1"), ("q1", "ls.1", "date.1"),
    ("q1", "mkdir.1", "cat.1"), ("q1", "mkdir.1", "date.1"), ("q2", "cp.1", "mv.1"),
}  # fmt: skip


def test_an_epoch_holds_every_pair_of_different_grades() -> None:
    assert _drawn_pairs(0, None) == ALL_PAIRS
    assert _drawn_pairs(0, 80) == ALL_PAIRS  # fewer pairs than the cap: all of them


def test_a_query_with_more_pairs_than_the_cap_gets_a_fresh_draw_each_epoch() -> None:
    draws = [_drawn_pairs(seed, 2) for seed in range(12)]
    for drawn in draws:
        assert drawn <= ALL_PAIRS
        assert sum(q == "q1" for q, _, _ in drawn) == 2 and ("q2", "cp.1", "mv.1") in drawn
    assert _drawn_pairs(3, 2) == draws[3]  # the generator decides the draw
    assert set().union(*draws) == ALL_PAIRS  # over epochs, every pair is seen


def test_parallel_sentences_give_positives_and_random_other_sentences(tmp_path: Path) -> None:
    path = tmp_path / "parallel.tsv"
    lines = ["copy a file\tcopier un fichier", "remove a file\tsupprimer un fichier"]
    lines += [f"sentence {i}\tphrase {i}" for i in range(6)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pairs = read_parallel_tsv(path)
    assert pairs[0] == ("copy a file", "copier un fichier")
    parallel = parallel_examples(pairs, negatives=3, seed=1)
    assert parallel.queries["p1"] == "remove a file"
    assert parallel.documents["p1"] == "supprimer un fichier"
    for i in range(len(pairs)):
        own = [e for e in parallel.examples if e.qid == f"p{i}"]
        assert own[0] == Example(f"p{i}", f"p{i}", 2)
        negatives = {e.docid for e in own[1:]}
        assert len(negatives) == 3 and f"p{i}" not in negatives
        assert all(e.grade == 0 for e in own[1:])
    assert parallel_examples(pairs, 3, seed=1) == parallel
    assert parallel_examples(pairs, 3, seed=2).examples != parallel.examples


def test_a_parallel_line_without_a_tab_is_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "parallel.tsv"
    path.write_text("copy\tcopier\nno tab here\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"parallel.tsv:2: expected 'english<TAB>foreign'"):
        read_parallel_tsv(path)


def test_an_unwritable_cache_costs_time_not_the_result(
    collection: Path, token_calls: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = collection / "not-a-directory"
    blocker.write_text("", encoding="utf-8")
    encoder = DocumentEncoder(collection / "corpus.jsonl", _vocab(), 8, blocker / "cache")
    _, first = encoder.encode(["ls.1"])
    _, second = encoder.encode(["ls.1"])
    assert first.tolist() == second.tolist()
    assert len(token_calls) == 2  # tokenised each time, since nothing could be cached
    assert "cannot write the cache" in capsys.readouterr().err
