"""Parallel text from gettext message catalogs: English messages and their translations.

Free software is translated message by message: each program ships, per language, a
compiled gettext catalog (``/usr/share/locale/<L>/LC_MESSAGES/<domain>.mo``) mapping every
English user-interface string (``msgid``) to its translation (``msgstr``). On a Debian
machine these catalogs are tens of thousands of sentence-aligned English→L pairs written by
human translators — domain-matched to man pages, and available offline. Parallel text is the
classic resource for disambiguating dictionary translations and for bilingual training data
(thesis §2.2.2 and §4.4); here it also gives seed pairs and training text for cross-lingual
word embeddings (Smith et al. 2017).

Messages are not sentences, though: they hold format placeholders (``%s``, ``%1$d``,
``{name}``), keyboard accelerators (``_File``, ``&Open``, ``ファイル(_F)``) and markup
(``<b>``). :func:`clean_message` removes those; :func:`collect_parallel` keeps the pairs in
which both sides still say something and the translator actually translated.
"""

from __future__ import annotations

import gettext
import html
import re
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.errors import ResourceError
from clir_toolkit.files import atomic_write

__all__ = [
    "LOCALE_ROOT",
    "ParallelSummary",
    "catalog_paths",
    "clean_message",
    "is_usable",
    "iter_catalogs",
    "collect_parallel",
    "locale_name",
    "message_pairs",
    "read_catalog",
]

#: Where Debian installs compiled message catalogs.
LOCALE_ROOT = Path("/usr/share/locale")
#: Packages that add catalogs for many languages.
MORE_CATALOGS = (
    "apt-get install gcc-12-locales util-linux-locales e2fsprogs-l10n debconf-i18n gdbm-l10n"
)

# Accelerators: "ファイル(_F)" / "(&F)" in East Asian catalogs, "_File" (GTK), "&File" (Qt).
_ACCELERATOR_IN_PARENTHESES = re.compile(r"\(\s*[_&][^\W_]\s*\)")
_UNDERSCORE_ACCELERATOR = re.compile(r"(?<!\w)_(?=[^\W_])")
_AMPERSAND_ACCELERATOR = re.compile(r"&(?=[^\W\d_])(?![A-Za-z]+;|#\d+;)")
# Markup of the HTML and Pango kinds; other <text> ("<corrupt index>") is content, kept.
_MARKUP = re.compile(
    r"</?(?:a|b|big|br|code|div|em|font|h[1-6]|i|img|kbd|li|ol|p|pre|s|small|span|strong|"
    r"sub|sup|tt|u|ul|var)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(
    r"%%"  # a literal percent sign
    r"|%\([^)]*\)[-+#0]*\d*(?:\.\d+)?[A-Za-z]"  # Python: %(name)s
    r"|%(?:\d+\$)?[-+#0']*(?:\d+|\*)?(?:\.(?:\d+|\*))?"  # C printf: %s, %1$d, %-10.3lf
    r"(?:hh|h|ll|l|L|q|j|z|t|I64|I32)?[diouxXeEfFgGaAcspnSC]"
    r"|%<\w+>"  # C99 macros: %<PRIu64>
    r"|%\d+"  # Qt: %1
    r"|\$\{\w+\}"  # shell: ${name}
    r"|\{[\w.\[\]!:<>^=+-]*\}"  # Python / C#: {0}, {name}, {0:>5}
)
_LETTER = re.compile(r"[^\W\d_]")


def clean_message(text: str) -> str:
    """A catalog message as plain text: no placeholders, accelerators, markup or extra space.

    >>> clean_message("Open _File %s…")
    'Open File …'
    >>> clean_message("ファイル(_F)")
    'ファイル'
    """
    text = _ACCELERATOR_IN_PARENTHESES.sub("", text)
    for _ in range(2):  # twice: "%%s" (a format string formatted twice) leaves "%s" behind
        text = _PLACEHOLDER.sub(lambda match: "%" if match.group() == "%%" else " ", text)
    text = _MARKUP.sub(" ", text)
    text = _AMPERSAND_ACCELERATOR.sub("", text)
    text = html.unescape(text)
    text = _UNDERSCORE_ACCELERATOR.sub("", text)
    # "%s: cannot open" loses its subject: drop the separator left at the start.
    return " ".join(text.split()).lstrip(":;, ")


def is_usable(text: str) -> bool:
    """At least two characters, one of them a letter."""
    return len(text) >= 2 and _LETTER.search(text) is not None


def locale_name(lang: str) -> str:
    """The locale directory of a language: ``zh`` → ``zh_CN``, ``pt-BR`` → ``pt_BR``."""
    name = lang.strip().replace("-", "_")
    return "zh_CN" if name.lower() == "zh" else name


def catalog_paths(lang: str, locale_root: Path = LOCALE_ROOT) -> list[Path]:
    """The ``.mo`` catalogs of ``lang`` (sorted), or a ResourceError saying how to get some."""
    directory = Path(locale_root) / locale_name(lang) / "LC_MESSAGES"
    paths = sorted(directory.glob("*.mo"))
    if not paths:
        raise ResourceError(
            f"no gettext catalogs for '{lang}' in {directory}: install translated software, "
            f"for instance {MORE_CATALOGS}{_excluded_locales_hint()}"
        )
    return paths


def _excluded_locales_hint() -> str:
    """Slim Debian images tell dpkg not to install translations; say so when that is why."""
    for config in sorted(Path("/etc/dpkg/dpkg.cfg.d").glob("*")):
        try:
            text = config.read_text(errors="replace")
        except OSError:
            continue
        if re.search(r"^\s*path-exclude[= ]\s*/usr/share/locale", text, re.MULTILINE):
            return f" (and remove the path-exclude of /usr/share/locale in {config} first)"
    return ""


def read_catalog(path: Path) -> list[tuple[str, str]]:
    """The ``(msgid, msgstr)`` pairs of a compiled catalog, in the catalog's order.

    Read with the standard library's ``gettext.GNUTranslations``. A message with a context
    (``msgctxt``) is stored under ``context\\x04msgid``: the context is dropped. A message
    with plural forms gives one pair, its English singular with the first form: the
    standard parser does not keep the English plural. The header entry (empty msgid) is
    skipped.
    """
    with open(path, "rb") as handle:
        catalog = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
    pairs = []
    for key, translation in catalog.items():
        if isinstance(key, tuple):  # (msgid, plural form number)
            msgid, form = key
            if form != 0:
                continue
        else:
            msgid = key
        msgid = msgid.rpartition("\x04")[2]
        if msgid:
            pairs.append((msgid, translation))
    return pairs


def iter_catalogs(
    paths: list[Path], unreadable: list[str], desc: str
) -> Iterator[list[tuple[str, str]]]:
    """The pairs of each catalog, noting the names of those that cannot be read."""
    from clir_toolkit.progress import progress_bar

    for path in progress_bar(paths, desc=desc, unit="catalog", file=sys.stderr):
        try:
            yield read_catalog(path)
        except (OSError, ValueError, UnicodeError, LookupError, struct.error):
            unreadable.append(path.name)


def message_pairs(
    lang: str, locale_root: Path = LOCALE_ROOT, unreadable: list[str] | None = None
) -> tuple[set[tuple[str, str]], int, int]:
    """Clean, unique English→``lang`` pairs; also the numbers of catalogs and messages read.

    A pair is kept when both sides, cleaned with :func:`clean_message`, have at least two
    characters including a letter and the translation differs from the English.
    """
    paths = catalog_paths(lang, locale_root)
    skipped = unreadable if unreadable is not None else []
    pairs: set[tuple[str, str]] = set()
    messages = 0
    for catalog in iter_catalogs(paths, skipped, f"catalogs {locale_name(lang)}"):
        for msgid, msgstr in catalog:
            messages += 1
            english, translation = clean_message(msgid), clean_message(msgstr)
            if is_usable(english) and is_usable(translation) and english != translation:
                pairs.add((english, translation))
    return pairs, len(paths) - len(skipped), messages


@dataclass(frozen=True, slots=True)
class ParallelSummary:
    """What :func:`collect_parallel` read and wrote."""

    lang: str
    path: Path
    #: Catalogs read, and the names of those that could not be read.
    catalogs: int
    unreadable: tuple[str, ...]
    #: Messages read, and unique clean pairs written.
    messages: int
    pairs: int


def collect_parallel(lang: str, out: Path, locale_root: Path = LOCALE_ROOT) -> ParallelSummary:
    """Write the English→``lang`` message pairs of the installed catalogs to a TSV file.

    Each line is ``english<TAB>translation``; lines are unique and sorted, so the same
    catalogs always give the same file. The file is written atomically.
    """
    unreadable: list[str] = []
    pairs, catalogs, messages = message_pairs(lang, Path(locale_root), unreadable)
    out = Path(out)
    with atomic_write(out) as handle:
        for english, translation in sorted(pairs):
            handle.write(f"{english}\t{translation}\n")
    return ParallelSummary(
        lang=locale_name(lang),
        path=out,
        catalogs=catalogs,
        unreadable=tuple(unreadable),
        messages=messages,
        pairs=len(pairs),
    )
