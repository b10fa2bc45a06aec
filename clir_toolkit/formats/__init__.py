"""The files that flow between stages: topics, qrels, runs and corpora.

Every stage of the toolkit reads and writes the plain-text formats that TREC made standard,
so that trec_eval, ir_measures, pyserini, PyTerrier and Anserini read our files and we read
theirs. Each format gets a small typed record and a strict reader: a file that does not
follow its format is rejected with one line naming the file, the line and the fix, because a
silently skipped topic or a half-read run changes the numbers of an experiment.

One module per format, over the records and the checks they share:

- :mod:`~clir_toolkit.formats.topics`: the queries, as TSV, TREC SGML or JSON Lines
  (HC4/NeuCLIR topics with their translations included), :func:`read_topics`;
- :mod:`~clir_toolkit.formats.qrels`: relevance judgements, ``qid iteration docid relevance``;
- :mod:`~clir_toolkit.formats.runs`: system output, ``qid Q0 docid rank score tag``, written
  in the order trec_eval reads it;
- :mod:`~clir_toolkit.formats.corpus`: the documents, JSON Lines (optionally gzipped) or TREC
  SGML, read one at a time by :func:`iter_corpus`;
- :mod:`~clir_toolkit.formats.records`: :class:`Topic`, :class:`Qrel`, :class:`RunRow` and
  :class:`Doc`, the records these read and write;
- :mod:`~clir_toolkit.formats.lines`: files to decoded lines (:func:`iter_lines`);
- :mod:`~clir_toolkit.formats.checks`: identifiers, text, numbers and JSON values
  (:func:`parse_int`, :func:`parse_number`, :func:`parse_json`), checked the same way by every
  reader, here and in the other modules that read users' files.

All files are UTF-8. A byte-order mark at the start and Windows line endings (``\\r\\n``) are
accepted; invalid UTF-8 is reported with the line it is on. Writers go through
:func:`clir_toolkit.files.atomic_write`, so a failed write leaves the old file in place.

The readers, writers, records and shared checks are imported from here:
``from clir_toolkit.formats import read_run, write_run, RunRow``.
"""

from __future__ import annotations

from clir_toolkit.formats.checks import (
    INT32_MAX,
    INT32_MIN,
    MAX_JSON_DEPTH,
    parse_int,
    parse_json,
    parse_number,
    quoted,
)
from clir_toolkit.formats.corpus import iter_corpus, write_corpus_jsonl
from clir_toolkit.formats.lines import count_lines, iter_lines
from clir_toolkit.formats.qrels import read_qrels, write_qrels
from clir_toolkit.formats.records import Doc, Qrel, RunRow, Topic
from clir_toolkit.formats.runs import read_run, sort_run, write_ranked_run, write_run
from clir_toolkit.formats.topics import read_topics, write_topics_tsv

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
    "iter_lines",
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
    "write_ranked_run",
    "write_run",
    "write_topics_tsv",
]
