"""Fields: identifiers, text, numbers and JSON values, checked the same way by every reader.

**Pathological input** gets the same one-line error as any other mistake, from these shared
helpers that every reader (in :mod:`clir_toolkit.formats` and in the other modules that read
users' files) goes through: :func:`parse_int` and :func:`parse_number` read numbers written
with ASCII digits only (Python's ``int()`` also reads "١٢", "1_000", and fails on more than
4,300 digits), and keep grades and ranks within the C ``int`` that pytrec_eval stores them
in; :func:`parse_json` refuses what json.loads lets through or fails on: ``NaN``, integers too
long for Python, nesting deeper than :data:`MAX_JSON_DEPTH` and lone UTF-16 surrogates
(``"\\ud800"`` decodes to a string that no UTF-8 writer, and no Java program, can take).

:func:`check_id` refuses an identifier that would split a TREC column; :func:`composed`
gives every text read the one Unicode form (NFC) that queries and documents share;
:class:`Unique`
reports a key seen twice with both its lines; :func:`json_objects` and :func:`string_field`
read the JSON Lines files of topics and corpora.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from clir_toolkit.errors import FormatError
from clir_toolkit.formats.lines import blank_line, iter_lines
from clir_toolkit.formats.records import PathLike

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # Unicode's control characters (category Cc)
_ID_BREAKERS = re.compile("[\\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # what check_id refuses

#: pytrec_eval (behind ir_measures) stores relevance grades in a C ``int``.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
#: JSON nested deeper is refused: no record of these formats nests more than a few levels,
#: and Python's recursion limit (about 1,000 levels) must never be reached by a reader.
MAX_JSON_DEPTH = 64
#: The longest identifier (qid, document id, run tag) accepted, in characters. Lucene keeps a
#: document id as one term of at most 32,766 UTF-8 bytes (8,191 characters of four bytes);
#: ids of real collections are a few dozen characters, and a longer one is a mistake (a
#: document's text in its id field) that would otherwise fail deep inside the indexer.
MAX_ID_LENGTH = 1000


def check_id(path: PathLike, number: int | None, kind: str, value: str) -> str:
    """Reject an empty identifier, one longer than :data:`MAX_ID_LENGTH` characters, one with
    whitespace (it would split a TREC column), a control character (invisible, and cut or
    garbled by terminals and other tools) or a lone surrogate."""
    if value and len(value) <= MAX_ID_LENGTH and not _ID_BREAKERS.search(value):
        return value  # one test for the usual case: runs are long
    if not value:
        raise FormatError(path, number, f"empty {kind}", f"give every record a {kind}")
    if len(value) > MAX_ID_LENGTH:
        raise FormatError(
            path,
            number,
            f"{kind} {quoted(value)} is longer than {MAX_ID_LENGTH:,} characters",
            "shorten it: an identifier names a record, it does not hold its text",
        )
    if _WHITESPACE.search(value):
        raise FormatError(
            path,
            number,
            f"{kind} {quoted(value)} contains whitespace",
            "TREC files separate columns by whitespace; remove it",
        )
    control = _CONTROL.search(value)
    if control is not None:
        raise FormatError(
            path,
            number,
            f"{kind} {quoted(value)} contains the control character U+{ord(control.group()):04X}",
            "remove it: identifiers must be printable",
        )
    return check_text(path, number, kind, value)


UNICODE_FORM: Literal["NFC"] = "NFC"
"""The Unicode normal form of every text the toolkit reads (queries and documents alike)."""


def composed(text: str) -> str:
    """``text`` in Unicode's composed normal form (NFC): "é" as one character, U+00E9.

    The same word can be written composed or decomposed ("e" + U+0301, as macOS file names
    and some editors write it); Lucene's analyzers compare characters, so the two forms
    would be different terms, and a query would miss the documents written the other way.
    Every reader of queries and documents applies this function, so both sides meet in one
    form. Already composed text, the usual case, is returned as it is after a quick check.
    """
    if unicodedata.is_normalized(UNICODE_FORM, text):
        return text
    return unicodedata.normalize(UNICODE_FORM, text)


def quoted(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut short: a field shown in an error message keeps it one short line."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


_SURROGATE_FIX = (
    "the JSON escapes one half of a UTF-16 pair; write the character itself, or both halves"
)


def _lone_surrogate(text: str) -> str | None:
    """The first lone UTF-16 surrogate of ``text``, written as its escape, or None.

    Decoding UTF-8 strictly never yields one; only JSON's ``\\uD800`` escapes do, and no
    UTF-8 writer (nor Java) accepts the resulting string.
    """
    found = _SURROGATE.search(text)
    return None if found is None else f"\\u{ord(found.group()):04x}"


def check_text(path: PathLike, number: int | None, field: str, value: str) -> str:
    """``value`` unless it holds a lone surrogate (a record that cannot be written as UTF-8)."""
    surrogate = _lone_surrogate(value)
    if surrogate is not None:
        raise FormatError(
            path, number, f"lone surrogate {surrogate} in field {field!r}", _SURROGATE_FIX
        )
    return value


def parse_int(
    path: PathLike,
    number: int | None,
    what: str,
    text: str,
    *,
    low: int = INT32_MIN,
    high: int = INT32_MAX,
    fix: str = "",
) -> int:
    """``text`` as an integer written with the digits 0-9, between ``low`` and ``high``.

    Python's ``int()`` also reads other scripts' digits ("١٢") and underscores ("1_000"),
    which no other program reads the same way, and fails with a bare ValueError on more
    than 4,300 digits; here each is a :class:`FormatError` naming ``path:number``.
    """
    if not _INTEGER.fullmatch(text):
        raise FormatError(
            path, number, f"{what} {quoted(text)} is not an integer", fix or "write digits 0-9"
        )
    significant = text.lstrip("+-").lstrip("0")
    value = int(text) if len(significant) <= 40 else None  # longer: beyond any range here
    if value is None or not low <= value <= high:
        raise FormatError(
            path, number, f"{what} {quoted(text)} is out of range ({low} to {high})", fix
        )
    return value


def parse_number(path: PathLike, number: int | None, what: str, text: str, fix: str = "") -> float:
    """``text`` as a finite float written in ASCII decimal notation (``-1.5``, ``2e-3``).

    ``what`` names the field in the message ("score '1_0' is not a number"); it may be "".
    """
    subject = f"{what} {quoted(text)}" if what else quoted(text)
    if _NON_FINITE.fullmatch(text):
        raise FormatError(path, number, f"{subject} is not a finite number", fix)
    if not _DECIMAL.fullmatch(text):
        raise FormatError(path, number, f"{subject} is not a number", fix)
    value = float(text)
    if not math.isfinite(value):  # e.g. 1e999 overflows to inf
        raise FormatError(path, number, f"{subject} is not a finite number", fix)
    return value


class _BadJsonValue(ValueError):
    """Raised from inside json.loads by the hooks below; becomes a FormatError."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem, self.fix = problem, fix


def _json_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > 4000:  # int() refuses more than sys.get_int_max_str_digits() (4,300)
        raise _BadJsonValue(
            f"JSON integer with {digits} digits, too long to be read",
            "write an identifier this long as a JSON string",
        )
    return int(text)


def _json_constant(name: str) -> float:
    raise _BadJsonValue(f"invalid JSON ({name} is not a JSON value)", "write null or a number")


def _json_problem(value: Any) -> str | None:
    """What is wrong with a decoded JSON value: nesting deeper than :data:`MAX_JSON_DEPTH`,
    or a lone surrogate in a key or a string (with the field it is in); None if nothing."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            surrogate = _lone_surrogate(item)
            if surrogate is not None:
                field = f"field {quoted(where)}" if where else "the value"
                return f"lone surrogate {surrogate} in {field}"
            continue
        if not isinstance(item, dict | list):
            continue
        if depth >= MAX_JSON_DEPTH:
            place = quoted(where) if where else "the top"
            return f"JSON nested more than {MAX_JSON_DEPTH} levels deep (at {place})"
        if isinstance(item, dict):
            for key, child in item.items():
                surrogate = _lone_surrogate(key)
                if surrogate is not None:
                    return f"lone surrogate {surrogate} in a key"
                stack.append((child, f"{where}.{key}" if where else key, depth + 1))
        else:
            stack.extend((child, f"{where}[{i}]", depth + 1) for i, child in enumerate(item))
    return None


def parse_json(path: PathLike, number: int | None, text: str) -> Any:
    """Decode one JSON value, or raise a :class:`FormatError` naming ``path:number``.

    Besides invalid JSON, it refuses what :func:`json.loads` lets through or fails on with
    something other than a decoding error: ``NaN`` and ``Infinity``, integers too long for
    Python, nesting deeper than :data:`MAX_JSON_DEPTH` (a thousand levels raise a
    RecursionError) and strings holding a lone UTF-16 surrogate. ``number`` is the line of a
    JSON Lines file; None for a whole file, whose errors name their own line.
    """
    whole_file = number is None
    try:
        value = json.loads(text, parse_int=_json_int, parse_constant=_json_constant)
    except json.JSONDecodeError as exc:
        line = exc.lineno if whole_file else number
        column = exc.colno if whole_file or exc.lineno == 1 else None
        where = f" at column {column}" if column is not None else ""
        raise FormatError(
            path,
            line,
            f"invalid JSON ({exc.msg}{where})",
            "a JSON file holds one JSON value"
            if whole_file
            else "JSON Lines files hold one complete JSON object per line",
        ) from None
    except _BadJsonValue as exc:
        raise FormatError(path, number, exc.problem, exc.fix) from None
    except RecursionError:
        raise FormatError(
            path, number, "JSON nested too deeply to be read", f"at most {MAX_JSON_DEPTH} levels"
        ) from None
    # Cheap tests first: only an escape can make a surrogate, only brackets can nest.
    if "\\u" in text or text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        problem = _json_problem(value)
        if problem is not None:
            deep = not problem.startswith("lone")
            fix = f"at most {MAX_JSON_DEPTH} levels" if deep else _SURROGATE_FIX
            raise FormatError(path, number, problem, fix)
    return value


def collapse(text: str) -> str:
    """``text`` with each run of white space made one space, and none at either end."""
    return _WHITESPACE.sub(" ", text).strip()


class Unique:
    """Remembers where each key was first seen, to report duplicates with both lines."""

    def __init__(self, path: PathLike) -> None:
        self.path = path
        self.seen: dict[Any, int] = {}

    def add(self, key: Any, number: int, what: str) -> None:
        if key in self.seen:
            first = self.seen[key]
            raise FormatError(
                self.path, number, f"{what} (first at line {first})", "remove one of the two"
            )
        self.seen[key] = number


def json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each line of a JSON Lines file."""
    for number, text in iter_lines(path):
        if not text.strip():
            raise blank_line(path, number)
        obj = parse_json(path, number, text)
        if not isinstance(obj, dict):
            raise FormatError(
                path,
                number,
                f"expected a JSON object, found {type(obj).__name__}",
                "JSON Lines files hold one JSON object per line",
            )
        yield number, obj


def string_field(
    path: Path, number: int | None, obj: dict[str, Any], keys: Iterable[str]
) -> str | None:
    """The first of ``keys`` present in ``obj`` as a string (ids may be JSON numbers)."""
    for key in keys:
        if key in obj:
            value = obj[key]
            if isinstance(value, bool) or not isinstance(value, str | int):
                raise FormatError(
                    path, number, f"{key!r} must be a string, found {json.dumps(value)[:40]}"
                )
            return str(value)
    return None
