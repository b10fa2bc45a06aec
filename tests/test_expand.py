"""Expansion: WordNet synonyms before translation, Rocchio/RM3 feedback after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.errors import UsageError
from clir_toolkit.expand.feedback import Feedback, relevance_model, rocchio_weights
from clir_toolkit.expand.wordnet import WordNetExpander
from clir_toolkit.query import Alternative, QueryTerm, StructuredQuery
from clir_toolkit.search import Searcher, parse_java_map

SYNONYMS = {"remove": ["take_away", "withdraw", "remove", "erase"], "file": ["data_file"]}


def test_wordnet_expansion_adds_weighted_synonyms_to_each_term() -> None:
    expander = WordNetExpander(max_synonyms=2, weight=0.5, synonyms=lambda w: SYNONYMS.get(w, []))
    (query,) = expander.expand([StructuredQuery.plain("q", "remove the file")])
    by_source = {t.source: [(a.text, a.weight) for a in t.alternatives] for t in query.terms}
    assert by_source["remove"] == [("remove", 1.0), ("take away", 0.5), ("withdraw", 0.5)]
    assert by_source["the"] == [("the", 1.0)]  # stop words are not expanded
    assert by_source["file"] == [("file", 1.0), ("data file", 0.5)]


def test_real_wordnet_synonyms() -> None:
    pytest.importorskip("nltk")
    from clir_toolkit.resources import wordnet

    try:
        wordnet.ensure_wordnet()
    except Exception as exc:  # noqa: BLE001 - the reason is shown in the skip
        pytest.skip(f"WordNet not set up here: {exc}")
    (query,) = WordNetExpander(max_synonyms=5).expand([StructuredQuery.plain("q", "car")])
    assert "automobile" in [a.text for a in query.terms[0].alternatives]


def test_rocchio_weights_are_mean_tf_idf() -> None:
    vectors = [{"a": 2, "b": 2}, {"a": 1, "c": 3}]
    df = {"a": 10, "b": 1, "c": 5}.__getitem__
    weights = rocchio_weights(vectors, 10, df)
    assert weights["a"] == pytest.approx(0.0)  # in every document: idf = 0
    assert weights["b"] == pytest.approx(0.5 * 0.5 * 2.302585, rel=1e-5)
    assert weights["c"] == pytest.approx(0.5 * 0.75 * 0.693147, rel=1e-5)


def test_relevance_model_weights_documents_by_score() -> None:
    weights = relevance_model([{"a": 1}, {"b": 1}], [3.0, 1.0])
    assert weights == pytest.approx({"a": 0.75, "b": 0.25})


def test_java_map_strings_parse() -> None:
    assert parse_java_map("{répertoir=2, list=1}") == {"répertoir": 2, "list": 1}
    assert parse_java_map("{}") == {}


def test_feedback_options_are_validated_by_their_declarations() -> None:
    """Refused as the command line refuses the same values (the flags are the Params')."""
    with pytest.raises(UsageError) as refused:
        Feedback("ideal")
    assert str(refused.value) == '--prf must be one of "rocchio", "rm3" (got "ideal")'
    with pytest.raises(UsageError) as refused:
        Feedback("rocchio", fb_docs=0)
    assert str(refused.value) == "--fb-docs must be at least 1 (got 0)"
    with pytest.raises(UsageError) as refused:
        Feedback.rm3(original_weight=float("nan"))
    assert str(refused.value) == "--original-weight must be a finite number (got nan)"


@pytest.mark.java
@pytest.mark.parametrize("feedback", [Feedback("rocchio", 2, 20), Feedback.rm3(2, 20)])
@pytest.mark.parametrize("structure", ["or", "and", "syn"])
def test_feedback_expands_structured_queries(
    fr_index: Path, feedback: Feedback, structure: str
) -> None:
    query = StructuredQuery(
        "q",
        (
            QueryTerm("copy", (Alternative("copier"),)),
            QueryTerm("files", (Alternative("fichiers"), Alternative("limes", 0.5))),
        ),
    )
    with Searcher(fr_index) as searcher:
        before = searcher.search(query, 20, structure)
        after = searcher.search(query, 20, structure, feedback)
    assert after[0].docid == before[0].docid == "cp.1"
    assert after[0].score > before[0].score  # its own terms now add to its score
    # Feedback terms of cp.1 ("répertoires", "récursive", ...) reach documents the
    # original query could not (with "and", only cp.1 has both "copier" and "fichiers").
    assert {h.docid for h in after} > {h.docid for h in before}
