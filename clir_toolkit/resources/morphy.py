"""WordNet's morphy: the base form of an inflected English word, without loading WordNet whole.

Morphy (``morphy(7WN)``; Miller 1995, thesis ref. [25]) finds the dictionary form of a word
for one part of speech in two steps:

1. if the word is in that part of speech's *exception list* (``noun.exc``: ``mice mouse``,
   ``verb.exc``: ``ran run``, …), its base forms are the ones listed there;
2. otherwise, each *detachment rule* whose suffix ends the word replaces that suffix
   (nouns: ``-s`` → ``""``, ``-ses`` → ``-s``, ``-ves`` → ``-f``, …; verbs: ``-ies`` → ``-y``,
   ``-ing`` → ``-e``, …; adjectives: ``-er``/``-est`` → ``""`` or ``-e``; adverbs: none).

A candidate counts only if it is a lemma of that part of speech in WordNet's ``index.POS``
file, and the word itself is tried first: a word that is already a lemma is its own base
form (``glasses`` stays ``glasses`` as a noun). Of the candidates that count, the first is
the answer — the same order and the same answer as nltk's ``WordNetCorpusReader.morphy``
with a part of speech given (a test compares the two on every word of the exception lists
and the inflections of thousands of lemmas).

nltk's reader answers the same, but its constructor reads all of WordNet and maps it
between WordNet versions: about 8 s here, plus 2 s to import nltk, for the few query words a
dictionary lacks. :class:`Morphology` reads only the lemma column of the four index files
and the four exception lists (about 0.1 s) and imports nothing.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

from clir_toolkit.errors import ResourceError

__all__ = ["DETACHMENT_RULES", "PARTS_OF_SPEECH", "Morphology", "morphology"]

#: WordNet's parts of speech, by the letter WordNet uses, and the suffix of their files.
PARTS_OF_SPEECH = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

#: The detachment rules of ``morphy(7WN)`` (suffix, replacement), in the order they are tried.
DETACHMENT_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (
        ("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
        ("shes", "sh"), ("men", "man"), ("ies", "y"),
    ),
    "v": (
        ("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
        ("ing", "e"), ("ing", ""),
    ),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip


class Morphology(NamedTuple):
    """What morphy needs of WordNet: the lemmas and the exception lists of each part of speech."""

    lemmas: dict[str, frozenset[str]]
    exceptions: dict[str, dict[str, tuple[str, ...]]]

    @classmethod
    def read(cls, corpus: Path) -> Morphology:
        """Read ``index.POS`` (first column) and ``POS.exc`` of the WordNet database in
        ``corpus``."""
        lemmas: dict[str, frozenset[str]] = {}
        exceptions: dict[str, dict[str, tuple[str, ...]]] = {}
        for pos, suffix in PARTS_OF_SPEECH.items():
            try:
                with open(corpus / f"index.{suffix}", encoding="utf-8") as index:
                    # Lines that start with a space are the licence at the top of the file.
                    lemmas[pos] = frozenset(
                        line.split(" ", 1)[0] for line in index if not line.startswith(" ")
                    )
                with open(corpus / f"{suffix}.exc", encoding="utf-8") as listed:
                    rows = (line.split() for line in listed)
                    exceptions[pos] = {row[0]: tuple(row[1:]) for row in rows if row}
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise ResourceError(f"{exc.filename}: cannot read WordNet: {reason}") from None
        return cls(lemmas, exceptions)

    def base_form(self, word: str, pos: str) -> str | None:
        """The base form of ``word`` (lower case, ``_`` between the words of a collocation)
        as part of speech ``pos`` (``n``, ``v``, ``a``, ``r``), or None if it has none."""
        listed = self.exceptions[pos].get(word)
        if listed is not None:
            candidates = [word, *listed]
        else:
            candidates = [word]
            candidates += [
                word[: -len(suffix)] + replacement
                for suffix, replacement in DETACHMENT_RULES[pos]
                if word.endswith(suffix)
            ]
        lemmas = self.lemmas[pos]
        return next((form for form in candidates if form in lemmas), None)


@cache
def morphology(corpus: Path) -> Morphology:
    """The :class:`Morphology` of the WordNet database in ``corpus``, read once per process."""
    return Morphology.read(corpus)
