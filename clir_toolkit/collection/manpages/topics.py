"""The queries and graded judgements of a man-page collection, from pairs of pages.

The construction is the one Sasaki et al. (2018) used to turn Wikipedia into CLIR data
("Cross-Lingual Learning-to-Rank with Shared Representations", NAACL 2018), applied to
manual pages (:mod:`clir_toolkit.collection.manpages` describes the whole collection). Each
translated page is paired with the English page of the same name and section:

- **query**: the English page's NAME description without the command name:
  ``ls - list directory contents`` gives the query ``list directory contents``;
- **relevance 2**: the translated page itself;
- **relevance 1**: translated pages that both the English page and the translated page
  list under SEE ALSO (Sasaki et al.: foreign articles with mutual links to and from the
  relevant article);
- **human topic**: the translated page's own NAME description.

A pair gives a query only when (1) its translated page is really translated: at most 20 %
of its lines are copied verbatim from the English page (:func:`copied_share`); (2) the
query has at least two words; (3) its text is unique among the descriptions of all the
English pages paired with a translated page. :data:`DROP_REASONS` names, in order, why a
page gave no query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.collection.manpages.documents import SectionFilter, kept_sections, line_key
from clir_toolkit.collection.manpages.page import SEE_ALSO_HEADINGS, ManPage, split_name_line
from clir_toolkit.collection.manpages.root import PageSet
from clir_toolkit.collection.query_rules import _query_key

__all__ = [
    "DROP_REASONS",
    "MAX_COPIED_SHARE",
    "MIN_COPIED_LINE_LETTERS",
    "MIN_QUERY_WORDS",
    "Query",
    "copied_share",
    "select_queries",
]


MAX_COPIED_SHARE = 0.20  # drop a query whose page copies more of its lines from English
MIN_QUERY_WORDS = 2
# A copied line counts only if it has this many letters: option names ("-a, --all"), bare
# numbers and bullets are the same in every language and say nothing about translation.
MIN_COPIED_LINE_LETTERS = 18


def _letters(line: str) -> int:
    return sum(1 for char in line if char.isalpha())


def copied_share(translated: Iterable[str], english: Iterable[str]) -> float:
    """Share of the translated page's lines that occur verbatim in the English page.

    Lines are compared with their blanks collapsed. Only lines with at least
    ``MIN_COPIED_LINE_LETTERS`` letters count, on both sides of the ratio: an option list
    (``-a, --all``), a number or a bullet is the same in every language.
    """
    english_lines = {line_key(line) for line in english if line}
    counted = [line_key(line) for line in translated if _letters(line) >= MIN_COPIED_LINE_LETTERS]
    if not counted:
        return 0.0
    return sum(line in english_lines for line in counted) / len(counted)


@dataclass(frozen=True)
class Query:
    """A query kept: its id (the docid of its page), its texts, and its grade-1 pages."""

    qid: str
    english: str
    human: str
    related: tuple[str, ...]  # grade-1 docids


# Why a translated page gave no query, in the order the checks are made.
DROP_REASONS = {
    "empty_document": "whose page is empty once boilerplate is removed",
    "no_english_page": "without an English page",
    "no_description": "without an English NAME description",
    "copied": f"more than {MAX_COPIED_SHARE:.0%} copied from English",
    "short": f"shorter than {MIN_QUERY_WORDS} words",
    "duplicate": "sharing their text with another query",
    "no_translated_name": "whose translated page has no NAME line",
}


def select_queries(
    translated: PageSet,
    english: PageSet,
    is_boilerplate: SectionFilter,
    corpus: set[str],
    dropped: Counter[str],
    progress: bool = False,
) -> tuple[list[Query], list[Path]]:
    """Pair each translated page with its English page and apply the three filters.

    A query text must be unique among the descriptions of *all* English pages paired with a
    translated page, not only among the queries kept: a page dropped by a filter is still
    in the corpus, where it would be a second answer to the same query. Returns the queries
    and the English page files that were read.
    """
    from clir_toolkit.progress import progress_bar

    pairs: list[tuple[str, ManPage, ManPage, str]] = []
    english_files: list[Path] = []
    pages = sorted(translated.pages.items())
    bar = progress_bar(pages, desc="pairing English pages", unit="page", show=progress)
    for docid, (path, page) in bar:
        if docid not in corpus:
            dropped["empty_document"] += 1
            continue
        resolved = english.resolve(english.root / path.parent.name / path.name)
        if resolved is None:
            dropped["no_english_page"] += 1
            continue
        english_files.append(resolved[0])
        description = split_name_line(resolved[1].name_line)[1]
        if not description:
            dropped["no_description"] += 1
            continue
        pairs.append((docid, page, resolved[1], description))

    texts = Counter(_query_key(description) for *_, description in pairs)
    queries: list[Query] = []
    for docid, page, english_page, description in pairs:
        own_lines = [
            line for s in kept_sections(page, is_boilerplate, "standard") for line in s.lines
        ]
        english_lines = [line for s in english_page.sections for line in s.lines]
        if copied_share(own_lines, english_lines) > MAX_COPIED_SHARE:
            dropped["copied"] += 1
        elif len(description.split()) < MIN_QUERY_WORDS:
            dropped["short"] += 1
        elif texts[_query_key(description)] > 1:
            dropped["duplicate"] += 1
        elif not page.name_line:
            dropped["no_translated_name"] += 1
        else:
            human = split_name_line(page.name_line)[1] or page.name_line
            both = _see_also_docids(translated, english_page) & _see_also_docids(translated, page)
            related = tuple(sorted((both & corpus) - {docid}))
            queries.append(Query(docid, description, human, related))
    return queries, english_files


def _see_also_docids(translated: PageSet, page: ManPage) -> set[str]:
    """The translated pages (docids) that ``page`` lists under SEE ALSO."""
    found = (translated.lookup(reference) for reference in page.see_also(SEE_ALSO_HEADINGS))
    return {docid for docid in found if docid is not None}
