"""dictd files: the index and ``.dict.dz`` data of Debian's dictionary packages.

A dictd dictionary is an index of ``headword<TAB>offset<TAB>length`` lines (numbers written
in dictd's base-64 digits, :func:`dictd_number`) into a gzip-readable ``.dict.dz`` file of
plain-text entries; :func:`read_dictd` yields the entries. FreeDict's Debian packages
(:mod:`clir_toolkit.resources.dictionary.freedict`) ship in this format.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from clir_toolkit.errors import FormatError
from clir_toolkit.formats import iter_lines

__all__ = ["DICTD_DIR", "dictd_number", "read_dictd"]

#: Where Debian's dictd packages put their files.
DICTD_DIR = Path("/usr/share/dictd")

_DICTD_DIGITS = {
    digit: value
    for value, digit in enumerate(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    )
}


def dictd_number(digits: str) -> int:
    """A number written in dictd's base-64 digits (``A``=0 … ``/``=63, most significant first).

    >>> dictd_number("B"), dictd_number("BA"), dictd_number("c/")
    (1, 64, 1855)
    """
    if not digits:
        raise ValueError("empty dictd number")
    value = 0
    for digit in digits:
        value = value * 64 + _DICTD_DIGITS[digit]
    return value


def read_dictd(index_path: Path, dict_path: Path) -> Iterator[tuple[str, str]]:
    """Yield ``(index headword, entry text)`` for each line of a dictd index, in its order.

    An entry listed under several headwords is yielded once per headword.
    """
    try:
        with gzip.open(dict_path, "rb") as handle:
            data = handle.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(dict_path, None, f"cannot read the dictionary data: {exc}") from None
    for number, line in iter_lines(index_path):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise FormatError(
                index_path,
                number,
                f"expected headword<TAB>offset<TAB>length, found {len(fields)} columns",
            )
        headword, offset_digits, length_digits = fields
        try:
            offset, length = dictd_number(offset_digits), dictd_number(length_digits)
        except (KeyError, ValueError):
            raise FormatError(
                index_path, number, "offset and length must be dictd base-64 numbers"
            ) from None
        if offset + length > len(data):
            raise FormatError(
                index_path,
                number,
                f"entry ends at byte {offset + length}, after the end of {dict_path.name}",
                "the index does not belong to this .dict.dz file",
            )
        try:
            text = data[offset : offset + length].decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(index_path, number, "the entry is not valid UTF-8") from None
        yield headword, text
