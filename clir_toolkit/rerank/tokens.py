"""The reranker's tokens: one scheme for every language, in pure Python.

A neural reranker sees token ids, not text; :func:`rerank_tokens` gives the words that
:mod:`clir_toolkit.rerank.vocabulary` turns into ids. The same scheme serves every language,
in pure Python, because the reranker also runs on GPU hosts without Java: lower-cased Unicode
word tokens with the ``stopwordsiso`` stop words removed and no stemming. Chinese (jieba) and
Japanese (MeCab) are segmented exactly as the index and the embeddings segment them
(:func:`clir_toolkit.analysis.python_tokens`); runs of Thai or Hangul, which have no spaces
between words, become overlapping character bigrams, as Lucene's ``CJKAnalyzer`` does. The
reranker's vocabulary is its own, so its terms need not be BM25's stemmed terms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

#: Bump when :func:`rerank_tokens` changes, so that cached tensors are not reused.
ANALYSIS_VERSION = 2  # 2: Japanese by MeCab, as the index

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


def tokenize_all(
    texts: Mapping[str, str], language: str, desc: str = "tokenising"
) -> dict[str, list[str]]:
    """id → tokens of every text, with a progress bar."""
    from clir_toolkit.progress import progress_bar

    return {
        key: rerank_tokens(language, text)
        for key, text in progress_bar(texts.items(), desc=desc, unit="text", leave=False)
    }
