"""Files to lines: bytes in, one decoded line at a time, errors with the line number.

Every reader of :mod:`clir_toolkit.formats` (and the other modules that read users' files)
goes through :func:`iter_lines`. All files are UTF-8: a byte-order mark at the start and
Windows line endings (``\\r\\n``) are accepted; invalid UTF-8 is reported with the line it is
on; ``.gz`` files are decompressed on the fly, and corrupt gzip data is reported like any
other mistake. The errors every line-based reader raises for a file with nothing in it and
for a blank line are made here, so that they read the same for every format.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from collections.abc import Generator
from pathlib import Path

from clir_toolkit.errors import FormatError
from clir_toolkit.formats.records import PathLike


def _is_gzip(path: Path) -> bool:
    return path.suffix.lower() == ".gz"


def iter_lines(path: PathLike) -> Generator[tuple[int, str], None, None]:
    """Yield ``(line_number, text)`` for each line, decoded strictly as UTF-8.

    The file is read as bytes so that a decoding error can name its line. A UTF-8 BOM at the
    start and the ``\\r`` of ``\\r\\n`` line endings are removed; a BOM at the start of
    another line (files joined with ``cat``) is refused, naming its line; ``.gz`` files are
    decompressed on the fly.
    """
    path = Path(path)
    try:
        handle = gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise FormatError(path, None, f"cannot read the file: {exc.strerror}") from None
    with handle:
        number = 0
        try:
            for number, raw in enumerate(handle, start=1):
                if raw.startswith(codecs.BOM_UTF8):
                    if number > 1:
                        raise FormatError(
                            path, number, "a byte-order mark starts the line: two files "
                            "joined into one?", "remove the mark (bytes EF BB BF)",
                        )  # fmt: skip
                    raw = raw[len(codecs.BOM_UTF8) :]
                raw = raw.rstrip(b"\n")
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise FormatError(
                        path,
                        number,
                        f"invalid UTF-8 (byte {exc.start + 1} of the line)",
                        "save the file as UTF-8",
                    ) from None
                yield number, text
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise FormatError(
                path, number + 1, f"corrupt gzip data ({exc})", "re-create the .gz file"
            ) from None


def first_text(path: PathLike) -> str | None:
    """The first line with something other than whitespace, or None for an empty file."""
    lines = iter_lines(path)
    try:
        return next((text for _, text in lines if text.strip()), None)
    finally:
        lines.close()


def empty_file(path: PathLike, expected: str) -> FormatError:
    """The error for a file with nothing in it; ``expected`` says what it should hold."""
    return FormatError(path, None, "the file is empty", f"expected {expected}")


def blank_line(path: PathLike, number: int) -> FormatError:
    """The error for a blank line, which no line-based format allows."""
    return FormatError(path, number, "blank line", "remove it: blank lines are not allowed")


def count_lines(path: PathLike) -> int:
    """Number of lines in a (possibly gzipped) file, counting a last line with no newline."""
    path = Path(path)
    count = 0
    last = b"\n"
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")
