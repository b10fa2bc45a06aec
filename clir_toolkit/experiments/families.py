"""The collection families a recipe names with ``collection = "..."``.

Each family knows its languages, how its collections' directories are named (under data/,
indexes/ and runs/) and how to build one: ``manpages`` (Debian's man pages,
:mod:`clir_toolkit.collection.manpages`) and ``ddtp`` (Debian's package descriptions,
:mod:`clir_toolkit.collection.ddtp`, built from the apt lists an earlier fetch saved under
``$CLIR_DATA/ddtp/lists``, else fetched there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.collection import ddtp, ddtp_lists, man_packages, manpages


@dataclass(frozen=True)
class CollectionFamily:
    """A family of collections that recipes name with ``collection = "..."``."""

    languages: tuple[str, ...]
    name: Callable[[str, str], str]
    """(language, variant) → the collection's directory name (under data/, indexes/, runs/)."""
    build: Callable[[str, Path, str, bool], object]
    """(language, out, variant, progress): build the collection into ``out``."""


def _build_manpages(language: str, out: Path, variant: str, progress: bool) -> object:
    return manpages.build_manpages_collection(language, out, variant=variant, progress=progress)


def _build_ddtp(language: str, out: Path, variant: str, progress: bool) -> object:
    lists = ddtp_lists.saved_lists(language)  # None: fetch them, as `clir collection build ddtp`
    return ddtp.build_ddtp_collection(
        language, out, variant=variant, lists=lists, progress=progress
    )


#: The collection families, by the name a recipe gives them.
COLLECTIONS = {
    "manpages": CollectionFamily(tuple(man_packages.LANGUAGES), manpages.collection_name,
                                 _build_manpages),
    "ddtp": CollectionFamily(tuple(ddtp_lists.LANGUAGES), ddtp.collection_name, _build_ddtp),
}  # fmt: skip
