"""Structured queries: what every translator returns and what the searcher consumes.

A CLIR query keeps the shape of its source: for each source-language term, a weighted set
of target-language alternatives (the candidate translations). Pirkola (1998) showed that
how those alternatives are combined matters more than which dictionary produced them, so
the search keeps the structure until the last moment, when :mod:`clir_toolkit.search`
turns it into one of three Lucene queries (``and``, ``or``, ``syn``).

A plain string is the special case of one alternative (the word itself) per term. Like
PyTerrier's ``query_0``, a structured query keeps the text it came from in ``original``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Alternative:
    """One target-language rendering of a source term; ``text`` may hold several words."""

    text: str
    weight: float = 1.0


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """A source term and its weighted target-language alternatives."""

    source: str
    alternatives: tuple[Alternative, ...]

    @classmethod
    def plain(cls, word: str) -> QueryTerm:
        """A term that stands for itself (no translation)."""
        return cls(word, (Alternative(word),))


@dataclass(frozen=True, slots=True)
class StructuredQuery:
    """A query as a sequence of terms with alternatives; ``original`` is the source text."""

    qid: str
    terms: tuple[QueryTerm, ...]
    original: str = ""

    @classmethod
    def plain(cls, qid: str, text: str) -> StructuredQuery:
        """The query of a plain string: one term per white-space separated word."""
        return cls(qid, tuple(QueryTerm.plain(word) for word in text.split()), text)

    def describe(self) -> str:
        """A readable one-line rendering, e.g. ``list → {liste 0.5, lister 0.5} | ...``."""
        parts = []
        for term in self.terms:
            alternatives = ", ".join(
                a.text if a.weight == 1.0 else f"{a.text} {a.weight:.3g}" for a in term.alternatives
            )
            parts.append(f"{term.source} → {{{alternatives}}}")
        return " | ".join(parts)


def source_words(text: str) -> list[str]:
    """Lower-cased words of a source-language text, split as dictionary keys are."""
    from clir_toolkit.resources.dictionary.phrases import phrase_words

    return phrase_words(text)
