"""Documents by id without a pass over the whole corpus: where each line of it starts.

A reranker reads the texts of its candidates, 10,000 for a run of 100 topics, 100 deep. Read
by :func:`~clir_toolkit.formats.corpus.iter_corpus`, which parses and checks every line, a
corpus of a million documents costs seconds at every call, whatever the run. The byte offset
of each document's line in a JSON Lines corpus is found in one pass, once, and kept in a
cache directory under the name :func:`~clir_toolkit.freshness.cache_key` gives the corpus'
fingerprint; later calls seek to the lines they need and parse those alone, into the same
documents ``iter_corpus`` yields (the same id and contents, in composed form).

Only a plain JSON Lines file is read so (a gzipped or SGML corpus cannot be sought in):
:func:`corpus_offsets` returns None for the others, and their readers make one pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from clir_toolkit.errors import FormatError
from clir_toolkit.files import atomic_write
from clir_toolkit.formats.corpus import jsonl_docid, jsonl_document
from clir_toolkit.formats.records import Doc

CODE = (__name__,)
"""The code the offsets file is made by (part of its name)."""
_BOM = b"\xef\xbb\xbf"


class CorpusOffsets:
    """The byte offset of each document's line in ``corpus``, by docid."""

    def __init__(self, corpus: Path, docids: list[str], offsets: list[int]) -> None:
        self.corpus = corpus
        self.offsets = dict(zip(docids, offsets, strict=True))

    def read(self, docids: Iterable[str]) -> dict[str, str]:
        """The contents of those of ``docids`` that are in the corpus (in file order of
        their lines, one seek each)."""
        found = sorted((self.offsets[d], d) for d in set(docids) if d in self.offsets)
        texts: dict[str, str] = {}
        with self.corpus.open("rb") as handle:
            for offset, docid in found:
                handle.seek(offset)
                doc = _document(self.corpus, None, handle.readline())
                if doc.id != docid:  # the file changed under its fingerprint's memo
                    raise FormatError(
                        self.corpus, None, f"the line at byte {offset} holds {doc.id}, not "
                        f"{docid}", "the corpus changed while it was read: run the command again",
                    )  # fmt: skip
                texts[docid] = doc.contents
        return texts


def corpus_offsets(corpus: Path, fingerprint: str, cache_dir: Path) -> CorpusOffsets | None:
    """The offsets of ``corpus`` (sha256 ``fingerprint``), read from ``cache_dir`` or found
    in one pass and written there; None for a corpus that is not plain JSON Lines."""
    from clir_toolkit.freshness import cache_key

    if not corpus.name.lower().endswith((".jsonl", ".json")):
        return None
    path = Path(cache_dir) / f"offsets-{cache_key({'corpus': fingerprint}, CODE)[:24]}.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return CorpusOffsets(corpus, record["docids"], record["offsets"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # absent or damaged: found again, never trusted
    docids, offsets = _scan(corpus)
    try:
        with atomic_write(path, own=True) as handle:
            json.dump({"docids": docids, "offsets": offsets}, handle, separators=(",", ":"))
    except OSError:
        pass  # a cache is an optimisation: the offsets are used from memory this time
    return CorpusOffsets(corpus, docids, offsets)


def _scan(corpus: Path) -> tuple[list[str], list[int]]:
    """Each document's id and the byte offset of its line, in one pass."""
    docids: list[str] = []
    offsets: list[int] = []
    seen: set[str] = set()
    offset = 0
    with corpus.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            start = offset + (len(_BOM) if number == 1 and line.startswith(_BOM) else 0)
            offset += len(line)
            obj = _parsed(corpus, number, line)
            if not isinstance(obj, dict):
                raise FormatError(corpus, number, "expected a JSON object")
            docid = jsonl_docid(corpus, number, obj)  # the id alone: the text is read later
            if docid in seen:
                raise FormatError(corpus, number, f"document id {docid} appears twice",
                                  "document ids must be unique")  # fmt: skip
            seen.add(docid)
            docids.append(docid)
            offsets.append(start)
    return docids, offsets


def _document(corpus: Path, number: int | None, line: bytes) -> Doc:
    """The document of one line, as :func:`~clir_toolkit.formats.corpus.iter_corpus` reads
    it."""
    return jsonl_document(corpus, number, _parsed(corpus, number, line))


def _parsed(corpus: Path, number: int | None, line: bytes) -> object:
    """The JSON value of one line of the corpus."""
    from clir_toolkit.formats.checks import parse_json

    try:
        text = line.removeprefix(_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(corpus, number, f"not UTF-8 text (byte {exc.start})") from None
    return parse_json(corpus, number, text)
