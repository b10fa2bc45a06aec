"""Real Lucene indexes of the hand-made collections, searched like pyserini would."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

import clir_toolkit.search.searcher as searcher_module
from clir_toolkit import jvm
from clir_toolkit.analysis import Analyzer, analyzer_for, lucene_analyzer
from clir_toolkit.errors import UsageError
from clir_toolkit.formats import read_run, read_topics
from clir_toolkit.index import SIDECAR, build_index, read_index_info
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery
from clir_toolkit.search import Searcher, plain_queries, search_to_run
from tests.conftest import FIXTURES, TINY_FR, TINY_ZH

pytestmark = pytest.mark.java


def anserini_search(index: Path, text: str, k: int, k1: float, b: float) -> list[tuple[str, float]]:
    """What pyserini's LuceneSearcher returns (it wraps Anserini's SimpleSearcher)."""
    searcher = jvm.java_class("io.anserini.search.SimpleSearcher")(str(index))
    searcher.set_analyzer(lucene_analyzer(read_index_info(index).analyzer))
    searcher.set_bm25(k1, b)
    hits = [(h.docid, float(h.score)) for h in searcher.search(text, k)]
    searcher.close()
    return hits


def tie_groups(hits: Iterable[tuple[str, float]]) -> list[tuple[float, set[str]]]:
    """Ranked hits as (score to 4 decimals, docids with that score), best first."""
    groups: list[tuple[float, set[str]]] = []
    for docid, score in hits:
        key = round(score, 4)
        if groups and groups[-1][0] == key:
            groups[-1][1].add(docid)
        else:
            groups.append((key, {docid}))
    return groups


def test_sidecar_records_language_analyzer_and_collection(fr_index: Path) -> None:
    info = json.loads((fr_index / SIDECAR).read_text())
    assert info["language"] == "fr"
    assert info["analyzer_kind"] == "lucene"
    assert info["documents"] == 12
    assert len(info["collection_sha256"]) == 64
    assert info["store_raw"] is False


def test_index_keeps_positions_and_document_vectors_but_no_raw_text(fr_index: Path) -> None:
    searcher = jvm.java_class("io.anserini.search.SimpleSearcher")(str(fr_index))
    assert searcher.doc_raw("ls.1") is None
    reader = jvm.java_class("io.anserini.index.IndexReaderUtils").getReader(str(fr_index))
    vector = jvm.java_class("io.anserini.index.IndexReaderUtils").getDocumentVector(reader, "ls.1")
    (stem,) = Analyzer(analyzer_for("fr")).tokens("répertoire")
    assert vector.get(stem) is not None  # the document vector holds analysed terms
    positions = jvm.java_class("io.anserini.index.IndexReaderUtils").getTermPositions(
        reader, "ls.1"
    )
    assert positions.size() > 0


def test_store_raw_keeps_raw_text(tmp_path: Path) -> None:
    index = tmp_path / "raw"
    build_index(TINY_FR, index, store_raw=True, verbose=False)
    searcher = jvm.java_class("io.anserini.search.SimpleSearcher")(str(index))
    assert "répertoire" in searcher.doc_raw("ls.1")


@pytest.mark.parametrize(("k1", "b"), [(0.9, 0.4), (1.2, 0.75)])
def test_same_ranking_and_scores_as_pyserini(fr_index: Path, k1: float, b: float) -> None:
    topics = read_topics(TINY_FR / "topics-human.dev.tsv") + read_topics(TINY_FR / "topics.dev.tsv")
    with Searcher(fr_index, k1=k1, b=b) as searcher:
        for topic in topics:
            ours = searcher.search(StructuredQuery.plain(topic.qid, topic.query), 10)
            theirs = anserini_search(fr_index, topic.query, 10, k1, b)
            # Anserini rounds scores to 4 decimals and lists ties by ascending docid; we keep
            # Lucene's float and list ties as trec_eval does: the same documents in the same
            # order up to ties, with the same scores.
            assert tie_groups((h.docid, h.score) for h in ours) == tie_groups(theirs)


def test_chinese_is_segmented_with_jieba_for_documents_and_queries(zh_index: Path) -> None:
    assert read_index_info(zh_index).analyzer_kind == "jieba"
    with Searcher(zh_index) as searcher:
        best = {t.qid: searcher.search(StructuredQuery.plain(t.qid, t.query), 1)[0].docid
                for t in read_topics(TINY_ZH / "topics-human.dev.tsv")}
    assert best == {"q1": "ls", "q2": "cp", "q3": "rm", "q4": "kill"}


JAPANESE_PAGES = {
    "ls": "ディレクトリの内容を一覧表示する。ファイルの情報を表示します。",
    "rm": "ファイルやディレクトリを削除する。削除したファイルは戻せません。",
    "cp": "ファイルとディレクトリをコピーする。コピー先を指定します。",
}


def test_japanese_is_segmented_with_mecab_for_documents_and_queries(tmp_path: Path) -> None:
    """The index reads the words the reranker and the embeddings read (base forms): a query
    in another inflection (削除しました) finds the page that says 削除する."""
    from clir_toolkit.index import build_index

    corpus = tmp_path / "ja" / "corpus.jsonl"
    corpus.parent.mkdir()
    corpus.write_text("".join(json.dumps({"id": d, "contents": t}, ensure_ascii=False) + "\n"
                              for d, t in JAPANESE_PAGES.items()), encoding="utf-8")  # fmt: skip
    (corpus.parent / "manifest.json").write_text('{"doc_lang": "ja"}', encoding="utf-8")
    index = tmp_path / "ja-index"
    build_index(corpus.parent, index, verbose=False)
    info = read_index_info(index)
    assert info.analyzer_kind == "mecab" and info.analyzer.kind == "mecab"
    with Searcher(index) as searcher:
        hits = searcher.search(StructuredQuery.plain("q", "ファイルを削除しました"), 3)
    assert hits[0].docid == "rm"


def term(source: str, *alternatives: str | tuple[str, float]) -> QueryTerm:
    alts = tuple(Alternative(a) if isinstance(a, str) else Alternative(*a) for a in alternatives)
    return QueryTerm(source, alts)


def test_and_structure_requires_every_term(fr_index: Path) -> None:
    query = StructuredQuery("q", (term("copy", "copier"), term("directory", "répertoire")))
    with Searcher(fr_index) as searcher:
        found_and = {h.docid for h in searcher.search(query, 20, "and")}
        found_or = {h.docid for h in searcher.search(query, 20, "or")}
    assert found_and == {"cp.1"}  # the only page with both words
    assert found_and < found_or


def test_syn_structure_pools_alternatives_into_one_term(fr_index: Path) -> None:
    # "remove" → {supprimer, effacer}: rm.1 contains both; SynonymQuery counts tf over both
    # but uses one document frequency, so the score differs from the bag of the two words.
    query = StructuredQuery("q", (term("remove", "supprimer", "effacer"),))
    with Searcher(fr_index) as searcher:
        syn = searcher.search(query, 5, "syn")
        bag = searcher.search(query, 5, "or")
        single = searcher.search(StructuredQuery("q", (term("remove", "supprimer"),)), 5, "syn")
    assert syn[0].docid == bag[0].docid == "rm.1"
    assert syn[0].score < bag[0].score  # pooled: one saturating term, not two summed
    assert syn[0].score > single[0].score  # but more evidence than one alternative alone


def test_alternative_weights_are_boosts(fr_index: Path) -> None:
    with Searcher(fr_index) as searcher:
        plain = searcher.search(StructuredQuery("q", (term("copy", "copier"),)), 1, "or")
        doubled = searcher.search(StructuredQuery("q", (term("copy", ("copier", 2.0)),)), 1, "or")
    assert doubled[0].score == pytest.approx(2 * plain[0].score, rel=1e-5)


def test_reused_sub_queries_keep_their_own_weights(fr_index: Path) -> None:
    # The searcher builds each (pseudo-)term query once and reuses it: a later query with
    # the same alternatives under other weights must not get the earlier one's weights.
    even = StructuredQuery("q", (term("remove", "supprimer", "effacer"),))
    uneven = StructuredQuery("q", (term("remove", ("supprimer", 1.0), ("effacer", 0.25)),))
    with Searcher(fr_index) as searcher:
        first = searcher.search(even, 5, "syn")
        other = searcher.search(uneven, 5, "syn")
        again = searcher.search(even, 5, "syn")
    with Searcher(fr_index) as fresh:
        alone = fresh.search(uneven, 5, "syn")
    assert first == again
    assert other == alone
    assert other[0].score != first[0].score


def test_batch_search_restores_the_garbage_collector(fr_index: Path, tmp_path: Path) -> None:
    queries = plain_queries(read_topics(TINY_FR / "topics.dev.tsv"))
    assert gc.isenabled()
    search_to_run(fr_index, queries, tmp_path / "run.trec", progress=False)
    assert gc.isenabled()
    with pytest.raises(UsageError):
        search_to_run(fr_index, queries, tmp_path / "run.trec", progress=False, k1=-1.0)
    assert gc.isenabled()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"k1": -1.0}, "--k1 must be at least 0 (got -1.0)"),
        ({"k1": float("nan")}, "--k1 must be a finite number (got nan)"),
        ({"b": 2.0}, "--b must be between 0 and 1 (got 2.0)"),
        ({"hits": 0}, "--hits must be at least 1 (got 0)"),
        ({"structure": "pirkola"}, '--structure must be one of "and", "or", "syn" (got "pirkola")'),
        ({"threads": 0}, "--threads must be between 1 and 1024 (got 0)"),
    ],
)
def test_a_search_option_out_of_range_is_refused_in_the_declared_words(
    fr_index: Path, tmp_path: Path, option: dict, message: str
) -> None:
    """A library call is refused by the rule ``clir search`` and a recipe use (the declared
    BM25 options), in the option's words, before anything is searched or written."""
    queries = plain_queries(read_topics(TINY_FR / "topics.dev.tsv"))
    run = tmp_path / "run.trec"
    with pytest.raises(UsageError) as refused:
        search_to_run(fr_index, queries, run, progress=False, **option)
    assert str(refused.value) == message
    assert not run.exists()


def test_lucene_query_refuses_an_unknown_structure(fr_index: Path) -> None:
    with Searcher(fr_index) as searcher, pytest.raises(UsageError) as refused:
        searcher.lucene_query(StructuredQuery.plain("q", "copier"), "pirkola")
    assert str(refused.value) == '--structure must be one of "and", "or", "syn" (got "pirkola")'


def test_query_of_only_stop_words_retrieves_nothing(fr_index: Path, tmp_path: Path) -> None:
    queries = [StructuredQuery.plain("q1", "les des"), StructuredQuery.plain("q2", "copier")]
    output = tmp_path / "run.trec"
    stats = search_to_run(fr_index, queries, output, progress=False)
    assert stats.empty_queries == ["q1"]
    assert {row.qid for row in read_run(output)} == {"q2"}


def test_runs_are_deterministic_and_sorted(fr_index: Path, tmp_path: Path) -> None:
    queries = plain_queries(read_topics(TINY_FR / "topics.dev.tsv"))
    first, second = tmp_path / "a.trec", tmp_path / "b.trec"
    search_to_run(fr_index, queries, first, progress=False, tag="x")
    search_to_run(fr_index, queries, second, progress=False, tag="x", threads=2)
    assert first.read_bytes() == second.read_bytes()
    rows = read_run(first)
    for qid in {r.qid for r in rows}:
        ranked = [(r.score, r.docid) for r in rows if r.qid == qid]
        assert ranked == sorted(ranked, reverse=True)  # ties by docid descending (trec_eval)


def test_many_queries_search_in_bounded_memory(fr_index: Path, tmp_path: Path) -> None:
    # Far more topics than one Java batch; each query's hits leave Java before the next.
    topics = read_topics(TINY_FR / "topics-human.dev.tsv")
    queries = [StructuredQuery.plain(f"{t.qid}-{i}", t.query) for i in range(400) for t in topics]
    stats = search_to_run(fr_index, queries, tmp_path / "many.trec", progress=False)
    assert stats.queries == 2400 and not stats.empty_queries


def test_pseudo_term_weights_make_every_frequency_sum_exact() -> None:
    """Pirkola's weighted pseudo-term: Lucene adds w·tf over the tokens in an order that
    depends on the index's segments (hence on sharding); with the weights rounded to the
    1/256 grid every 32-bit sum is the same in any order, so a sharded index scores as one."""
    import random

    import numpy as np

    from clir_toolkit.search.searcher import synonym_boost

    assert synonym_boost(1.0) == 1.0 and synonym_boost(0.5) == 0.5
    assert synonym_boost(1e-9) == 1 / 256  # never zero: every alternative still counts
    assert abs(synonym_boost(1 / 3) - 1 / 3) <= 1 / 512
    rng = random.Random(7)
    for _ in range(200):
        weights = [synonym_boost(rng.random()) for _ in range(rng.randint(2, 9))]
        terms = [np.float32(w) * np.float32(rng.randint(1, 300)) for w in weights]
        sums = set()
        for _ in range(6):
            rng.shuffle(terms)
            total = np.float32(0)
            for value in terms:
                total = np.float32(total + value)
            sums.add(float(total))
        assert len(sums) == 1


# --- Unicode: one form for queries and documents ---------------------------------------------


def decomposed(text: str) -> str:
    """``text`` with every accented letter written as a letter and a combining accent."""
    import unicodedata

    return unicodedata.normalize("NFD", text)


def test_a_decomposed_query_scores_as_the_composed_one(fr_index: Path) -> None:
    composed_query = "afficher le contenu d'un répertoire créé"
    assert decomposed(composed_query) != composed_query
    with Searcher(fr_index) as searcher:
        ours = searcher.search(StructuredQuery.plain("q", composed_query), 10)
        theirs = searcher.search(StructuredQuery.plain("q", decomposed(composed_query)), 10)
        structured = StructuredQuery("q", (term("directory", decomposed("répertoire")),))
        composed_structured = StructuredQuery("q", (term("directory", "répertoire"),))
        assert searcher.search(structured, 10, "syn") == searcher.search(
            composed_structured, 10, "syn"
        )
    assert ours and theirs == ours


def test_decomposed_topics_give_the_run_of_composed_topics(fr_index: Path, tmp_path: Path) -> None:
    composed_topics = (TINY_FR / "topics-human.dev.tsv").read_text(encoding="utf-8")
    assert decomposed(composed_topics) != composed_topics
    runs = []
    for name, text in [("composed", composed_topics), ("decomposed", decomposed(composed_topics))]:
        topics = tmp_path / f"{name}.tsv"
        topics.write_text(text, encoding="utf-8")
        run = tmp_path / f"{name}.trec"
        search_to_run(fr_index, plain_queries(read_topics(topics)), run, progress=False)
        runs.append(run.read_text(encoding="utf-8"))
    assert runs[0] == runs[1]


def test_a_decomposed_corpus_is_indexed_as_the_composed_one(fr_index: Path, tmp_path: Path) -> None:
    collection = tmp_path / "nfd-fr"
    collection.mkdir()
    for name in ("manifest.json", "qrels.dev.txt", "topics-human.dev.tsv", "topics.dev.tsv"):
        (collection / name).write_bytes((TINY_FR / name).read_bytes())
    corpus = (TINY_FR / "corpus.jsonl").read_text(encoding="utf-8")
    assert decomposed(corpus) != corpus
    (collection / "corpus.jsonl").write_text(decomposed(corpus), encoding="utf-8")
    index = tmp_path / "nfd-index"
    build_index(collection, index, verbose=False)
    assert read_index_info(index).format == 2  # the format whose documents are composed
    topics = read_topics(TINY_FR / "topics-human.dev.tsv")
    with Searcher(fr_index) as composed_side, Searcher(index) as decomposed_side:
        for topic in topics:
            query = StructuredQuery.plain(topic.qid, topic.query)
            assert decomposed_side.search(query, 10) == composed_side.search(query, 10)


def test_the_run_of_the_tiny_collection_is_the_recorded_one(fr_index: Path, tmp_path: Path) -> None:
    # Recorded before Lucene ranked by score alone (ties ordered in Python, a query tied at
    # the cut-off searched again sorted by docid): the speed-up changed no byte of a run.
    output = tmp_path / "run.trec"
    topics = read_topics(TINY_FR / "topics-human.dev.tsv")
    search_to_run(fr_index, plain_queries(topics), output, progress=False, tag="bm25",
                  k1=0.9, b=0.4)  # fmt: skip  (the defaults when it was recorded)
    recorded = FIXTURES / "runs" / "tiny-fr.bm25-human.dev.trec"
    assert output.read_bytes() == recorded.read_bytes()


def test_the_corpus_streamed_into_lucene_gives_the_index_of_the_corpus_written_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``clir index`` writes the normalised corpus into named pipes that Lucene reads while
    it indexes; written to files first (the sharded build's way), the index is the same: the
    same documents, terms and runs."""
    import clir_toolkit.index.build as build_module

    topics = read_topics(TINY_FR / "topics-human.dev.tsv")
    runs = {}
    for streamed in (True, False):
        monkeypatch.setattr(build_module, "can_stream", lambda streamed=streamed: streamed)
        index = tmp_path / f"idx-{streamed}"
        info = build_index(TINY_FR, index, verbose=False, threads=3)
        assert info.documents == 12
        assert not list(tmp_path.glob(".*.tmp"))  # the scratch directory, pipes included
        runs[streamed] = tmp_path / f"run-{streamed}.trec"
        search_to_run(index, plain_queries(topics), runs[streamed], progress=False)
    assert runs[True].read_bytes() == runs[False].read_bytes()


def test_ties_at_the_cut_off_keep_the_documents_trec_eval_ranks_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collection = tmp_path / "twins"
    collection.mkdir()
    (collection / "manifest.json").write_bytes((TINY_FR / "manifest.json").read_bytes())
    twins = [f"chat-{letter}" for letter in "cadb"]  # the same text: the same score
    documents = [(docid, "le chat dort sur le lit") for docid in twins] + [
        ("chien", "le chien dort dehors, le chat aussi, et le chat rentre"),
        ("souris", "la souris dort"),
    ]
    (collection / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": i, "contents": text}) + "\n" for i, text in documents),
        encoding="utf-8",
    )
    index = tmp_path / "twins-index"
    build_index(collection, index, verbose=False)
    query = StructuredQuery.plain("q", "chat")
    with Searcher(index) as searcher, Searcher(index) as without_hit_reader:
        assert searcher._hit_reader is not None  # `make setup` compiled it
        # Without the toolkit's HitReader (no javac): hits through Anserini's ScoredDocs, and
        # a tie at the cut-off searched again sorted by docid, not collected by atLeast.
        without_hit_reader._hit_reader = None
        ranked = searcher.search(query, 100)
        # the four twins tie; trec_eval ranks tied documents by docid, descending
        assert [hit.docid for hit in ranked] == ["chien", "chat-d", "chat-c", "chat-b", "chat-a"]
        assert len({hit.score for hit in ranked[1:]}) == 1
        for hits in range(1, len(ranked) + 1):
            assert searcher.search(query, hits) == ranked[:hits]
            assert without_hit_reader.search(query, hits) == ranked[:hits]
        # More tied documents than atLeast may collect: searched again sorted, the same hits.
        monkeypatch.setattr(searcher_module, "TIED_LIMIT", 0)
        for hits in range(1, len(ranked) + 1):
            assert searcher.search(query, hits) == ranked[:hits]


def test_the_hit_reader_reads_the_ids_anserini_stores(fr_index: Path) -> None:
    """The toolkit's HitReader reads the same ids and scores as Anserini's ScoredDocs, for
    every document of the index."""
    words = " ".join(json.loads(line)["contents"] for line in
                     (TINY_FR / "corpus.jsonl").read_text(encoding="utf-8").splitlines())
    query = StructuredQuery.plain("q", words)  # every word of the collection
    with Searcher(fr_index) as searcher, Searcher(fr_index) as without_hit_reader:
        without_hit_reader._hit_reader = None
        everything = searcher.search(query, searcher.documents)
        assert len(everything) == searcher.documents
        assert without_hit_reader.search(query, searcher.documents) == everything


def test_a_bm25_search_imports_no_numpy(fr_index: Path, tmp_path: Path) -> None:
    # numpy's import is about a tenth of a one-query `clir search` from a cold shell; only
    # the dense vectors need it.
    code = (
        "import sys\n"
        "from clir_toolkit.cli import main\n"
        f"status = main(['search', '--index', {str(fr_index)!r}, '--topics', "
        f"{str(TINY_FR / 'topics.dev.tsv')!r}, '--output', {str(tmp_path / 'run.trec')!r}, "
        "'--quiet'])\n"
        "print(status, 'numpy' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip().splitlines()[-1] == "0 False", result.stderr
    assert read_run(tmp_path / "run.trec")


def test_clir_search_reads_the_index_sidecar_once(
    fr_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sidecar is read once per search (for the language, then handed to the searcher):
    the language searched for and the index searched come from one reading."""
    from clir_toolkit import index as index_module
    from clir_toolkit.cli import main
    from clir_toolkit.index import layout as layout_module
    from clir_toolkit.search import searcher as searcher_module

    reads: list[Path] = []

    def counted(index: str | Path) -> object:
        reads.append(Path(index))
        return read_index_info(index)

    monkeypatch.setattr(index_module, "read_index_info", counted)
    monkeypatch.setattr(layout_module, "read_index_info", counted)  # open_reader's
    monkeypatch.setattr(searcher_module, "read_index_info", counted)
    run = tmp_path / "run.trec"
    topics = TINY_FR / "topics.dev.tsv"
    status = main(["search", "--index", str(fr_index), "--topics", str(topics),
                   "--output", str(run), "--translate", "dict", "--quiet"])  # fmt: skip
    assert status == 0 and read_run(run)
    assert reads == [fr_index]
