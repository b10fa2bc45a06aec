"""What the Debian collections (man pages, DDTP) share about their queries, on purpose.

The split a query falls in (:func:`split_of`: a hash of its id, so that a query lands in
the same split on every machine and in every language), when two query texts count as the
same (:func:`_query_key`: the filter that drops queries which could not tell their pages
apart) and how words are counted (:func:`count_words`: each Chinese or Japanese character
is one), for the minimum query length and the mean document length.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["count_words", "split_of"]


def split_of(qid: str) -> str:
    """``train``, ``dev`` or ``test``: 60/20/20 by the sha256 of the query id.

    A hash, not a random draw, so that a query lands in the same split on every machine,
    whatever other pages are installed, and in every language (``ls.1`` is a test query
    in all seven collections or in none).
    """
    bucket = int(hashlib.sha256(qid.encode("utf-8")).hexdigest(), 16) % 100
    return "train" if bucket < 60 else "dev" if bucket < 80 else "test"


def _query_key(text: str) -> str:
    """What two queries must share to count as the same text: case and blanks ignored."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".")


# Kana and CJK ideographs count one word each; elsewhere a word is a run of letters/digits.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


def count_words(text: str) -> int:
    """Words in ``text``; each Chinese or Japanese character counts as one."""
    return sum(1 for _ in _WORD.finditer(text))
