"""The real data the retrieval assignments are graded on: a collection's index and its dev
queries, translated as a bare ``clir search --translate dict`` translates them.

The collection is ``clir assignment check --collection DIR`` (default: the French man pages
at ``data/manpages-en-fr``, built there from the installed Debian packages when missing,
as ``clir demo`` builds them). Its index is kept in ``DIR/.cache/assignment-index`` and
rebuilt when the collection changes.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clir_toolkit.query import StructuredQuery

DEFAULT_COLLECTION = Path("data/manpages-en-fr")


def collection_or_default(collection: Path | None, quiet: bool = True) -> Path:
    """``collection``, or the French man pages (built on first use)."""
    if collection is not None:
        return collection
    if not (DEFAULT_COLLECTION / "manifest.json").is_file():
        from clir_toolkit.collection.manpages import build_manpages_collection

        build_manpages_collection("fr", DEFAULT_COLLECTION, progress=not quiet)
    return DEFAULT_COLLECTION


@functools.lru_cache(maxsize=4)
def prepared_index(collection: Path) -> Path:
    """The collection's index under ``.cache``, built when missing or out of date."""
    from clir_toolkit.index import build_index, is_index_of

    index = collection / ".cache" / "assignment-index"
    if not is_index_of(index, collection):
        build_index(collection, index, verbose=False)
    return index


@functools.lru_cache(maxsize=4)
def dev_queries(collection: Path, limit: int) -> tuple[StructuredQuery, ...]:
    """The first ``limit`` dev topics, translated with the default dictionary translation
    (FreeDict, every candidate, the English word kept at 0.5)."""
    from clir_toolkit.formats import read_topics
    from clir_toolkit.index import read_index_info
    from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

    topics = read_topics(collection / "topics.dev.tsv")[:limit]
    language = read_index_info(prepared_index(collection)).language
    return tuple(build_queries(topics, TranslationOptions(translate="dict"), language))
