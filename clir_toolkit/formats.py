"""The files that flow between stages: topics, qrels, runs and corpora.

Every stage of the toolkit reads and writes the plain-text formats that TREC made standard,
so that trec_eval, ir_measures, pyserini, PyTerrier and Anserini read our files and we read
theirs. Each format gets a small typed record and a strict reader: a file that does not
follow its format is rejected with one line naming the file, the line and the fix, because a
silently skipped topic or a half-read run changes the numbers of an experiment.

**Topics** (the queries) come in three shapes; :func:`read_topics` detects which:

- TSV, one topic per line, ``qid<TAB>query``: the toolkit's own exchange format::

      101	how to mount a usb drive

- TREC SGML, the format of the TREC ad hoc tracks. ``<title>`` is the short keyword query,
  ``<desc>`` a one-sentence statement of need, ``<narr>`` the assessor's notes on what counts
  as relevant. Old files leave the tags unclosed::

      <top>
      <num> Number: 401
      <title> foreign minorities, Germany
      <desc> Description:
      What language and cultural differences impede the integration ...
      <narr> Narrative:
      A relevant document will focus on ...
      </top>

- JSON Lines, one object per line: either ``{"qid": "101", "query": "..."}`` or the
  HC4 / NeuCLIR form, where a topic carries its original text and its translations
  (``"topics": [{"lang": "eng", "source": "original", "topic_title": ...},
  {"lang": "zho", "source": "human translation", ...}, ...]``). Choosing the human or the
  machine translation of the same topic is how CLIR papers separate translation quality
  from retrieval quality.

**Qrels** (relevance judgements), one judgement per line: ``qid iteration docid relevance``.
The iteration column is historical and ignored by trec_eval; relevance is an integer grade
(0 = not relevant; some collections use -1 or -2 for "junk" or "unjudged").

**Runs** (system output), one retrieved document per line:
``qid Q0 docid rank score tag``. ``Q0`` is a literal placeholder and ``tag`` names the
system. trec_eval ignores the rank column: it re-sorts each query by score, descending,
breaking ties by docid in *descending* string order (``comp_sim_docno`` in trec_eval's
``form_res_rels.c``). :func:`write_run` sorts the same way and renumbers the ranks, so the
order in the file is the order every evaluator sees.

**Corpora** (the documents) are JSON Lines, ``{"id": ..., "contents": ...}`` per line (the
layout pyserini indexes with ``JsonCollection``), optionally gzipped, or TREC SGML:
``<DOC><DOCNO>id</DOCNO> ... text ... </DOC>``. :func:`iter_corpus` is a generator, so a
corpus of many gigabytes is read one document at a time.

All files are UTF-8. A byte-order mark at the start and Windows line endings (``\\r\\n``) are
accepted; invalid UTF-8 is reported with the line it is on. Writers go through
:func:`clir_toolkit.files.atomic_write`, so a failed write leaves the old file in place.

**Pathological input** gets the same one-line error as any other mistake, from shared
helpers that every reader (here and in the other modules that read users' files) goes
through: :func:`parse_int` and :func:`parse_number` read numbers written with ASCII digits
only (Python's ``int()`` also reads "١٢", "1_000", and fails on more than 4,300 digits), and
keep grades and ranks within the C ``int`` that pytrec_eval stores them in;
:func:`parse_json` refuses what json.loads lets through or fails on: ``NaN``, integers too long
for Python, nesting deeper than :data:`MAX_JSON_DEPTH` and lone UTF-16 surrogates (``"\\ud800"``
decodes to a string that no UTF-8 writer, and no Java program, can take).
"""

from __future__ import annotations

import codecs
import gzip
import json
import math
import operator
import re
import zlib
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.files import atomic_write

__all__ = [
    "INT32_MAX",
    "INT32_MIN",
    "MAX_JSON_DEPTH",
    "Doc",
    "Qrel",
    "RunRow",
    "Topic",
    "count_lines",
    "iter_corpus",
    "parse_int",
    "parse_json",
    "parse_number",
    "quoted",
    "read_qrels",
    "read_run",
    "read_topics",
    "sort_run",
    "write_corpus_jsonl",
    "write_qrels",
    "write_run",
    "write_topics_tsv",
]


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Topic:
    """One information need: ``query`` is what the system searches with."""

    qid: str
    query: str
    description: str = ""
    narrative: str = ""
    lang: str = ""


@dataclass(frozen=True, slots=True)
class Qrel:
    """One relevance judgement: document ``docid`` has grade ``relevance`` for ``qid``."""

    qid: str
    docid: str
    relevance: int
    iteration: str = "0"


@dataclass(frozen=True, slots=True)
class RunRow:
    """One retrieved document: its ``rank`` and ``score`` in the ranking for ``qid``."""

    qid: str
    docid: str
    rank: int
    score: float
    tag: str = "clir"


@dataclass(frozen=True, slots=True)
class Doc:
    """One document of a corpus; ``contents`` is the text that gets indexed."""

    id: str
    contents: str
    title: str = ""


PathLike = str | Path

TOPIC_FIELDS = ("title", "desc", "title+desc")

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ID_BREAKERS = re.compile("[\\s\ud800-\udfff]")  # what _check_id refuses in a non-empty id
# A character that Lucene's indexer does not take for white space (Java's String.trim()
# removes everything up to U+0020; Python's str.strip() the Unicode white space).
_VISIBLE = re.compile(r"[^\x00-\x20\s]")

#: pytrec_eval (behind ir_measures) stores relevance grades in a C ``int``.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
#: JSON nested deeper is refused: no record of these formats nests more than a few levels,
#: and Python's recursion limit (about 1,000 levels) must never be reached by a reader.
MAX_JSON_DEPTH = 64
# Characters that would end a line or a column for some reader of a TSV file.
_TSV_BREAKERS = re.compile(r"[\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


# ---------------------------------------------------------------------------------------------
# Reading lines: bytes in, one decoded line at a time, errors with the line number
# ---------------------------------------------------------------------------------------------


def _is_gzip(path: Path) -> bool:
    return path.suffix.lower() == ".gz"


def iter_lines(path: PathLike) -> Generator[tuple[int, str], None, None]:
    """Yield ``(line_number, text)`` for each line, decoded strictly as UTF-8.

    The file is read as bytes so that a decoding error can name its line. A UTF-8 BOM at the
    start and the ``\\r`` of ``\\r\\n`` line endings are removed; ``.gz`` files are
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
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
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


def _first_text(path: PathLike) -> str | None:
    """The first line with something other than whitespace, or None for an empty file."""
    lines = iter_lines(path)
    try:
        return next((text for _, text in lines if text.strip()), None)
    finally:
        lines.close()


def _empty_file(path: PathLike, expected: str) -> FormatError:
    return FormatError(path, None, "the file is empty", f"expected {expected}")


def _blank_line(path: PathLike, number: int) -> FormatError:
    return FormatError(path, number, "blank line", "remove it: blank lines are not allowed")


def _check_id(path: PathLike, number: int | None, kind: str, value: str) -> str:
    """Reject an empty identifier, one with whitespace (it would split a TREC column) or one
    with a lone surrogate."""
    if value and not _ID_BREAKERS.search(value):  # one test for the usual case: runs are long
        return value
    if not value:
        raise FormatError(path, number, f"empty {kind}", f"give every record a {kind}")
    if _WHITESPACE.search(value):
        raise FormatError(
            path,
            number,
            f"{kind} {quoted(value)} contains whitespace",
            "TREC files separate columns by whitespace; remove it",
        )
    return _check_text(path, number, kind, value)


# ---------------------------------------------------------------------------------------------
# Fields: numbers, text and JSON values, checked the same way by every reader
# ---------------------------------------------------------------------------------------------


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


def _check_text(path: PathLike, number: int | None, field: str, value: str) -> str:
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


def _collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


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


# ---------------------------------------------------------------------------------------------
# Topics
# ---------------------------------------------------------------------------------------------

_TOPIC_FORMATS = (
    "'qid<TAB>query' lines in a .tsv or .txt file, JSON Lines in a .jsonl or .json file, "
    "or TREC SGML starting with <top>"
)


def read_topics(
    path: PathLike,
    *,
    field: str = "title",
    lang: str | None = None,
    source: str | None = None,
) -> list[Topic]:
    """Read topics from a TSV, TREC SGML or JSON Lines file (detected, see the module doc).

    ``field`` chooses the query text: ``"title"``, ``"desc"`` or ``"title+desc"`` (the two
    joined by a space). ``lang`` and ``source`` choose one version of each HC4/NeuCLIR topic
    (default: the original); for formats with a single version ``lang`` only labels the
    topics and ``source`` is an error.
    """
    if field not in TOPIC_FIELDS:
        raise UsageError(f"field {field!r} is not one of {', '.join(TOPIC_FIELDS)}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        topics = _read_topics_jsonl(path, field, lang, source)
    else:
        first = _first_text(path)
        if first is None:
            raise _empty_file(path, "one 'qid<TAB>query' line per topic")
        if suffix == ".tsv":  # even if a qid looks like a tag
            layout = "tsv"
        elif first.lstrip().lower().startswith("<top>"):
            layout = "sgml"
        elif suffix == ".txt" and "\t" in first:
            layout = "tsv"
        else:
            raise FormatError(path, None, "unknown topic format", f"accepted: {_TOPIC_FORMATS}")
        if source is not None:
            raise FormatError(
                path,
                None,
                f"source={source!r} selects a translation, but this file has one version "
                "of each topic",
                "leave source unset, or use HC4/NeuCLIR JSON Lines topics",
            )
        if layout == "sgml":
            topics = _read_topics_sgml(path, field, lang or "")
        else:
            topics = _read_topics_tsv(path, lang or "")
    if not topics:
        raise FormatError(path, None, "no topics", f"accepted: {_TOPIC_FORMATS}")
    return topics


def _query_for(field: str, title: str, description: str) -> str:
    if field == "title":
        return title
    if field == "desc":
        return description
    return " ".join(part for part in (title, description) if part)


class _Unique:
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


def _read_topics_tsv(path: Path, lang: str) -> list[Topic]:
    topics: list[Topic] = []
    unique = _Unique(path)
    for number, text in iter_lines(path):
        if not text.strip():
            raise _blank_line(path, number)
        columns = text.split("\t")
        if len(columns) != 2:
            raise FormatError(
                path,
                number,
                f"expected 2 tab-separated columns (qid<TAB>query), found {len(columns)}",
                "replace tabs inside the query by spaces",
            )
        qid = _check_id(path, number, "qid", columns[0].strip())
        query = columns[1].strip()
        if not query:
            raise FormatError(path, number, f"empty query for topic {qid}", "write the query")
        unique.add(qid, number, f"topic {qid} appears twice")
        topics.append(Topic(qid, query, lang=lang))
    return topics


# An SGML tag such as <top>, </title> or CLEF's <EN-title>.
_SGML_TAG = re.compile(r"<(/?)([A-Za-z][\w-]*)\s*>")
# Tag name (lower case, language prefix removed) -> topic part.
_TOPIC_PARTS = {"num": "num", "title": "title", "desc": "desc", "narr": "narr"}
# The labels old TREC topics put after the tag: "<num> Number: 401".
_TOPIC_LABELS = {
    "num": re.compile(r"^\s*Number\s*:", re.IGNORECASE),
    "title": re.compile(r"^\s*Topic\s*:", re.IGNORECASE),
    "desc": re.compile(r"^\s*Description\s*:", re.IGNORECASE),
    "narr": re.compile(r"^\s*Narrative\s*:", re.IGNORECASE),
}


def _topic_part(tag: str) -> str | None:
    name = tag.lower()
    if re.fullmatch(r"[a-z]{2}-(title|desc|narr)", name):  # CLEF: <EN-title>, <FR-desc>
        name = name[3:]
    return _TOPIC_PARTS.get(name)


def _read_topics_sgml(path: Path, field: str, lang: str) -> list[Topic]:
    """Parse ``<top>`` blocks; a part runs from its tag to the next tag, closed or not."""
    text = "\n".join(line for _, line in iter_lines(path))

    def line_at(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    topics: list[Topic] = []
    unique = _Unique(path)
    top_start: int | None = None  # offset of the open <top>, None outside a topic
    parts: dict[str, list[str]] = {}
    current: str | None = None  # the part that the text being read belongs to
    position = 0
    for match in _SGML_TAG.finditer(text):
        between = text[position : match.start()]
        position = match.end()
        if top_start is None:
            if between.strip():
                raise FormatError(
                    path,
                    line_at(match.start() - len(between.lstrip())),
                    "text outside <top> ... </top>",
                    "every topic must be enclosed in <top> and </top>",
                )
        elif current is not None:
            parts.setdefault(current, []).append(between)
        closing, name = match.group(1) == "/", match.group(2).lower()
        if name == "top" and not closing:
            if top_start is not None:
                raise FormatError(
                    path,
                    line_at(match.start()),
                    f"<top> inside the topic opened at line {line_at(top_start)}",
                    "close each topic with </top>",
                )
            top_start, parts, current = match.start(), {}, None
        elif name == "top":
            if top_start is None:
                raise FormatError(path, line_at(match.start()), "</top> without <top>")
            topic = _sgml_topic(path, line_at(top_start), parts, field, lang)
            unique.add(topic.qid, line_at(top_start), f"topic {topic.qid} appears twice")
            topics.append(topic)
            top_start, current = None, None
        elif top_start is None:
            raise FormatError(
                path,
                line_at(match.start()),
                f"tag <{match.group(2)}> outside <top> ... </top>",
                "every topic must be enclosed in <top> and </top>",
            )
        else:
            # A closing tag ends its part; an opening tag starts a part (unknown tags, such as
            # <dom> or <con> of TREC 1-3, start a part that is ignored).
            current = None if closing else (_topic_part(name) or "")
    if top_start is not None:
        raise FormatError(
            path, line_at(top_start), "<top> is never closed", "end the topic with </top>"
        )
    if text[position:].strip():
        raise FormatError(
            path,
            line_at(len(text) - len(text[position:].lstrip())),
            "text outside <top> ... </top>",
            "every topic must be enclosed in <top> and </top>",
        )
    return topics


def _sgml_topic(
    path: Path, number: int, parts: dict[str, list[str]], field: str, lang: str
) -> Topic:
    def part(name: str) -> str:
        value = " ".join(parts.get(name, []))
        return _collapse(_TOPIC_LABELS[name].sub("", value, count=1))

    if "num" not in parts:
        raise FormatError(path, number, "topic without <num>", "add '<num> Number: ID'")
    qid = _check_id(path, number, "qid", part("num"))
    title, description = part("title"), part("desc")
    query = _query_for(field, title, description)
    if not query:
        raise FormatError(
            path, number, f"empty query for topic {qid} (field {field!r})", "fill in the topic"
        )
    return Topic(qid, query, description, part("narr"), lang)


_QID_KEYS = ("qid", "query_id", "id")
_QUERY_KEYS = ("query", "title", "text")


def _read_topics_jsonl(path: Path, field: str, lang: str | None, source: str | None) -> list[Topic]:
    topics: list[Topic] = []
    unique = _Unique(path)
    for number, obj in _json_objects(path):
        if isinstance(obj.get("topics"), list):
            topic = _hc4_topic(path, number, obj, field, lang, source)
        elif source is not None:
            raise FormatError(
                path,
                number,
                f"source={source!r} selects a translation, but this topic has no 'topics' list",
                "leave source unset, or use HC4/NeuCLIR JSON Lines topics",
            )
        else:
            topic = _simple_topic(path, number, obj, field, lang)
        unique.add(topic.qid, number, f"topic {topic.qid} appears twice")
        topics.append(topic)
    return topics


def _json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each line of a JSON Lines file."""
    for number, text in iter_lines(path):
        if not text.strip():
            raise _blank_line(path, number)
        obj = parse_json(path, number, text)
        if not isinstance(obj, dict):
            raise FormatError(
                path,
                number,
                f"expected a JSON object, found {type(obj).__name__}",
                "JSON Lines files hold one JSON object per line",
            )
        yield number, obj


def _string(path: Path, number: int, obj: dict[str, Any], keys: Iterable[str]) -> str | None:
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


def _simple_topic(
    path: Path, number: int, obj: dict[str, Any], field: str, lang: str | None
) -> Topic:
    qid = _string(path, number, obj, _QID_KEYS)
    if qid is None:
        raise FormatError(
            path, number, "topic without an id", f"use one of the keys {', '.join(_QID_KEYS)}"
        )
    qid = _check_id(path, number, "qid", qid.strip())
    title = _string(path, number, obj, _QUERY_KEYS)
    description = _string(path, number, obj, ("description", "desc")) or ""
    narrative = _string(path, number, obj, ("narrative", "narr")) or ""
    if title is None and field != "desc":
        raise FormatError(
            path,
            number,
            f"topic {qid} has no query",
            f"use one of the keys {', '.join(_QUERY_KEYS)}",
        )
    query = _query_for(field, (title or "").strip(), description.strip())
    if not query:
        raise FormatError(path, number, f"empty query for topic {qid} (field {field!r})")
    topic_lang = _string(path, number, obj, ("lang",)) or lang or ""
    return Topic(qid, query, description.strip(), narrative.strip(), topic_lang)


def _hc4_topic(
    path: Path,
    number: int,
    obj: dict[str, Any],
    field: str,
    lang: str | None,
    source: str | None,
) -> Topic:
    """One HC4/NeuCLIR topic: pick the entry of ``topics`` with the wanted lang and source."""
    qid = _string(path, number, obj, ("topic_id", *_QID_KEYS))
    if qid is None:
        raise FormatError(path, number, "topic without 'topic_id'")
    qid = _check_id(path, number, "qid", qid.strip())
    entries = obj["topics"]
    if not all(isinstance(entry, dict) for entry in entries):
        raise FormatError(path, number, f"the 'topics' of topic {qid} must be JSON objects")
    if not entries:
        raise FormatError(path, number, f"topic {qid} has an empty 'topics' list")

    def pair(entry: dict[str, Any]) -> tuple[str, str]:
        return (
            _string(path, number, entry, ("lang",)) or "",
            _string(path, number, entry, ("source",)) or "",
        )

    def shown(text: str) -> str:
        return text if text.isprintable() and len(text) <= 40 else quoted(text)

    matching = [
        entry
        for entry in entries
        if (lang is None or pair(entry)[0] == lang)
        and (source is None or pair(entry)[1].lower() == source.lower())
    ]
    if not matching:
        available = ", ".join(
            f"({shown(e_lang)}, {shown(e_source)})" for e_lang, e_source in map(pair, entries)
        )
        raise FormatError(
            path,
            number,
            f"topic {qid} has no version with lang={lang!r} source={source!r}; "
            f"available: {available}",
            "choose one of these with lang and source",
        )
    originals = [entry for entry in matching if pair(entry)[1].lower() == "original"]
    entry = (originals or matching)[0]
    title = _string(path, number, entry, ("topic_title", "title")) or ""
    description = _string(path, number, entry, ("topic_description", "description")) or ""
    narrative = _string(path, number, entry, ("topic_narrative", "narrative"))
    if narrative is None:
        narrative = _narrative_text(obj.get("narratives"), pair(entry)[0])
    query = _query_for(field, _collapse(title), _collapse(description))
    if not query:
        raise FormatError(
            path,
            number,
            f"empty query for topic {qid} {pair(entry)} (field {field!r})",
            "fill in topic_title / topic_description",
        )
    return Topic(qid, query, _collapse(description), _collapse(narrative), pair(entry)[0])


def _narrative_text(value: Any, lang: str) -> str:
    """Flatten HC4/NeuCLIR narratives, preferring the ones written in ``lang``.

    Collections store them as ``{lang: text-or-{grade: text}}`` or as a list of entries;
    the texts are joined with spaces.
    """
    if isinstance(value, dict) and lang in value:
        value = value[lang]
    elif isinstance(value, list):
        own = [item for item in value if isinstance(item, dict) and item.get("lang") == lang]
        value = own or value
    return _collapse(" ".join(_all_strings(value)))


def _all_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("lang", "source"):
                yield from _all_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _all_strings(item)


def write_topics_tsv(path: PathLike, topics: Iterable[Topic]) -> None:
    """Write ``qid<TAB>query`` lines; tabs and line breaks inside a query become spaces."""
    lines: list[str] = []
    seen: set[str] = set()
    for topic in topics:
        qid = _check_id(path, None, "qid", topic.qid)
        query = _TSV_BREAKERS.sub(" ", _check_text(path, None, "query", topic.query)).strip()
        if not query:
            raise FormatError(path, None, f"empty query for topic {qid}")
        if qid in seen:
            raise FormatError(path, None, f"topic {qid} appears twice")
        seen.add(qid)
        lines.append(f"{qid}\t{query}\n")
    with atomic_write(path) as handle:
        handle.writelines(lines)


# ---------------------------------------------------------------------------------------------
# Qrels
# ---------------------------------------------------------------------------------------------


_GRADE_FIX = "grades are 0, 1, 2 ...: pytrec_eval keeps them in a 32-bit C int"


def read_qrels(path: PathLike) -> list[Qrel]:
    """Read TREC qrels: ``qid iteration docid relevance`` per line, whitespace-separated."""
    qrels: list[Qrel] = []
    unique = _Unique(path)
    for number, text in iter_lines(path):
        columns = text.split()
        if not columns:
            raise _blank_line(path, number)
        if len(columns) != 4:
            raise FormatError(
                path,
                number,
                f"expected 4 columns (qid iteration docid relevance), found {len(columns)}",
            )
        qid, iteration, docid, grade = columns
        _check_id(path, number, "qid", qid)
        _check_id(path, number, "docid", docid)
        relevance = parse_int(path, number, "relevance", grade, fix=_GRADE_FIX)
        unique.add((qid, docid), number, f"docid {docid} is judged twice for query {qid}")
        qrels.append(Qrel(qid, docid, relevance, iteration))
    if not qrels:
        raise _empty_file(path, "one 'qid 0 docid relevance' line per judgement")
    return qrels


def write_qrels(path: PathLike, qrels: Iterable[Qrel]) -> None:
    """Write ``qid 0 docid relevance`` lines in the given order."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()
    for qrel in qrels:
        _check_id(path, None, "qid", qrel.qid)
        _check_id(path, None, "docid", qrel.docid)
        if (qrel.qid, qrel.docid) in seen:
            raise FormatError(path, None, f"docid {qrel.docid} is judged twice for {qrel.qid}")
        seen.add((qrel.qid, qrel.docid))
        lines.append(f"{qrel.qid} 0 {qrel.docid} {_grade(path, qrel)}\n")
    with atomic_write(path) as handle:
        handle.writelines(lines)


def _grade(path: PathLike, qrel: Qrel) -> int:
    """The relevance of ``qrel`` as :func:`read_qrels` would read it back (a C int)."""
    where = f"relevance of docid {qrel.docid} for query {qrel.qid}"
    try:
        if isinstance(qrel.relevance, bool):
            raise TypeError
        value = operator.index(qrel.relevance)  # int, numpy integers; not 1.5
    except TypeError:
        raise FormatError(
            path, None, f"{where} is not an integer: {qrel.relevance!r}", _GRADE_FIX
        ) from None
    if not INT32_MIN <= value <= INT32_MAX:
        raise FormatError(
            path, None, f"{where} is out of range ({INT32_MIN} to {INT32_MAX})", _GRADE_FIX
        )
    return value


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def read_run(path: PathLike) -> list[RunRow]:
    """Read a TREC run: ``qid Q0 docid rank score tag`` per line, in file order."""
    rows: list[RunRow] = []
    unique = _Unique(path)
    for number, text in iter_lines(path):
        columns = text.split()
        if not columns:
            raise _blank_line(path, number)
        if len(columns) != 6:
            raise FormatError(
                path,
                number,
                f"expected 6 columns (qid Q0 docid rank score tag), found {len(columns)}",
            )
        qid, _, docid, rank, score, tag = columns
        _check_id(path, number, "qid", qid)
        _check_id(path, number, "docid", docid)
        position = parse_int(path, number, "rank", rank)
        value = parse_number(path, number, "score", score, "fix the system's scores")
        unique.add((qid, docid), number, f"docid {docid} appears twice for query {qid}")
        rows.append(RunRow(qid, docid, position, value, tag))
    if not rows:
        raise _empty_file(path, "one 'qid Q0 docid rank score tag' line per retrieved document")
    return rows


def _trec_eval_order(rows: list[RunRow]) -> list[RunRow]:
    """Score descending, ties by docid descending (trec_eval's ``comp_sim_docno``)."""
    ordered = sorted(rows, key=lambda row: row.docid, reverse=True)
    ordered.sort(key=lambda row: row.score, reverse=True)  # stable: keeps the docid order
    return ordered


def sort_run(rows: Iterable[RunRow]) -> list[RunRow]:
    """Sort a run the way trec_eval reads it and renumber the ranks from 1.

    Queries keep the order in which they first appear; within a query, rows go by score
    descending, ties broken by docid in descending string order as trec_eval does.
    """
    by_query: dict[str, list[RunRow]] = {}
    for row in rows:
        by_query.setdefault(row.qid, []).append(row)
    result: list[RunRow] = []
    for query_rows in by_query.values():
        for rank, row in enumerate(_trec_eval_order(query_rows), start=1):
            result.append(RunRow(row.qid, row.docid, rank, row.score, row.tag))
    return result


def _format_score(score: float) -> str:
    """The shortest decimal that reads back as the same float.

    A fixed number of decimals (pyserini writes ``%.6f``) would print two close scores, such
    as the probabilities of a neural reranker, as the same number, and the ranking in the file
    would be lost when trec_eval re-sorts it. Adding 0.0 turns -0.0 into 0.0.
    """
    return repr(float(score) + 0.0)


def write_run(path: PathLike, rows: Iterable[RunRow], tag: str | None = None) -> None:
    """Write a TREC run sorted by :func:`sort_run`; ``tag`` replaces every row's tag.

    Nothing is written, and an existing file is left as it was, when a row is invalid or a
    docid appears twice for a query.
    """
    by_query: dict[str, list[RunRow]] = {}
    for row in rows:
        by_query.setdefault(row.qid, []).append(row)
    tags = {tag} if tag is not None else {row.tag for rows_ in by_query.values() for row in rows_}
    for value in tags:
        _check_id(path, None, "tag", value)
    for qid, query_rows in by_query.items():
        _check_id(path, None, "qid", qid)
        seen: set[str] = set()
        for row in query_rows:
            if row.docid in seen:
                raise FormatError(
                    path,
                    None,
                    f"docid {row.docid} appears twice for query {qid}",
                    "keep one row per (query, document)",
                )
            seen.add(row.docid)
            _check_id(path, None, "docid", row.docid)
            try:
                finite = math.isfinite(row.score)
            except (TypeError, OverflowError):  # not a number, or an int beyond any float
                finite = False
            if not finite:
                raise FormatError(
                    path,
                    None,
                    f"score {row.score} of docid {row.docid} for query {qid} is not "
                    "a finite number",
                )
    with atomic_write(path) as handle:
        for qid, query_rows in by_query.items():
            for rank, row in enumerate(_trec_eval_order(query_rows), start=1):
                row_tag = tag if tag is not None else row.tag
                score = _format_score(row.score)
                handle.write(f"{qid} Q0 {row.docid} {rank} {score} {row_tag}\n")


# ---------------------------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------------------------

_DOCID_KEYS = ("id", "docid", "doc_id")
_CORPUS_FORMATS = (
    "JSON Lines (.jsonl, .json, .jsonl.gz) with 'id' and 'contents' (or 'title' and 'text'), "
    "or TREC SGML starting with <DOC>"
)


def iter_corpus(path: PathLike) -> Iterator[Doc]:
    """Yield the documents of a JSON Lines or TREC SGML corpus, one at a time.

    JSON Lines: ``{"id": ..., "contents": ...}`` (``docid`` and ``doc_id`` also name the id)
    or ``{"id": ..., "title": ..., "text": ...}``, whose contents become title + newline +
    text. ``.gz`` files are decompressed on the fly. Errors are raised as iteration reaches
    them.
    """
    path = Path(path)
    name = path.name.lower()
    inner = name[: -len(".gz")] if name.endswith(".gz") else name
    if inner.endswith((".jsonl", ".json")):
        docs = _iter_corpus_jsonl(path)
    else:
        first = _first_text(path)
        if first is None:
            raise _empty_file(path, _CORPUS_FORMATS)
        if not first.lstrip().upper().startswith("<DOC>"):
            raise FormatError(path, None, "unknown corpus format", f"accepted: {_CORPUS_FORMATS}")
        docs = _iter_corpus_sgml(path)
    seen: dict[str, int] = {}
    for number, doc in docs:
        _check_contents(path, number, doc)
        if doc.id in seen:
            raise FormatError(
                path,
                number,
                f"document id {doc.id} appears twice (first at line {seen[doc.id]})",
                "document ids must be unique",
            )
        seen[doc.id] = number
        yield doc
    if not seen:
        raise _empty_file(path, _CORPUS_FORMATS)


def _check_contents(path: PathLike, number: int | None, doc: Doc) -> None:
    """Refuse a document whose contents Lucene would skip as empty, or that holds a lone
    surrogate (only a document built in Python can: readers refuse them earlier)."""
    if _VISIBLE.search(doc.contents) is None:
        raise FormatError(
            path,
            number,
            f"document {doc.id} has empty contents (nothing but white space)",
            "give it text or remove it: the index would skip it",
        )
    _check_text(path, number, f"contents of document {doc.id}", doc.contents)
    _check_text(path, number, f"title of document {doc.id}", doc.title)


def _iter_corpus_jsonl(path: Path) -> Iterator[tuple[int, Doc]]:
    for number, obj in _json_objects(path):
        docid = _string(path, number, obj, _DOCID_KEYS)
        if docid is None:
            raise FormatError(
                path, number, "document without an id", f"use one of {', '.join(_DOCID_KEYS)}"
            )
        docid = _check_id(path, number, "document id", docid.strip())
        title = _text_field(path, number, obj, "title")
        contents = _text_field(path, number, obj, "contents")
        if contents is None:
            text = _text_field(path, number, obj, "text")
            if text is None:
                raise FormatError(
                    path,
                    number,
                    f"document {docid} has no text",
                    "accepted keys: 'contents', or 'text' with an optional 'title'",
                )
            contents = f"{title}\n{text}" if title else text
        yield number, Doc(docid, contents, title or "")


def _text_field(path: Path, number: int, obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise FormatError(path, number, f"{key!r} must be a string, found {type(value).__name__}")


_DOC_OPEN = re.compile(r"<DOC>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"</DOC>", re.IGNORECASE)
_DOCNO = re.compile(r"<DOCNO>(.*?)</DOCNO>", re.IGNORECASE | re.DOTALL)
_DOC_TITLE = re.compile(r"<(HEADLINE|TITLE)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_ANY_TAG = re.compile(r"<[^<>]*>")


def _iter_corpus_sgml(path: Path) -> Iterator[tuple[int, Doc]]:
    """Collect the lines from ``<DOC>`` to ``</DOC>`` and turn each block into a Doc."""
    block: list[str] = []
    start = 0  # line of the open <DOC>; 0 outside a document
    for number, text in iter_lines(path):
        rest = text
        while True:
            if not start:
                opening = _DOC_OPEN.search(rest)
                outside = rest if opening is None else rest[: opening.start()]
                if outside.strip():
                    raise FormatError(
                        path,
                        number,
                        "text outside <DOC> ... </DOC>",
                        "every document must be enclosed in <DOC> and </DOC>",
                    )
                if opening is None:
                    break
                start, block, rest = number, [], rest[opening.end() :]
            closing = _DOC_CLOSE.search(rest)
            if closing is None:
                block.append(rest)
                break
            block.append(rest[: closing.start()])
            yield start, _sgml_doc(path, start, "\n".join(block))
            start, rest = 0, rest[closing.end() :]
    if start:
        raise FormatError(path, start, "<DOC> is never closed", "end the document with </DOC>")


def _sgml_doc(path: Path, number: int, body: str) -> Doc:
    if _DOC_OPEN.search(body):
        raise FormatError(path, number, "<DOC> inside a document", "close it with </DOC> first")
    docnos = _DOCNO.findall(body)
    if len(docnos) != 1:
        raise FormatError(
            path, number, f"expected one <DOCNO> in the document, found {len(docnos)}"
        )
    docid = _check_id(path, number, "document id", docnos[0].strip())
    title = _collapse(" ".join(_ANY_TAG.sub(" ", part) for _, part in _DOC_TITLE.findall(body)))
    contents = _collapse(_ANY_TAG.sub(" ", _DOCNO.sub(" ", body)))
    return Doc(docid, contents, title)


def write_corpus_jsonl(path: PathLike, docs: Iterable[Doc]) -> int:
    """Write ``{"id", "contents"}`` lines (with ``"title"`` when there is one); return the count.

    The documents are streamed to a temporary file, renamed into place only when all are
    written.
    """
    count = 0
    seen: set[str] = set()
    with atomic_write(path) as handle:
        for doc in docs:
            _check_id(path, None, "document id", doc.id)
            _check_contents(path, None, doc)
            if doc.id in seen:
                raise FormatError(path, None, f"document id {doc.id} appears twice")
            seen.add(doc.id)
            record = {"id": doc.id, "contents": doc.contents}
            if doc.title:
                record["title"] = doc.title
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count
