"""The text word vectors are trained on: collected per language, split into tokens.

Steps 1 and 2 of ``clir embed train`` (:mod:`clir_toolkit.translate.embed_train`):

1. **Text.** One text per line in each language: gettext catalog messages, installed
   manual pages and any corpus (:func:`clir_toolkit.resources.monolingual.collect_monolingual`,
   here :func:`collect_text`), or files you give.
2. **Tokens.** Lower-cased words (:func:`tokenizer_for`): English split as query words are
   (:func:`clir_toolkit.query.source_words`), so that every query word can meet its
   vector; Chinese segmented by jieba and Japanese by MeCab (``fugashi`` + ``unidic-lite``)
   exactly as the index and the reranker segment them, so that the vectors can initialise
   a reranker's vocabulary. :func:`tokenise_file` writes a text's tokens in gensim's
   ``corpus_file`` format.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.errors import ClirError, ResourceError, UsageError

__all__ = [
    "MAN_ROOT",
    "SOURCE_LANGUAGE",
    "CorpusStats",
    "Tokenizer",
    "collect_text",
    "tokenise_file",
    "tokenizer_for",
]

#: Queries are English: the source side of every space trained here.
SOURCE_LANGUAGE = "en"

Tokenizer = Callable[[str], list[str]]

_WORD = re.compile(r"\w+", re.UNICODE)


def _unicode_words(text: str) -> list[str]:
    return [match.group().lower() for match in _WORD.finditer(text)]


def tokenizer_for(lang: str) -> tuple[Tokenizer, str]:
    """The function that splits ``lang`` text into the words vectors are trained for.

    Returns ``(tokenize, description)``. English words are :func:`source_words` (query
    words: hyphens and apostrophes inside words kept); Chinese words come from jieba (as
    the index does, :func:`clir_toolkit.analysis.python_tokens`); Japanese by MeCab with
    UniDic in base forms, as the index does too; every other
    language is split into lower-cased Unicode words (``l'option`` → ``l``, ``option``).
    """
    from clir_toolkit.analysis import analyzer_for, normalise_language, python_tokens

    code = normalise_language(lang)
    if code == SOURCE_LANGUAGE:
        from clir_toolkit.query import source_words

        return source_words, "query words (lower case, inner hyphens and apostrophes kept)"
    spec = analyzer_for(code)
    if spec.kind in ("jieba", "mecab"):  # the index's own segmentation (one per language)
        return (lambda text: python_tokens(spec, text)), f"{spec.name}, as the index"
    return _unicode_words, "lower-cased Unicode words"


@dataclass(frozen=True)
class CorpusStats:
    """Size of one tokenised text."""

    lines: int
    tokens: int


def tokenise_file(
    text: Path, out: Path, tokenize: Tokenizer, *, progress: bool = True
) -> CorpusStats:
    """Write ``text``'s lines as space-separated tokens to ``out`` (empty lines dropped).

    This is gensim's ``corpus_file`` format: one sentence per line.
    """
    from clir_toolkit.progress import progress_bar

    if not text.is_file():
        raise ClirError(f"{text}: no such text file (give one text per line, UTF-8)")
    lines = tokens = 0
    with (
        open(text, encoding="utf-8", errors="replace") as source,
        open(out, "w", encoding="utf-8") as sink,
    ):
        for line in progress_bar(
            source,
            desc=f"tokenising {text.name}",
            unit=" lines",
            show=progress,
            leave=False,
        ):
            words = tokenize(line)
            if words:
                sink.write(" ".join(words))
                sink.write("\n")
                lines += 1
                tokens += len(words)
    if tokens == 0:
        raise UsageError(f"{text}: no words in this text (give one text per line, UTF-8)")
    return CorpusStats(lines, tokens)


#: Installed manual pages: English pages and their translations are the bulk of the text.
MAN_ROOT = Path("/usr/share/man")


def collect_text(lang: str, out: Path, corpora: Sequence[Path], man_root: Path | None) -> Path:
    """``lang`` text of this machine and ``corpora``, one text per line, written to ``out``.

    See :func:`clir_toolkit.resources.monolingual.collect_monolingual`; no text at all is a
    :class:`~clir_toolkit.errors.ResourceError`.
    """
    from clir_toolkit.resources.monolingual import collect_monolingual

    count = collect_monolingual(lang, out, corpora=tuple(corpora), man_root=man_root)
    if count == 0:
        raise ResourceError(
            f"no {lang} text found on this machine (no gettext catalogs of that language "
            "and no corpus given): give --source-text/--target-text files"
        )
    return out
