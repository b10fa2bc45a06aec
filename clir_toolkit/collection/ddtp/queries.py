"""The documents, queries, human topics and judgements of a DDTP collection.

From the descriptions the lists hold
(:class:`~clir_toolkit.collection.ddtp.records.Descriptions`): a description split into
its synopsis and long text (the document's text), the English synopsis without the
package's names (the query), the translated one (the human topic), the descriptions of
sibling packages (grade 1), the filters that drop a query, and the split of each query by
its source package. The construction as a whole is described in
:mod:`clir_toolkit.collection.ddtp`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from clir_toolkit.collection.ddtp.records import Descriptions

# the man-page collections' word count, split hash and query-text key, shared on purpose
from clir_toolkit.collection.query_rules import _query_key, count_words, split_of

__all__ = [
    "DROP_REASONS",
    "MIN_QUERY_WORDS",
    "DdtpQuery",
    "document_text",
    "remove_names",
    "select_queries",
    "split_description",
]

MIN_QUERY_WORDS = 2

DROP_REASONS = {
    "empty_document": "whose document is empty (no long text in the hard variant)",
    "short": f"shorter than {MIN_QUERY_WORDS} words once the package name is removed",
    "duplicate": "sharing their English synopsis with another description",
    "empty_human_topic": "whose translated synopsis is only the package name",
}


def split_description(text: str) -> tuple[str, str]:
    """``(synopsis, long text)`` of a deb822 description; `` .`` lines become blank lines."""
    first, *rest = text.split("\n")
    lines = []
    for line in rest:
        line = line[1:] if line[:1] in " \t" else line
        lines.append("" if line.strip() == "." else line.rstrip())
    return first.strip(), "\n".join(lines).strip()


def document_text(translated: str, variant: str) -> str:
    synopsis, long_text = split_description(translated)
    return long_text if variant == "hard" else f"{synopsis}\n{long_text}".strip()


_EDGE = " \t-–—:;,/|"
# What a removed name can leave behind: "(cpp)" → "( )", "cpio, pax, tar" → "cpio, , tar".
_EMPTY_BRACKETS = re.compile(r"\([\s,;]*\)|\[[\s,;]*\]|«[\s,;]*»|“[\s,;]*”|\"[\s,;]*\"")
_REPEATED_COMMAS = re.compile(r",(?:\s*,)+")
_SPACE_BEFORE_STOP = re.compile(r"\s+(?=[.,](?:\s|$))")


def remove_names(text: str, names: Iterable[str]) -> str:
    """``text`` without the package ``names`` (whole words, any case), blanks collapsed.

    A name is a whole word when no letter, digit, ``+``, ``-`` or ``.`` is glued to it
    (``gadget`` goes in "Gadget manager", not in "gadgets" or "gadget-tools"; a final
    full stop is not part of the word). What the removal leaves empty goes too: brackets
    (``( )``), a repeated comma, a blank before a full stop or comma, dashes and colons
    at either end.
    """
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=lambda n: (-len(n), n)))
    if alternatives:
        pattern = rf"(?<![\w.+-])(?:{alternatives})(?![\w+-]|\.\w)"
        removed = re.sub(pattern, " ", text, flags=re.IGNORECASE)
        if removed != text:
            removed = _EMPTY_BRACKETS.sub(" ", removed)
            removed = _REPEATED_COMMAS.sub(",", " ".join(removed.split()))
            text = _SPACE_BEFORE_STOP.sub("", removed)
    return " ".join(text.split()).strip(_EDGE)


@dataclass(frozen=True)
class DdtpQuery:
    """A query kept: its id (its description's md5), texts, split and grade-1 docids."""

    qid: str
    english: str
    human: str
    split: str
    related: tuple[str, ...]  # grade-1 docids


def _split_groups(sources: dict[str, set[str]]) -> dict[str, str]:
    """Source package → the name that decides its split: the smallest source name among
    those linked to it by shared descriptions (union-find), so that no description and
    none of its siblings can land in two splits."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        parent.setdefault(name, name)
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for names in sources.values():
        first, *others = sorted(names)
        root(first)
        for other in others:
            a, b = root(first), root(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {name: root(name) for name in list(parent)}


def select_queries(
    found: Descriptions, corpus: list[str], docs: set[str], dropped: Counter[str]
) -> list[DdtpQuery]:
    """One query per description of ``corpus``; those of ``docs`` (non-empty documents)
    are judged, and the filters applied."""
    sources = {md5: found.sources_of(md5) for md5 in corpus}
    group = _split_groups(sources)
    siblings: defaultdict[str, set[str]] = defaultdict(set)
    for md5 in corpus:
        if md5 in docs:
            for source in sources[md5]:
                siblings[source].add(md5)
    english = {
        md5: remove_names(split_description(found.english[md5])[0], found.named[md5])
        for md5 in corpus
    }
    texts = Counter(_query_key(text) for text in english.values())
    queries: list[DdtpQuery] = []
    for md5 in corpus:
        human = remove_names(split_description(found.translated[md5])[0], found.named[md5])
        if md5 not in docs:
            dropped["empty_document"] += 1
        elif count_words(english[md5]) < MIN_QUERY_WORDS:
            dropped["short"] += 1
        elif texts[_query_key(english[md5])] > 1:
            dropped["duplicate"] += 1
        elif count_words(human) < 1:
            dropped["empty_human_topic"] += 1
        else:
            related = set().union(*(siblings[source] for source in sources[md5])) - {md5}
            split = split_of(group[min(sources[md5])])
            queries.append(DdtpQuery(md5, english[md5], human, split, tuple(sorted(related))))
    return queries
