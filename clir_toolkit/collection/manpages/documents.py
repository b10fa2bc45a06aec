"""The documents of a man-page collection: a page's sections, less the boilerplate.

Some sections carry the same text in every page: translator credits, bug-report
addresses, copyright notices, colophons. They say nothing about the page and would make
every page match every query that names a translator or a mailing list, so they are
removed: those under the usual headings (:data:`BOILERPLATE_HEADINGS`, in the languages of
the translated pages) and those whose text repeats across many pages
(:func:`find_boilerplate_headings`). The ``hard`` variant of a collection also removes the
NAME section (:func:`kept_sections`), whose NAME line is itself a translation of the query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from clir_toolkit.collection.manpages.page import (
    ManPage,
    Section,
    heading_matches,
    normalise_heading,
)

__all__ = [
    "BOILERPLATE_HEADINGS",
    "SectionFilter",
    "document_text",
    "find_boilerplate_headings",
    "kept_sections",
    "line_key",
]


# Section headings that carry the same text in every page: translator credits, bug-report
# addresses, copyright notices and colophons, in the languages of the translated pages.
# Sections whose text repeats across many pages are detected as well (see
# find_boilerplate_headings); this list makes sure the usual ones go even in a small build.
BOILERPLATE_HEADINGS = frozenset(
    {
        # translator credits
        "TRANSLATION", "TRANSLATIONS", "TRANSLATOR", "TRANSLATORS", "TRADUCTION",
        "TRADUCTIONS", "TRADUCTEUR", "TRADUCTEURS", "ÜBERSETZUNG", "ÜBERSETZER",
        "TRADUCCIÓN", "TRADUCCION", "TRADUCTOR", "TRADUCTORES", "TRADUZIONE", "TRADUTTORE",
        "TRADUTTORI", "ПЕРЕВОД", "ПЕРЕВОДЧИК", "ПЕРЕВОДЧИКИ", "翻訳", "翻訳者", "翻訳者謝辞",
        "この文書について", "跋", "译者", "翻译", "中文版维护人", "中文版最新更新",
        "中国LINUX论坛MAN手册页翻译计划", "中国 LINUX 论坛 MAN 手册页翻译计划",
        "中国LINUX论坛MAN手册翻译计划", "COLOPHON",
        # bug reports
        "REPORTING BUGS", "SIGNALER DES BOGUES", "FEHLER MELDEN", "INFORMAR DE ERRORES",
        "SEGNALAZIONE BUG", "SEGNALAZIONE DEI BUG", "ИНФОРМАЦИЯ ОБ ОШИБКАХ",
        "СООБЩЕНИЯ ОБ ОШИБКАХ", "バグ報告", "报告错误", "报告BUG",
        # copyright notices
        "COPYRIGHT", "COPYRIGHTS", "АВТОРСКИЕ ПРАВА", "著作権", "版权", "版权声明",
    }
)  # fmt: skip

# A heading is found to be boilerplate when, in at least this share of the pages that have
# it, at least this share of its text is made of lines repeated across many pages.
BOILERPLATE_PAGE_SHARE = 0.9
BOILERPLATE_TEXT_SHARE = 0.5
# ... where "many pages" is this share of the pages, and at least BOILERPLATE_MIN_PAGES.
REPEATED_LINE_PAGE_SHARE = 0.02
BOILERPLATE_MIN_PAGES = 10


def line_key(line: str) -> str:
    """A line with its blanks collapsed: how lines are compared across pages."""
    return " ".join(line.split())


def find_boilerplate_headings(pages: Iterable[ManPage]) -> set[str]:
    """Headings (normalised) whose sections are mostly text repeated across many pages.

    A line is *repeated* when it occurs in at least 2 % of the pages (and at least 10). A
    heading is boilerplate when, in at least 90 % of the pages that have it (at least 10),
    repeated lines make up at least half of the characters of its section: the translator
    credits (TRADUCTION, ÜBERSETZUNG, ПЕРЕВОД, 跋 …), bug-report addresses, and one-line
    notices such as LIBRARY (``Standard C library (libc, -lc)``). The NAME section is never
    boilerplate.
    """
    pages = list(pages)
    min_pages = max(BOILERPLATE_MIN_PAGES, REPEATED_LINE_PAGE_SHARE * len(pages))
    page_frequency: Counter[str] = Counter()
    for page in pages:
        page_frequency.update(
            {line_key(line) for section in page.sections[1:] for line in section.lines if line}
        )
    mostly_repeated: dict[str, list[bool]] = {}
    for page in pages:
        for section in page.sections[1:]:
            lines = [line_key(line) for line in section.lines if line]
            total = sum(len(line) for line in lines)
            repeated = sum(len(line) for line in lines if page_frequency[line] >= min_pages)
            flag = total > 0 and repeated >= BOILERPLATE_TEXT_SHARE * total
            mostly_repeated.setdefault(normalise_heading(section.heading), []).append(flag)
    return {
        heading
        for heading, flags in mostly_repeated.items()
        if len(flags) >= min_pages and sum(flags) >= BOILERPLATE_PAGE_SHARE * len(flags)
    }


class SectionFilter:
    """Decides, once per distinct heading, whether a section is boilerplate."""

    def __init__(self, found: Iterable[str]) -> None:
        self.names = tuple(sorted(BOILERPLATE_HEADINGS | set(found)))
        self.decided: dict[str, bool] = {}

    def __call__(self, section: Section) -> bool:
        if section.heading not in self.decided:
            self.decided[section.heading] = heading_matches(section.heading, self.names)
        return self.decided[section.heading]

    def dropped(self) -> list[str]:
        """The headings (normalised) of the sections this filter has dropped so far."""
        return sorted({normalise_heading(h) for h, drop in self.decided.items() if drop})


def kept_sections(page: ManPage, is_boilerplate: SectionFilter, variant: str) -> list[Section]:
    """The sections that go into the document: no boilerplate; no NAME in the hard variant."""
    sections = list(page.sections[1:] if variant == "hard" else page.sections)
    return [section for section in sections if not is_boilerplate(section)]


def document_text(sections: Iterable[Section]) -> str:
    """Headings and text, one line each, blank lines between paragraphs."""
    parts: list[str] = []
    for section in sections:
        parts.append(section.heading)
        parts.extend(section.lines)
    return "\n".join(parts)
