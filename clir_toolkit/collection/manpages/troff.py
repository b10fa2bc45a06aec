"""The troff language, read for its text: escapes, requests, strings, conditionals, tables.

Manual pages are written in troff, a typesetting language from the 1970s: *requests* are
lines that start with a dot (``.SH NAME`` starts a section, ``.B ls`` sets ``ls`` in bold)
and *escapes* are backslash sequences inside text (``\\fB`` switches to bold, ``\\-`` is a
minus sign, ``\\(em`` an em dash). Rendering a page with ``man`` (groff) works but is slow,
hyphenates words across lines and, outside a UTF-8 locale, drops accents and CJK text. For
information retrieval we need only the words and the structure, so the source is read
directly (under a millisecond a page). This module is the troff layer of that reader,
:class:`TroffReader`; the macro packages on top of it (``man(7)``, ``mdoc(7)``), which turn
the text into the sections of a page, are in :mod:`clir_toolkit.collection.manpages.macros`.

What it handles:

- **escapes**: fonts (``\\fB \\fI \\fR \\fP \\f(CW \\f[..]``), special characters
  (``\\(em \\[em] \\[u00E9] \\C'..'``), strings (``\\*(lq`` and those a page defines with
  ``.ds``), the printable ones (``\\- \\e \\& \\~ \\0 \\| \\^ \\c``…), comments (``.\\"`` and
  ``\\"``); size, colour, motion and register escapes are dropped;
- **requests**: ``.if/.ie/.el`` with ``\\{ … \\}`` blocks (the page is read as *nroff*
  would read it: the ``n`` condition is true), ``.de``/``.ig`` blocks are skipped,
  ``.ds``/``.as`` define strings, ``.TS``/``.TE`` tables are flattened to one row a line;
  every other request goes to the macro package (:meth:`TroffReader.macro`), which ignores
  those it does not know;
- ``.so`` (the "see the other file" stubs Debian uses for aliases) is recorded in
  :attr:`TroffReader.so_targets`, not followed.

Lines are kept as they are in the source (no filling, no hyphenation), which keeps the
comparison of a translated page with its English original line by line meaningful.
Input is UTF-8 (``.gz`` files are decompressed); output is ``str``.
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = [
    "JOIN",
    "SPECIAL_CHARACTERS",
    "TroffReader",
    "clean",
    "logical_lines",
    "read_man_source",
    "split_args",
]


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

# Single-character escapes: what each prints.
_SIMPLE_ESCAPES = {
    "-": "-", "e": "\\", "E": "\\", "\\": "\\", "&": "", "~": " ", " ": " ", "0": " ",
    "|": "", "^": "", ",": "", "/": "", ":": "", "%": "", "'": "'", "`": "`", ".": ".",
    "t": " ", "a": "", "u": "", "d": "", "p": "", "r": "", "{": "", "}": "", "!": "",
    "?": "", "j": "", "y": "", "_": "_", "\n": "",
}  # fmt: skip

# Marks where \c asked to join the next line onto this one (a private-use character).
JOIN = "\ue000"

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
# Reading the source: files, lines, comments, arguments
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


def logical_lines(source: str) -> list[str]:
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


def split_args(text: str) -> list[str]:
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


def clean(text: str) -> str:
    """Collapse blanks (including no-break spaces) into single spaces."""
    return " ".join(text.replace("\u00a0", " ").split())


# ---------------------------------------------------------------------------------------------
# The reader
# ---------------------------------------------------------------------------------------------

# A request line after its control character: the name ends at a blank or a backslash.
_REQUEST_NAME = re.compile(r"([^\s\\]+)[ \t]*(.*)", re.DOTALL)

# Requests that open a block ending at a line "..", or at ".name" when given an argument.
_SKIPPED_BLOCKS = {"de", "de1", "dei", "am", "am1", "ami", "ig"}


class TroffReader:
    """Reads logical lines one at a time: the troff requests and escapes.

    What the text means is the macro package's: a subclass puts the text where it belongs
    (:meth:`emit`, :meth:`paragraph`) and handles the macros and the requests this class
    leaves to it (:meth:`macro`). ``strings`` are the strings (``\\*x``) defined before the
    page is read.
    """

    def __init__(self, strings: Mapping[str, str]) -> None:
        self.strings: dict[str, str] = dict(strings)
        self.so_targets: list[str] = []
        self.skip_until: re.Pattern[str] | None = None  # inside .de or .ig
        self.skip_depth = 0  # inside a false .if \{ ... \} block
        self.last_condition = True  # for .el
        self.table: str | None = None  # None, "format" or "data" inside .TS ... .TE
        self.table_tab = "\t"

    # -- what the macro package does ----------------------------------------------------------

    def emit(self, text: str) -> None:
        """Add a line of text (escapes resolved; it ends with :data:`JOIN` after ``\\c``)."""
        raise NotImplementedError

    def paragraph(self) -> None:
        """End the paragraph (a blank line in the text)."""
        raise NotImplementedError

    def macro(self, name: str, rest: str) -> None:
        """A request this reader does not handle, called with its name and arguments."""
        # every other request or macro is ignored

    # -- escapes ------------------------------------------------------------------------------

    def unescape(self, text: str, depth: int = 0) -> str:
        if "\\" not in text:
            return text
        return _ESCAPE.sub(lambda match: self._escape(match, depth), text)

    def _escape(self, match: re.Match[str], depth: int) -> str:
        single = match.group("single")
        if single is not None:
            if single == "c":
                return JOIN
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
        return clean(self.unescape(raw))

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
            args = split_args(rest)
            end = args[1] if len(args) > 1 else "." if name != "ig" or not args else args[0]
            self.skip_until = re.compile(r"[.']\s*" + re.escape(end) + r"(\s|$)")
            return
        if name in ("if", "ie", "el"):
            self.conditional(name, rest)
            return
        handler = _TROFF_REQUESTS.get(name)
        if handler is not None:
            handler(self, name, rest)
        else:
            self.macro(name, rest)

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

    # -- strings and included files -----------------------------------------------------------

    def define_string(self, name: str, rest: str) -> None:
        """``.ds name value`` defines a string, ``.as name more`` appends to one."""
        match = re.match(r"(\S+)\s?(.*)", rest, re.DOTALL)
        if match is None:
            return
        value = match.group(2)
        if value.startswith('"'):
            value = value[1:]
        key = match.group(1)
        self.strings[key] = (self.strings.get(key, "") if name == "as" else "") + value

    def include(self, _name: str, rest: str) -> None:
        """``.so file``: the file is recorded in :attr:`so_targets`, not read."""
        args = split_args(rest)
        if args:
            self.so_targets.append(args[0])


_TROFF_REQUESTS: dict[str, Callable[[TroffReader, str, str], None]] = {
    "TS": TroffReader.start_table,
    "TE": TroffReader.end_table,
    "T&": TroffReader.end_table,
    "ds": TroffReader.define_string,
    "as": TroffReader.define_string,
    "so": TroffReader.include,
}
