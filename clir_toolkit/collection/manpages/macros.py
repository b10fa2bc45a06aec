"""The man and mdoc macros: a manual page's troff source to a :class:`ManPage`.

The troff language itself (escapes, requests, strings, conditionals, tables) is read by
:class:`~clir_toolkit.collection.manpages.troff.TroffReader`; this module is the macro
package on top of it, which knows where a page's sections start and which lines are text.
It returns a :class:`~clir_toolkit.collection.manpages.page.ManPage`: its title and
section, its ordered sections (heading → lines of text), the NAME line and the SEE ALSO
references.

What it handles:

- **man macros** (``man(7)``): ``.TH .SH .SS .PP .LP .P .TP .TQ .IP .HP .B .I .SM .SB``, the
  alternating-font macros ``.BR .RB .IR .RI .BI .IB``, ``.UR/.UE .MT/.ME .SY/.OP .EX/.EE``;
- **mdoc macros** (``mdoc(7)``, BSD pages) where cheap: ``.Sh .Nm .Nd .Xr .Fl .Ar .Op .Dq``
  and the other in-line macros, rendered roughly the way ``mandoc`` prints them;
- ``.so`` (the "see the other file" stubs Debian uses for aliases) is detected and
  reported in :attr:`ManPage.so_target`, not followed.

Lines are kept as they are in the source (no filling, no hyphenation; mdoc paragraphs,
whose in-line macros put every few words on a line of their own, are filled the way
mandoc prints them). The man and mdoc macros are read by one reader because a page is
found to be mdoc only at its ``.Dd``/``.Dt``/``.Sh`` and both put their text into the same
sections (hence one module, a little over 400 lines).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clir_toolkit.collection.manpages.page import ManPage, Section
from clir_toolkit.collection.manpages.troff import (
    JOIN,
    TroffReader,
    clean,
    logical_lines,
    read_man_source,
    split_args,
)

__all__ = ["parse_man", "read_man_page"]


def read_man_page(path: str | Path) -> ManPage:
    """Read and strip one page file (see :func:`parse_man`)."""
    return parse_man(read_man_source(path))


def parse_man(source: str) -> ManPage:
    """Strip the troff source of a manual page into a :class:`ManPage`."""
    parser = _ManReader()
    for line in logical_lines(source):
        parser.feed(line)
    return parser.finish()


# Strings (\*x) that the man macros define before a page is read.
_DEFAULT_STRINGS = {"R": "\u00ae", "Tm": "\u2122", "lq": "\u201c", "rq": "\u201d", "S": "",
                    "HF": "", "Aq": "'", ".T": "utf8"}  # fmt: skip

# man macros whose arguments are printed with spaces between them (one font) ...
_ONE_FONT = {"B", "I", "SM", "SB", "R"}
# ... and those whose arguments alternate two fonts, printed with no space between them.
_ALTERNATING = {"BR", "RB", "IR", "RI", "BI", "IB"}
# Requests and macros that start a new paragraph.
_BREAKS = {"PP", "LP", "P", "sp", "HP", "TP", "TQ", "Sp", "Pp", "Lp", "bp", "ns"}

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

# Marks where mdoc asks for no space between two words (\uE001: a private-use character).
_NO_SPACE = "\ue001"


class _ManReader(TroffReader):
    """Reads logical lines one at a time and collects sections of text."""

    def __init__(self) -> None:
        super().__init__(_DEFAULT_STRINGS)
        self.title = ""
        self.section = ""
        self.sections: list[Section] = []
        self.heading: str | None = None  # heading of the section being read
        self.lines: list[str] = []
        self.literal: set[int] = set()  # indices of self.lines set in no-fill mode
        self.break_next = False  # mdoc: the next text starts a new line
        self.nofill = False  # inside .nf/.fi, .EX/.EE or a literal mdoc display
        self.has_text = False
        self.join_next = False  # the last line ended with \c
        self.heading_next = False  # .SH without arguments: the next text line is the heading
        self.mdoc = False
        self.mdoc_name = ""

    # -- output -------------------------------------------------------------------------------

    def emit(self, text: str) -> None:
        """Add a line of text to the current section, or continue the last line.

        A line continues the last one after ``\\c``, and in mdoc pages, whose in-line macros
        put every few words on a line of their own, the lines of a paragraph are filled
        into one line the way mandoc prints them.
        """
        joined = text.endswith(JOIN)
        text = clean(text.replace(JOIN, ""))
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
            self.lines[-1] = clean(self.lines[-1] + text)
        elif fill and text and self.lines and self.lines[-1]:
            self.lines[-1] = clean(self.lines[-1] + " " + text)
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

    # -- macros -------------------------------------------------------------------------------

    def macro(self, name: str, rest: str) -> None:
        handler = _MAN_MACROS.get(name)
        if handler is not None:
            handler(self, name, rest)
        elif (name in _MDOC_LINE or name in _MDOC_CALLABLE) and (
            self.mdoc or name in ("Dd", "Dt", "Sh")
        ):
            self.mdoc = True  # a page is mdoc from its .Dd/.Dt/.Sh on
            self.mdoc_request(name, rest)
        # every other request or macro is ignored

    # -- man macros ---------------------------------------------------------------------------

    def man_th(self, name: str, rest: str) -> None:
        args = [self.text_of(arg) for arg in split_args(rest)]
        if name == "TH" or not self.title:
            self.title = args[0] if args else ""
            self.section = args[1].lower() if len(args) > 1 else ""

    def man_heading(self, name: str, rest: str) -> None:
        heading = self.text_of(" ".join(split_args(rest)))
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
        args = split_args(rest)
        if args:
            self.emit(self.unescape(args[0]))

    def man_font(self, name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in split_args(rest)]
        if not args:
            return  # the font applies to the next line, which is printed as it is
        self.emit(("" if name in _ALTERNATING else " ").join(args))

    def man_text_args(self, _name: str, rest: str) -> None:
        """Macros whose arguments are printed as a line (``.SY ls``, ``.URL u text``)."""
        args = [self.unescape(arg) for arg in split_args(rest)]
        if args:
            self.emit(" ".join(args))

    def man_url(self, _name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in split_args(rest)]
        if len(args) > 1:
            self.emit(args[1] + "".join(args[2:]))
        elif args:
            self.emit(args[0])

    def man_option(self, _name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in split_args(rest)]
        if args:
            self.emit("[" + " ".join(args) + "]")

    def man_link_end(self, _name: str, rest: str) -> None:
        args = [self.unescape(arg) for arg in split_args(rest)]
        if args:
            self.attach("".join(args))

    # -- mdoc macros --------------------------------------------------------------------------

    def mdoc_request(self, name: str, rest: str) -> None:
        args = split_args(rest)
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


# The man macros, and the troff requests that break or fill lines (.sp, .nf …), which only
# the macro package knows what to do with; mdoc macros are recognised in _ManReader.macro.
_MAN_MACROS: dict[str, Callable[[_ManReader, str, str], None]] = {
    "TH": _ManReader.man_th,
    "SH": _ManReader.man_heading,
    "SS": _ManReader.man_heading,
    "IP": _ManReader.man_ip,
    "UE": _ManReader.man_link_end,
    "ME": _ManReader.man_link_end,
    "URL": _ManReader.man_url,
    "SY": _ManReader.man_text_args,
    **{name: _ManReader.man_fill for name in ("nf", "fi", "EX", "EE", "Vb", "Ve")},
    "OP": _ManReader.man_option,
    **{name: _ManReader.man_break for name in _BREAKS},
    **{name: _ManReader.man_font for name in _ONE_FONT | _ALTERNATING},
}
