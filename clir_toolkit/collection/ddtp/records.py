"""Reading Debian's apt lists for the DDTP collections: deb822 records, lz4-compressed.

A list is a sequence of deb822 records (``Field: value`` lines, continuation lines
starting with a blank, records separated by blank lines), kept lz4-compressed by apt.
From the lists of :func:`clir_toolkit.collection.ddtp.lists.find_lists` this module reads
what a DDTP collection needs: every description by its ``Description-md5``, in English and
translated, the binary packages it describes and their source packages
(:class:`Descriptions`), and the fields of the ``Release`` files the manifest records.
Errors are one line naming the file and line (:class:`~clir_toolkit.errors.FormatError`).
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.collection.ddtp.lists import ListGroup
from clir_toolkit.errors import FormatError

__all__ = ["Descriptions", "read_descriptions", "read_records", "read_release_fields"]

_MD5 = re.compile(r"[0-9a-f]{32}")


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
    """Read the ``Packages`` lists, English descriptions and ``code`` translations of
    ``groups``, with a progress bar when ``progress``."""
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


def read_release_fields(path: Path) -> dict[str, str]:
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
