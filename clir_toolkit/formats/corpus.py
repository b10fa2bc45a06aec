"""Corpora (the documents): JSON Lines or TREC SGML, read one document at a time.

JSON Lines, ``{"id": ..., "contents": ...}`` per line (the layout pyserini indexes with
``JsonCollection``), optionally gzipped, or TREC SGML:
``<DOC><DOCNO>id</DOCNO> ... text ... </DOC>``. :func:`iter_corpus` is a generator, so a
corpus of many gigabytes is read one document at a time; :func:`write_corpus_jsonl` streams
the documents out the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from clir_toolkit.errors import FormatError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats.checks import (
    check_id,
    check_text,
    collapse,
    composed,
    json_objects,
    string_field,
)
from clir_toolkit.formats.lines import empty_file, first_text, iter_lines
from clir_toolkit.formats.records import Doc, PathLike

# A character that Lucene's indexer does not take for white space (Java's String.trim()
# removes everything up to U+0020; Python's str.strip() the Unicode white space).
_VISIBLE = re.compile(r"[^\x00-\x20\s]")

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
    them. Contents and titles are given in Unicode's composed form (NFC, see
    :func:`~clir_toolkit.formats.checks.composed`), the form queries are read in.
    """
    path = Path(path)
    name = path.name.lower()
    inner = name[: -len(".gz")] if name.endswith(".gz") else name
    if inner.endswith((".jsonl", ".json")):
        docs = _iter_corpus_jsonl(path)
    else:
        first = first_text(path)
        if first is None:
            raise empty_file(path, _CORPUS_FORMATS)
        if not first.lstrip().upper().startswith("<DOC>"):
            raise FormatError(path, None, "unknown corpus format", f"accepted: {_CORPUS_FORMATS}")
        docs = _iter_corpus_sgml(path)
    seen: dict[str, int] = {}
    for number, doc in docs:
        _check_contents(path, number, doc)
        doc = Doc(doc.id, composed(doc.contents), composed(doc.title))
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
        raise empty_file(path, _CORPUS_FORMATS)


MAX_DOCUMENT_CHARS = 20_000_000
"""The longest contents a document may have: the most characters Anserini's JSON reader
takes in one string (Jackson's ``StreamReadConstraints.getMaxStringLength()``), past which
it drops the document with a stack trace. A longer text is a book, not a document: split it
into passages."""


def _check_contents(path: PathLike, number: int | None, doc: Doc) -> None:
    """Refuse a document whose contents Lucene would skip as empty, or that is longer than
    the indexer reads (:data:`MAX_DOCUMENT_CHARS`), or that holds a lone surrogate (only a
    document built in Python can: readers refuse them earlier)."""
    if len(doc.contents) > MAX_DOCUMENT_CHARS:
        raise FormatError(
            path,
            number,
            f"document {doc.id} has {len(doc.contents):,} characters, more than the "
            f"{MAX_DOCUMENT_CHARS:,} the indexer reads",
            "split it into passages, each a document",
        )
    if _VISIBLE.search(doc.contents) is None:
        raise FormatError(
            path,
            number,
            f"document {doc.id} has empty contents (nothing but white space)",
            "give it text or remove it: the index would skip it",
        )
    check_text(path, number, f"contents of document {doc.id}", doc.contents)
    check_text(path, number, f"title of document {doc.id}", doc.title)


def _iter_corpus_jsonl(path: Path) -> Iterator[tuple[int, Doc]]:
    for number, obj in json_objects(path):
        yield number, _jsonl_doc(path, number, obj)


def jsonl_document(path: Path, number: int | None, obj: Any) -> Doc:
    """The document of one JSON Lines object (line ``number`` of ``path``) as
    :func:`iter_corpus` yields it: checked, its text in composed form."""
    if not isinstance(obj, dict):
        raise FormatError(path, number, f"expected a JSON object, found {type(obj).__name__}",
                          "JSON Lines files hold one JSON object per line")  # fmt: skip
    doc = _jsonl_doc(path, number, obj)
    _check_contents(path, number, doc)
    return Doc(doc.id, composed(doc.contents), composed(doc.title))


def jsonl_docid(path: Path, number: int | None, obj: dict[str, Any]) -> str:
    """The id of one JSON Lines object, as :func:`iter_corpus` reads it."""
    docid = string_field(path, number, obj, _DOCID_KEYS)
    if docid is None:
        raise FormatError(
            path, number, "document without an id", f"use one of {', '.join(_DOCID_KEYS)}"
        )
    return check_id(path, number, "document id", docid.strip())


def _jsonl_doc(path: Path, number: int | None, obj: dict[str, Any]) -> Doc:
    docid = jsonl_docid(path, number, obj)
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
    return Doc(docid, contents, title or "")


def _text_field(path: Path, number: int | None, obj: dict[str, Any], key: str) -> str | None:
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
    docid = check_id(path, number, "document id", docnos[0].strip())
    title = collapse(" ".join(_ANY_TAG.sub(" ", part) for _, part in _DOC_TITLE.findall(body)))
    contents = collapse(_ANY_TAG.sub(" ", _DOCNO.sub(" ", body)))
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
            check_id(path, None, "document id", doc.id)
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
