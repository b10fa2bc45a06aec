"""A cross-lingual word space from USE-m3's pretrained subword table: ``--embed use-m3-tokens``.

The multilingual Universal Sentence Encoder's first layer is a table of 128,010 × 512
SentencePiece piece vectors, aligned across languages by its training on translation pairs
(:mod:`clir_toolkit.rerank.data.subwords`). A *word* gets a vector in it without any
training: the mean of the rows of its pieces (``répertoires`` = ``▁répertoire`` + ``s``).
On common English → French pairs a word and its translation have cosine about 0.6, against
about 0.04 for unrelated words, so that the table translates words by nearest neighbours as
an aligned space of ``clir embed train`` does (thesis §5.3), with no text, dictionary or
minutes of training per language.

**Source words** (English query words) get their vector on demand: every word has pieces,
so no query word is out of vocabulary.

**Target words** must be real words of the documents' language, or the nearest "word" of an
English term would be any string whose pieces resemble it. They are the vocabulary that
``clir embed train`` would give the language (:func:`text_vocabulary`): the same text (the
gettext catalogs and manual pages of the machine, :func:`~clir_toolkit.translate.embed_cache.
cached_text`), split into the same words (:func:`~clir_toolkit.translate.embed_text.
tokenizer_for`), each kept when it occurs :data:`MIN_COUNT` times or more (the skip-gram's
``--min-count``). Of those, the translation candidates (:func:`target_candidates`) are the
:data:`MAX_WORDS` most frequent that are

* words rather than subword noise (:func:`is_candidate`): a letter and two characters or
  more, except in the scripts where one character is a word (Chinese and Japanese
  ideographs, kana, hangul), and no character that the SentencePiece model does not know
  (``<unk>``, whose row would make all such words alike);
* not English quoted in the text (:func:`without_english`): French man pages hold ``file``
  and ``the`` (untranslated messages, examples), which the table puts where the English
  words are, so that ``file`` would be its own nearest "French" word. A word is left out
  when it is much more frequent in the English text than in the language's own
  (:data:`ENGLISH_RATIO`); ``option`` or ``grep``, frequent in both, stay.

A word's pieces are those of the word as written or capitalised, whichever the model cuts
into fewer (:func:`word_pieces`: ``directory`` is ``▁director`` + ``y``, ``Directory`` one
piece), without a bare word-start piece ``▁`` when others follow (the model writes ``文件``
as ``▁`` + ``文件``: the shared ``▁`` row would pull every Chinese and Japanese word towards
the others).

The vocabulary of a language — its words, their counts and their pieces' rows — is counted
once and cached under ``$CLIR_DATA/cache/embeddings``, named by the toolkit's freshness rule
(:func:`clir_toolkit.freshness.cache_key`: the text's sha256, the count threshold, the
version of the subword table's package and the code of this module and those it imports).
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.files import atomic_write, sha256_file
from clir_toolkit.freshness import cache_key
from clir_toolkit.rerank.data import subwords
from clir_toolkit.resources.dictionary.phrases import has_letter
from clir_toolkit.translate.embed_cache import cached_text, default_cache_dir
from clir_toolkit.translate.embed_text import MAN_ROOT, SOURCE_LANGUAGE, tokenizer_for

__all__ = [
    "ENGLISH_RATIO",
    "MAX_WORDS",
    "MIN_COUNT",
    "SOURCE",
    "SubwordVocabulary",
    "is_candidate",
    "parse_spec",
    "target_candidates",
    "text_vocabulary",
    "without_english",
    "word_pieces",
    "word_vectors",
]

SOURCE = subwords.SOURCE
"""The name of the space (``--embed use-m3-tokens``), the same as K-NRM's source."""

MIN_COUNT = 3
"""Occurrences a target word needs in the language's text: ``clir embed train``'s default
``--min-count``, so that both sources translate into the same vocabulary."""

MAX_WORDS = 50_000
"""Translation candidates per target language: the most frequent words of the vocabulary."""

ENGLISH_RATIO = 0.25
"""A word of the target language's text is taken for English, and is no candidate, when its
share of the words of the target text is below this times its share of the English text
(:func:`without_english`). Chosen on the French man pages' dev split (nDCG@10 of ``--embed
use-m3-tokens --embed-top 1``: 0.287 keeping every word, 0.325 with 0.25, 0.306 with 0.5,
0.284 with 1, 0.148 with 16). Word-translation precision prefers larger values (on the
dictionary pairs that are not held out, NN P@1 rises from 0.5 to 16 in five languages of
seven), which drop the words English and the language share (``signal``, ``options``):
poorer retrieval.
"""

VOCABULARY_CODE = (__name__,)
"""The code a cached vocabulary depends on (this module and what it imports: the text
collection, the tokenisers and the SentencePiece model's reader)."""

WORD_START = "▁"
"""SentencePiece's mark of a word start; alone, it is a piece of its own."""

_ONE_CHARACTER_WORDS = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
"""Scripts where one character is a word: hiragana, katakana, CJK ideographs, hangul."""


def parse_spec(spec: str) -> tuple[bool, Path | None]:
    """``(is the subword table, its text)`` of an ``--embed`` value: ``use-m3-tokens``
    (the machine's text), ``use-m3-tokens:TEXT.txt`` (that text), or neither (a file)."""
    if spec == SOURCE:
        return True, None
    if spec.startswith(f"{SOURCE}:") and len(spec) > len(SOURCE) + 1:
        return True, Path(spec[len(SOURCE) + 1 :])
    return False, None


def word_pieces(word: str) -> list[str]:
    """The SentencePiece pieces that stand for ``word``: those of the word as written or
    capitalised, whichever the model cuts into fewer pieces (as written on a tie), without a
    bare leading ``▁``.

    Words are lower-cased in the text and in queries, but the model learnt many as they
    start a sentence or a title: ``directory`` is ``▁director`` + ``y``, ``Directory`` one
    piece, whose row is the word's own (nearest French word: ``répertoire``).
    """

    def pieces(form: str) -> list[str]:
        cut = subwords.piece_tokens(form)
        return cut[1:] if len(cut) > 1 and cut[0] == WORD_START else cut

    return min((pieces(word), pieces(word[:1].upper() + word[1:])), key=len)


def word_vectors(words: Sequence[str]) -> Any:
    """``float32[len(words), 512]``: each word's mean piece row (not unit length)."""
    rows, starts = _piece_rows(words)
    return _mean_rows(rows, starts)


def _piece_rows(words: Sequence[str]) -> tuple[Any, Any]:
    """``(rows, starts)``: the table rows of every word's pieces, one word after the other,
    and where each word's rows start (``starts[-1]`` is the number of rows)."""
    import numpy as np

    rows: list[int] = []
    starts = [0]
    for word in words:
        rows.extend(subwords.piece_ids(word_pieces(word)))
        starts.append(len(rows))
    return np.asarray(rows, dtype=np.int32), np.asarray(starts, dtype=np.int64)


def _mean_rows(rows: Any, starts: Any, batch: int = 8192) -> Any:
    """The mean of ``rows[starts[i]:starts[i + 1]]`` for each word ``i``, a batch of words
    at a time (the dequantised rows of all words at once would take hundreds of MB)."""
    import numpy as np

    words = len(starts) - 1
    means = np.zeros((words, subwords.DIM), dtype=np.float32)
    for first in range(0, words, batch):
        last = min(first + batch, words)
        begin, end = int(starts[first]), int(starts[last])
        if begin == end:
            continue
        vectors = subwords.row_vectors(rows[begin:end])
        offsets = starts[first:last] - begin
        lengths = np.diff(starts[first : last + 1])
        has_rows = lengths > 0
        sums = np.add.reduceat(vectors, offsets[has_rows], axis=0)
        means[first:last][has_rows] = sums / lengths[has_rows, None]
    return means


def is_candidate(word: str) -> bool:
    """Whether a vocabulary word may be a translation: a word, not subword noise.

    It needs a letter (not ``42`` or ``--``) and two characters or more, unless written in
    a script where one character is a word (``文``, ``の``; not ``l`` of ``l'option``).
    """
    if not has_letter(word):
        return False
    return len(word) >= 2 or _ONE_CHARACTER_WORDS.match(word) is not None


@dataclass(frozen=True, eq=False)
class SubwordVocabulary:
    """The words of one language's text, most frequent first, with their pieces' rows.

    Word ``i`` occurs ``counts[i]`` times and its pieces are the table rows
    ``rows[starts[i]:starts[i + 1]]``.
    """

    lang: str
    words: list[str]
    counts: Any
    rows: Any
    starts: Any

    def __len__(self) -> int:
        return len(self.words)

    def select(self, indices: Sequence[int]) -> SubwordVocabulary:
        """The words ``indices``, in that order."""
        import numpy as np

        chosen = np.asarray(indices, dtype=np.int64)
        lengths = np.diff(self.starts)[chosen]
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        rows = (
            np.concatenate([self.rows[self.starts[i] : self.starts[i + 1]] for i in chosen])
            if len(chosen)
            else np.zeros(0, dtype=np.int32)
        )
        return SubwordVocabulary(
            self.lang, [self.words[i] for i in chosen], self.counts[chosen], rows, starts
        )

    def candidates(self, limit: int | None = MAX_WORDS) -> SubwordVocabulary:
        """The ``limit`` most frequent words that pass :func:`is_candidate` and whose pieces
        the SentencePiece model knows (no ``<unk>`` row); all such words when None."""
        unknown = subwords.piece_ids([subwords.UNKNOWN])[0]
        kept: list[int] = []
        for i, word in enumerate(self.words):
            if limit is not None and len(kept) >= limit:
                break
            has_unknown = bool((self.rows[self.starts[i] : self.starts[i + 1]] == unknown).any())
            if not has_unknown and is_candidate(word):
                kept.append(i)
        return self.select(kept)

    def vectors(self) -> Any:
        """``float32[len(self), 512]``: each word's mean piece row."""
        return _mean_rows(self.rows, self.starts)


def text_vocabulary(
    lang: str,
    text: Path | None = None,
    *,
    min_count: int = MIN_COUNT,
    cache_dir: Path | None = None,
    man_root: Path | None = MAN_ROOT,
    progress: bool = False,
) -> SubwordVocabulary:
    """Every word seen ``min_count`` times or more in ``lang``'s text, with its pieces.

    The text and its words are those of ``clir embed train`` (the catalogs and man pages of
    the machine, or ``text``, one text per line; cut by
    :func:`~clir_toolkit.translate.embed_text.tokenizer_for`), so that with the same
    ``min_count`` the vocabulary is the one its skip-gram keeps. Counted once and cached in
    ``cache_dir`` (default: ``$CLIR_DATA/cache/embeddings``); a damaged entry is counted
    again, and an entry of the machine's text supersedes its earlier ones (removed).
    """
    import numpy as np

    cache = cache_dir or default_cache_dir()
    text_given = text
    if text is None:
        text = cached_text(lang, (), man_root, cache)
    elif not text.is_file():
        raise ClirError(f"{text}: no such text file (give one text per line, UTF-8)")
    made_from = {
        "lang": lang,
        "text": sha256_file(text),
        "min_count": min_count,
        "table": subwords.fingerprint(),
    }
    # Entries of the machine's text are named by hex digits alone, those of a given text
    # start with "text-": a new machine entry supersedes the others, a given text's does not.
    kind = "" if text_given is None else "text-"
    key = cache_key(made_from, VOCABULARY_CODE)[:16]
    cached = cache / f"subword-vocabulary-{lang}-{kind}{key}.npz"
    try:
        with np.load(cached, allow_pickle=False) as saved:
            return SubwordVocabulary(
                lang,
                [str(word) for word in saved["words"]],
                saved["counts"],
                saved["rows"],
                saved["starts"],
            )
    except (OSError, ValueError, KeyError):  # not counted yet, or a damaged entry
        pass
    counts = _count_words(text, lang, progress)
    if not counts:
        raise UsageError(f"{text}: no words in this text (give one text per line, UTF-8)")
    words = [word for word, count in counts.most_common() if count >= min_count]
    rows, starts = _piece_rows(words)
    vocabulary = SubwordVocabulary(
        lang, words, np.asarray([counts[w] for w in words], dtype=np.int64), rows, starts
    )
    with contextlib.suppress(OSError):  # a cache that cannot be written is skipped
        cache.mkdir(parents=True, exist_ok=True)
        with atomic_write(cached, "wb", encoding=None, own=True) as handle:
            np.savez(
                handle, words=np.array(words, dtype=str), counts=vocabulary.counts, rows=rows,
                starts=starts,
            )  # fmt: skip
        if text_given is None:
            for old in cache.glob(f"subword-vocabulary-{lang}-[0-9a-f]*.npz"):
                if old != cached:
                    old.unlink(missing_ok=True)
    return vocabulary


def target_candidates(
    lang: str,
    text: Path | None = None,
    limit: int | None = MAX_WORDS,
    cache_dir: Path | None = None,
) -> SubwordVocabulary:
    """The words of ``lang`` that English words may be translated into.

    The :meth:`~SubwordVocabulary.candidates` of :func:`text_vocabulary` (the machine's
    text of ``lang``, less the English words it quotes: :func:`without_english`), or of
    ``text``, which is taken as ``lang``'s own text (nothing is left out as English).
    """
    vocabulary = text_vocabulary(lang, text, cache_dir=cache_dir)
    if text is None:
        vocabulary = without_english(
            vocabulary, text_vocabulary(SOURCE_LANGUAGE, cache_dir=cache_dir)
        )
    candidates = vocabulary.candidates(limit)
    if not candidates.words:
        raise UsageError(
            f"{text or f'the {lang} text of this machine'}: no word occurs {MIN_COUNT} times "
            "or more (numbers and single letters do not count): give more text of the "
            "documents' language"
        )
    return candidates


def without_english(
    vocabulary: SubwordVocabulary, english: SubwordVocabulary, ratio: float = ENGLISH_RATIO
) -> SubwordVocabulary:
    """``vocabulary`` less the words it shares with ``english`` that are English there.

    The catalogs and man pages of a language quote English (untranslated messages, option
    names, examples): ``file`` and ``the`` are words of the French text. In the subword
    table they sit where their English twins do, so each would be the nearest "French" word
    of itself. A word is left out when its share of ``vocabulary``'s words is below
    ``ratio`` times its share of ``english``'s; words used as much in both (``option``,
    ``grep``) stay.
    """
    english_share = dict(zip(english.words, english.counts / english.counts.sum(), strict=True))
    shares = vocabulary.counts / vocabulary.counts.sum()
    native = [
        i
        for i, word in enumerate(vocabulary.words)
        if shares[i] >= ratio * english_share.get(word, 0.0)
    ]
    return vocabulary.select(native)


def _count_words(text: Path, lang: str, progress: bool) -> Counter[str]:
    """How often each word of ``text`` occurs, its lines cut as ``clir embed train`` cuts
    them (and as gensim then splits its tokens file: on white space)."""
    from clir_toolkit.progress import progress_bar

    tokenize = tokenizer_for(lang)[0]
    counts: Counter[str] = Counter()
    with open(text, encoding="utf-8", errors="replace") as lines:
        for line in progress_bar(
            lines, desc=f"counting the words of {text.name}", unit=" lines", show=progress,
            leave=False,
        ):  # fmt: skip
            counts.update(" ".join(tokenize(line)).split())
    return counts
