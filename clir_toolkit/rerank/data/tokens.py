"""The reranker's tokens: one scheme for every language, in pure Python.

A neural reranker sees token ids, not text; :func:`rerank_tokens` gives the words that
:mod:`clir_toolkit.rerank.data.vocabulary` turns into ids. The same scheme serves every language,
in pure Python, because the reranker also runs on GPU hosts without Java: lower-cased Unicode
word tokens with the ``stopwordsiso`` stop words removed and no stemming. Chinese (jieba) and
Japanese (MeCab) are segmented exactly as the index and the embeddings segment them
(:func:`clir_toolkit.analysis.python_tokens`); runs of Thai or Hangul, which have no spaces
between words, become overlapping character bigrams, as Lucene's ``CJKAnalyzer`` does. The
reranker's vocabulary is its own, so its terms need not be BM25's stemmed terms.

That is the ``words`` scheme. A vocabulary of the other scheme, ``use-m3-tokens``, holds
the SentencePiece pieces of USE-m3's pretrained subword table instead, the same for every
language (:mod:`clir_toolkit.rerank.data.subwords`); :func:`text_tokens` gives either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

#: Bump when :func:`rerank_tokens` changes, so that cached tensors are not reused.
ANALYSIS_VERSION = 2  # 2: Japanese by MeCab, as the index

WORDS = "words"
"""The word scheme of :func:`rerank_tokens` (the vocabularies of words of a training)."""

_WORD = re.compile(r"\w+", re.UNICODE)
# Scripts written without spaces between words: Hiragana, Katakana, CJK ideographs (for
# Japanese), Hangul syllables and Thai. Their runs become character bigrams.
_UNSPACED = re.compile(
    r"[\u0e00-\u0e7f\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)


def _bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of a run of unspaced script (one character alone stays)."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _word_tokens(text: str) -> list[str]:
    """Lower-cased Unicode word tokens; runs of unspaced scripts become bigrams."""
    tokens: list[str] = []
    position = 0
    for match in _UNSPACED.finditer(text):
        tokens.extend(m.group().lower() for m in _WORD.finditer(text, position, match.start()))
        tokens.extend(_bigrams(match.group()))
        position = match.end()
    tokens.extend(m.group().lower() for m in _WORD.finditer(text, position))
    return tokens


@cache
def _spec(language: str) -> Any:
    from clir_toolkit.analysis import analyzer_for

    return analyzer_for(language)


def rerank_tokens(language: str, text: str) -> list[str]:
    """The reranker's tokens of ``text`` in ``language`` (an ISO 639-1 code).

    Chinese (``jieba``) and languages without a Lucene analyzer (``simple``) are tokenised
    exactly as the index tokenises them. For Lucene languages, whose analyzers run in Java,
    a pure-Python approximation is used: Unicode words, lower-cased, ``stopwordsiso`` stop
    words removed, no stemming; unspaced scripts (Thai, Hangul, and kana or kanji in a text
    of another language) become character bigrams.
    """
    from clir_toolkit.analysis import python_tokens, stopwords

    spec = _spec(language)
    if spec.pretokenized:
        return python_tokens(spec, text)
    stop = stopwords(spec.language)
    return [token for token in _word_tokens(text) if token not in stop]


def token_schemes() -> tuple[str, ...]:
    """The names of the token schemes: words, then the subword table's pieces."""
    from clir_toolkit.rerank.data.subwords import SOURCE

    return (WORDS, SOURCE)


def text_tokens(scheme: str, language: str, text: str, limit: int | None = None) -> list[str]:
    """The tokens of ``text`` in ``scheme`` (:func:`token_schemes`); the first ``limit``.

    ``words``: :func:`rerank_tokens` of the language. ``use-m3-tokens``: SentencePiece
    pieces, the same for every language (:func:`clir_toolkit.rerank.data.subwords.piece_tokens`).
    """
    if scheme == WORDS:
        tokens = rerank_tokens(language, text)
        return tokens[:limit] if limit is not None else tokens
    from clir_toolkit.rerank.data import subwords

    if scheme != subwords.SOURCE:
        raise ValueError(f"unknown token scheme {scheme!r} (known: {', '.join(token_schemes())})")
    return subwords.piece_tokens(text, limit)


def scheme_version(scheme: str) -> str | int:
    """What a scheme's tokens depend on besides the text, for cache keys: the analysis
    version of words (:data:`ANALYSIS_VERSION`), the package that ships the pieces."""
    if scheme == WORDS:
        return ANALYSIS_VERSION
    from clir_toolkit.rerank.data import subwords

    return subwords.fingerprint()


def tokenize_all(
    texts: Mapping[str, str],
    language: str,
    desc: str = "tokenising",
    scheme: str = WORDS,
    limit: int | None = None,
) -> dict[str, list[str]]:
    """id → tokens of every text (the first ``limit`` of each), with a progress bar."""
    from clir_toolkit.progress import progress_bar

    return {
        key: text_tokens(scheme, language, text, limit)
        for key, text in progress_bar(texts.items(), desc=desc, unit="text", leave=False)
    }
