"""Topics (the queries), in three shapes; :func:`read_topics` detects which.

- TSV, one topic per line, ``qid<TAB>query``: the toolkit's own exchange format
  (:func:`write_topics_tsv` writes it)::

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

The three readers share one concern, a topic and the query text chosen from it
(``field``: title, description or both; ``lang`` and ``source``: which version of an HC4
topic), so they stay together in one module.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats.checks import (
    Unique,
    check_id,
    check_text,
    collapse,
    composed,
    json_objects,
    quoted,
    string_field,
)
from clir_toolkit.formats.lines import blank_line, empty_file, first_text, iter_lines
from clir_toolkit.formats.records import PathLike, Topic

TOPIC_FIELDS = ("title", "desc", "title+desc")
# Characters that would end a line or a column for some reader of a TSV file.
_TSV_BREAKERS = re.compile(r"[\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")

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
    topics and ``source`` is an error. Texts are given in Unicode's composed form (NFC), the
    form documents are read in (:func:`~clir_toolkit.formats.checks.composed`).
    """
    if field not in TOPIC_FIELDS:
        raise UsageError(f"field {field!r} is not one of {', '.join(TOPIC_FIELDS)}")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        topics = _read_topics_jsonl(path, field, lang, source)
    else:
        first = first_text(path)
        if first is None:
            raise empty_file(path, "one 'qid<TAB>query' line per topic")
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
    return [_composed_topic(topic) for topic in topics]


def _composed_topic(topic: Topic) -> Topic:
    """``topic`` with its texts in the Unicode form documents are read in (NFC, see
    :func:`~clir_toolkit.formats.checks.composed`)."""
    return Topic(
        topic.qid,
        composed(topic.query),
        composed(topic.description),
        composed(topic.narrative),
        topic.lang,
    )


def _query_for(field: str, title: str, description: str) -> str:
    if field == "title":
        return title
    if field == "desc":
        return description
    return " ".join(part for part in (title, description) if part)


def _read_topics_tsv(path: Path, lang: str) -> list[Topic]:
    topics: list[Topic] = []
    unique = Unique(path)
    for number, text in iter_lines(path):
        if not text.strip():
            raise blank_line(path, number)
        columns = text.split("\t")
        if len(columns) != 2:
            raise FormatError(
                path,
                number,
                f"expected 2 tab-separated columns (qid<TAB>query), found {len(columns)}",
                "replace tabs inside the query by spaces",
            )
        qid = check_id(path, number, "qid", columns[0].strip())
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
    unique = Unique(path)
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
        return collapse(_TOPIC_LABELS[name].sub("", value, count=1))

    if "num" not in parts:
        raise FormatError(path, number, "topic without <num>", "add '<num> Number: ID'")
    qid = check_id(path, number, "qid", part("num"))
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
    unique = Unique(path)
    for number, obj in json_objects(path):
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


def _simple_topic(
    path: Path, number: int, obj: dict[str, Any], field: str, lang: str | None
) -> Topic:
    qid = string_field(path, number, obj, _QID_KEYS)
    if qid is None:
        raise FormatError(
            path, number, "topic without an id", f"use one of the keys {', '.join(_QID_KEYS)}"
        )
    qid = check_id(path, number, "qid", qid.strip())
    title = string_field(path, number, obj, _QUERY_KEYS)
    description = string_field(path, number, obj, ("description", "desc")) or ""
    narrative = string_field(path, number, obj, ("narrative", "narr")) or ""
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
    topic_lang = string_field(path, number, obj, ("lang",)) or lang or ""
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
    qid = string_field(path, number, obj, ("topic_id", *_QID_KEYS))
    if qid is None:
        raise FormatError(path, number, "topic without 'topic_id'")
    qid = check_id(path, number, "qid", qid.strip())
    entries = obj["topics"]
    if not all(isinstance(entry, dict) for entry in entries):
        raise FormatError(path, number, f"the 'topics' of topic {qid} must be JSON objects")
    if not entries:
        raise FormatError(path, number, f"topic {qid} has an empty 'topics' list")

    def pair(entry: dict[str, Any]) -> tuple[str, str]:
        return (
            string_field(path, number, entry, ("lang",)) or "",
            string_field(path, number, entry, ("source",)) or "",
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
    title = string_field(path, number, entry, ("topic_title", "title")) or ""
    description = string_field(path, number, entry, ("topic_description", "description")) or ""
    narrative = string_field(path, number, entry, ("topic_narrative", "narrative"))
    if narrative is None:
        narrative = _narrative_text(obj.get("narratives"), pair(entry)[0])
    query = _query_for(field, collapse(title), collapse(description))
    if not query:
        raise FormatError(
            path,
            number,
            f"empty query for topic {qid} {pair(entry)} (field {field!r})",
            "fill in topic_title / topic_description",
        )
    return Topic(qid, query, collapse(description), collapse(narrative), pair(entry)[0])


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
    return collapse(" ".join(_all_strings(value)))


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
        qid = check_id(path, None, "qid", topic.qid)
        query = _TSV_BREAKERS.sub(" ", check_text(path, None, "query", topic.query)).strip()
        if not query:
            raise FormatError(path, None, f"empty query for topic {qid}")
        if qid in seen:
            raise FormatError(path, None, f"topic {qid} appears twice")
        seen.add(qid)
        lines.append(f"{qid}\t{query}\n")
    with atomic_write(path) as handle:
        handle.writelines(lines)
