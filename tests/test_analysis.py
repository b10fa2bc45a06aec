"""Per-language analysis: the same terms for documents and queries."""

from __future__ import annotations

import pytest

from clir_toolkit.analysis import (
    Analyzer,
    analyzer_for,
    normalise_language,
    pretokenize,
    python_tokens,
)
from clir_toolkit.errors import UsageError


@pytest.mark.parametrize("lang", ["fr", "de", "es", "it", "ru", "en"])
def test_lucene_languages_use_lucene(lang: str) -> None:
    spec = analyzer_for(lang)
    assert spec.kind == "lucene" and not spec.pretokenized


@pytest.mark.parametrize(
    ("lang", "kind"), [("zh", "jieba"), ("ja", "mecab"), ("sw", "simple"), ("tl", "simple")]
)
def test_other_languages_are_pretokenised_in_python(lang: str, kind: str) -> None:
    spec = analyzer_for(lang)
    assert spec.kind == kind and spec.pretokenized


def test_language_codes_are_normalised() -> None:
    assert normalise_language("zh_CN") == "zh"
    assert normalise_language("FR-ca") == "fr"
    with pytest.raises(UsageError):
        normalise_language("french!")


@pytest.mark.parametrize(
    ("spelling", "code"),
    [("fra", "fr"), ("fra_Latn", "fr"), ("zho", "zh"), ("deu", "de"), ("ger", "de"),
     ("jpn", "ja"), ("rus", "ru"), ("nob", "no"), ("spa", "es")],
)  # fmt: skip
def test_three_letter_codes_get_their_languages_analyzer(spelling: str, code: str) -> None:
    """ISO 639-2/3 and NLLB spellings (FreeDict, HC4, NLLB) route to the same analyzer as
    the two-letter code: ``fra`` used to pass the check and get the generic analyzer."""
    assert analyzer_for(spelling) == analyzer_for(code)
    assert analyzer_for(spelling).kind != "simple"


@pytest.mark.parametrize(
    ("spelling", "message"),
    [("xx", "'xx' is not a language code"), ("eng-fra", "names a language pair; give one "
     "language, such as fr or en")],
)  # fmt: skip
def test_codes_that_name_no_single_language_are_refused(spelling: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        analyzer_for(spelling)


def test_jieba_segments_chinese_words_and_drops_stop_words() -> None:
    tokens = Analyzer(analyzer_for("zh")).tokens("列出目录的内容")
    assert tokens == ["列出", "目录", "内容"]  # "的" is a stop word


def test_swahili_is_lowercased_without_stop_words() -> None:
    assert pretokenize(analyzer_for("sw"), "Orodha ya Faili na saraka") == "orodha faili saraka"


def test_french_analysis_stems_and_removes_stop_words() -> None:
    analyzer = Analyzer(analyzer_for("fr"))
    assert analyzer.tokens("les répertoires") == analyzer.tokens("répertoire")
    assert analyzer.tokens("les") == []


def test_japanese_is_one_tokenizer_for_the_index_the_reranker_and_the_embeddings() -> None:
    """MeCab words in base forms everywhere: a word of ``clir embed train``'s vectors is a
    word of the reranker's vocabulary and a term of the index (it was Kuromoji, character
    bigrams and MeCab surface forms)."""
    from clir_toolkit.rerank.data.tokens import rerank_tokens
    from clir_toolkit.translate.embed_text import tokenizer_for

    text = "ファイルを削除しました。ディレクトリの内容を表示する"
    spec = analyzer_for("ja")
    words = python_tokens(spec, text)
    assert {"ファイル", "削除", "ディレクトリ", "内容", "表示"} <= set(words)
    assert "を" not in words and "の" not in words  # particles are stop words
    assert rerank_tokens("ja", text) == words
    assert tokenizer_for("ja")[0](text) == words
    assert pretokenize(spec, text) == " ".join(words)


@pytest.mark.java
def test_every_lucene_language_gets_the_analyzer_anserini_indexed_it_with() -> None:
    # Anserini indexes a language with AnalyzerMap's analyzer; queries are analysed with the
    # toolkit's own table of the same classes (made without AnalyzerMap, which would start
    # log4j2): the two must agree, language by language, and analyse alike.
    from clir_toolkit import jvm
    from clir_toolkit.analysis import LUCENE_ANALYZERS, lucene_analyzer

    analyzer_map = jvm.java_class("io.anserini.analysis.AnalyzerMap")
    utils = jvm.java_class("io.anserini.analysis.AnalyzerUtils")
    text = "Les fichiers du répertoire courant, die Dateien 123 список файлов"
    for language, class_name in LUCENE_ANALYZERS.items():
        anserini = analyzer_map.getLanguageSpecificAnalyzer(language)
        ours = lucene_analyzer(analyzer_for(language))
        assert anserini.getClass().getName() == class_name == ours.getClass().getName()
        assert analysed(utils, anserini, text) == analysed(utils, ours, text), language
    # Every language of AnalyzerMap is in the table, but Chinese and Japanese, which the
    # toolkit segments in Python (LUCENE_LANGUAGES' comment).
    assert set(analyzer_map.analyzerMap.keySet().toArray()) - {"zh", "ja"} == set(LUCENE_ANALYZERS)


def analysed(utils: object, analyzer: object, text: str) -> list[str] | str:
    """``text``'s tokens, or the error that analysing it raises (this Java runtime has no Thai
    segmentation: both analyzers must then fail alike)."""
    try:
        return list(utils.analyze(analyzer, text).toArray())  # type: ignore[attr-defined]
    except Exception as exc:  # a JavaException from pyjnius
        return str(exc).splitlines()[0]
