"""Monolingual text for training word embeddings: one line of one language per line.

Cross-lingual word embeddings can be built without any bilingual corpus: train skip-gram
vectors (Mikolov et al. 2013) on plain text of each language separately, then map one space
onto the other with an orthogonal matrix learned from dictionary seed pairs (Smith et al.
2017; the thesis' ref. [8]). This module gathers the plain text, from what a Debian machine
has in each language:

- the translated side of its gettext catalogs (the English side for ``en``), cleaned of
  placeholders, accelerators and markup as in :mod:`clir_toolkit.resources.parallel`;
- the installed manual pages of that language (``man_root``), stripped of troff by
  :mod:`clir_toolkit.collection.manpages.macros` — for English, the pages under ``man1``…``man8``;
- the ``contents`` of any corpus passed in (for instance a man-page collection's
  ``corpus.jsonl``), one line of text per output line.

Lines are whitespace-normalised and unique; the output is written atomically.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from clir_toolkit.errors import ResourceError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats import iter_corpus
from clir_toolkit.resources.parallel import (
    LOCALE_ROOT,
    catalog_paths,
    clean_message,
    is_usable,
    iter_catalogs,
    locale_name,
)

__all__ = [
    "catalog_lines",
    "collect_monolingual",
    "corpus_lines",
    "manpage_lines",
    "manpage_paths",
    "monolingual_sources",
]


def _catalogs_of(lang: str, locale_root: Path) -> list[Path]:
    """``lang``'s catalogs; for ``en``, every catalog (their English side is the text)."""
    if locale_name(lang).lower() == "en":
        return sorted(Path(locale_root).glob("*/LC_MESSAGES/*.mo"))
    return catalog_paths(lang, locale_root)


def catalog_lines(lang: str, locale_root: Path = LOCALE_ROOT) -> Iterator[str]:
    """The clean messages of ``lang``'s catalogs; for ``en``, the English of every catalog.

    Only translated messages count for other languages (a translation equal to its English
    message is English text).
    """
    english = locale_name(lang).lower() == "en"
    paths = _catalogs_of(lang, locale_root)
    if not paths:
        raise ResourceError(f"no gettext catalogs under {locale_root}")
    unreadable: list[str] = []
    for catalog in iter_catalogs(paths, unreadable, f"catalogs {locale_name(lang)}"):
        for msgid, msgstr in catalog:
            if english:
                yield clean_message(msgid)
            elif msgstr != msgid:
                yield clean_message(msgstr)


def corpus_lines(corpus: Path) -> Iterator[str]:
    """Every line of every document's ``contents`` in a corpus (JSONL or TREC SGML)."""
    for doc in iter_corpus(corpus):
        yield from doc.contents.splitlines()


def manpage_paths(lang: str, man_root: Path = Path("/usr/share/man")) -> list[Path]:
    """The installed man page files of ``lang`` (``en``: the untranslated pages), sorted."""
    from clir_toolkit.collection.manpages.packages import LANGUAGES

    if lang == "en":
        root = man_root
    elif lang in LANGUAGES:
        root = man_root / LANGUAGES[lang].directory
    else:
        return []
    return [
        path
        for path in sorted(root.glob("man[1-8]*/*"))
        if path.is_file() and not path.is_symlink()
    ]


def monolingual_sources(
    lang: str,
    corpora: Sequence[Path] = (),
    locale_root: Path = LOCALE_ROOT,
    man_root: Path | None = None,
) -> list[Path]:
    """Every file :func:`collect_monolingual` reads for ``lang``, so that a cache of its
    output can tell when one of them changed."""
    try:
        catalogs = _catalogs_of(lang, locale_root)
    except ResourceError:
        catalogs = []
    man_pages = manpage_paths(lang, Path(man_root)) if man_root is not None else []
    return [*catalogs, *map(Path, corpora), *man_pages]


def manpage_lines(lang: str, man_root: Path = Path("/usr/share/man")) -> Iterator[str]:
    """Text lines of every installed man page of ``lang`` (``en``: the untranslated pages)."""
    from clir_toolkit.collection.manpages.macros import read_man_page

    for path in manpage_paths(lang, man_root):
        try:
            page = read_man_page(path)
        except (OSError, ValueError):
            continue  # an unreadable page is skipped: this is training text, not a collection
        if page.so_target:
            continue
        for section in page.sections:
            yield from section.lines


def collect_monolingual(
    lang: str,
    out: Path,
    corpora: Sequence[Path] = (),
    locale_root: Path = LOCALE_ROOT,
    man_root: Path | None = None,
) -> int:
    """Write unique lines of ``lang`` text (catalogs, then ``corpora``) to ``out``; their count.

    Lines keep the order in which they were first seen. A line needs at least two
    characters, one of them a letter. Without catalogs for ``lang`` the corpora alone are
    used; with neither, a ResourceError says what to install.
    """
    seen: dict[str, None] = {}  # insertion-ordered set
    try:
        for line in catalog_lines(lang, Path(locale_root)):
            if is_usable(line):
                seen.setdefault(line)
    except ResourceError:
        if not corpora:
            raise
    sources = [corpus_lines(Path(corpus)) for corpus in corpora]
    if man_root is not None:
        sources.append(manpage_lines(lang, Path(man_root)))
    for lines in sources:
        for raw in lines:
            line = " ".join(raw.split())
            if is_usable(line):
                seen.setdefault(line)
    with atomic_write(Path(out)) as handle:
        for line in seen:
            handle.write(line + "\n")
    return len(seen)
