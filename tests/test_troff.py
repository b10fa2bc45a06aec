"""The troff stripper: man and mdoc macros, escapes, requests, NAME lines and SEE ALSO."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from clir_toolkit.collection.manpages.macros import parse_man, read_man_page
from clir_toolkit.collection.manpages.page import (
    Reference,
    heading_matches,
    parse_references,
    split_name_line,
)

FIXTURES = Path(__file__).parent / "fixtures" / "troff"


def page(body: str, heading: str = "DESCRIPTION") -> list[str]:
    """The lines of one section of a page whose source is ``body``."""
    parsed = parse_man(f".TH T 1\n.SH NAME\nt \\- test\n.SH {heading}\n{body}\n")
    return list(parsed.sections[1].lines)


# ---------------------------------------------------------------------------------------------
# A whole page
# ---------------------------------------------------------------------------------------------


def test_sample_page_structure() -> None:
    sample = read_man_page(FIXTURES / "sample.7")
    assert (sample.title, sample.section, sample.mdoc) == ("SAMPLE", "7", False)
    # Sections in page order; headings inside .de, .ig and a false .if block never appear.
    assert [s.heading for s in sample.sections] == ["NAME", "DESCRIPTION", "SEE ALSO"]
    assert sample.name_line == (
        "sample - a page that exercises the stripper \u2014 with a wrapped description"
    )
    assert sample.see_also() == [
        Reference("frobnicate", "1"),
        Reference("widgetd", "8"),
        Reference("File::Temp", "3pm"),
    ]


def test_sample_page_text() -> None:
    lines = read_man_page(FIXTURES / "sample.7").sections[1].lines
    # Strings defined with .ds (and chosen by .ie n / .el), fonts dropped, comment cut.
    assert lines[0] == "The frob tools are very small and quick; quoted: \u201cnroff\u201d."
    assert lines[1] == (
        "Special characters: \u2022 \u2014 \u2013 ' \" \u201c \u201d \u00e9 \u00e9 \u00a9 "
        "\\ - .x y z abc."
    )
    assert lines[2] == "Joinedwords."  # \c joins the next line without a space
    text = "\n".join(lines)
    assert "unknownrequest" not in text and "vanish" not in text
    assert "--frob\na tagged paragraph" in text
    assert "\u2022\na bulleted item" in text
    assert "A subsection" in text
    assert "Name Value\nfrob 42" in text  # the table: format lines gone, cells joined
    assert "indented text" in text


def test_literal_lines_are_marked() -> None:
    section = read_man_page(FIXTURES / "sample.7").sections[1]
    literal = [section.lines[i] for i in sorted(section.literal)]
    assert literal == ["literal line one", "literal line two"]
    assert "literal line one" not in section.prose
    assert "a tagged paragraph" in section.prose


def test_mdoc_page() -> None:
    sample = read_man_page(FIXTURES / "sample-mdoc.1")
    assert sample.mdoc and (sample.title, sample.section) == ("SAMPLE", "1")
    assert [s.heading for s in sample.sections] == ["NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"]
    assert sample.name_line == "sample - demonstrate mdoc"
    assert sample.sections[1].lines == ("sample [-av] file ...",)
    assert (
        sample.sections[2].lines[0]
        == "The sample utility reads \u201ceach\u201d file and prints it."
    )
    assert sample.sections[2].lines[-2:] == ("-a", "print all lines")
    assert sample.see_also() == [Reference("frobnicate", "1"), Reference("widgetd", "8")]


def test_gzip_and_utf8(tmp_path: Path) -> None:
    source = ".TH X 1\n.SH NOM\nx \\- créer un nœud\n.SH 説明\n日本語のテキスト\n"
    path = tmp_path / "x.1.gz"
    path.write_bytes(gzip.compress(source.encode("utf-8")))
    parsed = read_man_page(path)
    assert parsed.name_line == "x - créer un nœud"
    assert parsed.sections[1].heading == "説明"
    assert parsed.sections[1].lines == ("日本語のテキスト",)


def test_latin1_page_is_read(tmp_path: Path) -> None:
    path = tmp_path / "x.1"
    path.write_bytes(".TH X 1\n.SH NOM\nx \\- r\xe9sum\xe9\n".encode("latin-1"))
    assert read_man_page(path).name_line == "x - résumé"


# ---------------------------------------------------------------------------------------------
# Escapes and macros
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("\\fBbold\\fR \\fIitalic\\fP \\f(CWmono\\fP \\f[B]b\\f[]", "bold italic mono b"),
        ("a \\(em b \\[em] c \\(en d", "a \u2014 b \u2014 c \u2013 d"),
        ("\\(lqq\\(rq \\(aqa\\(aq \\(dqd\\(dq \\(bu", "\u201cq\u201d 'a' \"d\" \u2022"),
        ("\\-\\-all \\e \\&. a\\~b a\\0b a\\|b a\\^b", "--all \\ . a b a b ab ab"),
        ("\\[u00E9]t\\[u00E9] \\(:o \\[char65]", "\u00e9t\u00e9 \u00f6 A"),
        ("\\s-1SMALL\\s0 \\m[red]red\\m[] \\h'2n'x \\v'-1'y \\w'abc'z \\kxk", "SMALL red x y z k"),
        ('text \\" a comment', "text"),
        ("\\*(lqquote\\*(rq \\*R", "\u201cquote\u201d \u00ae"),
        ("\\,italic\\/ correction", "italic correction"),
        ("unknown \\(zz special", "unknown special"),
    ],
)
def test_escapes(source: str, expected: str) -> None:
    assert page(source) == [expected]


def test_comment_lines_and_unknown_requests_vanish() -> None:
    assert page('.\\" a comment\n\'\\" another\n.xyz some args\n.ll 70\n.ft B\nkept') == ["kept"]


def test_font_macros() -> None:
    assert page(".B bold words") == ["bold words"]
    assert page('.I "one argument"') == ["one argument"]
    assert page(".BR ls (1),") == ["ls(1),"]  # alternating fonts: no spaces between arguments
    assert page(".IR file .txt") == ["file.txt"]
    assert page('.RB [ "\\-o " option ]') == ["[-o option]"]
    assert page(".B\nnext line") == ["next line"]  # no arguments: the font applies to the next line


def test_paragraphs_and_tags() -> None:
    assert page("first\n.PP\nsecond\n.TP\n.B tag\nbody\n.IP \\(bu 2\nitem") == [
        "first",
        "",
        "second",
        "",
        "tag",
        "body",
        "",
        "\u2022",
        "item",
    ]


def test_name_line_is_the_first_paragraph() -> None:
    parsed = parse_man(
        ".TH T 1\n.SH NAME\nchoom \\- display and adjust\nthe score.\n.sp\nchoom \\-p PID\n"
    )
    assert parsed.name_line == "choom - display and adjust the score."


def test_heading_on_the_next_line_and_quoted_headings() -> None:
    parsed = parse_man('.TH T 1\n.SH\nNAME\nt \\- x\n.SH "SEE ALSO"\nls(1)\n')
    assert [s.heading for s in parsed.sections] == ["NAME", "SEE ALSO"]
    assert parsed.name_line == "t - x"


def test_conditionals() -> None:
    source = "\n".join(
        [
            ".if n nroff text",
            ".if t troff text",
            ".if !t not troff",
            ".ie t .ds X troff",
            ".el .ds X nroff",
            "x is \\*X",
            ".if t \\{\\",
            "hidden one",
            ".if n \\{ nested hidden \\}",
            "hidden two",
            ".\\}",
            ".if n \\{\\",
            "shown in block",
            ".\\}",
            ".if '\\*X'nroff' strings equal",
            ".if \\n(.H>23 numeric is false",
            "end",
        ]
    )
    assert page(source) == [
        "nroff text",
        "not troff",
        "x is nroff",
        "shown in block",
        "strings equal",
        "end",
    ]


def test_macro_definitions_are_skipped() -> None:
    source = ".de Zz\n.B never\n..\n.de Yy END\ntext\n.END\n.ig\nignored\n..\nafter"
    assert page(source) == ["after"]


def test_urls_and_mail() -> None:
    source = ".UR https://example.org\nthe site\n.UE .\n.MT a@example.org\nthe author\n.ME"
    assert page(source) == ["the site.", "the author"]


def test_so_stub_is_detected_not_followed() -> None:
    stub = parse_man(".so man1/frobctl.1\n")
    assert stub.so_target == "man1/frobctl.1"
    assert stub.sections == ()
    with_text = parse_man(".TH X 1\n.SH NAME\nx \\- y\n.so common.inc\n")
    assert with_text.so_target is None
    assert with_text.includes == ("common.inc",)


# ---------------------------------------------------------------------------------------------
# NAME lines and references
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "names", "description"),
    [
        ("ls - list directory contents", ["ls"], "list directory contents"),
        ("getpid, getppid - get process identification", ["getpid", "getppid"],
         "get process identification"),
        ("fallocate \u2013 Préallouer de l'espace", ["fallocate"], "Préallouer de l'espace"),
        ("nptl \u2014 Bibliothèque native", ["nptl"], "Bibliothèque native"),
        ("runlevel -- Muestra el nivel", ["runlevel"], "Muestra el nivel"),
        ("mpool- Partage d'ensembles", ["mpool"], "Partage d'ensembles"),  # no " - "
        ("wmemmove -ワイド文字の配列をコピーする", ["wmemmove"], "ワイド文字の配列をコピーする"),
        ("rup リモートホストの状態を表示する", ["rup"], "リモートホストの状態を表示する"),
        ("/etc/securetty 由 login(1) 使用", ["/etc/securetty"], "由 login(1) 使用"),
        ("git-log - Show commit logs", ["git-log"], "Show commit logs"),
        ("apt-get - APT utility -- command-line interface", ["apt-get"],
         "APT utility -- command-line interface"),
        ("bzip2 - a compressor bzcat - decompresses files", ["bzip2"], "a compressor"),
        ("lonely", ["lonely"], ""),
    ],
)  # fmt: skip
def test_split_name_line(line: str, names: list[str], description: str) -> None:
    assert split_name_line(line) == (names, description)


def test_parse_references() -> None:
    text = (
        "ls(1), chmod(1). SSL_read(3ssl) and File::Temp(3pm); see (above), smbd (8) "
        "ls(1) again, 全角（1） nope, ls（1） yes, foo(3)."
    )
    assert parse_references(text) == [
        Reference("ls", "1"),
        Reference("chmod", "1"),
        Reference("SSL_read", "3ssl"),
        Reference("File::Temp", "3pm"),
        Reference("smbd", "8"),  # a space before the parenthesis, as some pages write it
        Reference("foo", "3"),
    ]


def test_see_also_headings_in_other_languages() -> None:
    for heading in ("VOIR AUSSI", "SIEHE AUCH", "СМ. ТАКЖЕ", "関連項目", "参见 SEE ALSO",
                    "另见 (SEE ALSO)", '"See also"'):  # fmt: skip
        parsed = parse_man(f".TH X 1\n.SH NAME\nx \\- y\n.SH {heading}\nls(1)\n")
        assert parsed.see_also() == [Reference("ls", "1")], heading
    assert heading_matches("REPORTING BUGS 报告错误", ["REPORTING BUGS"])
    assert not heading_matches("関連ファイル", ["関連"])
