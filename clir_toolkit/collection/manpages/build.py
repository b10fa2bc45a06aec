"""A CLIR test collection from Debian's translated manual pages (English queries).

The construction is the one Sasaki et al. (2018) used to turn Wikipedia into CLIR data
("Cross-Lingual Learning-to-Rank with Shared Representations", NAACL 2018), the data of the
smooth-learning paper (Section 5, "Datasets"), applied to manual pages instead of articles:

- **documents**: every translated page installed under ``/usr/share/man/<L>/man*/`` (one
  document per unique page: symbolic links and ``.so`` stubs, the aliases of a page, are
  resolved to it), with the sections that repeat in every page (translator credits,
  bug-report addresses, copyright notices) removed;
- **query**: the English page's NAME description without the command name:
  ``ls - list directory contents`` gives the query ``list directory contents`` (Sasaki et
  al. take the first sentence of the English article the same way);
- **relevance 2** (the "most relevant" document): the translated page of the same name and
  section (Sasaki et al.: the foreign article linked to the English one);
- **relevance 1** (partially relevant): translated pages that both the English page and the
  translated page list under SEE ALSO (Sasaki et al.: foreign articles with mutual links to
  and from the relevant article; SEE ALSO is the man-page counterpart of those links, and
  asking both languages to agree keeps only the links the translation confirms).

Three filters keep the task honest. A query is kept only when (1) its translated page is
really translated: at most 20 % of its lines are copied verbatim from the English page (some
"translations" are the English text with a translated NAME line); (2) the query has at
least two words; (3) its text is unique: when several pages share a description ("manual
page for ..."), the query could not tell them apart, so all of them are dropped.

Each query also gets a **human topic**: the translated page's own NAME description, the
monolingual reference that bounds what a perfect translation of the query would achieve.
The NAME line of a translated page is itself a translation of the query, which makes the
task easy; the ``hard`` variant removes the NAME section from the documents.

Queries are split 60/20/20 into train/dev/test (the paper's 3:1:1) by a hash of the query
id rather than at random, so that the split of a page never depends on the machine, on the
other pages installed, or on the language. The same packages give byte-identical files.

The query id is the docid of the page, ``name.section`` (``ls.1``): a qrels line
``ls.1 0 ls.1 2`` reads as "the page ls(1) answers its own query".

This module builds the collection directory (written as every family writes its own:
:mod:`clir_toolkit.collection.builder`); the steps live beside it in this package:
:mod:`~clir_toolkit.collection.manpages.packages` (the languages, Debian's packages,
refusing a broken installation), :mod:`~clir_toolkit.collection.manpages.root` (the unique
pages of a man root, aliases resolved), :mod:`~clir_toolkit.collection.manpages.documents`
(the documents, less the boilerplate), :mod:`~clir_toolkit.collection.manpages.topics`
(queries and filters) and :mod:`~clir_toolkit.collection.query_rules` (the split, shared
with DDTP).
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.collection.builder import (
    SPLITS,
    BuildSummary,
    check_variant,
    collection_name,
    manifest,
    split_counts,
    write_collection,
)
from clir_toolkit.collection.manpages.documents import (
    SectionFilter,
    document_text,
    find_boilerplate_headings,
    kept_sections,
)
from clir_toolkit.collection.manpages.packages import (
    DPKG_CONFIG,
    ENGLISH_PACKAGES,
    LANGUAGES,
    LICENCES,
    SYSTEM_MAN_ROOT,
    Language,
    check_installation,
    owning_packages,
)
from clir_toolkit.collection.manpages.root import PageSet, scan_pages
from clir_toolkit.collection.manpages.topics import (
    DROP_REASONS,
    MAX_COPIED_SHARE,
    MIN_COPIED_LINE_LETTERS,
    MIN_QUERY_WORDS,
    Query,
    select_queries,
)
from clir_toolkit.collection.query_rules import split_of
from clir_toolkit.errors import UsageError
from clir_toolkit.formats import Doc

__all__ = [
    "VARIANTS",
    "ManPagesSummary",
    "build_manpages_collection",
    "format_summary",
]

VARIANTS = ("standard", "hard")


# ---------------------------------------------------------------------------------------------
# Building the collection directory
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ManPagesSummary(BuildSummary):
    """What a build produced: the figures :func:`format_summary` prints."""

    boilerplate: tuple[str, ...]
    """The headings of the sections dropped as boilerplate."""


def _language(lang: str) -> Language:
    aliases = {"zh_CN": "zh", "zh-cn": "zh", "zh-CN": "zh"}
    lang = aliases.get(lang, lang)
    if lang not in LANGUAGES:
        raise UsageError(
            f"no man-page collection for language {lang!r}: choose one of {', '.join(LANGUAGES)}"
        )
    return LANGUAGES[lang]


def build_manpages_collection(
    lang: str,
    out: Path,
    *,
    variant: str = "standard",
    man_root: Path = SYSTEM_MAN_ROOT,
    progress: bool = True,
    dpkg_config: Path = DPKG_CONFIG,
) -> ManPagesSummary:
    """Build the English→``lang`` man-page collection into the directory ``out``.

    ``man_root`` is where the pages are (``/usr/share/man``; a directory laid out the same
    way, with ``man1/…`` for English and ``<lang>/man1/…`` for the translation, serves for
    tests). The directory is written atomically: on any error ``out`` is left as it was.
    """
    started = time.perf_counter()
    language = _language(lang)
    check_variant(variant, VARIANTS)
    man_root = Path(man_root)
    check_installation(language, man_root, dpkg_config)

    translated = scan_pages(man_root / language.directory, progress=progress)
    english = PageSet(man_root)
    found = find_boilerplate_headings(page for _, page in translated.pages.values())
    is_boilerplate = SectionFilter(found)
    docs = [
        Doc(docid, document_text(kept_sections(page, is_boilerplate, variant)))
        for docid, (_, page) in sorted(translated.pages.items())
    ]
    docs = [doc for doc in docs if doc.contents.strip()]  # a page that was all boilerplate
    dropped: Counter[str] = Counter()
    queries, english_files = select_queries(
        translated, english, is_boilerplate, {doc.id for doc in docs}, dropped, progress
    )

    by_split: dict[str, list[Query]] = {split: [] for split in SPLITS}
    for query in queries:
        by_split[split_of(query.qid)].append(query)

    summary = ManPagesSummary(
        name=collection_name("manpages", language.code, variant),
        lang=language.code,
        variant=variant,
        out=Path(out),
        **split_counts(docs, by_split, dropped, DROP_REASONS),
        boilerplate=tuple(is_boilerplate.dropped()),
        seconds=0.0,
    )
    record = _record(summary, language, man_root, translated, english_files)
    write_collection(summary.out, docs, by_split, manifest(summary, **record))
    return dataclasses.replace(summary, seconds=time.perf_counter() - started)


def _record(
    summary: ManPagesSummary,
    language: Language,
    man_root: Path,
    translated: PageSet,
    english_files: list[Path],
) -> dict[str, Any]:
    """The manifest's man-page fields: sources and versions, parameters, page counts."""
    system = man_root.resolve() == SYSTEM_MAN_ROOT
    used = [path for path, _ in translated.pages.values()] + english_files
    return {
        "description": (
            "English queries (NAME descriptions of English manual pages) against Debian's "
            f"{language.directory} translations; constructed as Sasaki et al. (2018) built "
            "their Wikipedia CLIR data: grade 2 = the translated page, grade 1 = pages both "
            "pages list under SEE ALSO"
            + (
                "; the NAME section is removed from the documents"
                if summary.variant == "hard"
                else ""
            )
        ),
        "source": {
            "man_root": str(man_root),
            "translated_pages": str(man_root / language.directory),
            "required_packages": [*ENGLISH_PACKAGES, *language.packages],
            "packages": owning_packages(used) if system else {},
        },
        "licences": LICENCES,
        "build_parameters": {
            "max_copied_share": MAX_COPIED_SHARE,
            "min_copied_line_letters": MIN_COPIED_LINE_LETTERS,
            "min_query_words": MIN_QUERY_WORDS,
            "unique_query_text": True,
            "split": "sha256(qid) mod 100: < 60 train, < 80 dev, else test",
            "dropped_headings": list(summary.boilerplate),
            "name_section_in_documents": summary.variant == "standard",
        },
        "counts": {
            "translated_files": translated.files,
            "symbolic_links": translated.links,
            "so_stubs": translated.stubs,
            "unresolved_files": translated.unresolved,
        },
    }


def format_summary(summary: ManPagesSummary) -> str:
    """The table printed at the end of a build."""
    return "\n".join(
        [
            f"{summary.name}: {summary.documents:,} documents ({summary.lang}), "
            f"mean length {summary.mean_document_words:,.0f} words",
            *summary.table(),
            "judged pages per query: grade 2 = the translated page, grade 1 = shared SEE ALSO",
            summary.dropped_line(DROP_REASONS),
            summary.written_line(),
        ]
    )
