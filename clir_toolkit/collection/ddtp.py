"""A CLIR test collection from Debian's translated package descriptions (DDTP).

Every Debian package has a description: a one-line synopsis and a few paragraphs of long
text. The Debian Description Translation Project (DDTP) translates them; apt fetches the
translations as ``Translation-<L>`` lists beside the ``Packages`` lists. The construction
is the one Sasaki et al. (2018) used to turn Wikipedia into CLIR data, applied to package
descriptions:

- **documents**: every description that has both an English text and a translation into
  ``L``, once per description (several binary packages can share one description: the
  docid is its ``Description-md5``). The text is the translated synopsis and long text,
  with the paragraph marks (`` .``) as blank lines; the ``hard`` variant leaves the
  translated synopsis out;
- **query**: the English synopsis with the package's name removed (case-insensitive, as a
  whole word): ``gadget - Gadget manager for gadgets`` gives ``manager for gadgets``;
- **relevance 2**: the translated description itself (the same md5);
- **relevance 1**: the translated descriptions of the *other* binary packages built from
  the same source package (``Source:`` in the ``Packages`` list).

A query is dropped when, once the name is removed, it has fewer than two words, or when its
text (case and blanks ignored) is the synopsis of another description too: neither copy
could tell its answer from the other's. The **human topic** of a query is the translated
synopsis, with the name removed the same way: the monolingual reference.

Queries are split 60/20/20 into train/dev/test by a hash of their source package (of the
smallest source name when descriptions are shared across source packages), so that
siblings — the grade-1 documents of a query are the answers of other queries — never
straddle two splits. The same lists give byte-identical files.

**Source and licence.** The descriptions are part of Debian: each one is under the licence
of its package, and DDTP translations are contributed under the packages' licences. The
collection is built on the user's machine from the lists apt fetches (into a private
directory, never the system's) and is never committed.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from clir_toolkit.collection import MANIFEST

# the man-page collections' word count, split hash and query-text key, shared on purpose
from clir_toolkit.collection.query_rules import _query_key, count_words, split_of
from clir_toolkit.errors import FormatError, ResourceError, UsageError
from clir_toolkit.files import atomic_directory, atomic_write, sha256_file
from clir_toolkit.formats import Doc, Qrel, Topic, write_corpus_jsonl, write_qrels, write_topics_tsv

__all__ = [
    "LANGUAGES",
    "VARIANTS",
    "DdtpSummary",
    "build_ddtp_collection",
    "default_lists_dir",
    "fetch_lists",
    "format_summary",
    "remove_names",
    "saved_lists",
]

#: ``--lang`` → the language code of DDTP's ``Translation-<code>`` lists.
LANGUAGES = {
    "fr": "fr",
    "de": "de",
    "it": "it",
    "ja": "ja",
    "ru": "ru",
    "es": "es",
    "zh": "zh_CN",
}
VARIANTS = ("standard", "hard")
SPLITS = ("train", "dev", "test")
MIN_QUERY_WORDS = 2
#: Fetched every time, so that one lists directory serves every language (apt deletes
#: the lists of languages an update does not ask for).
FETCHED_LANGUAGES = ("en", *LANGUAGES.values())
#: Written into the lists directory after each fetch: apt's URI of every list file.
SOURCES_FILE = "clir-sources.tsv"

LICENCE = (
    "Debian package descriptions: each under the licence of its package; DDTP translations "
    "are contributed under the packages' licences. Built on the user's machine, not "
    "redistributed."
)

DROP_REASONS = {
    "empty_document": "whose document is empty (no long text in the hard variant)",
    "short": f"shorter than {MIN_QUERY_WORDS} words once the package name is removed",
    "duplicate": "sharing their English synopsis with another description",
    "empty_human_topic": "whose translated synopsis is only the package name",
}

_MD5 = re.compile(r"[0-9a-f]{32}")


def _fetch_command(lists: Path | str) -> str:
    return (
        f"apt-get -o Acquire::Languages={','.join(FETCHED_LANGUAGES)} "
        f"-o Dir::State::Lists={lists} update"
    )


# ---------------------------------------------------------------------------------------------
# The lists: fetched by apt into a private directory
# ---------------------------------------------------------------------------------------------


def default_lists_dir() -> Path:
    """Where a build without ``--lists`` keeps apt's lists: ``$CLIR_DATA/ddtp/lists``."""
    from clir_toolkit.files import data_dir

    return data_dir() / "ddtp" / "lists"


def has_lists(lists: Path, code: str) -> bool:
    """Whether ``lists`` holds a ``Translation-<code>`` list (of an earlier fetch, say)."""
    return any(Path(lists).glob(f"*{_translation_suffix(code)}*"))


def saved_lists(lang: str) -> Path | None:
    """:func:`default_lists_dir` when an earlier fetch left the lists of ``lang`` there, to
    build from offline (the same lists give the same collection); else None: fetch them."""
    lists = default_lists_dir()
    return lists if has_lists(lists, LANGUAGES[_language(lang)]) else None


def _apt_get() -> str:
    apt = shutil.which("apt-get")
    if apt is None:
        raise ResourceError(
            "apt-get not found: the DDTP collections are built from Debian's package lists; "
            "run on Debian or Ubuntu, or pass --lists DIR with lists fetched there by "
            f"`{_fetch_command('DIR')}`"
        )
    return apt


def _apt_options(lists: Path) -> list[str]:
    """Options that point apt at the private ``lists`` directory and nothing of the system's
    (the binary caches it would rebuild from these lists are turned off)."""
    return [
        "-o", f"Acquire::Languages={','.join(FETCHED_LANGUAGES)}",
        "-o", f"Dir::State::Lists={lists}",
        "-o", "Dir::Cache::pkgcache=",
        "-o", "Dir::Cache::srcpkgcache=",
    ]  # fmt: skip


def fetch_lists(lists: Path) -> str | None:
    """Run ``apt-get update`` into ``lists`` (created if needed); then record apt's URI of
    each list file in ``lists/clir-sources.tsv``.

    Returns apt's first error line when it reported one (no network, a source of the
    system that could not be reached), else None: a build then checks that the files it
    needs are there (they can be those of an earlier fetch).
    """
    apt = _apt_get()
    lists = lists.absolute()
    try:
        (lists / "partial").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResourceError(
            f"{lists}: cannot create the lists directory ({exc.strerror})"
        ) from None
    result = subprocess.run(
        [apt, *_apt_options(lists), "update"], capture_output=True, text=True, check=False
    )
    targets = subprocess.run(
        [apt, *_apt_options(lists), "indextargets", "--format", "$(URI)\t$(FILENAME)"],
        capture_output=True,
        text=True,
        check=False,
    )
    rows = sorted(
        f"{uri}\t{Path(filename).name}\n"
        for uri, _, filename in (line.partition("\t") for line in targets.stdout.splitlines())
        if filename and Path(filename).is_file()
    )
    with atomic_write(lists / SOURCES_FILE) as handle:
        handle.writelines(rows)
    # apt reports a source it cannot reach with "W: Failed to fetch", and exits with 0
    lines = [" ".join(line.split()) for line in (result.stderr + result.stdout).splitlines()]
    errors = [line for line in lines if line.startswith("E:")]
    errors += [line for line in lines if line.startswith("W: Failed to fetch")]
    if errors:
        return errors[0]
    return f"apt-get update exited with {result.returncode}" if result.returncode else None


@dataclass(frozen=True)
class ListGroup:
    """The lists of one suite and component (``…_dists_bookworm_main``) that a build reads."""

    prefix: str
    translation: Path
    english: Path
    packages: tuple[Path, ...]
    release: Path

    def files(self) -> list[Path]:
        return sorted({self.release, *self.packages, self.english, self.translation})


def _translation_suffix(code: str) -> str:
    """How apt's file names of the ``Translation-<code>`` lists end: apt writes ``_`` in a
    URI as ``%5f`` (``Translation-zh%5fCN``), since ``_`` stands for ``/`` there."""
    return "_i18n_Translation-" + code.replace("_", "%5f")


def _list_file(lists: Path, stem: str) -> Path | None:
    """``stem.lz4`` or ``stem`` (apt keeps lists lz4-compressed, or plain if so configured)."""
    for candidate in (lists / f"{stem}.lz4", lists / stem):
        if candidate.is_file():
            return candidate
    return None


def find_lists(lists: Path, code: str) -> list[ListGroup]:
    """Every suite/component of ``lists`` with a ``Translation-<code>`` list, and the
    English descriptions, ``Packages`` lists and ``Release`` file that go with it."""
    lists = Path(lists)
    fetch = f"fetch them with `{_fetch_command(lists)}`"
    if not lists.is_dir():
        raise ResourceError(f"{lists}: no such lists directory; {fetch}")
    marker = _translation_suffix(code)
    groups: list[ListGroup] = []
    names = sorted(path.name for path in lists.iterdir() if path.is_file())
    for name in names:
        stem = name.removesuffix(".lz4")
        if not stem.endswith(marker):
            continue
        if stem != name and stem in names:
            continue  # the plain list is there too: read that one
        prefix = stem[: -len(marker)]
        english = _list_file(lists, f"{prefix}_i18n_Translation-en")
        if english is None:
            raise ResourceError(
                f"{lists}: {name} has no English descriptions beside it "
                f"({prefix}_i18n_Translation-en.lz4); {fetch}"
            )
        packages = tuple(
            lists / other
            for other in names
            if re.fullmatch(re.escape(prefix) + r"_binary-[^_]+_Packages(\.lz4)?", other)
            and not (other.endswith(".lz4") and other.removesuffix(".lz4") in names)
        )
        if not packages:
            raise ResourceError(
                f"{lists}: {name} has no Packages list beside it "
                f"({prefix}_binary-ARCH_Packages.lz4); {fetch}"
            )
        releases = [
            lists / other
            for other in names
            if other.endswith(("_InRelease", "_Release"))
            and prefix.startswith(other.rsplit("_", 1)[0] + "_")
        ]
        if not releases:
            raise ResourceError(f"{lists}: no Release file for {name}; {fetch}")
        release = max(releases, key=lambda path: (len(path.name), path.name))
        groups.append(ListGroup(prefix, lists / name, english, packages, release))
    if not groups:
        raise ResourceError(
            f"{lists}: no {code} descriptions here (no *{marker}.lz4 list); {fetch}"
        )
    return groups


def _uri_of(name: str, known: dict[str, str]) -> str:
    """apt's URI of a list file: from ``clir-sources.tsv`` when a fetch wrote one, else
    decoded from the file name (apt's ``URItoFileName``, which drops the scheme). A
    Release file is no index target of apt's: it gets the scheme of its archive's lists."""
    stem = name.removesuffix(".lz4")
    if name in known or stem in known:
        return known.get(name) or known[stem]
    decoded = unquote(stem.replace("_", "/"))
    for uri in sorted(known.values()):
        scheme, separator, rest = uri.partition("://")
        if separator and decoded.startswith(rest.split("/dists/")[0] + "/dists/"):
            return f"{scheme}://{decoded}"
    return decoded


def _known_uris(lists: Path) -> dict[str, str]:
    path = lists / SOURCES_FILE
    if not path.is_file():
        return {}
    known: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        uri, _, filename = line.partition("\t")
        if uri and filename:
            known[filename] = uri
    return known


# ---------------------------------------------------------------------------------------------
# Reading the lists: deb822 records, lz4-compressed
# ---------------------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    """The decompressed, decoded text of a list file, with one-line errors."""
    refetch = "delete it and fetch the lists again (run without --lists)"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(path, None, f"cannot read the file: {exc.strerror}") from None
    if path.suffix == ".lz4":
        import lz4.frame

        try:
            data = lz4.frame.decompress(data)
        except (RuntimeError, ValueError) as exc:
            raise FormatError(path, None, f"not a valid lz4 file ({exc})", refetch) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(path, line, "invalid UTF-8", refetch) from None


def read_records(path: Path, fields: Iterable[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line, {field: value})`` for each deb822 record of a list file, ``fields`` only.

    A value spread over continuation lines keeps them, each after a ``\\n``, with their
    leading blank (the ``Description`` convention).
    """
    wanted = set(fields)
    record: dict[str, str] = {}
    start = 0
    field: str | None = None
    number = 0
    for number, line in enumerate(_read_text(path).split("\n"), start=1):
        if not line.strip(" \t"):  # a separator; " \\xa0" is text
            if record or field is not None:
                yield start, record
            record, field = {}, None
            continue
        if line[0] in " \t":
            if field is None:
                raise FormatError(path, number, "continuation line outside a field")
            if field in wanted:
                record[field] += "\n" + line
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or " " in name:
            raise FormatError(path, number, "expected 'Field: value'", "the list is damaged")
        if field is None:
            start = number
        field = name
        if name in wanted:
            record[name] = value.strip()
    if record or field is not None:
        yield start, record


def _require(path: Path, line: int, record: dict[str, str], name: str) -> str:
    value = record.get(name)
    if not value:
        raise FormatError(path, line, f"record without a {name} field", "the list is damaged")
    return value


def _md5(path: Path, line: int, record: dict[str, str]) -> str:
    md5 = _require(path, line, record, "Description-md5")
    if not _MD5.fullmatch(md5):
        raise FormatError(path, line, f"Description-md5 {md5!r} is not 32 hex digits")
    return md5


@dataclass
class Descriptions:
    """What the lists say: descriptions by md5, their packages, the packages' sources.

    ``packages`` holds the binary packages that ``Packages`` gives a description;
    ``named`` also those that the Translation lists name with it (a package built only
    for other architectures is missing from this architecture's ``Packages``).
    """

    english: dict[str, str] = dataclasses.field(default_factory=dict)
    translated: dict[str, str] = dataclasses.field(default_factory=dict)
    packages: defaultdict[str, set[str]] = dataclasses.field(
        default_factory=lambda: defaultdict(set)
    )
    named: defaultdict[str, set[str]] = dataclasses.field(default_factory=lambda: defaultdict(set))
    source: dict[str, str] = dataclasses.field(default_factory=dict)

    def read_packages(self, path: Path) -> None:
        for line, record in read_records(path, ("Package", "Source", "Description-md5")):
            package = _require(path, line, record, "Package")
            # "Source: foo (1.2-3)" when the source version differs from the package's
            source = record.get("Source", "").split(" ")[0] or package
            self.source.setdefault(package, source)
            if "Description-md5" in record:
                md5 = _md5(path, line, record)
                self.packages[md5].add(package)
                self.named[md5].add(package)

    def read_translation(self, path: Path, code: str, into: dict[str, str]) -> None:
        field = f"Description-{code}"
        for line, record in read_records(path, ("Package", "Description-md5", field)):
            md5 = _md5(path, line, record)
            self.named[md5].add(_require(path, line, record, "Package"))
            into.setdefault(md5, _require(path, line, record, field))

    def sources_of(self, md5: str) -> set[str]:
        """The source packages of a description: those of its packages in ``Packages``;
        for a description that ``Packages`` does not list, those of the packages the
        Translation lists name (a package missing from ``Packages`` is its own source)."""
        packages = self.packages.get(md5) or self.named[md5]
        return {self.source.get(package, package) for package in packages}


def read_descriptions(groups: list[ListGroup], code: str, progress: bool) -> Descriptions:
    from clir_toolkit.progress import progress_bar

    found = Descriptions()
    steps: list[tuple[Path, str]] = []
    for group in groups:
        steps += [(path, "packages") for path in group.packages]
        steps += [(group.english, "en"), (group.translation, code)]
    bar = progress_bar(steps, desc="reading Debian lists", unit="list", show=progress)
    for path, kind in bar:
        if kind == "packages":
            found.read_packages(path)
        elif kind == "en":
            found.read_translation(path, "en", found.english)
        else:
            found.read_translation(path, code, found.translated)
    return found


def _release_fields(path: Path) -> dict[str, str]:
    """Origin, Suite, Codename, Version and Date of a ``Release``/``InRelease`` file."""
    wanted = ("Origin", "Label", "Suite", "Codename", "Version", "Date")
    fields: dict[str, str] = {}
    for line in _read_text(path).split("\n"):
        if line.startswith("-----BEGIN PGP SIGNATURE"):
            break
        name, colon, value = line.partition(":")
        if colon and name in wanted and name not in fields:
            fields[name] = value.strip()
    if "Date" not in fields:
        raise FormatError(path, None, "no Date: field", "fetch the lists again")
    return fields


# ---------------------------------------------------------------------------------------------
# Documents, queries, judgements
# ---------------------------------------------------------------------------------------------


def split_description(text: str) -> tuple[str, str]:
    """``(synopsis, long text)`` of a deb822 description; `` .`` lines become blank lines."""
    first, *rest = text.split("\n")
    lines = []
    for line in rest:
        line = line[1:] if line[:1] in " \t" else line
        lines.append("" if line.strip() == "." else line.rstrip())
    return first.strip(), "\n".join(lines).strip()


def document_text(translated: str, variant: str) -> str:
    synopsis, long_text = split_description(translated)
    return long_text if variant == "hard" else f"{synopsis}\n{long_text}".strip()


_EDGE = " \t-–—:;,/|"
# What a removed name can leave behind: "(cpp)" → "( )", "cpio, pax, tar" → "cpio, , tar".
_EMPTY_BRACKETS = re.compile(r"\([\s,;]*\)|\[[\s,;]*\]|«[\s,;]*»|“[\s,;]*”|\"[\s,;]*\"")
_REPEATED_COMMAS = re.compile(r",(?:\s*,)+")
_SPACE_BEFORE_STOP = re.compile(r"\s+(?=[.,](?:\s|$))")


def remove_names(text: str, names: Iterable[str]) -> str:
    """``text`` without the package ``names`` (whole words, any case), blanks collapsed.

    A name is a whole word when no letter, digit, ``+``, ``-`` or ``.`` is glued to it
    (``gadget`` goes in "Gadget manager", not in "gadgets" or "gadget-tools"; a final
    full stop is not part of the word). What the removal leaves empty goes too: brackets
    (``( )``), a repeated comma, a blank before a full stop or comma, dashes and colons
    at either end.
    """
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=lambda n: (-len(n), n)))
    if alternatives:
        pattern = rf"(?<![\w.+-])(?:{alternatives})(?![\w+-]|\.\w)"
        removed = re.sub(pattern, " ", text, flags=re.IGNORECASE)
        if removed != text:
            removed = _EMPTY_BRACKETS.sub(" ", removed)
            removed = _REPEATED_COMMAS.sub(",", " ".join(removed.split()))
            text = _SPACE_BEFORE_STOP.sub("", removed)
    return " ".join(text.split()).strip(_EDGE)


@dataclass(frozen=True)
class _Query:
    qid: str
    english: str
    human: str
    split: str
    related: tuple[str, ...]  # grade-1 docids


def _split_groups(sources: dict[str, set[str]]) -> dict[str, str]:
    """Source package → the name that decides its split: the smallest source name among
    those linked to it by shared descriptions (union-find), so that no description and
    none of its siblings can land in two splits."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        parent.setdefault(name, name)
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for names in sources.values():
        first, *others = sorted(names)
        root(first)
        for other in others:
            a, b = root(first), root(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {name: root(name) for name in list(parent)}


def _select_queries(
    found: Descriptions, corpus: list[str], docs: set[str], dropped: Counter[str]
) -> list[_Query]:
    """One query per description of ``corpus``; those of ``docs`` (non-empty documents)
    are judged, and the filters applied."""
    sources = {md5: found.sources_of(md5) for md5 in corpus}
    group = _split_groups(sources)
    siblings: defaultdict[str, set[str]] = defaultdict(set)
    for md5 in corpus:
        if md5 in docs:
            for source in sources[md5]:
                siblings[source].add(md5)
    english = {
        md5: remove_names(split_description(found.english[md5])[0], found.named[md5])
        for md5 in corpus
    }
    texts = Counter(_query_key(text) for text in english.values())
    queries: list[_Query] = []
    for md5 in corpus:
        human = remove_names(split_description(found.translated[md5])[0], found.named[md5])
        if md5 not in docs:
            dropped["empty_document"] += 1
        elif count_words(english[md5]) < MIN_QUERY_WORDS:
            dropped["short"] += 1
        elif texts[_query_key(english[md5])] > 1:
            dropped["duplicate"] += 1
        elif count_words(human) < 1:
            dropped["empty_human_topic"] += 1
        else:
            related = set().union(*(siblings[source] for source in sources[md5])) - {md5}
            split = split_of(group[min(sources[md5])])
            queries.append(_Query(md5, english[md5], human, split, tuple(sorted(related))))
    return queries


# ---------------------------------------------------------------------------------------------
# Building the collection directory
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DdtpSummary:
    """What a build produced: the figures :func:`format_summary` prints."""

    name: str
    lang: str
    variant: str
    out: Path
    lists: Path
    fetched: bool
    fetch_problem: str | None
    release_dates: tuple[str, ...]
    translations: int
    without_english: int
    documents: int
    source_packages: int
    mean_document_words: float
    queries: dict[str, int]
    grade2: dict[str, int]
    grade1: dict[str, int]
    dropped: dict[str, int]
    seconds: float


def collection_name(lang: str, variant: str) -> str:
    """``ddtp-en-fr``, or ``ddtp-en-fr-hard`` for the hard variant."""
    return f"ddtp-en-{lang}" + ("" if variant == "standard" else f"-{variant}")


def _language(lang: str) -> str:
    aliases = {"zh_CN": "zh", "zh-cn": "zh", "zh-CN": "zh"}
    lang = aliases.get(lang, lang)
    if lang not in LANGUAGES:
        raise UsageError(
            f"no DDTP collection for language {lang!r}: choose one of {', '.join(LANGUAGES)}"
        )
    return lang


def build_ddtp_collection(
    lang: str,
    out: Path,
    *,
    variant: str = "standard",
    lists: Path | None = None,
    progress: bool = True,
) -> DdtpSummary:
    """Build the English→``lang`` DDTP collection into the directory ``out``.

    With ``lists``, read the apt lists saved there (no network; the same lists give the
    same bytes). Without, fetch them with ``apt-get update`` into
    :func:`default_lists_dir`, kept for the next build. ``out`` is written atomically.
    """
    started = time.perf_counter()
    lang = _language(lang)
    code = LANGUAGES[lang]
    if variant not in VARIANTS:
        raise UsageError(f"unknown variant {variant!r}: choose one of {', '.join(VARIANTS)}")
    fetched = lists is None
    problem = None
    if lists is None:
        lists = default_lists_dir()
        _apt_get()  # refused before anything is said or created
        if progress:
            print(f"fetching Debian's package lists with apt-get into {lists}", file=sys.stderr)
        problem = fetch_lists(lists)
        if problem is not None and not has_lists(lists, code):
            raise ResourceError(
                f"apt-get update could not fetch the Debian lists ({problem}); check the "
                "network, or pass --lists DIR with lists saved earlier"
            )
    lists = Path(lists)
    groups = find_lists(lists, code)
    found = read_descriptions(groups, code, progress)

    corpus = sorted(set(found.translated) & set(found.english))
    texts = {md5: document_text(found.translated[md5], variant) for md5 in corpus}
    docs = [Doc(md5, texts[md5]) for md5 in corpus if texts[md5]]
    dropped: Counter[str] = Counter()
    queries = _select_queries(found, corpus, {doc.id for doc in docs}, dropped)
    by_split: dict[str, list[_Query]] = {split: [] for split in SPLITS}
    for query in queries:
        by_split[query.split].append(query)

    releases = {group.release for group in groups}
    release_fields = {path: _release_fields(path) for path in sorted(releases)}
    name = collection_name(lang, variant)
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
        summary = DdtpSummary(
            name=name,
            lang=lang,
            variant=variant,
            out=out,
            lists=lists,
            fetched=fetched,
            fetch_problem=problem,
            release_dates=tuple(fields["Date"] for fields in release_fields.values()),
            translations=len(found.translated),
            without_english=len(found.translated) - len(corpus),
            documents=len(docs),
            source_packages=len({s for doc in docs for s in found.sources_of(doc.id)}),
            mean_document_words=(
                sum(count_words(doc.contents) for doc in docs) / len(docs) if docs else 0.0
            ),
            queries={split: len(by_split[split]) for split in SPLITS},
            grade2={split: len(by_split[split]) for split in SPLITS},
            grade1={split: sum(len(q.related) for q in by_split[split]) for split in SPLITS},
            dropped={reason: dropped[reason] for reason in DROP_REASONS},
            seconds=0.0,
        )
        manifest = _manifest(summary, code, groups, release_fields, _known_uris(lists), tmp)
        text = json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        (tmp / MANIFEST).write_text(text, encoding="utf-8")
    return dataclasses.replace(summary, seconds=time.perf_counter() - started)


def _qrels(queries: Iterable[_Query]) -> Iterator[Qrel]:
    for query in queries:
        yield Qrel(query.qid, query.qid, 2)
        for docid in query.related:
            yield Qrel(query.qid, docid, 1)


def _manifest(
    summary: DdtpSummary,
    code: str,
    groups: list[ListGroup],
    release_fields: dict[Path, dict[str, str]],
    known_uris: dict[str, str],
    directory: Path,
) -> dict[str, Any]:
    """The manifest: languages, the lists read (URI, sha256), counts, parameters, hashes."""
    inputs = sorted({path for group in groups for path in group.files()})
    files = sorted(path.name for path in directory.iterdir() if path.name != MANIFEST)
    return {
        "name": summary.name,
        "variant": summary.variant,
        "query_lang": "en",
        "doc_lang": summary.lang,
        "description": (
            "English queries (package synopses without the package name) against Debian's "
            f"{code} package-description translations (DDTP); constructed as Sasaki et al. "
            "(2018) built their Wikipedia CLIR data: grade 2 = the translated description, "
            "grade 1 = the descriptions of other binary packages of the same source package"
            + (
                "; the translated synopsis is left out of the documents"
                if summary.variant == "hard"
                else ""
            )
        ),
        "source": {
            "ddtp_language": code,
            "releases": [
                {"file": path.name, "uri": _uri_of(path.name, known_uris), **fields}
                for path, fields in release_fields.items()
            ],
            "lists": [
                {
                    "file": path.name,
                    "uri": _uri_of(path.name, known_uris),
                    "sha256": sha256_file(path),
                }
                for path in inputs
            ],
        },  # fmt: skip
        "licences": {"DDTP package descriptions": LICENCE},
        "build_parameters": {
            "min_query_words": MIN_QUERY_WORDS,
            "unique_query_text": True,
            "package_names_removed_from_queries": True,
            "split": "sha256(source package) mod 100: < 60 train, < 80 dev, else test",
            "synopsis_in_documents": summary.variant == "standard",
        },
        "counts": {
            "translations": summary.translations,
            "translations_without_english": summary.without_english,
            "documents": summary.documents,
            "source_packages": summary.source_packages,
            "queries": {**summary.queries, "all": sum(summary.queries.values())},
            "judgements_grade_2": {**summary.grade2, "all": sum(summary.grade2.values())},
            "judgements_grade_1": {**summary.grade1, "all": sum(summary.grade1.values())},
            "queries_dropped": summary.dropped,
        },
        "files": {name: sha256_file(directory / name) for name in files},
    }


def format_summary(summary: DdtpSummary) -> str:
    """The table printed at the end of a build."""
    rows: list[tuple[str, ...]] = [("split", "queries", "grade 2", "grade 1")]
    counts = (summary.queries, summary.grade2, summary.grade1)
    for split in SPLITS:
        rows.append((split, *(f"{column[split]:,}" for column in counts)))
    rows.append(("all", *(f"{sum(column.values()):,}" for column in counts)))
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
    lists = f"lists: {summary.lists} (Release of {'; '.join(summary.release_dates)})"
    if summary.fetched:
        lists += f"; kept for reuse: rebuild offline with --lists {summary.lists}"
    lines = [
        f"{summary.name}: {summary.documents:,} documents ({summary.lang}) from "
        f"{summary.source_packages:,} source packages, mean length "
        f"{summary.mean_document_words:,.0f} words",
        *table,
        "judged per query: grade 2 = the translated description, grade 1 = the other "
        "packages of its source package",
        f"queries dropped: {dropped or 'none'}",
        f"descriptions translated but without English text: {summary.without_english:,}",
        lists,
    ]
    if summary.fetch_problem:
        lines.append(f"apt-get update reported: {summary.fetch_problem}")
    lines.append(f"written to {summary.out} in {summary.seconds:.1f} s")
    return "\n".join(lines)
