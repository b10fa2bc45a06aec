"""Dictionary coverage of a topic set: how many query words a dictionary can translate at all.

:func:`coverage` is the first thing to check before blaming a retrieval model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from clir_toolkit.analysis import ENGLISH_STOP_WORDS
from clir_toolkit.formats import Topic
from clir_toolkit.resources.dictionary.bilingual import BilingualDictionary
from clir_toolkit.resources.dictionary.phrases import has_letter, phrase_words

__all__ = ["CoverageReport", "coverage", "format_coverage"]


@dataclass(frozen=True, slots=True)
class CoverageReport:
    """How much of a topic set's vocabulary a dictionary can translate."""

    dictionary: str
    phrases: int
    topics: int
    #: Word occurrences counted (stop words and words without letters excluded) and found.
    tokens: int
    tokens_found: int
    #: Distinct words counted, and those found at least once.
    types: int
    types_found: int
    #: The most frequent words never found, with their number of occurrences.
    missing: tuple[tuple[str, int], ...]
    #: Found only as part of a multi-word headword: occurrences.
    tokens_in_phrases: int = 0

    @property
    def token_coverage(self) -> float:
        return self.tokens_found / self.tokens if self.tokens else 0.0

    @property
    def type_coverage(self) -> float:
        return self.types_found / self.types if self.types else 0.0


def coverage(
    dictionary: BilingualDictionary,
    topics: Sequence[Topic],
    stopwords: Collection[str] = ENGLISH_STOP_WORDS,  # Lucene's: short, content words kept
    top_missing: int = 20,
    base_forms: Callable[[str], Sequence[str]] | None = None,
) -> CoverageReport:
    """Share of the topics' query words that ``dictionary`` has a translation for.

    Each query is split with :func:`phrase_words` and read left to right with
    :meth:`BilingualDictionary.lookup_longest`: every word of a matched phrase counts as
    found. Stop words and words without a letter ("2", "x86" counts) are not counted.
    ``base_forms`` (for instance :func:`clir_toolkit.resources.wordnet.base_forms`) gives a
    word that is not in the dictionary a second chance through its dictionary forms
    ("files" → "file").
    """
    counted: Counter[str] = Counter()
    found_counts: Counter[str] = Counter()
    in_phrases = 0
    for topic in topics:
        words = phrase_words(topic.query)
        start = 0
        while start < len(words):
            size, _ = dictionary.lookup_longest(words, start)
            for word in words[start : start + max(size, 1)]:
                if word in stopwords or not has_letter(word):
                    continue
                counted[word] += 1
                if size or (base_forms and any(form in dictionary for form in base_forms(word))):
                    found_counts[word] += 1
                    in_phrases += size > 1
            start += max(size, 1)
    missing = Counter({word: n for word, n in counted.items() if word not in found_counts})
    return CoverageReport(
        dictionary=dictionary.name,
        phrases=len(dictionary),
        topics=len(topics),
        tokens=sum(counted.values()),
        tokens_found=sum(found_counts.values()),
        types=len(counted),
        types_found=len(found_counts),
        missing=tuple(sorted(missing.items(), key=lambda item: (-item[1], item[0]))[:top_missing]),
        tokens_in_phrases=in_phrases,
    )


def format_coverage(report: CoverageReport) -> str:
    """A short human-readable summary of :func:`coverage`."""
    missing = ", ".join(f"{word} ({n})" for word, n in report.missing) or "none"
    return "\n".join(
        [
            f"dictionary   {report.dictionary} ({report.phrases:,} source phrases)",
            f"topics       {report.topics:,}",
            f"word tokens  {report.tokens_found:,} of {report.tokens:,} found "
            f"({100 * report.token_coverage:.1f} %; {report.tokens_in_phrases:,} inside "
            f"multi-word phrases)",
            f"word types   {report.types_found:,} of {report.types:,} found "
            f"({100 * report.type_coverage:.1f} %)",
            f"most frequent missing words: {missing}",
        ]
    )
