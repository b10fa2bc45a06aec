"""A manual page as text and structure: what its sections, NAME line and SEE ALSO mean.

:func:`clir_toolkit.collection.manpages.macros.read_man_page` reads a page into a
:class:`ManPage`: its title and section, its ordered sections (heading → lines of text),
the NAME line and the SEE ALSO references. This module is about what those mean, whatever
the language of the page: headings compared across languages and the bilingual headings of
Chinese pages (:func:`heading_matches`), the ``name(section)`` cross-references
(:func:`parse_references`), and the names and the description a NAME line gives
(:func:`split_name_line`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "SEE_ALSO_HEADINGS",
    "ManPage",
    "Reference",
    "Section",
    "heading_matches",
    "normalise_heading",
    "parse_references",
    "split_name_line",
]


# ---------------------------------------------------------------------------------------------
# The structured page
# ---------------------------------------------------------------------------------------------


class Reference(NamedTuple):
    """A cross-reference ``name(section)``, as found under SEE ALSO: ``ls(1)``."""

    name: str
    section: str


@dataclass(frozen=True, slots=True)
class Section:
    """One ``.SH`` section: its heading and its lines of text (blank lines between paragraphs).

    ``literal`` holds the indices of the lines set without filling (``.nf``/``.fi``,
    ``.EX``/``.EE``, mdoc ``.Bd -literal``): program code, synopses, sample output: text
    that translators leave as it is.
    """

    heading: str
    lines: tuple[str, ...]
    literal: frozenset[int] = frozenset()

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def prose(self) -> list[str]:
        """The non-empty lines that are not literal."""
        return [line for i, line in enumerate(self.lines) if line and i not in self.literal]


# The heading of the SEE ALSO section in the languages of Debian's translated pages (the
# variants found in the installed packages; see heading_matches for mixed headings).
SEE_ALSO_HEADINGS = frozenset(
    {
        "SEE ALSO",
        "VOIR AUSSI",  # fr
        "SIEHE AUCH", "SIEHE ALSO",  # de
        "VÉASE TAMBIÉN", "VÉASE ADEMÁS", "VEA TAMBIÉN", "VER TAMBIÉN",  # es
        "VEDERE ANCHE", "VEDI ANCHE",  # it
        "СМ. ТАКЖЕ", "СМОТРИТЕ ТАКЖЕ", "СМОТРИ ТАКЖЕ",  # ru
        "関連項目", "参照", "参照項目", "関連情報",  # ja
        "参见", "另见", "又见", "亦见", "参阅", "参看", "参考", "另请参阅", "参见SEE ALSO",  # zh
    }
)  # fmt: skip


@dataclass(frozen=True)
class ManPage:
    """A manual page reduced to text and structure.

    ``sections`` are in page order; the first one is the NAME section in every language
    (NAME, NOM, BEZEICHNUNG, ИМЯ, 名前, 名称 …). ``so_target`` is set, and ``sections`` is
    empty, when the file is only a ``.so other/page.1`` stub; ``includes`` lists ``.so``
    requests found in a page that also has text of its own (they are not followed).
    """

    title: str = ""
    section: str = ""
    sections: tuple[Section, ...] = ()
    so_target: str | None = None
    includes: tuple[str, ...] = ()
    mdoc: bool = False

    @property
    def name_line(self) -> str:
        """The first paragraph of the NAME section as one line: ``"ls - list directory contents"``.

        Later paragraphs, which a few pages use for a synopsis, are left out.
        """
        if not self.sections:
            return ""
        lines = self.sections[0].lines
        end = lines.index("") if "" in lines else len(lines)
        return " ".join(lines[:end]).strip()

    def find(self, headings: Iterable[str]) -> Section | None:
        """The first section whose heading matches one of ``headings`` (:func:`heading_matches`)."""
        names = tuple(headings)
        return next((s for s in self.sections if heading_matches(s.heading, names)), None)

    def see_also(self, headings: Iterable[str] = SEE_ALSO_HEADINGS) -> list[Reference]:
        """The ``name(section)`` references of the SEE ALSO section, in order, without repeats."""
        section = self.find(headings)
        return parse_references(section.text) if section is not None else []


# ---------------------------------------------------------------------------------------------
# Headings, references and NAME lines, in every language
# ---------------------------------------------------------------------------------------------

_HEADING_BRACKETS = re.compile(r"[\[\]()（）《》「」【】\"':：]")


def normalise_heading(heading: str) -> str:
    """Upper case, single spaces, no quotes, brackets or colons: for comparing headings.

    ``'"SEE ALSO"'`` → ``SEE ALSO``; ``另见 (SEE ALSO)`` → ``另见 SEE ALSO``.
    """
    heading = _HEADING_BRACKETS.sub(" ", heading.replace("\u00a0", " "))
    return unicodedata.normalize("NFC", " ".join(heading.split())).upper()


def heading_matches(heading: str, names: Iterable[str]) -> bool:
    """Whether a heading is one of ``names``, alone or paired with a translation of it.

    Chinese pages often give both languages: ``参见 SEE ALSO``, ``SEE ALSO 参见``,
    ``另见 (SEE ALSO)``; each of those matches ``SEE ALSO`` (and ``参见``).
    """
    heading = normalise_heading(heading)
    return any(
        heading == name or heading.startswith(name + " ") or heading.endswith(" " + name)
        for name in _normalised(tuple(names))
    )


@functools.lru_cache(maxsize=64)
def _normalised(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(normalise_heading(name) for name in names)


# A reference looks like ls(1), SSL_read(3ssl), File::Temp(3pm) or, in CJK text, ls（1）.
_REFERENCE = re.compile(r"([A-Za-z0-9_][\w.:+\-]*)\s?[(（]([1-9n][a-zA-Z0-9]{0,8})[)）]")


def parse_references(text: str) -> list[Reference]:
    """Every ``name(section)`` in ``text``, in order of first appearance, without repeats."""
    found: list[Reference] = []
    seen: set[Reference] = set()
    for match in _REFERENCE.finditer(text):
        name = match.group(1).rstrip(".-:")
        ref = Reference(name, match.group(2).lower())
        if name and ref not in seen:
            seen.add(ref)
            found.append(ref)
    return found


# The separator between the names and the description of a NAME line: " - " (``\\-`` in the
# source), and the variants translators use: "--", "---", en and em dashes.
_NAME_SEPARATOR = re.compile(r"\s(?:-{1,3}|\u2014|\u2013|\u2212)\s")
# For lines without one: the leading names ("mpool-", "/etc/securetty", "rup"), then what
# is left of a separator glued to a word ("wmemmove -ワイド文字", "mpool- Partage").
_LOOSE_NAMES = re.compile(
    r"^([\w./:+@\[\]-]*[\w./:+@\[\]](?:\s*,\s*[\w./:+@\[\]-]*[\w./:+@\[\]])*)"
    r"\s*[-\u2014\u2013\uff0d:：]*\s*"
)


# A NAME section that documents several commands, one line each, joined into one line:
# "a block-sorting file compressor bzcat - decompresses files to stdout".
_NEXT_ENTRY = re.compile(r"\s[a-z0-9_][\w.+-]*(?:,\s*[\w.+-]+)*\s-\s")


def split_name_line(line: str) -> tuple[list[str], str]:
    """Split a NAME line into the names it documents and its description.

    ``"getpid, getppid - get process identification"`` → ``(["getpid", "getppid"],
    "get process identification")``. The separator is normally `` - `` (``\\-`` in the
    source); translators also write ``--``, en or em dashes, ``name- description``,
    ``name -description`` or no separator at all (``"rup リモートホストの状態を表示する"``):
    then the leading run of comma-separated names is taken as the names. When the line
    holds several entries (``bzip2 - a compressor bzcat - decompresses …``) the description
    is the first one's. The description is ``""`` when nothing is left.
    """
    line = " ".join(line.split())
    separator = _NAME_SEPARATOR.search(line)
    if separator is not None:
        description = line[separator.end() :]
        following = _NEXT_ENTRY.search(description)
        if following is not None:
            description = description[: following.start()]
        return _split_names(line[: separator.start()]), description.strip()
    loose = _LOOSE_NAMES.match(line)
    if loose is None:
        return [], line
    return _split_names(loose.group(1)), line[loose.end() :].strip()


def _split_names(names: str) -> list[str]:
    return [name.strip() for name in names.split(",") if name.strip()]
