"""A small troff stripper for manual pages: man (and the common mdoc) macros to plain text.

Manual pages are written in troff, a typesetting language from the 1970s: *requests* are
lines that start with a dot (``.SH NAME`` starts a section, ``.B ls`` sets ``ls`` in bold)
and *escapes* are backslash sequences inside text (``\\fB`` switches to bold, ``\\-`` is a
minus sign, ``\\(em`` an em dash). Rendering a page with ``man`` (groff) works but is slow,
hyphenates words across lines and, outside a UTF-8 locale, drops accents and CJK text. For
information retrieval we need only the words and the structure, so this module reads the
source directly (under a millisecond a page) and returns a :class:`ManPage`: its title and section,
its ordered sections (heading → lines of text), the NAME line and the SEE ALSO references.

What it handles:

- **man macros** (``man(7)``): ``.TH .SH .SS .PP .LP .P .TP .TQ .IP .HP .B .I .SM .SB``, the
  alternating-font macros ``.BR .RB .IR .RI .BI .IB``, ``.UR/.UE .MT/.ME .SY/.OP .EX/.EE``;
- **mdoc macros** (``mdoc(7)``, BSD pages) where cheap: ``.Sh .Nm .Nd .Xr .Fl .Ar .Op .Dq``
  and the other in-line macros, rendered roughly the way ``mandoc`` prints them;
- **escapes**: fonts (``\\fB \\fI \\fR \\fP \\f(CW \\f[..]``), special characters
  (``\\(em \\[em] \\[u00E9] \\C'..'``), strings (``\\*(lq`` and those a page defines with
  ``.ds``), the printable ones (``\\- \\e \\& \\~ \\0 \\| \\^ \\c``…), comments (``.\\"`` and
  ``\\"``); size, colour, motion and register escapes are dropped;
- **requests**: ``.if/.ie/.el`` with ``\\{ … \\}`` blocks (the page is read as *nroff*
  would read it: the ``n`` condition is true), ``.de``/``.ig`` blocks are skipped,
  ``.ds``/``.as`` define strings, ``.TS``/``.TE`` tables are flattened to one row a line;
  every other request is ignored;
- ``.so`` (the "see the other file" stubs Debian uses for aliases) is detected and
  reported in :attr:`ManPage.so_target`, not followed.

Lines are kept as they are in the source (no filling, no hyphenation), which keeps the
comparison of a translated page with its English original line by line meaningful.
Input is UTF-8 (``.gz`` files are decompressed); output is ``str``.
"""

from __future__ import annotations

import functools
import gzip
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "ManPage",
    "Reference",
    "Section",
    "heading_matches",
    "normalise_heading",
    "parse_man",
    "parse_references",
    "read_man_page",
    "read_man_source",
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


# ---------------------------------------------------------------------------------------------
# Escapes
# ---------------------------------------------------------------------------------------------

# groff's special character names (groff_char(7)) for the characters man pages use.
SPECIAL_CHARACTERS: dict[str, str] = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "-": "-", "mi": "-", "bu": "\u2022",
    "aq": "'", "dq": '"', "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019",
    "Bq": "\u201e", "bq": "\u201a", "Fo": "\u00ab", "Fc": "\u00bb", "fo": "\u2039",
    "fc": "\u203a", "ga": "`", "ha": "^", "ti": "~", "rs": "\\", "sl": "/", "ba": "|",
    "br": "\u2502", "bv": "|", "lB": "[", "rB": "]", "lC": "{", "rC": "}", "la": "\u27e8",
    "ra": "\u27e9", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "dg": "\u2020",
    "dd": "\u2021", "de": "\u00b0", "mu": "\u00d7", "di": "\u00f7", "+-": "\u00b1",
    "<=": "\u2264", ">=": "\u2265", "!=": "\u2260", "==": "\u2261", "~=": "\u2245",
    "ap": "~", "->": "\u2192", "<-": "\u2190", "<>": "\u2194", "ua": "\u2191",
    "da": "\u2193", "rA": "\u21d2", "lA": "\u21d0", "hA": "\u21d4", "sc": "\u00a7",
    "ps": "\u00b6", "ct": "\u00a2", "Po": "\u00a3", "Eu": "\u20ac", "eu": "\u20ac",
    "Ye": "\u00a5", "ss": "\u00df", "ae": "\u00e6", "AE": "\u00c6", "oe": "\u0153",
    "OE": "\u0152", "/o": "\u00f8", "/O": "\u00d8", "ao": "\u00e5", "AO": "\u00c5",
    "r!": "\u00a1", "r?": "\u00bf", "pl": "+", "eq": "=", "sq": "\u25a1", "ci": "\u25cb",
    "bx": "\u25a1", "ru": "_", "ul": "_", "rn": "\u203e", "or": "|", "no": "\u00ac",
    "is": "\u222b", "if": "\u221e", "sr": "\u221a", "*a": "\u03b1", "*b": "\u03b2",
    "*g": "\u03b3", "*d": "\u03b4", "*e": "\u03b5", "*l": "\u03bb", "*m": "\u03bc",
    "*p": "\u03c0", "*s": "\u03c3", "*W": "\u03a9", "*w": "\u03c9", "12": "\u00bd",
    "14": "\u00bc", "34": "\u00be", "S1": "\u00b9", "S2": "\u00b2", "S3": "\u00b3",
    "fm": "\u2032", "sd": "\u2033", "at": "@", "sh": "#", "Do": "$", "nb": "\u2284",
    "tno": "\u00ac", "pc": "\u00b7", "md": "\u22c5", "OK": "\u2713", "st": "\u220b",
    "cr": "\u21b5", "TP": "\u00de", "Tp": "\u00fe", "-D": "\u00d0",
    "Sd": "\u00f0", "IJ": "\u0132", "ij": "\u0133", ".i": "\u0131", "ff": "ff", "fi": "fi",
    "fl": "fl", "Fi": "ffi", "Fl": "ffl", "lh": "\u261c", "rh": "\u261e",
    "ho": "\u02db", "a^": "^", "a~": "~", "a-": "\u00af", "aa": "\u00b4", "'": "\u00b4",
    "`": "`", "a\"": "\u02dd", ":": "\u00a8", "ad": "\u00a8", "ac": "\u00b8",
}  # fmt: skip

# Accented letters: \('e, \(`a, \(:o, \(^o, \(,c, \(~n → é, à, ö, ô, ç, ñ.
_ACCENTS = {"'": "\u0301", "`": "\u0300", ":": "\u0308", "^": "\u0302", "~": "\u0303",
            ",": "\u0327", "v": "\u030c", "o": "\u030a"}  # fmt: skip

# Strings (\*x) that the man macros define before a page is read.
_DEFAULT_STRINGS = {"R": "\u00ae", "Tm": "\u2122", "lq": "\u201c", "rq": "\u201d", "S": "",
                    "HF": "", "Aq": "'", ".T": "utf8"}  # fmt: skip

# Single-character escapes: what each prints.
_SIMPLE_ESCAPES = {
    "-": "-", "e": "\\", "E": "\\", "\\": "\\", "&": "", "~": " ", " ": " ", "0": " ",
    "|": "", "^": "", ",": "", "/": "", ":": "", "%": "", "'": "'", "`": "`", ".": ".",
    "t": " ", "a": "", "u": "", "d": "", "p": "", "r": "", "{": "", "}": "", "!": "",
    "?": "", "j": "", "y": "", "_": "_", "\n": "",
}  # fmt: skip

# Marks where \c asked to join the next line onto this one (a private-use character).
_JOIN = "\ue000"

# One escape sequence. Escapes taking a name accept \x, \(xx and \[name]; escapes taking an
# argument accept any delimiter ('...' in practice).
_ESCAPE = re.compile(
    r"""\\(?:
        f(?P<font>\[[^\]]*\]|\(..|.)
      | (?P<sp>\((?P<sp2>..)|\[(?P<spn>[^\]]*)\])
      | C(?P<cd>.)(?P<cname>.*?)(?P=cd)
      | \*(?P<str>\[(?P<strn>[^\] ]*)[^\]]*\]|\((?P<str2>..)|(?P<str1>.))
      | s(?P<size>[+-]?\d|[+-]?\(\d\d|\([+-]?\d\d|\[[^\]]*\]|'[^']*')
      | (?P<reg>[nmMgVYk$]) (?:[+-])?(?:\[[^\]]*\]|\(..|.)
      | (?P<arg>[hvwolLDXZNbxRSHAB])(?P<delim>.).*?(?P=delim)
      | z(?P<zchar>.)
      | (?P<single>.)
    )""",
    re.VERBOSE | re.DOTALL,
)


def _special(name: str) -> str:
    """The character a special-character name (``em``, ``u00E9``, ``'e``) stands for."""
    if name in SPECIAL_CHARACTERS:
        return SPECIAL_CHARACTERS[name]
    if re.fullmatch(r"u[0-9A-Fa-f]{4,6}(?:_[0-9A-Fa-f]{4,6})*", name):
        chars = "".join(chr(int(code, 16)) for code in name[1:].split("_"))
        return unicodedata.normalize("NFC", chars)
    if name.startswith("char") and name[4:].isdigit():
        return chr(int(name[4:]))
    if len(name) == 2 and name[0] in _ACCENTS and name[1].isalpha():
        return unicodedata.normalize("NFC", name[1] + _ACCENTS[name[0]])
    return ""


# ---------------------------------------------------------------------------------------------
# Reading a page
# ---------------------------------------------------------------------------------------------


def read_man_source(path: str | Path) -> str:
    """The troff source of a page file (``.gz`` decompressed), decoded as UTF-8.

    The few pages that are not valid UTF-8 are legacy Latin-1; they are decoded as such.
    """
    path = Path(path)
    data = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_man_page(path: str | Path) -> ManPage:
    """Read and strip one page file (see :func:`parse_man`)."""
    return parse_man(read_man_source(path))


def parse_man(source: str) -> ManPage:
    """Strip the troff source of a manual page into a :class:`ManPage`."""
    parser = _Parser()
    for line in _logical_lines(source):
        parser.feed(line)
    return parser.finish()


def _logical_lines(source: str) -> list[str]:
    """Source lines with comments removed and ``\\``-newline continuations joined."""
    lines: list[str] = []
    pending = ""
    for raw in source.replace("\r\n", "\n").split("\n"):
        line = pending + _strip_comment(raw)
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an unescaped backslash at the end continues the line
            pending = line[:-1]
            continue
        pending = ""
        lines.append(line)
    if pending:
        lines.append(pending)
    return lines


_ANY_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _strip_comment(line: str) -> str:
    r"""Cut ``\"`` (comment) and ``\#`` (comment that also joins lines) to the end of line."""
    if "\\" not in line:
        return line
    for match in _ANY_ESCAPE.finditer(line):
        if match.group(1) == '"':
            return line[: match.start()].rstrip(" \t")
        if match.group(1) == "#":
            return line[: match.start()] + "\\"
    return line


def _split_args(text: str) -> list[str]:
    """Split macro arguments on unescaped blanks; ``"two words"`` is one argument."""
    args: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            break
        current: list[str] = []
        if text[i] == '"':
            i += 1
            while i < n:
                if text[i] == '"':
                    if i + 1 < n and text[i + 1] == '"':
                        current.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                if text[i] == "\\" and i + 1 < n:
                    current.append(text[i : i + 2])
                    i += 2
                    continue
                current.append(text[i])
                i += 1
        else:
            while i < n and text[i] not in " \t":
                if text[i] == "\\" and i + 1 < n:
                    current.append(text[i : i + 2])
                    i += 2
                    continue
                current.append(text[i])
                i += 1
        args.append("".join(current))
    return args


def _clean(text: str) -> str:
    """Collapse blanks (including no-break spaces) into single spaces."""
    return " ".join(text.replace("\u00a0", " ").split())


# ---------------------------------------------------------------------------------------------
# The parser
# ---------------------------------------------------------------------------------------------

# man macros whose arguments are printed with spaces between them (one font) ...
_ONE_FONT = {"B", "I", "SM", "SB", "R"}
# ... and those whose arguments alternate two fonts, printed with no space between them.
_ALTERNATING = {"BR", "RB", "IR", "RI", "BI", "IB"}
# Requests and macros that start a new paragraph.
_BREAKS = {"PP", "LP", "P", "sp", "HP", "TP", "TQ", "Sp", "Pp", "Lp", "bp", "ns"}
# Requests that open a block ending at a line "..", or at ".name" when given an argument.
_SKIPPED_BLOCKS = {"de", "de1", "dei", "am", "am1", "ami", "ig"}

# mdoc: in-line macros that print their arguments as they are.
_MDOC_PLAIN = {
    "Ad", "An", "Cd", "Cm", "Dv", "Em", "Er", "Ev", "Fa", "Fd", "Ft", "Ic", "Li", "Me",
    "Ms", "No", "Pa", "Sx", "Sy", "Tn", "Va", "Vt", "Xc", "Xo", "Ek", "Bk", "Ot", "Lb",
    "Ta", "Bf", "Ef", "Mt", "Hf",
}  # fmt: skip
# mdoc: macros that enclose the rest of the line, and their delimiters.
_MDOC_ENCLOSE = {
    "Op": ("[", "]"), "Dq": ("\u201c", "\u201d"), "Sq": ("\u2018", "\u2019"),
    "Qq": ('"', '"'), "Pq": ("(", ")"), "Aq": ("\u27e8", "\u27e9"), "Bq": ("[", "]"),
    "Brq": ("{", "}"), "Ql": ("\u2018", "\u2019"), "Eo": ("", ""),
}  # fmt: skip
# mdoc: macros that print a fixed text (and open or close an enclosure spanning lines).
_MDOC_FIXED = {
    "Oo": "[", "Oc": "]", "Po": "(", "Pc": ")", "Do": "\u201c", "Dc": "\u201d",
    "So": "\u2018", "Sc": "\u2019", "Qo": '"', "Qc": '"', "Ao": "\u27e8", "Ac": "\u27e9",
    "Bo": "[", "Bc": "]", "Bro": "{", "Brc": "}", "Ec": "", "Ux": "UNIX", "Bx": "BSD",
    "Ox": "OpenBSD", "Nx": "NetBSD", "Fx": "FreeBSD", "Dx": "DragonFly", "At": "AT&T UNIX",
    "Bsx": "BSD/OS",
}  # fmt: skip
_MDOC_CALLABLE = (
    _MDOC_PLAIN | set(_MDOC_ENCLOSE) | set(_MDOC_FIXED)
    | {"Fl", "Ar", "Xr", "Nm", "Ns", "Pf", "Sm", "Fn", "Lk", "In", "St", "Dl", "Nd"}
)  # fmt: skip
# mdoc: block and document macros handled line by line.
_MDOC_LINE = {"Dd", "Dt", "Os", "Sh", "Ss", "Nd", "Bl", "El", "Bd", "Ed", "It", "D1", "Dl",
              "Rs", "Re", "Ex", "Rv", "Fo", "Fc", "Nm", "Pp", "Lp"}  # fmt: skip
# Trailing punctuation that mdoc attaches to the previous word, and opening punctuation.
_CLOSE_PUNCT = {".", ",", ";", ":", "?", "!", ")", "]"}
_OPEN_PUNCT = {"(", "["}


class _Parser:
    """Reads logical lines one at a time and collects sections of text."""

    def __init__(self) -> None:
        self.title = ""
        self.section = ""
        self.sections: list[Section] = []
        self.heading: str | None = None  # heading of the section being read
        self.lines: list[str] = []
        self.literal: set[int] = set()  # indices of self.lines set in no-fill mode
        self.break_next = False  # mdoc: the next text starts a new line
        self.nofill = False  # inside .nf/.fi, .EX/.EE or a literal mdoc display
        self.strings: dict[str, str] = dict(_DEFAULT_STRINGS)
        self.so_targets: list[str] = []
        self.has_text = False
        self.join_next = False  # the last line ended with \c
        self.heading_next = False  # .SH without arguments: the next text line is the heading
        self.skip_until: re.Pattern[str] | None = None  # inside .de or .ig
        self.skip_depth = 0  # inside a false .if \{ ... \} block
        self.last_condition = True  # for .el
        self.table: str | None = None  # None, "format" or "data" inside .TS ... .TE
        self.table_tab = "\t"
        self.mdoc = False
        self.mdoc_name = ""

    # -- escapes ------------------------------------------------------------------------------

    def unescape(self, text: str, depth: int = 0) -> str:
        if "\\" not in text:
            return text
        return _ESCAPE.sub(lambda match: self._escape(match, depth), text)

    def _escape(self, match: re.Match[str], depth: int) -> str:
        single = match.group("single")
        if single is not None:
            if single == "c":
                return _JOIN
            return _SIMPLE_ESCAPES.get(single, single)
        if match.group("sp") is not None:
            return _special(match.group("sp2") or match.group("spn") or "")
        if match.group("cname") is not None:
            return _special(match.group("cname"))
        if match.group("str") is not None:
            name = match.group("strn") or match.group("str2") or match.group("str1") or ""
            value = self.strings.get(name, "")
            return self.unescape(value, depth + 1) if depth < 5 else ""
        if match.group("zchar") is not None:
            return match.group("zchar")
        return ""  # fonts, sizes, registers, colours, motions, widths, ...

    def text_of(self, raw: str) -> str:
        return _clean(self.unescape(raw))

    # -- output -------------------------------------------------------------------------------

    def emit(self, text: str) -> None:
        """Add a line of text to the current section, or continue the last line.

        A line continues the last one after ``\\c``, and in mdoc pages, whose in-line macros
        put every few words on a line of their own, the lines of a paragraph are filled
        into one line the way mandoc prints them.
        """
        joined = text.endswith(_JOIN)
        text = _clean(text.replace(_JOIN, ""))
        if self.heading_next:
            if text:
                self.start_section(text)
                self.heading_next = False
            return
        if self.heading is None:
            return  # text before the first heading (rare): not part of any section
        fill = self.mdoc and not self.nofill and not self.break_next
        self.break_next = False
        if self.join_next and self.lines and self.lines[-1]:
            self.lines[-1] = _clean(self.lines[-1] + text)
        elif fill and text and self.lines and self.lines[-1]:
            self.lines[-1] = _clean(self.lines[-1] + " " + text)
        elif text:
            if self.nofill:
                self.literal.add(len(self.lines))
            self.lines.append(text)
        self.join_next = joined
        if text:
            self.has_text = True

    def attach(self, text: str) -> None:
        """Append punctuation (``.UE .``) to the last line without a space."""
        if self.lines and self.lines[-1] and text:
            self.lines[-1] += text
        elif text:
            self.emit(text)

    def paragraph(self) -> None:
        self.join_next = False
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def start_section(self, heading: str) -> None:
        self.close_section()
        self.heading = heading
        self.lines = []
        self.literal = set()
        self.join_next = False

    def close_section(self) -> None:
        if self.heading is None:
            return
        while self.lines and not self.lines[-1]:
            self.lines.pop()
        literal = frozenset(i for i in self.literal if i < len(self.lines))
        self.sections.append(Section(self.heading, tuple(self.lines), literal))
        self.heading = None

    def finish(self) -> ManPage:
        self.close_section()
        stub = self.so_targets[0] if self.so_targets and not self.has_text else None
        return ManPage(
            title=self.title,
            section=self.section,
            sections=tuple(self.sections),
            so_target=stub,
            includes=tuple(self.so_targets) if stub is None else (),
            mdoc=self.mdoc,
        )

    # -- lines --------------------------------------------------------------------------------

    def feed(self, line: str) -> None:
        if self.skip_until is not None:
            if self.skip_until.match(line):
                self.skip_until = None
            return
        if self.skip_depth:
            self.skip_depth += line.count("\\{") - line.count("\\}")
            self.skip_depth = max(self.skip_depth, 0)
            return
        if line.startswith((".", "'")):
            self.request(line[1:])
        elif self.table is not None:
            self.table_line(line)
        else:
            self.emit(self.unescape(line))

    def request(self, body: str) -> None:
        body = body.lstrip(" \t")
        match = _REQUEST_NAME.match(body)
        if match is None:
            return  # an empty request: "." alone
        name, rest = match.group(1), match.group(2)
        if self.table is not None and name in ("sp", "br"):
            return  # spacing inside a table
        if name in _SKIPPED_BLOCKS:
            args = _split_args(rest)
            end = args[1] if len(args) > 1 else "." if name != "ig" or not args else args[0]
            self.skip_until = re.compile(r"[.']\s*" + re.escape(end) + r"(\s|$)")
            return
        if name in ("if", "ie", "el"):
            self.conditional(name, rest)
            return
        handler = _MAN_REQUESTS.get(name)
        if handler is not None:
            handler(self, name, rest)
        elif (name in _MDOC_LINE or name in _MDOC_CALLABLE) and (
            self.mdoc or name in ("Dd", "Dt", "Sh")
        ):
            self.mdoc = True  # a page is mdoc from its .Dd/.Dt/.Sh on
            self.mdoc_request(name, rest)
        # every other request or macro is ignored

    # -- conditionals -------------------------------------------------------------------------

    def conditional(self, name: str, rest: str) -> None:
        if name == "el":
            condition, body = not self.last_condition, rest
        else:
            condition, body = self.evaluate(rest)
            if name == "ie":
                self.last_condition = condition
        body = body.lstrip(" \t")
        if not condition:
            if "\\{" in body:
                self.skip_depth = max(body.count("\\{") - body.count("\\}"), 0)
            return
        body = body.replace("\\{", "", 1).lstrip(" \t")
        if body:
            self.feed(body)

    def evaluate(self, rest: str) -> tuple[bool, str]:
        """Evaluate a condition the way nroff would, roughly; returns (value, body)."""
        rest = rest.lstrip(" \t")
        negate = rest.startswith("!")
        if negate:
            rest = rest[1:]
        value: bool
        if rest[:1] in ("n", "t", "o", "e") and rest[1:2] in (" ", "\t", "\\", ""):
            value, body = rest[0] in ("n", "o"), rest[1:]
        elif rest.startswith(("\\n(.g", "\\n[.g]")):  # "running groff": yes
            end = 5 if rest.startswith("\\n(.g") else 6
            value, body = True, rest[end:]
        elif rest[:1] in ("'", '"') and len(rest) > 1:  # 'a'b': compare two strings
            delim = rest[0]
            parts = rest[1:].split(delim, 2)
            if len(parts) == 3:
                value = self.unescape(parts[0]) == self.unescape(parts[1])
                body = parts[2]
            else:
                value, body = False, ""
        else:  # numeric expressions, registers, d/r/c tests: take them as false
            parts = rest.split(None, 1)
            value, body = False, parts[1] if len(parts) > 1 else ""
        return value != negate, body

    # -- tables -------------------------------------------------------------------------------

    def start_table(self, _name: str, _rest: str) -> None:
        self.table = "format"
        self.table_tab = "\t"
        self.paragraph()

    def end_table(self, name: str, _rest: str) -> None:
        if name == "T&":
            self.table = "format"
            return
        self.table = None
        self.paragraph()

    def table_line(self, line: str) -> None:
        if self.table == "format":
            stripped = line.strip()
            if stripped.endswith(";"):
                tab = re.search(r"tab\s*\((.)\)", stripped)
                if tab:
                    self.table_tab = tab.group(1)
            elif stripped.endswith("."):
                self.table = "data"
            return
        if line.strip() in ("_", "=", "\\_", ""):
            return
        cells = [cell.replace("T{", "").replace("T}", "") for cell in line.split(self.table_tab)]
        self.emit(" ".join(self.unescape(cell) for cell in cells))

    # -- man macros ---------------------------------------------------------------------------

    def man_th(self, name: str, rest: str) -> None:
        args = [self.text_of(arg) for arg in _split_args(rest)]
        if name == "TH" or not self.title:
            self.title = args[0] if args else ""
            self.section = args[1].lower() if len(args) > 1 else ""

    def man_heading(self, name: str, rest: str) -> None:
        heading = self.text_of(" ".join(_split_args(rest)))
        if name in ("SS", "Ss"):
            self.paragraph()
            if heading:
                self.emit(heading)
            return
        self.nofill = False
        if heading:
            self.start_section(heading)
            self.heading_next = False
        else:
            self.close_section()
            self.heading_next = True

    def man_break(self, _name: str, _rest: str) -> None:
        self.paragraph()

    def man_fill(self, name: str, _rest: str) -> None:
        """``.nf``/``.EX``/``.Vb`` start literal text; ``.fi``/``.EE``/``.Ve`` end it."""
        self.join_next = False
        self.nofill = name in ("nf", "EX", "Vb")

    def man_ip(self, _name: str, rest: str) -> None:
        self.paragraph()
        args = _split_args(rest)
        if args:
            self.emit(self.unescape(args[0]))

    def man_font(self, name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in _split_args(rest)]
        if not args:
            return  # the font applies to the next line, which is printed as it is
        self.emit(("" if name in _ALTERNATING else " ").join(args))

    def man_text_args(self, _name: str, rest: str) -> None:
        """Macros whose arguments are printed as a line (``.SY ls``, ``.URL u text``)."""
        args = [self.unescape(arg) for arg in _split_args(rest)]
        if args:
            self.emit(" ".join(args))

    def man_url(self, _name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in _split_args(rest)]
        if len(args) > 1:
            self.emit(args[1] + "".join(args[2:]))
        elif args:
            self.emit(args[0])

    def man_option(self, _name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in _split_args(rest)]
        if args:
            self.emit("[" + " ".join(args) + "]")

    def man_link_end(self, _name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in _split_args(rest)]
        if args:
            self.attach("".join(args))

    def man_string(self, name: str, rest: str) -> None:
        match = re.match(r"(\S+)\s?(.*)", rest, re.DOTALL)
        if match is None:
            return
        value = match.group(2)
        if value.startswith('"'):
            value = value[1:]
        key = match.group(1)
        self.strings[key] = (self.strings.get(key, "") if name == "as" else "") + value

    def man_so(self, _name: str, rest: str) -> None:
        args = _split_args(rest)
        if args:
            self.so_targets.append(args[0])

    # -- mdoc macros --------------------------------------------------------------------------

    def mdoc_request(self, name: str, rest: str) -> None:
        args = _split_args(rest)
        if name == "Dd" or name == "Os":
            return
        if name == "Dt":
            self.man_th("Dt", rest)
            return
        if name in ("Sh", "Ss"):
            self.man_heading(name, self.mdoc_render(args) if args else "")
            return
        if name in ("Bd", "Ed"):
            self.paragraph()
            self.nofill = name == "Bd" and bool({"-literal", "-unfilled"} & set(args))
            return
        if name in ("Pp", "Lp", "Bl", "El", "Rs", "Re"):
            self.paragraph()
            return
        if name in ("Ex", "Rv"):
            return
        if name == "It":
            self.paragraph()
            if args:  # the tag of a list item, on a line of its own
                self.emit(self.mdoc_render(args))
                self.break_next = True
            return
        if name == "Nd":
            self.emit("- " + self.mdoc_render(args))
            return
        if name == "Fo":
            self.emit((self.unescape(args[0]) if args else "") + "(")
            return
        if name == "Fc":
            self.attach(")")
            return
        if name in ("D1", "Dl"):
            nofill, self.nofill = self.nofill, name == "Dl"
            self.emit(self.mdoc_render(args))
            self.nofill = nofill
            return
        self.emit(self.mdoc_render([name, *args]))

    def mdoc_render(self, tokens: list[str]) -> str:
        """Render an mdoc line (macro names among its words) as mandoc would, roughly."""
        words = self._mdoc_words(tokens)
        out = ""
        no_space = True
        for word in words:
            if word == _NO_SPACE:
                no_space = True
                continue
            if not no_space and word not in _CLOSE_PUNCT:
                out += " "
            out += word
            no_space = word in _OPEN_PUNCT
        return out

    def _mdoc_words(self, tokens: list[str]) -> list[str]:
        words: list[str] = []
        i = 0
        while i < len(tokens):
            token = tokens[i]
            if token not in _MDOC_CALLABLE:
                words.append(self.unescape(token))
                i += 1
                continue
            following = tokens[i + 1] if i + 1 < len(tokens) else None
            plain_next = following is not None and following not in _MDOC_CALLABLE
            i += 1
            if token in _MDOC_ENCLOSE:
                opening, closing = _MDOC_ENCLOSE[token]
                end = len(tokens)
                while end > i and tokens[end - 1] in _CLOSE_PUNCT:
                    end -= 1
                inner = self._mdoc_words(tokens[i:end])
                words += [opening, _NO_SPACE, *inner, _NO_SPACE, closing]
                words += [self.unescape(t) for t in tokens[end:]]
                i = len(tokens)
            elif token in _MDOC_FIXED:
                words.append(_MDOC_FIXED[token])
                if token in ("Oo", "Po", "Do", "So", "Qo", "Ao", "Bo", "Bro"):
                    words.append(_NO_SPACE)
            elif token == "Fl":
                flag = self.unescape(following) if plain_next and following is not None else ""
                words.append("-" + flag)
                i += 1 if plain_next else 0
            elif token == "Ar" and not plain_next:
                words.append("file ...")
            elif token == "Xr" and plain_next and i + 1 < len(tokens):
                name, sec = self.unescape(tokens[i]), self.unescape(tokens[i + 1])
                words.append(f"{name}({sec})")
                i += 2
            elif token == "Nm":
                if plain_next and following is not None and following not in _CLOSE_PUNCT:
                    name = self.unescape(following)
                    self.mdoc_name = self.mdoc_name or name
                    words.append(name)
                    i += 1
                elif self.mdoc_name:
                    words.append(self.mdoc_name)
            elif token in ("Ns", "Pf", "Sm"):
                if token == "Ns":
                    words.append(_NO_SPACE)
                elif token == "Pf" and plain_next and following is not None:
                    words += [self.unescape(following), _NO_SPACE]
                    i += 1
                elif token == "Sm" and plain_next:
                    i += 1
            elif token == "Nd":
                words.append("-")
            elif token == "In" and plain_next and following is not None:
                words.append(f"<{self.unescape(following)}>")
                i += 1
            elif token == "Fn" and plain_next and following is not None:
                function_args = [self.unescape(t) for t in tokens[i + 1 :]]
                words.append(f"{self.unescape(following)}({', '.join(function_args)})")
                i = len(tokens)
            elif token == "St" and plain_next:
                i += 1  # standards (-p1003.1 …) are dropped
            # plain macros (Cm, Pa, Em …) print the words that follow them
        return words


# A request line after its control character: the name ends at a blank or a backslash.
_REQUEST_NAME = re.compile(r"([^\s\\]+)[ \t]*(.*)", re.DOTALL)

# Marks where mdoc asks for no space between two words (\uE001: a private-use character).
_NO_SPACE = "\ue001"


_MAN_REQUESTS: dict[str, Callable[[_Parser, str, str], None]] = {
    "TH": _Parser.man_th,
    "SH": _Parser.man_heading,
    "SS": _Parser.man_heading,
    "IP": _Parser.man_ip,
    "TS": _Parser.start_table,
    "TE": _Parser.end_table,
    "T&": _Parser.end_table,
    "UE": _Parser.man_link_end,
    "ME": _Parser.man_link_end,
    "URL": _Parser.man_url,
    "SY": _Parser.man_text_args,
    **{name: _Parser.man_fill for name in ("nf", "fi", "EX", "EE", "Vb", "Ve")},
    "OP": _Parser.man_option,
    "ds": _Parser.man_string,
    "as": _Parser.man_string,
    "so": _Parser.man_so,
    **{name: _Parser.man_break for name in _BREAKS},
    **{name: _Parser.man_font for name in _ONE_FONT | _ALTERNATING},
}
