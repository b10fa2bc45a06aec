"""The builder contract of a collection family, and what every builder writes the same way.

A *collection family* is a set of test collections English→L, one per document language
and variant: Debian's man pages (``manpages-en-fr``, ``manpages-en-fr-hard``), Debian's
package descriptions (``ddtp-en-de``), a course's own. A family is what a recipe names
with ``collection = "..."`` and what ``clir collection build NAME`` builds. It is one
:class:`CollectionFamily`, registered under its name in the ``collections`` kind of
:mod:`clir_toolkit.registry`: a built-in by one file of :mod:`clir_toolkit.collection.families`,
a plug-in by an entry point of the ``clir_toolkit.collections`` group. Both are found by
:func:`family`.

The Debian families judge a query the same way (grade 2 for the document the query was
made from, grade 1 for related ones) and write the same directory, so that is written
here once: :func:`write_collection` writes the corpus, the topics, human topics and qrels
of each split, and the manifest (:func:`manifest`: the fields every family records, then
the family's own; the sha256 of every file; keys sorted, so the same inputs give the same
bytes), and :class:`BuildSummary` holds the figures and the table printed at the end.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from clir_toolkit import registry
from clir_toolkit.collection import COLLECTION_KIND, MANIFEST, foreign_entry
from clir_toolkit.collection.query_rules import count_words
from clir_toolkit.errors import UsageError
from clir_toolkit.files import atomic_directory, sha256_file
from clir_toolkit.formats import Doc, Qrel, Topic, write_corpus_jsonl, write_qrels, write_topics_tsv

__all__ = [
    "SPLITS",
    "BuildSummary",
    "CollectionFamily",
    "JudgedQuery",
    "check_variant",
    "collection_name",
    "family",
    "graded_qrels",
    "manifest",
    "split_counts",
    "write_collection",
    "write_manifest",
]

SPLITS = ("train", "dev", "test")
"""The splits a family's collection is divided into (60/20/20 for the Debian families)."""


# ---------------------------------------------------------------------------------------------
# The contract
# ---------------------------------------------------------------------------------------------


def collection_name(family: str, language: str, variant: str) -> str:
    """``manpages-en-fr``; another variant than ``standard`` is a suffix: ``…-fr-hard``."""
    return f"{family}-en-{language}" + ("" if variant == "standard" else f"-{variant}")


class CollectionFamily:
    """A family of collections English→L: its languages, variants, names and builder.

    A family is made with the name it is registered under (``ManPages("manpages")``). A
    new family subclasses this class, sets :attr:`languages` (and :attr:`variants`, when
    it has more than ``standard``) and implements :meth:`build`; :attr:`params` declares
    the options of ``clir collection build NAME`` that it reads besides ``--lang``,
    ``--out`` and ``--variant``.
    """

    languages: tuple[str, ...] = ()
    """The document languages L of its collections en→L (a recipe's ``languages``)."""
    variants: tuple[str, ...] = ("standard",)
    """Its variants, the default first (a recipe's ``variant``)."""
    variant_help: str = ""
    """What the variants are, for ``--variant``'s help (``hard: documents without …``)."""
    params: tuple[Any, ...] = ()
    """The :class:`~clir_toolkit.params.Param` of each further build option (by name)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def summary(self) -> str:
        """The first line of the family's docstring (``clir collection build --help``)."""
        return ((type(self).__doc__ or "").strip().splitlines() or [""])[0]

    def collection_name(self, language: str, variant: str) -> str:
        """The collection's directory name under ``data/``, ``indexes/`` and ``runs/``."""
        return collection_name(self.name, language, variant)

    def check_language(self, language: str) -> None:
        """Refuse a document language the family has no collections in (one line listing
        those it has), before anything is read or written."""
        if language not in self.languages:
            raise UsageError(
                f"no {self.name} collection for language {language!r}: choose one of "
                f"{', '.join(self.languages)}"
            )

    def build(
        self, language: str, out: Path, variant: str, progress: bool, **options: Any
    ) -> Any:
        """Build the collection en→``language`` into the directory ``out`` (atomically:
        on an error ``out`` is left as it was) and return its summary; ``options`` are the
        values of :attr:`params` that were given."""
        raise NotImplementedError(f"collection family {self.name!r} has no build method")

    def format_summary(self, summary: Any) -> str:
        """What ``clir collection build`` prints when :meth:`build` has returned ``summary``."""
        return str(summary)


def family(name: str) -> CollectionFamily:
    """The collection family called ``name``, built-in or plug-in (a UsageError listing the
    families for a name that is neither)."""
    factory = registry.load("collections", name)
    if not (isinstance(factory, type) and issubclass(factory, CollectionFamily)):
        raise UsageError(
            f"the collection family {name!r} is not a subclass of "
            "clir_toolkit.collection.builder.CollectionFamily"
        )
    return factory(name)


def check_variant(variant: str, variants: Sequence[str]) -> None:
    """Refuse a variant that the family does not have, in one line listing those it has."""
    if variant not in variants:
        raise UsageError(f"unknown variant {variant!r}: choose one of {', '.join(variants)}")


# ---------------------------------------------------------------------------------------------
# What the Debian families write alike
# ---------------------------------------------------------------------------------------------


class JudgedQuery(Protocol):
    """A query of a collection whose grade-2 document has the query's own id."""

    @property
    def qid(self) -> str: ...
    @property
    def english(self) -> str: ...
    @property
    def human(self) -> str: ...
    @property
    def related(self) -> tuple[str, ...]: ...


def graded_qrels(queries: Iterable[JudgedQuery]) -> Iterator[Qrel]:
    """The judgements of ``queries``: 2 for a query's own document, 1 for its related ones."""
    for query in queries:
        yield Qrel(query.qid, query.qid, 2)
        for docid in query.related:
            yield Qrel(query.qid, docid, 1)


@dataclass(frozen=True)
class BuildSummary:
    """What a build produced: the figures every family reports (a family's summary adds
    its own fields), and the lines of the report they make."""

    name: str
    lang: str
    variant: str
    out: Path
    documents: int
    mean_document_words: float
    queries: dict[str, int]
    grade2: dict[str, int]
    grade1: dict[str, int]
    dropped: dict[str, int]
    seconds: float

    def table(self) -> list[str]:
        """Queries and judgements per split, with a total row, as aligned columns."""
        rows: list[tuple[str, ...]] = [("split", "queries", "grade 2", "grade 1")]
        counts = (self.queries, self.grade2, self.grade1)
        for split in SPLITS:
            rows.append((split, *(f"{column[split]:,}" for column in counts)))
        rows.append(("all", *(f"{sum(column.values()):,}" for column in counts)))
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        return [
            "  ".join(
                cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i])
                for i, cell in enumerate(row)
            )
            for row in rows
        ]

    def dropped_line(self, reasons: Mapping[str, str]) -> str:
        """``queries dropped: 3 shorter than 2 words, …`` (``reasons``: why, by key)."""
        dropped = ", ".join(
            f"{count:,} {reasons[reason]}" for reason, count in self.dropped.items() if count
        )
        return f"queries dropped: {dropped or 'none'}"

    def written_line(self) -> str:
        return f"written to {self.out} in {self.seconds:.1f} s"


def split_counts(
    docs: Sequence[Doc],
    by_split: Mapping[str, Sequence[JudgedQuery]],
    dropped: Counter[str],
    reasons: Iterable[str],
) -> dict[str, Any]:
    """The figures of :class:`BuildSummary` that counting gives (documents, mean length,
    queries and judgements per split, queries dropped for each of ``reasons``)."""
    words = sum(count_words(doc.contents) for doc in docs)
    return {
        "documents": len(docs),
        "mean_document_words": words / len(docs) if docs else 0.0,
        "queries": {split: len(by_split[split]) for split in SPLITS},
        "grade2": {split: len(by_split[split]) for split in SPLITS},
        "grade1": {split: sum(len(q.related) for q in by_split[split]) for split in SPLITS},
        "dropped": {reason: dropped[reason] for reason in reasons},
    }


def manifest(summary: BuildSummary, **record: Any) -> dict[str, Any]:
    """The manifest of a build: what every family records (name, variant, languages, the
    counts of :class:`BuildSummary`), then ``record``, the family's own fields
    (``description``, ``source``, ``licences``, ``build_parameters``, and ``counts``
    added to the common ones). :func:`write_manifest` adds the files' sha256."""
    counts = {
        "documents": summary.documents,
        "queries": {**summary.queries, "all": sum(summary.queries.values())},
        "judgements_grade_2": {**summary.grade2, "all": sum(summary.grade2.values())},
        "judgements_grade_1": {**summary.grade1, "all": sum(summary.grade1.values())},
        "queries_dropped": summary.dropped,
        **record.pop("counts", {}),
    }
    common = {"name": summary.name, "variant": summary.variant, "query_lang": "en",
              "doc_lang": summary.lang}  # fmt: skip
    return {**common, **record, "counts": counts}


def write_manifest(directory: Path, fields: Mapping[str, Any]) -> None:
    """Write ``manifest.json`` into ``directory``: ``fields`` and the sha256 of every other
    file there, as sorted, indented JSON (the same fields give the same bytes)."""
    files = sorted(path.name for path in directory.iterdir() if path.name != MANIFEST)
    record = {**fields, "files": {name: sha256_file(directory / name) for name in files}}
    text = json.dumps(record, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    (directory / MANIFEST).write_text(text, encoding="utf-8")


def write_collection(
    out: Path,
    docs: Iterable[Doc],
    by_split: Mapping[str, Iterable[JudgedQuery]],
    fields: Mapping[str, Any],
) -> None:
    """Write the collection directory ``out``, all of it or nothing: ``corpus.jsonl``, each
    split's ``topics``, ``topics-human`` and graded ``qrels``, and the manifest
    (``fields`` and the files' sha256). A directory that is not a collection, or one
    holding a file no builder wrote, is refused rather than replaced."""
    with atomic_directory(out, marker=MANIFEST, what=COLLECTION_KIND, foreign=foreign_entry) as tmp:
        write_corpus_jsonl(tmp / "corpus.jsonl", docs)
        for split, queries in by_split.items():
            queries = list(queries)
            write_topics_tsv(
                tmp / f"topics.{split}.tsv", (Topic(q.qid, q.english) for q in queries)
            )
            write_topics_tsv(
                tmp / f"topics-human.{split}.tsv", (Topic(q.qid, q.human) for q in queries)
            )
            write_qrels(tmp / f"qrels.{split}.txt", graded_qrels(queries))
        write_manifest(tmp, fields)
