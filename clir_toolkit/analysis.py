"""Per-language text analysis, identical for documents and queries.

BM25 only matches what the analyzer makes equal, so the index and every query must be
analysed the same way. Three kinds of analysis cover the languages of CLIR collections:

``lucene``
    Lucene's analyzer for the language, as Anserini's ``AnalyzerMap`` maps it (French,
    German, Spanish, Italian, Russian, Japanese (Kuromoji), Persian, ...): tokenisation,
    lower-casing, stop words and a light stemmer. English uses Anserini's default English
    analyzer (Porter stemmer, Lucene's stop list), the one pyserini uses.
``jieba``
    Chinese: Lucene's default for Chinese is overlapping character bigrams; we segment
    words with jieba instead, in Python, and index the space-separated words
    ("pre-tokenised": Lucene only splits on white space).
``simple``
    Languages Lucene has no analyzer for (Swahili, Tagalog, ...): Unicode word tokens,
    lower-cased, stop words from ``stopwordsiso`` removed, no stemming; pre-tokenised too.

An index records its :class:`AnalyzerSpec` in its sidecar, so searches never need a
language flag.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, get_args

from clir_toolkit import jvm
from clir_toolkit.errors import UsageError
from clir_toolkit.formats.checks import composed

AnalyzerKind = Literal["lucene", "jieba", "mecab", "simple"]
ANALYZER_KINDS: tuple[str, ...] = get_args(AnalyzerKind)
"""Every kind of analysis (an index's sidecar names one)."""

#: Each language's Lucene analyzer, as Anserini 1.7.1's ``io.anserini.analysis.AnalyzerMap``
#: maps it (its ``getLanguageSpecificAnalyzer`` makes the class with its no-argument
#: constructor, as :func:`lucene_analyzer` does; ``tests/test_analysis.py`` checks the two
#: tables agree). Made here without ``AnalyzerMap``, whose logger would start log4j2: 0.2 s
#: of every search.
LUCENE_ANALYZERS = {
    "ar": "org.apache.lucene.analysis.ar.ArabicAnalyzer",
    "bn": "org.apache.lucene.analysis.bn.BengaliAnalyzer",
    "da": "org.apache.lucene.analysis.da.DanishAnalyzer",
    "de": "org.apache.lucene.analysis.de.GermanAnalyzer",
    "es": "org.apache.lucene.analysis.es.SpanishAnalyzer",
    "fa": "org.apache.lucene.analysis.fa.PersianAnalyzer",
    "fi": "org.apache.lucene.analysis.fi.FinnishAnalyzer",
    "fr": "org.apache.lucene.analysis.fr.FrenchAnalyzer",
    "hi": "org.apache.lucene.analysis.hi.HindiAnalyzer",
    "hu": "org.apache.lucene.analysis.hu.HungarianAnalyzer",
    "id": "org.apache.lucene.analysis.id.IndonesianAnalyzer",
    "it": "org.apache.lucene.analysis.it.ItalianAnalyzer",
    "ko": "org.apache.lucene.analysis.cjk.CJKAnalyzer",
    "nl": "org.apache.lucene.analysis.nl.DutchAnalyzer",
    "no": "org.apache.lucene.analysis.no.NorwegianAnalyzer",
    "pl": "org.apache.lucene.analysis.morfologik.MorfologikAnalyzer",
    "pt": "org.apache.lucene.analysis.pt.PortugueseAnalyzer",
    "ru": "org.apache.lucene.analysis.ru.RussianAnalyzer",
    "sv": "org.apache.lucene.analysis.sv.SwedishAnalyzer",
    "te": "org.apache.lucene.analysis.te.TeluguAnalyzer",
    "th": "org.apache.lucene.analysis.th.ThaiAnalyzer",
    "tr": "org.apache.lucene.analysis.tr.TurkishAnalyzer",
    "uk": "org.apache.lucene.analysis.uk.UkrainianMorfologikAnalyzer",
}
#: Languages with a Lucene analyzer: :data:`LUCENE_ANALYZERS`' and English
#: (``DefaultEnglishAnalyzer``). Chinese and Japanese are deliberately not here: they are
#: segmented in Python (``jieba``, ``mecab``), so that the index, the reranker and the
#: embeddings read the same words.
LUCENE_LANGUAGES = frozenset([*LUCENE_ANALYZERS, "en"])
ENGLISH_ANALYZER = "io.anserini.analysis.DefaultEnglishAnalyzer"
WHITESPACE_ANALYZER = "org.apache.lucene.analysis.core.WhitespaceAnalyzer"

_WORD = re.compile(r"\w+", re.UNICODE)

#: Lucene's classic English stop set (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``): function
#: words are not translated — their translations are stop words or noise.
ENGLISH_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)


@dataclass(frozen=True, slots=True)
class AnalyzerSpec:
    """How a language is analysed: recorded in each index's sidecar."""

    language: str
    kind: AnalyzerKind
    #: Human-readable description, e.g. ``org.apache.lucene.analysis.fr.FrenchAnalyzer``.
    name: str

    @property
    def pretokenized(self) -> bool:
        """Whether Python tokenises and Lucene only splits on white space."""
        return self.kind != "lucene"


LANGUAGE_ALIASES = {"nb": "no", "nn": "no"}
"""Codes that Lucene's analyzers know under another name (Norwegian Bokmål and Nynorsk)."""


def normalise_language(language: str) -> str:
    """The ISO 639-1 code (639-3 where a language has no two-letter code) of ``language``.

    Accepts the spellings the toolkit's sources use: ``fr``, ``FR``, ``fr_FR``, ``zh-CN``,
    ISO 639-3 and 639-2 codes such as ``fra``, ``zho``, ``deu`` or ``ger`` (FreeDict,
    HC4), and NLLB's ``fra_Latn``; the mapping is the ``langcodes`` library's (IANA's
    language subtag registry). A code that names no language, or a pair such as
    ``eng-fra``, is a UsageError: no language silently falls back to the generic analyzer.
    """
    import langcodes

    text = language.strip()
    try:
        tag = langcodes.standardize_tag(text.replace("_", "-"))
        parsed = langcodes.Language.get(tag)
    except (ValueError, langcodes.LanguageTagError):
        parsed = None
    if parsed is None or parsed.language is None or not langcodes.tag_is_valid(tag):
        raise UsageError(
            f"'{language}' is not a language code (use ISO 639-1 or 639-3, such as fr or fra)"
        )
    if parsed.extlangs:
        second = langcodes.standardize_tag(parsed.extlangs[0])
        raise UsageError(
            f"'{language}' names a language pair; give one language, such as {second} "
            f"or {parsed.language}"
        )
    return LANGUAGE_ALIASES.get(parsed.language, parsed.language)


def analyzer_for(language: str) -> AnalyzerSpec:
    """The analysis used for ``language`` (any spelling :func:`normalise_language` reads)."""
    code = normalise_language(language)
    if code == "zh":
        return AnalyzerSpec(code, "jieba", "jieba word segmentation + stopwordsiso")
    if code == "ja":
        return AnalyzerSpec(code, "mecab", "MeCab words, base forms (fugashi + unidic-lite) "
                            "+ stopwordsiso")  # fmt: skip
    if code == "en":
        return AnalyzerSpec(code, "lucene", ENGLISH_ANALYZER)
    if code in LUCENE_LANGUAGES:
        return AnalyzerSpec(code, "lucene", f"AnalyzerMap[{code}]")
    return AnalyzerSpec(code, "simple", "unicode words + lower case + stopwordsiso")


def recorded_spec_problem(language: str, kind: str) -> str | None:
    """What is wrong with an analysis recorded in an index's sidecar, or None.

    The pair must be one that :func:`analyzer_for` gives: a language code in its own
    spelling, with the kind of analysis this toolkit uses for it. An index that recorded
    anything else was not built by this toolkit as it is (a hand-edited or foreign sidecar),
    and Lucene would fail on it with a bare Java exception (an unknown language has no
    analyzer). The Lucene languages are checked against :data:`LUCENE_LANGUAGES` alone, so
    that opening an index does not load the language registry.
    """
    if kind == "lucene" and language in LUCENE_LANGUAGES:
        return None
    try:
        spec = analyzer_for(language)
    except UsageError:
        return f"'{language}' is not a language this toolkit analyses"
    if spec.language != language:
        return f"'{language}' is not written as the toolkit writes it ('{spec.language}')"
    if spec.kind != kind:
        return f"'{language}' is analysed by '{spec.kind}', not '{kind}'"
    return None


@cache
def stopwords(language: str) -> frozenset[str]:
    """Stop words of ``language`` from the ``stopwordsiso`` package (empty if it has none)."""
    import stopwordsiso

    if not stopwordsiso.has_lang(language):
        return frozenset()
    return frozenset(word.lower() for word in stopwordsiso.stopwords(language))


def _jieba_tokens(text: str) -> list[str]:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    stop = stopwords("zh")
    tokens = []
    for piece in jieba.cut(text):
        token = piece.strip().lower()
        if token and _WORD.search(token) and token not in stop:
            tokens.append(token)
    return tokens


@cache
def _mecab() -> Any:
    import fugashi

    return fugashi.Tagger()  # finds the unidic-lite dictionary by itself


def _mecab_tokens(text: str) -> list[str]:
    """Japanese words by MeCab with UniDic, each in its base form (``しました`` → ``する``,
    ``ます``, ``た``), as Lucene's Kuromoji analyzer indexes base forms; stop words removed."""
    stop = stopwords("ja")
    tokens = []
    for word in _mecab()(text):
        base = word.feature.orthBase
        token = (base if base and base != "*" else word.surface).lower()
        if _WORD.search(token) and token not in stop:
            tokens.append(token)
    return tokens


def python_tokens(spec: AnalyzerSpec, text: str) -> list[str]:
    """Tokens of ``text`` for the pre-tokenised kinds (``jieba``, ``mecab`` and ``simple``).

    One tokenizer per language for everything that reads text: the index (through
    :func:`pretokenize`), the queries, the reranker's vocabulary and the embeddings; the
    text is taken in Unicode's composed form (NFC) first, as every reader gives it.
    """
    text = composed(text)
    if spec.kind == "jieba":
        return _jieba_tokens(text)
    if spec.kind == "mecab":
        return _mecab_tokens(text)
    if spec.kind == "simple":
        stop = stopwords(spec.language)
        return [t for t in (m.group().lower() for m in _WORD.finditer(text)) if t not in stop]
    raise ValueError(f"{spec.kind} analysis runs in Lucene, not in Python")


def pretokenize(spec: AnalyzerSpec, text: str) -> str:
    """The text to hand to Lucene's white-space analyzer for a pre-tokenised language."""
    return " ".join(python_tokens(spec, text))


@cache
def lucene_analyzer(spec: AnalyzerSpec) -> Any:
    """The Java ``Analyzer`` that indexes and searches ``spec``'s language."""
    if spec.pretokenized:
        return jvm.java_class(WHITESPACE_ANALYZER)()
    if spec.language == "en":
        return jvm.java_class(ENGLISH_ANALYZER).newDefaultInstance()
    return jvm.java_class(LUCENE_ANALYZERS[spec.language])()


class Analyzer:
    """Turns text into index terms, exactly as the index did for its documents."""

    #: Analysed texts remembered: translated queries repeat the same candidates often, and
    #: each Lucene analysis is a call into Java.
    CACHE_SIZE = 200_000

    def __init__(self, spec: AnalyzerSpec) -> None:
        self.spec = spec
        self._utils: Any = None
        self._java: Any = None
        self._cache: dict[str, list[str]] = {}

    def tokens(self, text: str) -> list[str]:
        """The index terms of ``text`` (stemmed, stop words removed), the text taken in the
        Unicode form documents are indexed in (NFC), however it was written."""
        cached = self._cache.get(text)
        if cached is not None:
            return list(cached)
        if self.spec.pretokenized:
            tokens = python_tokens(self.spec, text)  # composes the text itself
        else:
            with jvm.OBJECT_CALLS:  # each thread's token list is its own object
                if self._java is None:
                    self._utils = jvm.java_class("io.anserini.analysis.AnalyzerUtils")
                    self._java = lucene_analyzer(self.spec)
                analysed = self._utils.analyze(self._java, composed(text))
                tokens = [str(t) for t in analysed.toArray()]
        if len(self._cache) < self.CACHE_SIZE:
            self._cache[text] = tokens
        return list(tokens)


@cache
def shared_analyzer(spec: AnalyzerSpec) -> Analyzer:
    """The process's one :class:`Analyzer` for ``spec``, whose remembered texts every searcher
    of that language shares: ``clir run`` searches the same translated topics many times
    (a tuning grid, then the dev and test runs), and each alternative is analysed once."""
    return Analyzer(spec)
