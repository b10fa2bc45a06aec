"""A CLIR test collection from Debian's translated package descriptions (DDTP).

Every Debian package has a description: a one-line synopsis and a few paragraphs of long
text. The Debian Description Translation Project (DDTP) translates them; apt fetches the
translations as ``Translation-<L>`` lists beside the ``Packages`` lists. The construction
is the one Sasaki et al. (2018) used to turn Wikipedia into CLIR data, applied to package
descriptions:

- **documents**: every description that has both an English text and a translation into
  ``L``, once per description (several binary packages can share one description: the
  docid is its ``Description-md5``). The text is the translated synopsis and long text,
  with the paragraph marks (`` .``) as blank lines; the ``hard`` variant leaves the
  translated synopsis out;
- **query**: the English synopsis with the package's name removed (case-insensitive, as a
  whole word): ``gadget - Gadget manager for gadgets`` gives ``manager for gadgets``;
- **relevance 2**: the translated description itself (the same md5);
- **relevance 1**: the translated descriptions of the *other* binary packages built from
  the same source package (``Source:`` in the ``Packages`` list).

A query is dropped when, once the name is removed, it has fewer than two words, or when its
text (case and blanks ignored) is the synopsis of another description too: neither copy
could tell its answer from the other's. The **human topic** of a query is the translated
synopsis, with the name removed the same way: the monolingual reference.

Queries are split 60/20/20 into train/dev/test by a hash of their source package (of the
smallest source name when descriptions are shared across source packages), so that
siblings — the grade-1 documents of a query are the answers of other queries — never
straddle two splits. The same lists give byte-identical files.

This module builds the collection directory and its manifest (written as every family
writes its own: :mod:`clir_toolkit.collection.builder`); the lists are fetched and found by
:mod:`~clir_toolkit.collection.ddtp.lists`, read by
:mod:`~clir_toolkit.collection.ddtp.records`, and turned into documents, queries and
judgements by :mod:`~clir_toolkit.collection.ddtp.queries`.

**Source and licence.** The descriptions are part of Debian: each one is under the licence
of its package, and DDTP translations are contributed under the packages' licences. The
collection is built on the user's machine from the lists apt fetches (into a private
directory, never the system's) and is never committed.
"""

from __future__ import annotations

import dataclasses
import sys
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
from clir_toolkit.collection.ddtp.lists import (
    LANGUAGES,
    ListGroup,
    check_language,
    default_lists_dir,
    fetch_lists,
    find_lists,
    has_lists,
    recorded_uris,
    require_apt_get,
    uri_of,
)
from clir_toolkit.collection.ddtp.queries import (
    DROP_REASONS,
    MIN_QUERY_WORDS,
    DdtpQuery,
    document_text,
    select_queries,
)
from clir_toolkit.collection.ddtp.records import read_descriptions, read_release_fields
from clir_toolkit.errors import ResourceError
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import Doc

__all__ = [
    "VARIANTS",
    "DdtpSummary",
    "build_ddtp_collection",
    "format_summary",
]

VARIANTS = ("standard", "hard")

LICENCE = (
    "Debian package descriptions: each under the licence of its package; DDTP translations "
    "are contributed under the packages' licences. Built on the user's machine, not "
    "redistributed."
)


@dataclass(frozen=True)
class DdtpSummary(BuildSummary):
    """What a build produced: the figures :func:`format_summary` prints."""

    lists: Path
    fetched: bool
    fetch_problem: str | None
    release_dates: tuple[str, ...]
    translations: int
    without_english: int
    source_packages: int


def build_ddtp_collection(
    lang: str,
    out: Path,
    *,
    variant: str = "standard",
    lists: Path | None = None,
    progress: bool = True,
) -> DdtpSummary:
    """Build the English→``lang`` DDTP collection into the directory ``out``.

    With ``lists``, read the apt lists saved there (no network; the same lists give the
    same bytes). Without, fetch them with ``apt-get update`` into
    :func:`default_lists_dir`, kept for the next build. ``out`` is written atomically.
    """
    started = time.perf_counter()
    lang = check_language(lang)
    code = LANGUAGES[lang]
    check_variant(variant, VARIANTS)
    fetched = lists is None
    problem = None
    if lists is None:
        lists = default_lists_dir()
        require_apt_get()  # refused before anything is said or created
        if progress:
            print(f"fetching Debian's package lists with apt-get into {lists}", file=sys.stderr)
        problem = fetch_lists(lists)
        if problem is not None and not has_lists(lists, code):
            raise ResourceError(
                f"apt-get update could not fetch the Debian lists ({problem}); check the "
                "network, or pass --lists DIR with lists saved earlier"
            )
    lists = Path(lists)
    groups = find_lists(lists, code)
    found = read_descriptions(groups, code, progress)

    corpus = sorted(set(found.translated) & set(found.english))
    texts = {md5: document_text(found.translated[md5], variant) for md5 in corpus}
    docs = [Doc(md5, texts[md5]) for md5 in corpus if texts[md5]]
    dropped: Counter[str] = Counter()
    queries = select_queries(found, corpus, {doc.id for doc in docs}, dropped)
    by_split: dict[str, list[DdtpQuery]] = {split: [] for split in SPLITS}
    for query in queries:
        by_split[query.split].append(query)

    releases = {group.release for group in groups}
    release_fields = {path: read_release_fields(path) for path in sorted(releases)}
    summary = DdtpSummary(
        name=collection_name("ddtp", lang, variant),
        lang=lang,
        variant=variant,
        out=Path(out),
        **split_counts(docs, by_split, dropped, DROP_REASONS),
        seconds=0.0,
        lists=lists,
        fetched=fetched,
        fetch_problem=problem,
        release_dates=tuple(fields["Date"] for fields in release_fields.values()),
        translations=len(found.translated),
        without_english=len(found.translated) - len(corpus),
        source_packages=len({s for doc in docs for s in found.sources_of(doc.id)}),
    )
    record = _record(summary, code, groups, release_fields, recorded_uris(lists))
    write_collection(summary.out, docs, by_split, manifest(summary, **record))
    return dataclasses.replace(summary, seconds=time.perf_counter() - started)


def _record(
    summary: DdtpSummary,
    code: str,
    groups: list[ListGroup],
    release_fields: dict[Path, dict[str, str]],
    known_uris: dict[str, str],
) -> dict[str, Any]:
    """The manifest's DDTP fields: the lists read (URI, sha256), parameters, counts."""
    inputs = sorted({path for group in groups for path in group.files()})
    return {
        "description": (
            "English queries (package synopses without the package name) against Debian's "
            f"{code} package-description translations (DDTP); constructed as Sasaki et al. "
            "(2018) built their Wikipedia CLIR data: grade 2 = the translated description, "
            "grade 1 = the descriptions of other binary packages of the same source package"
            + (
                "; the translated synopsis is left out of the documents"
                if summary.variant == "hard"
                else ""
            )
        ),
        "source": {
            "ddtp_language": code,
            "releases": [
                {"file": path.name, "uri": uri_of(path.name, known_uris), **fields}
                for path, fields in release_fields.items()
            ],
            "lists": [
                {
                    "file": path.name,
                    "uri": uri_of(path.name, known_uris),
                    "sha256": sha256_file(path),
                }
                for path in inputs
            ],
        },  # fmt: skip
        "licences": {"DDTP package descriptions": LICENCE},
        "build_parameters": {
            "min_query_words": MIN_QUERY_WORDS,
            "unique_query_text": True,
            "package_names_removed_from_queries": True,
            "split": "sha256(source package) mod 100: < 60 train, < 80 dev, else test",
            "synopsis_in_documents": summary.variant == "standard",
        },
        "counts": {
            "translations": summary.translations,
            "translations_without_english": summary.without_english,
            "source_packages": summary.source_packages,
        },
    }


def format_summary(summary: DdtpSummary) -> str:
    """The table printed at the end of a build."""
    lists = f"lists: {summary.lists} (Release of {'; '.join(summary.release_dates)})"
    if summary.fetched:
        lists += f"; kept for reuse: rebuild offline with --lists {summary.lists}"
    lines = [
        f"{summary.name}: {summary.documents:,} documents ({summary.lang}) from "
        f"{summary.source_packages:,} source packages, mean length "
        f"{summary.mean_document_words:,.0f} words",
        *summary.table(),
        "judged per query: grade 2 = the translated description, grade 1 = the other "
        "packages of its source package",
        summary.dropped_line(DROP_REASONS),
        f"descriptions translated but without English text: {summary.without_english:,}",
        lists,
    ]
    if summary.fetch_problem:
        lines.append(f"apt-get update reported: {summary.fetch_problem}")
    lines.append(summary.written_line())
    return "\n".join(lines)
