"""Dictionary phrases: the words keys are made of, and the text helpers every loader shares.

Keys of a :class:`~clir_toolkit.resources.dictionary.bilingual.BilingualDictionary` are
phrases normalised by :func:`normalise_phrase`: lower-cased words (see :func:`phrase_words`)
joined by single spaces. Query translators split queries with :func:`phrase_words` too, so
that their words meet the keys. :func:`has_letter` and :func:`remove_notes` are the pieces
of text cleaning that the FreeDict and CC-CEDICT loaders and :mod:`.coverage` share.
"""

from __future__ import annotations

import re

__all__ = ["has_letter", "normalise_phrase", "phrase_words", "remove_notes"]

_WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
_LETTER = re.compile(r"[^\W\d_]")


def phrase_words(text: str) -> list[str]:
    """The lower-cased words of ``text``, as dictionary keys are made of.

    A word is a run of letters and digits, possibly joined by hyphens or apostrophes
    ("e-mail", "don't"); everything else separates words. Query translators should split
    queries with this function so that their words meet the keys.
    """
    return [word.replace("\u2019", "'") for word in _WORD.findall(text.lower())]


def normalise_phrase(text: str) -> str:
    """The key under which ``text`` is stored: its :func:`phrase_words` joined by spaces."""
    return " ".join(phrase_words(text))


def has_letter(text: str) -> bool:
    """Whether ``text`` holds a letter (not only digits, punctuation or space)."""
    return _LETTER.search(text) is not None


_TAGS = (
    ("<", re.compile(r"<[^<>]*>")),  # grammatical labels <n, fem>, <v, trans>
    ("[", re.compile(r"\[[^\[\]]*\]")),  # usage labels [Am.], [comp.], [eine Äußerung; Frage]
    ("{", re.compile(r"\{[^{}]*\}")),  # cross-references {munch}
)
_PARENTHESES = re.compile(r"\([^()]*\)")


def remove_notes(text: str) -> str:
    """Drop <labels>, [labels], {references} and (parenthesised notes, even nested ones)."""
    for opening, pattern in _TAGS:
        if opening in text:
            text = pattern.sub(" ", text)
    while "(" in text:
        shorter = _PARENTHESES.sub(" ", text)
        if shorter == text:
            return text
        text = shorter
    return text
