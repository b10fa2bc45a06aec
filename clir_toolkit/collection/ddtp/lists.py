"""Debian's apt lists that the DDTP collections are built from: fetching and finding them.

apt fetches the DDTP translations as ``Translation-<L>`` lists beside the ``Packages``
lists. A build fetches them with ``apt-get update`` into a private directory
(``$CLIR_DATA/ddtp/lists`` unless ``--lists`` names another one, never the system's), then
finds, for each suite and component, the files it reads: the translated and the English
descriptions, the ``Packages`` lists and the ``Release`` file. The manifest names each by
apt's URI, recorded after each fetch in ``clir-sources.tsv``.

Reading the files is :mod:`clir_toolkit.collection.ddtp.records`'s concern; building the
collection, :mod:`clir_toolkit.collection.ddtp`'s.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from clir_toolkit.errors import ResourceError, UsageError
from clir_toolkit.files import atomic_write

__all__ = [
    "LANGUAGES",
    "ListGroup",
    "check_language",
    "default_lists_dir",
    "fetch_lists",
    "find_lists",
    "has_lists",
    "recorded_uris",
    "require_apt_get",
    "saved_lists",
    "uri_of",
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
#: Fetched every time, so that one lists directory serves every language (apt deletes
#: the lists of languages an update does not ask for).
FETCHED_LANGUAGES = ("en", *LANGUAGES.values())
#: Written into the lists directory after each fetch: apt's URI of every list file.
SOURCES_FILE = "clir-sources.tsv"


def _fetch_command(lists: Path | str) -> str:
    return (
        f"apt-get -o Acquire::Languages={','.join(FETCHED_LANGUAGES)} "
        f"-o Dir::State::Lists={lists} update"
    )


def check_language(lang: str) -> str:
    """The ``--lang`` of a DDTP collection or parallel text, an alias (``zh_CN``) read as
    its :data:`LANGUAGES` key; a UsageError for a language DDTP has no collection for."""
    aliases = {"zh_CN": "zh", "zh-cn": "zh", "zh-CN": "zh"}
    lang = aliases.get(lang, lang)
    if lang not in LANGUAGES:
        raise UsageError(
            f"no DDTP collection for language {lang!r}: choose one of {', '.join(LANGUAGES)}"
        )
    return lang


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
    return lists if has_lists(lists, LANGUAGES[check_language(lang)]) else None


def require_apt_get() -> str:
    """The path of ``apt-get``, or a ResourceError saying how to build without it."""
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
    apt = require_apt_get()
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


def uri_of(name: str, known: dict[str, str]) -> str:
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


def recorded_uris(lists: Path) -> dict[str, str]:
    """File name → apt's URI, as the last fetch into ``lists`` recorded them (else empty)."""
    path = lists / SOURCES_FILE
    if not path.is_file():
        return {}
    known: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        uri, _, filename = line.partition("\t")
        if uri and filename:
            known[filename] = uri
    return known
