"""A CLIR test collection from Debian's translated manual pages (English queries).

The construction is the one Sasaki et al. (2018) used to turn Wikipedia into CLIR data
("Cross-Lingual Learning-to-Rank with Shared Representations", NAACL 2018), the data of the
smooth-learning paper (Section 5, "Datasets"), applied to manual pages instead of articles:

- **documents**: every translated page installed under ``/usr/share/man/<L>/man*/`` (one
  document per unique page: symbolic links and ``.so`` stubs, the aliases of a page, are
  resolved to it), with the sections that repeat in every page (translator credits,
  bug-report addresses, copyright notices) removed;
- **query**: the English page's NAME description without the command name:
  ``ls - list directory contents`` gives the query ``list directory contents`` (Sasaki et
  al. take the first sentence of the English article the same way);
- **relevance 2** (the "most relevant" document): the translated page of the same name and
  section (Sasaki et al.: the foreign article linked to the English one);
- **relevance 1** (partially relevant): translated pages that both the English page and the
  translated page list under SEE ALSO (Sasaki et al.: foreign articles with mutual links to
  and from the relevant article; SEE ALSO is the man-page counterpart of those links, and
  asking both languages to agree keeps only the links the translation confirms).

Three filters keep the task honest. A query is kept only when (1) its translated page is
really translated: at most 20 % of its lines are copied verbatim from the English page (some
"translations" are the English text with a translated NAME line); (2) the query has at
least two words; (3) its text is unique: when several pages share a description ("manual
page for ..."), the query could not tell them apart, so all of them are dropped.

Each query also gets a **human topic**: the translated page's own NAME description, the
monolingual reference that bounds what a perfect translation of the query would achieve.
The NAME line of a translated page is itself a translation of the query, which makes the
task easy; the ``hard`` variant removes the NAME section from the documents.

Queries are split 60/20/20 into train/dev/test (the paper's 3:1:1) by a hash of the query
id rather than at random, so that the split of a page never depends on the machine, on the
other pages installed, or on the language. The same packages give byte-identical files.

The query id is the docid of the page, ``name.section`` (``ls.1``): a qrels line
``ls.1 0 ls.1 2`` reads as "the page ls(1) answers its own query".
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import re
import shutil
import subprocess
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from clir_toolkit.collection import MANIFEST
from clir_toolkit.collection.man_macros import read_man_page
from clir_toolkit.collection.man_page import (
    SEE_ALSO_HEADINGS,
    ManPage,
    Reference,
    Section,
    heading_matches,
    normalise_heading,
    split_name_line,
)
from clir_toolkit.errors import ResourceError, UsageError
from clir_toolkit.files import atomic_directory, sha256_file
from clir_toolkit.formats import Doc, Qrel, Topic, write_corpus_jsonl, write_qrels, write_topics_tsv

__all__ = [
    "LANGUAGES",
    "VARIANTS",
    "BuildSummary",
    "build_manpages_collection",
    "copied_share",
    "find_boilerplate_headings",
    "format_summary",
    "man_pages_excluded",
    "scan_pages",
    "split_of",
]


class Language(NamedTuple):
    """Where a language's pages are installed and which Debian packages install them."""

    code: str  # ISO 639-1, as written in the manifest
    directory: str  # under /usr/share/man
    packages: tuple[str, ...]


LANGUAGES: dict[str, Language] = {
    "fr": Language("fr", "fr", ("manpages-fr", "manpages-fr-dev")),
    "de": Language("de", "de", ("manpages-de", "manpages-de-dev")),
    "es": Language("es", "es", ("manpages-es", "manpages-es-dev")),
    "it": Language("it", "it", ("manpages-it", "manpages-it-dev")),
    "ru": Language("ru", "ru", ("manpages-ru", "manpages-ru-dev")),
    "ja": Language("ja", "ja", ("manpages-ja", "manpages-ja-dev")),
    "zh": Language("zh", "zh_CN", ("manpages-zh",)),
}
ENGLISH_PACKAGES = ("manpages", "manpages-dev")
VARIANTS = ("standard", "hard")
SPLITS = ("train", "dev", "test")
SYSTEM_MAN_ROOT = Path("/usr/share/man")
DPKG_CONFIG = Path("/etc/dpkg")

MAX_COPIED_SHARE = 0.20  # drop a query whose page copies more of its lines from English
MIN_QUERY_WORDS = 2
# A copied line counts only if it has this many letters: option names ("-a, --all"), bare
# numbers and bullets are the same in every language and say nothing about translation.
MIN_COPIED_LINE_LETTERS = 18

LICENCES = {
    "manpages-l10n (fr, de, es, it, ru translations)": "GPL-3.0-or-later",
    "manpages-ja": "various free licences of the original pages (see the package copyright)",
    "manpages-zh": "GFDL-1.2+ / GPL (see the package copyright)",
    "Linux man-pages (manpages, manpages-dev)": "various free licences (see the package "
    "copyright); other English pages: the licence of the package that installs them",
}

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

_PAGE_FILE = re.compile(r"^(?P<name>.+)\.(?P<section>[0-9n][^./]*)(?:\.gz)?$")


# ---------------------------------------------------------------------------------------------
# Refusing to build from a broken installation
# ---------------------------------------------------------------------------------------------


def _apt_command(lang: Language, *, reinstall: bool = False) -> str:
    packages = " ".join((*ENGLISH_PACKAGES, *lang.packages))
    extra = "--reinstall " if reinstall else ""
    return f"apt-get install {extra}-y --no-install-recommends {packages}"


def man_pages_excluded(dpkg_config: Path = DPKG_CONFIG) -> tuple[Path, int, str] | None:
    """Where dpkg is told not to install manual pages, as ``(file, line, text)``, or None.

    Slim Debian images (the ``debian:*-slim`` Docker images, for instance) ship a file in
    ``/etc/dpkg/dpkg.cfg.d/`` with ``path-exclude /usr/share/man/*``: the man-page packages
    then install "successfully" and leave the directories empty.
    """
    files = [dpkg_config / "dpkg.cfg"]
    config_dir = dpkg_config / "dpkg.cfg.d"
    if config_dir.is_dir():
        files += sorted(path for path in config_dir.iterdir() if path.is_file())
    probes = ("/usr/share/man/man1/ls.1.gz", "/usr/share/man/fr/man1/ls.1.gz")
    excluded: tuple[Path, int, str] | None = None
    for path in files:
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, start=1):
            match = re.match(r"\s*(path-exclude|path-include)[\s=]+(\S+)", line)
            if match is None or not any(fnmatch.fnmatch(p, match.group(2)) for p in probes):
                continue
            # a later path-include puts the pages back
            excluded = (path, number, line.strip()) if match.group(1) == "path-exclude" else None
    return excluded


def _installed_packages(packages: Iterable[str]) -> dict[str, str]:
    """``{package: version}`` for those of ``packages`` that dpkg reports installed."""
    if shutil.which("dpkg-query") is None:
        raise ResourceError(
            "dpkg-query not found: the man-page collections are built from Debian's "
            "man-page packages; run on Debian or Ubuntu"
        )
    result = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Package}\t${Version}\t${db:Status-Status}\n", *packages],
        capture_output=True,
        text=True,
        check=False,
    )
    installed: dict[str, str] = {}
    for line in result.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[2] == "installed":
            installed[parts[0]] = parts[1]
    return installed


def _check_installation(lang: Language, man_root: Path, dpkg_config: Path) -> None:
    """Raise a one-line ResourceError naming the fix when the pages cannot be read."""
    system = man_root.resolve() == SYSTEM_MAN_ROOT
    if system:
        excluded = man_pages_excluded(dpkg_config)
        if excluded is not None:
            path, number, text = excluded
            raise ResourceError(
                f"{path}:{number}: dpkg is told not to install manual pages ({text}); "
                f"delete that line, then run `{_apt_command(lang, reinstall=True)}`"
            )
        required = (*ENGLISH_PACKAGES, *lang.packages)
        installed = _installed_packages(required)
        missing = [package for package in required if package not in installed]
        if missing:
            raise ResourceError(
                f"Debian packages not installed: {', '.join(missing)}; "
                f"run `{_apt_command(lang)}` (as root)"
            )
    for directory in (man_root / lang.directory, man_root):
        if not any(directory.glob("man*/*")):
            raise ResourceError(
                f"{directory}: no manual pages there: run `{_apt_command(lang)}` (as root)"
            )


# ---------------------------------------------------------------------------------------------
# Finding the pages: one per unique page, aliases resolved
# ---------------------------------------------------------------------------------------------


@dataclass
class PageSet:
    """The unique pages of one man root (``/usr/share/man/fr`` or ``/usr/share/man``).

    ``pages`` maps a docid (``getpid.2``) to the page and its file; ``aliases`` maps every
    name under which a page is installed (``getppid.2``, a symbolic link or a ``.so``
    stub) to its docid.
    """

    root: Path
    pages: dict[str, tuple[Path, ManPage]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    files: int = 0
    links: int = 0
    stubs: int = 0
    unresolved: int = 0
    _cache: dict[Path, ManPage | None] = field(default_factory=dict, init=False, repr=False)

    def _read(self, path: Path) -> ManPage | None:
        if path not in self._cache:
            try:
                self._cache[path] = read_man_page(path)
            except (OSError, EOFError, ValueError):  # unreadable or corrupt .gz
                self._cache[path] = None
        return self._cache[path]

    def resolve(self, path: Path) -> tuple[Path, ManPage] | None:
        """Follow symbolic links and ``.so`` stubs from ``path`` to a page of this root."""
        root = self.root.resolve()
        for _ in range(8):  # a chain longer than that is a loop
            real = path.resolve()
            if not real.is_file() or real.parent.parent != root:
                return None
            if not real.parent.name.startswith("man") or not _PAGE_FILE.match(real.name):
                return None
            page = self._read(real)
            if page is None:
                return None
            if page.so_target is None:
                return real, page
            path = _so_path(self.root, real, page.so_target)
        return None

    def lookup(self, reference: Reference) -> str | None:
        """The docid of the page a ``name(section)`` reference points to, if installed."""
        return self.aliases.get(f"{reference.name}.{reference.section}")


def _so_path(root: Path, stub: Path, target: str) -> Path:
    """The file a ``.so`` request names: relative to the man root, else to the stub's folder."""
    for base in (root, stub.parent):
        for candidate in (base / target, base / f"{target}.gz"):
            if candidate.exists():
                return candidate
    return root / target


def page_key(path: Path) -> str:
    """``ls.1`` for ``.../man1/ls.1.gz``: the name and section a file is installed as."""
    name = path.name
    return name[: -len(".gz")] if name.endswith(".gz") else name


def scan_pages(root: Path, *, progress: bool = False) -> PageSet:
    """Read every page under ``root/man*/``, resolving links and ``.so`` stubs.

    Each file is resolved to the real page it shows; the docid of a page is the name and
    section of that real file (``getppid.2.gz -> getpid.2.gz`` gives ``getpid.2``).
    """
    from clir_toolkit.progress import progress_bar

    page_set = PageSet(root)
    candidates = sorted(
        path for path in root.glob("man*/*") if _PAGE_FILE.match(path.name) and path.parent.is_dir()
    )
    for path in progress_bar(
        candidates, desc=f"reading {root}", unit="page", show=progress
    ):
        page_set.files += 1
        if path.is_symlink():
            page_set.links += 1
        resolved = page_set.resolve(path)
        if resolved is None:
            page_set.unresolved += 1
            continue
        real, page = resolved
        if real != path.resolve():  # a .so stub was followed
            page_set.stubs += 1
        docid = page_key(real)
        known = page_set.pages.get(docid)
        if known is None:
            page_set.pages[docid] = (real, page)
        elif known[0] != real:  # two real files with one name and section: keep the first
            page_set.unresolved += 1
            continue
        page_set.aliases.setdefault(page_key(path), docid)
    page_set._cache.clear()
    return page_set


# ---------------------------------------------------------------------------------------------
# Documents: sections that repeat in every page are dropped
# ---------------------------------------------------------------------------------------------


def _line_key(line: str) -> str:
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
            {_line_key(line) for section in page.sections[1:] for line in section.lines if line}
        )
    mostly_repeated: dict[str, list[bool]] = {}
    for page in pages:
        for section in page.sections[1:]:
            lines = [_line_key(line) for line in section.lines if line]
            total = sum(len(line) for line in lines)
            repeated = sum(len(line) for line in lines if page_frequency[line] >= min_pages)
            flag = total > 0 and repeated >= BOILERPLATE_TEXT_SHARE * total
            mostly_repeated.setdefault(normalise_heading(section.heading), []).append(flag)
    return {
        heading
        for heading, flags in mostly_repeated.items()
        if len(flags) >= min_pages and sum(flags) >= BOILERPLATE_PAGE_SHARE * len(flags)
    }


class _SectionFilter:
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


def kept_sections(page: ManPage, is_boilerplate: _SectionFilter, variant: str) -> list[Section]:
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


# Kana and CJK ideographs count one word each; elsewhere a word is a run of letters/digits.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")


def count_words(text: str) -> int:
    """Words in ``text``; each Chinese or Japanese character counts as one."""
    return sum(1 for _ in _WORD.finditer(text))


# ---------------------------------------------------------------------------------------------
# Queries and judgements
# ---------------------------------------------------------------------------------------------


def _letters(line: str) -> int:
    return sum(1 for char in line if char.isalpha())


def copied_share(translated: Iterable[str], english: Iterable[str]) -> float:
    """Share of the translated page's lines that occur verbatim in the English page.

    Lines are compared with their blanks collapsed. Only lines with at least
    ``MIN_COPIED_LINE_LETTERS`` letters count, on both sides of the ratio: an option list
    (``-a, --all``), a number or a bullet is the same in every language.
    """
    english_lines = {_line_key(line) for line in english if line}
    counted = [_line_key(line) for line in translated if _letters(line) >= MIN_COPIED_LINE_LETTERS]
    if not counted:
        return 0.0
    return sum(line in english_lines for line in counted) / len(counted)


def split_of(qid: str) -> str:
    """``train``, ``dev`` or ``test``: 60/20/20 by the sha256 of the query id.

    A hash, not a random draw, so that a query lands in the same split on every machine,
    whatever other pages are installed, and in every language (``ls.1`` is a test query
    in all seven collections or in none).
    """
    bucket = int(hashlib.sha256(qid.encode("utf-8")).hexdigest(), 16) % 100
    return "train" if bucket < 60 else "dev" if bucket < 80 else "test"


def _query_key(text: str) -> str:
    """What two queries must share to count as the same text: case and blanks ignored."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split()).rstrip(".")


@dataclass(frozen=True)
class _Query:
    qid: str
    english: str
    human: str
    related: tuple[str, ...]  # grade-1 docids


# Why a translated page gave no query, in the order the checks are made.
DROP_REASONS = {
    "empty_document": "whose page is empty once boilerplate is removed",
    "no_english_page": "without an English page",
    "no_description": "without an English NAME description",
    "copied": f"more than {MAX_COPIED_SHARE:.0%} copied from English",
    "short": f"shorter than {MIN_QUERY_WORDS} words",
    "duplicate": "sharing their text with another query",
    "no_translated_name": "whose translated page has no NAME line",
}


def _select_queries(
    translated: PageSet,
    english: PageSet,
    is_boilerplate: _SectionFilter,
    corpus: set[str],
    dropped: Counter[str],
    progress: bool = False,
) -> tuple[list[_Query], list[Path]]:
    """Pair each translated page with its English page and apply the three filters.

    A query text must be unique among the descriptions of *all* English pages paired with a
    translated page, not only among the queries kept: a page dropped by a filter is still
    in the corpus, where it would be a second answer to the same query. Returns the queries
    and the English page files that were read.
    """
    from clir_toolkit.progress import progress_bar

    pairs: list[tuple[str, ManPage, ManPage, str]] = []
    english_files: list[Path] = []
    pages = sorted(translated.pages.items())
    bar = progress_bar(pages, desc="pairing English pages", unit="page", show=progress)
    for docid, (path, page) in bar:
        if docid not in corpus:
            dropped["empty_document"] += 1
            continue
        resolved = english.resolve(english.root / path.parent.name / path.name)
        if resolved is None:
            dropped["no_english_page"] += 1
            continue
        english_files.append(resolved[0])
        description = split_name_line(resolved[1].name_line)[1]
        if not description:
            dropped["no_description"] += 1
            continue
        pairs.append((docid, page, resolved[1], description))

    texts = Counter(_query_key(description) for *_, description in pairs)
    queries: list[_Query] = []
    for docid, page, english_page, description in pairs:
        own_lines = [
            line for s in kept_sections(page, is_boilerplate, "standard") for line in s.lines
        ]
        english_lines = [line for s in english_page.sections for line in s.lines]
        if copied_share(own_lines, english_lines) > MAX_COPIED_SHARE:
            dropped["copied"] += 1
        elif len(description.split()) < MIN_QUERY_WORDS:
            dropped["short"] += 1
        elif texts[_query_key(description)] > 1:
            dropped["duplicate"] += 1
        elif not page.name_line:
            dropped["no_translated_name"] += 1
        else:
            human = split_name_line(page.name_line)[1] or page.name_line
            both = _see_also_docids(translated, english_page) & _see_also_docids(translated, page)
            related = tuple(sorted((both & corpus) - {docid}))
            queries.append(_Query(docid, description, human, related))
    return queries, english_files


def _see_also_docids(translated: PageSet, page: ManPage) -> set[str]:
    """The translated pages (docids) that ``page`` lists under SEE ALSO."""
    found = (translated.lookup(reference) for reference in page.see_also(SEE_ALSO_HEADINGS))
    return {docid for docid in found if docid is not None}


# ---------------------------------------------------------------------------------------------
# Building the collection directory
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildSummary:
    """What a build produced: the figures :func:`format_summary` prints."""

    name: str
    lang: str
    variant: str
    out: Path
    documents: int
    mean_document_words: float
    queries: dict[str, int]
    grade2: dict[str, int]
    grade1: dict[str, int]
    dropped: dict[str, int]
    boilerplate: tuple[str, ...]
    seconds: float


def collection_name(lang: str, variant: str) -> str:
    """``manpages-en-fr``, or ``manpages-en-fr-hard`` for the hard variant."""
    return f"manpages-en-{lang}" + ("" if variant == "standard" else f"-{variant}")


def _language(lang: str) -> Language:
    aliases = {"zh_CN": "zh", "zh-cn": "zh", "zh-CN": "zh"}
    lang = aliases.get(lang, lang)
    if lang not in LANGUAGES:
        raise UsageError(
            f"no man-page collection for language {lang!r}: choose one of {', '.join(LANGUAGES)}"
        )
    return LANGUAGES[lang]


def build_manpages_collection(
    lang: str,
    out: Path,
    *,
    variant: str = "standard",
    man_root: Path = SYSTEM_MAN_ROOT,
    progress: bool = True,
    dpkg_config: Path = DPKG_CONFIG,
) -> BuildSummary:
    """Build the English→``lang`` man-page collection into the directory ``out``.

    ``man_root`` is where the pages are (``/usr/share/man``; a directory laid out the same
    way, with ``man1/…`` for English and ``<lang>/man1/…`` for the translation, serves for
    tests). The directory is written atomically: on any error ``out`` is left as it was.
    """
    started = time.perf_counter()
    language = _language(lang)
    if variant not in VARIANTS:
        raise UsageError(f"unknown variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    man_root = Path(man_root)
    _check_installation(language, man_root, dpkg_config)

    translated = scan_pages(man_root / language.directory, progress=progress)
    english = PageSet(man_root)
    found = find_boilerplate_headings(page for _, page in translated.pages.values())
    is_boilerplate = _SectionFilter(found)
    docs = [
        Doc(docid, document_text(kept_sections(page, is_boilerplate, variant)))
        for docid, (_, page) in sorted(translated.pages.items())
    ]
    docs = [doc for doc in docs if doc.contents.strip()]  # a page that was all boilerplate
    dropped: Counter[str] = Counter()
    queries, english_files = _select_queries(
        translated, english, is_boilerplate, {doc.id for doc in docs}, dropped, progress
    )

    by_split: dict[str, list[_Query]] = {split: [] for split in SPLITS}
    for query in queries:
        by_split[split_of(query.qid)].append(query)

    name = collection_name(language.code, variant)
    out = Path(out)
    with atomic_directory(out, marker=MANIFEST, what="a collection directory") as tmp:
        write_corpus_jsonl(tmp / "corpus.jsonl", docs)
        for split, split_queries in by_split.items():
            write_topics_tsv(
                tmp / f"topics.{split}.tsv", (Topic(q.qid, q.english) for q in split_queries)
            )
            write_topics_tsv(
                tmp / f"topics-human.{split}.tsv", (Topic(q.qid, q.human) for q in split_queries)
            )
            write_qrels(tmp / f"qrels.{split}.txt", _qrels(split_queries))
        summary = BuildSummary(
            name=name,
            lang=language.code,
            variant=variant,
            out=out,
            documents=len(docs),
            mean_document_words=(
                sum(count_words(doc.contents) for doc in docs) / len(docs) if docs else 0.0
            ),
            queries={split: len(by_split[split]) for split in SPLITS},
            grade2={split: len(by_split[split]) for split in SPLITS},
            grade1={split: sum(len(q.related) for q in by_split[split]) for split in SPLITS},
            dropped={reason: dropped[reason] for reason in DROP_REASONS},
            boilerplate=tuple(is_boilerplate.dropped()),
            seconds=0.0,
        )
        manifest = _manifest(summary, language, man_root, translated, english_files, tmp)
        text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        (tmp / "manifest.json").write_text(text, encoding="utf-8")
    return dataclasses.replace(summary, seconds=time.perf_counter() - started)


def _qrels(queries: Iterable[_Query]) -> Iterator[Qrel]:
    for query in queries:
        yield Qrel(query.qid, query.qid, 2)
        for docid in query.related:
            yield Qrel(query.qid, docid, 1)


def _owning_packages(paths: Iterable[Path]) -> dict[str, str]:
    """``{package: version}`` of the Debian packages that installed ``paths``."""
    names = sorted({str(path) for path in paths})
    packages: set[str] = set()
    for start in range(0, len(names), 500):
        result = subprocess.run(
            ["dpkg-query", "-S", *names[start : start + 500]],
            capture_output=True,
            text=True,
            check=False,
        )
        for line in result.stdout.splitlines():  # "pkg1, pkg2:amd64: /path"
            if line.startswith("diversion by "):
                continue
            owners, _, _ = line.partition(": ")
            packages.update(owner.strip().split(":")[0] for owner in owners.split(","))
    return dict(sorted(_installed_packages(sorted(packages)).items())) if packages else {}


def _manifest(
    summary: BuildSummary,
    language: Language,
    man_root: Path,
    translated: PageSet,
    english_files: list[Path],
    directory: Path,
) -> dict[str, Any]:
    """The manifest: languages, sources and versions, counts, parameters, file hashes."""
    system = man_root.resolve() == SYSTEM_MAN_ROOT
    used = [path for path, _ in translated.pages.values()] + english_files
    files = sorted(path.name for path in directory.iterdir() if path.name != "manifest.json")
    return {
        "name": summary.name,
        "variant": summary.variant,
        "query_lang": "en",
        "doc_lang": language.code,
        "description": (
            "English queries (NAME descriptions of English manual pages) against Debian's "
            f"{language.directory} translations; constructed as Sasaki et al. (2018) built "
            "their Wikipedia CLIR data: grade 2 = the translated page, grade 1 = pages both "
            "pages list under SEE ALSO"
            + (
                "; the NAME section is removed from the documents"
                if summary.variant == "hard"
                else ""
            )
        ),
        "source": {
            "man_root": str(man_root),
            "translated_pages": str(man_root / language.directory),
            "required_packages": [*ENGLISH_PACKAGES, *language.packages],
            "packages": _owning_packages(used) if system else {},
        },
        "licences": LICENCES,
        "build_parameters": {
            "max_copied_share": MAX_COPIED_SHARE,
            "min_copied_line_letters": MIN_COPIED_LINE_LETTERS,
            "min_query_words": MIN_QUERY_WORDS,
            "unique_query_text": True,
            "split": "sha256(qid) mod 100: < 60 train, < 80 dev, else test",
            "dropped_headings": list(summary.boilerplate),
            "name_section_in_documents": summary.variant == "standard",
        },
        "counts": {
            "translated_files": translated.files,
            "symbolic_links": translated.links,
            "so_stubs": translated.stubs,
            "unresolved_files": translated.unresolved,
            "documents": summary.documents,
            "queries": {**summary.queries, "all": sum(summary.queries.values())},
            "judgements_grade_2": {**summary.grade2, "all": sum(summary.grade2.values())},
            "judgements_grade_1": {**summary.grade1, "all": sum(summary.grade1.values())},
            "queries_dropped": summary.dropped,
        },
        "files": {name: sha256_file(directory / name) for name in files},
    }


def format_summary(summary: BuildSummary) -> str:
    """The table printed at the end of a build."""
    rows = [("split", "queries", "grade 2", "grade 1")]
    for split in SPLITS:
        rows.append(
            (
                split,
                f"{summary.queries[split]:,}",
                f"{summary.grade2[split]:,}",
                f"{summary.grade1[split]:,}",
            )
        )
    rows.append(
        (
            "all",
            f"{sum(summary.queries.values()):,}",
            f"{sum(summary.grade2.values()):,}",
            f"{sum(summary.grade1.values()):,}",
        )
    )
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    table = [
        "  ".join(
            cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        )
        for row in rows
    ]
    dropped = ", ".join(
        f"{count:,} {DROP_REASONS[reason]}" for reason, count in summary.dropped.items() if count
    )
    return "\n".join(
        [
            f"{summary.name}: {summary.documents:,} documents ({summary.lang}), "
            f"mean length {summary.mean_document_words:,.0f} words",
            *table,
            "judged pages per query: grade 2 = the translated page, grade 1 = shared SEE ALSO",
            f"queries dropped: {dropped or 'none'}",
            f"written to {summary.out} in {summary.seconds:.1f} s",
        ]
    )
