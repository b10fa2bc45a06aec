"""Fuzz tests of every file reader: round trips, and nothing but ClirError on any input.

For each reader (runs, qrels, topics in TSV, TREC SGML, JSON Lines and HC4 JSON Lines,
corpora in JSON Lines, gzipped JSON Lines and TREC SGML, TSV dictionaries, ``.vec``
embeddings, collection manifests, index sidecars):

1. records written by the toolkit's writer (or, for formats it only reads, by the few lines
   here that write them) read back equal;
2. arbitrary bytes, arbitrary text and structured-but-wrong lines or JSON make the reader
   raise a :class:`ClirError` whose message is one line, or nothing: any other exception
   fails the test.

The number of examples comes from the hypothesis profile loaded in ``conftest.py``
(``HYPOTHESIS_PROFILE=ci``, the default, or ``fuzz`` for ``make fuzz``). Hypothesis runs a
test's body once per example, so each body writes its files into a fresh temporary
directory.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from clir_toolkit.collection import open_collection
from clir_toolkit.errors import ClirError
from clir_toolkit.formats import (
    Doc,
    Qrel,
    RunRow,
    Topic,
    iter_corpus,
    read_qrels,
    read_run,
    read_topics,
    sort_run,
    write_corpus_jsonl,
    write_qrels,
    write_run,
    write_topics_tsv,
)
from clir_toolkit.formats.checks import composed
from clir_toolkit.index import IndexInfo, read_index_info, write_sidecar
from clir_toolkit.resources.dictionary.phrases import normalise_phrase
from clir_toolkit.resources.dictionary.tsv import read_dictionary_tsv
from clir_toolkit.resources.embeddings import load_vec, save_vec
from clir_toolkit.vectors import DenseRecord

# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh directory for one example (hypothesis runs a test body many times)."""
    with tempfile.TemporaryDirectory(prefix="clir-fuzz-") as name:
        yield Path(name)


def put(directory: Path, name: str, content: str | bytes) -> Path:
    """Write ``content`` (text as UTF-8, lone surrogates kept as their bytes) to a file."""
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
    if name.endswith(".gz"):
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def only_clir_errors(read: Callable[[], object]) -> None:
    """Run a reader; a ClirError with a one-line message is fine, anything else fails."""
    try:
        read()
    except ClirError as exc:
        message = str(exc)
        assert message, "an error without a message"
        assert len(message.splitlines()) == 1, f"a message of several lines: {message!r}"


def read_all_docs(path: Path) -> list[Doc]:
    return list(iter_corpus(path))


def composed_doc(doc: Doc) -> Doc:
    """``doc`` as a reader gives it back: its texts in Unicode's composed form (NFC)."""
    return Doc(doc.id, composed(doc.contents), composed(doc.title))


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

# Identifiers as the writers accept them: no white space, no surrogates, no BOM.
ids = st.text(
    st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=12
).filter(lambda s: not re.search(r"\s", s) and "\ufeff" not in s)
# Text with at least one character that is not white space.
texts = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40).filter(
    lambda s: re.search(r"[^\x00-\x20\s]", s) is not None
)
# Plain words for formats whose markup a random character could open (SGML).
words = st.text("abcdefghijklmnopqrstuvwxyzéèçàüößñ0123456789", min_size=1, max_size=10)
phrases = st.lists(words, min_size=1, max_size=5).map(" ".join)

# Fields that readers have tripped on: numbers in other scripts, huge integers, non-finite
# numbers, white space and separators of every kind, markup.
TRICKY_TOKENS = [
    "", " ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\ufeff", "\x00",
    "Q0", "0", "-1", "+1", "1.5", "1e999", "-1e999", "nan", "NaN", "inf", "-Infinity", "1_000",
    "١٢", "١٢ 3", "²", "0x10", "9" * 5000, "-" + "9" * 5000, "2147483648", "-2147483649",
    "<top>", "</top>", "<num>", "<title>", "<DOC>", "</DOC>", "<DOCNO>", "</DOCNO>", "#",
    '{"id": "a", "contents": "x"}', "[" * 1000, "\\ud800",
]
tokens = st.one_of(
    st.sampled_from(TRICKY_TOKENS),
    st.text(max_size=12),
    st.integers().map(str),
    st.floats().map(repr),
)
separators = st.sampled_from([" ", "  ", "\t", "\t\t", " \t", "\r"])


@st.composite
def token_lines(draw: st.DrawFn, columns: int) -> str:
    """Lines of about ``columns`` fields made of tricky tokens, joined by tricky separators."""
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        count = draw(st.integers(max(0, columns - 2), columns + 2))
        fields = [draw(tokens) for _ in range(count)]
        lines.append(draw(separators).join(fields))
    ending = draw(st.sampled_from(["\n", "\r\n", ""]))
    return "\n".join(lines) + ending


# The placeholders that ``json_text`` replaces by JSON that json.dumps cannot write.
HUGE_INT = "9" * 5000
DEEP = "[" * 1000 + "]" * 1000
SPECIAL = {'"@HUGE@"': HUGE_INT, '"@DEEP@"': DEEP, '"@NEST@"': "[" * 70 + "]" * 70}

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),  # NaN and Infinity are written as such: not JSON
    st.text(max_size=12),
    st.text(st.characters(codec=None), max_size=6),  # lone surrogates included
    st.sampled_from(["@HUGE@", "@DEEP@", "@NEST@", "", " ", "\ud800", "a\udfffb"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=8,
)


def json_text(value: Any) -> str:
    """``value`` as JSON text, with the special placeholders replaced."""
    text = json.dumps(value)  # ensure_ascii: a lone surrogate becomes "\ud800"
    for placeholder, replacement in SPECIAL.items():
        text = text.replace(placeholder, replacement)
    return text


def objects_with(keys: list[str], values: st.SearchStrategy[Any] = json_values) -> Any:
    """JSON objects made mostly of a reader's own keys, with any values."""
    return st.dictionaries(st.one_of(st.sampled_from(keys), st.text(max_size=5)), values,
                           max_size=len(keys) + 1)


TOPIC_KEYS = ["qid", "query_id", "id", "query", "title", "text", "description", "desc",
              "narrative", "narr", "lang"]
HC4_ENTRY_KEYS = ["lang", "source", "topic_title", "title", "topic_description", "description",
                  "topic_narrative", "narrative"]
DOC_KEYS = ["id", "docid", "doc_id", "contents", "title", "text"]
MANIFEST_KEYS = ["name", "description", "doc_lang", "query_lang", "splits", "counts"]
SIDECAR_KEYS = [field for field in IndexInfo.__dataclass_fields__]

hc4_entries = objects_with(HC4_ENTRY_KEYS)
hc4_objects = st.fixed_dictionaries(
    {"topics": st.one_of(st.lists(hc4_entries, max_size=3), json_values)},
    optional={
        "topic_id": json_values,
        "qid": json_values,
        "narratives": json_values,
        "lang": json_values,
    },
)


@st.composite
def jsonl_text(draw: st.DrawFn, objects: st.SearchStrategy[Any]) -> str:
    """JSON Lines of structured-but-wrong objects, sometimes with a bad line among them."""
    lines = [json_text(draw(objects)) for _ in range(draw(st.integers(1, 4)))]
    if draw(st.booleans()):
        bad = draw(st.sampled_from(["", " ", "{", "[]", "1", '"x"', "null", "NaN", "{}{}"]))
        lines.insert(draw(st.integers(0, len(lines))), bad)
    return "\n".join(lines) + "\n"


topic_options = st.fixed_dictionaries(
    {
        "field": st.sampled_from(["title", "desc", "title+desc"]),
        "lang": st.one_of(
            st.none(), st.sampled_from(["en", "zho", "fas", ""]), st.text(max_size=3)
        ),
    }
)


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


@st.composite
def runs(draw: st.DrawFn) -> list[RunRow]:
    pairs = draw(st.lists(st.tuples(ids, ids), min_size=1, max_size=15, unique=True))
    tag = draw(ids)
    scores = st.floats(allow_nan=False, allow_infinity=False)
    return [RunRow(qid, docid, 0, draw(scores), tag) for qid, docid in pairs]


@given(rows=runs())
def test_run_round_trip(rows: list[RunRow]) -> None:
    with scratch() as directory:
        path = directory / "run.trec"
        write_run(path, rows)
        # The writer sorts in trec_eval's order and renumbers the ranks, as sort_run does;
        # scores are written as the shortest decimal that reads back as the same float.
        assert read_run(path) == sort_run(rows)


@given(data=st.binary(max_size=300))
def test_run_reader_on_bytes(data: bytes) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_run(put(directory, "run.trec", data)))


@given(text=st.one_of(st.text(max_size=200), token_lines(6)))
def test_run_reader_on_text(text: str) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_run(put(directory, "run.trec", text)))


# ---------------------------------------------------------------------------------------------
# Qrels
# ---------------------------------------------------------------------------------------------


@st.composite
def qrels_lists(draw: st.DrawFn) -> list[Qrel]:
    pairs = draw(st.lists(st.tuples(ids, ids), min_size=1, max_size=15, unique=True))
    grades = st.integers(-(2**31), 2**31 - 1)
    return [Qrel(qid, docid, draw(grades)) for qid, docid in pairs]


@given(qrels=qrels_lists())
def test_qrels_round_trip(qrels: list[Qrel]) -> None:
    with scratch() as directory:
        path = directory / "qrels.txt"
        write_qrels(path, qrels)
        assert read_qrels(path) == qrels


@given(data=st.binary(max_size=300))
def test_qrels_reader_on_bytes(data: bytes) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_qrels(put(directory, "qrels.txt", data)))


@given(text=st.one_of(st.text(max_size=200), token_lines(4)))
def test_qrels_reader_on_text(text: str) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_qrels(put(directory, "qrels.txt", text)))


# ---------------------------------------------------------------------------------------------
# Topics: TSV, TREC SGML, JSON Lines, HC4 JSON Lines
# ---------------------------------------------------------------------------------------------

unique_topics = st.lists(st.tuples(ids, texts), min_size=1, max_size=8, unique_by=lambda t: t[0])


@given(pairs=unique_topics)
def test_tsv_topics_round_trip(pairs: list[tuple[str, str]]) -> None:
    topics = [Topic(qid, query) for qid, query in pairs]
    with scratch() as directory:
        path = directory / "topics.tsv"
        write_topics_tsv(path, topics)
        # Tabs and line breaks inside a query are written as spaces; the query is stripped
        # and read in Unicode's composed form.
        breaks = r"[\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"
        expected = [Topic(qid, composed(re.sub(breaks, " ", q).strip())) for qid, q in pairs]
        assert read_topics(path) == expected


@given(
    topics=st.lists(
        st.tuples(words, phrases, phrases, phrases), min_size=1, max_size=5,
        unique_by=lambda t: t[0],
    ),
    field=st.sampled_from(["title", "desc", "title+desc"]),
)
def test_sgml_topics_round_trip(topics: list[tuple[str, str, str, str]], field: str) -> None:
    blocks = [
        f"<top>\n<num> Number: {qid}\n<title> {title}\n\n<desc> Description:\n{desc}\n\n"
        f"<narr> Narrative:\n{narr}\n</top>\n"
        for qid, title, desc, narr in topics
    ]
    queries = {"title": "{t}", "desc": "{d}", "title+desc": "{t} {d}"}[field]
    with scratch() as directory:
        path = put(directory, "topics.sgml", "\n".join(blocks))
        assert read_topics(path, field=field, lang="en") == [
            Topic(qid, queries.format(t=title, d=desc), desc, narr, "en")
            for qid, title, desc, narr in topics
        ]


@given(pairs=unique_topics, lang=st.sampled_from(["", "en", "fr"]))
def test_jsonl_topics_round_trip(pairs: list[tuple[str, str]], lang: str) -> None:
    lines = [json.dumps({"qid": qid, "query": query, "lang": lang}) for qid, query in pairs]
    with scratch() as directory:
        path = put(directory, "topics.jsonl", "\n".join(lines) + "\n")
        assert read_topics(path) == [
            Topic(qid, composed(query.strip()), lang=lang) for qid, query in pairs
        ]


@given(
    topics=st.lists(st.tuples(ids, phrases, phrases, phrases), min_size=1, max_size=5,
                    unique_by=lambda t: t[0]),
)
def test_hc4_topics_round_trip(topics: list[tuple[str, str, str, str]]) -> None:
    lines = [
        json.dumps({
            "topic_id": qid,
            "topics": [
                {"lang": "eng", "source": "original", "topic_title": title,
                 "topic_description": desc},
                {"lang": "zho", "source": "human translation", "topic_title": translated,
                 "topic_description": desc},
            ],
        })
        for qid, title, desc, translated in topics
    ]
    with scratch() as directory:
        path = put(directory, "topics.jsonl", "\n".join(lines) + "\n")
        assert read_topics(path) == [
            Topic(qid, title, desc, "", "eng") for qid, title, desc, _ in topics
        ]
        assert read_topics(path, lang="zho", source="human translation") == [
            Topic(qid, translated, desc, "", "zho") for qid, _, desc, translated in topics
        ]


@pytest.mark.parametrize("name", ["topics.tsv", "topics.txt", "topics.sgml", "topics.jsonl"])
@given(data=st.binary(max_size=300))
def test_topic_readers_on_bytes(name: str, data: bytes) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_topics(put(directory, name, data)))


@st.composite
def sgml_topic_text(draw: st.DrawFn) -> str:
    """Pieces of TREC SGML topics in any order, with tricky tokens between them."""
    pieces = st.one_of(
        st.sampled_from(["<top>", "</top>", "<num>", "Number:", "<title>", "</title>", "<desc>",
                         "<narr>", "<EN-title>", "<dom>", "<TOP>", "<num> Number: 1", "\n"]),
        tokens,
    )
    return draw(st.lists(pieces, max_size=20).map(" ".join))


@pytest.mark.parametrize("name", ["topics.tsv", "topics.txt", "topics.sgml"])
@given(
    text=st.one_of(st.text(max_size=200), token_lines(2), sgml_topic_text()),
    options=topic_options,
)
def test_topic_readers_on_text(name: str, text: str, options: dict[str, Any]) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_topics(put(directory, name, text), **options))


@given(
    text=st.one_of(
        st.text(max_size=200),
        jsonl_text(objects_with(TOPIC_KEYS)),
        jsonl_text(hc4_objects),
        jsonl_text(json_values),
    ),
    options=topic_options,
    source=st.one_of(st.none(), st.sampled_from(["original", "human translation"])),
)
def test_jsonl_topic_reader_on_wrong_json(
    text: str, options: dict[str, Any], source: str | None
) -> None:
    with scratch() as directory:
        path = put(directory, "topics.jsonl", text)
        only_clir_errors(lambda: read_topics(path, source=source, **options))


# ---------------------------------------------------------------------------------------------
# Corpora: JSON Lines, gzipped JSON Lines, TREC SGML
# ---------------------------------------------------------------------------------------------

unique_docs = st.lists(
    st.builds(Doc, ids, texts, st.one_of(st.just(""), texts)),
    min_size=1, max_size=8, unique_by=lambda doc: doc.id,
)


@given(docs=unique_docs)
def test_corpus_jsonl_round_trip(docs: list[Doc]) -> None:
    with scratch() as directory:
        path = directory / "corpus.jsonl"
        assert write_corpus_jsonl(path, docs) == len(docs)
        assert read_all_docs(path) == [composed_doc(doc) for doc in docs]


@given(docs=unique_docs)
def test_corpus_jsonl_gz_round_trip(docs: list[Doc]) -> None:
    lines = [json.dumps({"id": d.id, "contents": d.contents, "title": d.title}) for d in docs]
    with scratch() as directory:
        path = put(directory, "corpus.jsonl.gz", "\n".join(lines) + "\n")
        assert read_all_docs(path) == [composed_doc(doc) for doc in docs]


@given(
    docs=st.lists(st.tuples(words, phrases, st.one_of(st.just(""), phrases)), min_size=1,
                  max_size=6, unique_by=lambda d: d[0]),
)
def test_corpus_sgml_round_trip(docs: list[tuple[str, str, str]]) -> None:
    blocks = [
        f"<DOC>\n<DOCNO> {docid} </DOCNO>\n"
        + (f"<HEADLINE>{title}</HEADLINE>\n" if title else "")
        + f"<TEXT>\n{text}\n</TEXT>\n</DOC>\n"
        for docid, text, title in docs
    ]
    with scratch() as directory:
        path = put(directory, "corpus.trec", "".join(blocks))
        assert read_all_docs(path) == [
            Doc(docid, f"{title} {text}" if title else text, title) for docid, text, title in docs
        ]


@pytest.mark.parametrize("name", ["corpus.jsonl", "corpus.jsonl.gz", "corpus.trec"])
@given(data=st.binary(max_size=300))
def test_corpus_readers_on_bytes(name: str, data: bytes) -> None:
    with scratch() as directory:
        path = directory / name
        path.write_bytes(data)  # not compressed: a .gz of random bytes
        only_clir_errors(lambda: read_all_docs(path))


@given(data=st.binary(max_size=300), cut=st.integers(0, 400))
def test_corpus_reader_on_damaged_gzip(data: bytes, cut: int) -> None:
    with scratch() as directory:
        path = directory / "corpus.jsonl.gz"
        path.write_bytes(gzip.compress(data)[:cut])
        only_clir_errors(lambda: read_all_docs(path))


@st.composite
def sgml_doc_text(draw: st.DrawFn) -> str:
    pieces = st.one_of(
        st.sampled_from(["<DOC>", "</DOC>", "<DOCNO>", "</DOCNO>", "<TEXT>", "</TEXT>",
                         "<HEADLINE>", "</HEADLINE>", "<doc>", "<DOCNO>x</DOCNO>", "\n"]),
        tokens,
    )
    return draw(st.lists(pieces, max_size=20).map(" ".join))


@pytest.mark.parametrize("name", ["corpus.jsonl", "corpus.jsonl.gz", "corpus.trec"])
@given(
    text=st.one_of(
        st.text(max_size=200), jsonl_text(objects_with(DOC_KEYS)), jsonl_text(json_values),
        sgml_doc_text(),
    )
)
def test_corpus_readers_on_text(name: str, text: str) -> None:
    with scratch() as directory:
        path = put(directory, name, text)
        only_clir_errors(lambda: read_all_docs(path))


# ---------------------------------------------------------------------------------------------
# TSV dictionaries
# ---------------------------------------------------------------------------------------------


@given(
    pairs=st.lists(st.tuples(phrases, phrases), min_size=1, max_size=10,
                   unique_by=lambda p: (normalise_phrase(p[0]), p[1].casefold())),
    weighted=st.booleans(),
)
def test_dictionary_tsv_round_trip(pairs: list[tuple[str, str]], weighted: bool) -> None:
    lines = [f"{source}\t{target}" + ("\t0.5" if weighted else "") for source, target in pairs]
    with scratch() as directory:
        dictionary = read_dictionary_tsv(put(directory, "d.tsv", "\n".join(lines) + "\n"))
    expected: dict[str, list[str]] = {}
    for source, target in pairs:
        expected.setdefault(normalise_phrase(source), []).append(target)
    assert dictionary.weighted == weighted
    assert {key: dictionary.translations(key) for key in dictionary} == expected


@given(data=st.one_of(st.binary(max_size=300), st.text(max_size=200), token_lines(3)))
def test_dictionary_tsv_reader_on_anything(data: bytes | str) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: read_dictionary_tsv(put(directory, "d.tsv", data)))


# ---------------------------------------------------------------------------------------------
# .vec embeddings
# ---------------------------------------------------------------------------------------------

vec_words = st.text(
    st.characters(exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=8
).filter(lambda w: w == "".join(w.split()))


@given(
    words=st.lists(vec_words, min_size=1, max_size=6, unique=True),
    dim=st.integers(1, 5),
    data=st.data(),
)
def test_vec_round_trip(words: list[str], dim: int, data: st.DataObject) -> None:
    values = st.floats(width=32, allow_nan=False, allow_infinity=False)
    rows = data.draw(st.lists(st.lists(values, min_size=dim, max_size=dim),
                              min_size=len(words), max_size=len(words)))
    vectors = np.array(rows, dtype=np.float32).reshape(len(words), dim)
    with scratch() as directory:
        path = directory / "e.vec"
        save_vec(path, words, vectors)
        loaded = load_vec(path)
    assert loaded.words == words
    np.testing.assert_array_equal(loaded.vectors, vectors)


@given(
    data=st.one_of(st.binary(max_size=300), st.text(max_size=200), token_lines(4)),
    limit=st.one_of(st.none(), st.integers(0, 3)),
)
def test_vec_reader_on_anything(data: bytes | str, limit: int | None) -> None:
    with scratch() as directory:
        only_clir_errors(lambda: load_vec(put(directory, "e.vec", data), limit=limit))


# ---------------------------------------------------------------------------------------------
# Collection manifests
# ---------------------------------------------------------------------------------------------

languages = st.from_regex(r"[a-z]{2,3}(-[a-z0-9]{1,5})?", fullmatch=True)


@given(
    manifest=st.fixed_dictionaries(
        {"doc_lang": languages, "query_lang": languages},
        optional={
            "name": st.text(max_size=10),
            "splits": st.lists(st.sampled_from(["train", "dev", "test"]), unique=True),
            "counts": st.dictionaries(st.text(max_size=5), st.integers()),
        },
    )
)
def test_manifest_round_trip(manifest: dict[str, Any]) -> None:
    with scratch() as directory:
        put(directory, "corpus.jsonl", '{"id": "a", "contents": "x"}\n')
        put(directory, "manifest.json", json.dumps(manifest, indent=2))
        collection = open_collection(directory)
    assert collection.manifest == manifest
    assert (collection.doc_lang, collection.query_lang) == (
        manifest["doc_lang"], manifest["query_lang"]
    )


@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=200),
        objects_with(MANIFEST_KEYS).map(json_text),
        json_values.map(json_text),
    )
)
def test_manifest_reader_on_anything(data: bytes | str) -> None:
    def read() -> None:
        collection = open_collection(directory)
        collection.fingerprint()
        for split in collection.manifest.get("splits", []):
            collection.split_file("qrels", split)

    with scratch() as directory:
        put(directory, "corpus.jsonl", '{"id": "a", "contents": "x"}\n')
        put(directory, "manifest.json", data)
        only_clir_errors(read)


# ---------------------------------------------------------------------------------------------
# Index sidecars (clir-index.json)
# ---------------------------------------------------------------------------------------------

# An index records the analysis the toolkit uses for its language (the reader checks it).
_SIDECAR_ANALYSES = [("fr", "lucene"), ("en", "lucene"), ("zh", "jieba"), ("sw", "simple")]

def dense_records(encoder: str) -> st.SearchStrategy[DenseRecord]:
    return st.builds(
        DenseRecord,
        encoder=st.just(encoder),
        fingerprint=st.text("0123456789abcdef", min_size=16, max_size=16),
        dim=st.integers(1, 4096),
        documents=st.integers(0, 10**9),
        max_chars=st.integers(1, 10**6),
        file=st.just(f"dense-{encoder.encode().hex()[:16]:0>16}.npz"),
        hnsw=st.sampled_from([0, 16, 32]),
    )


def with_other_encoder(info: IndexInfo) -> st.SearchStrategy[IndexInfo]:
    """``info``, and, when it holds vectors, ``info`` holding the other encoder's too."""
    if info.dense is None:
        return st.just(info)
    other = "use-m3" if info.dense.encoder == "e5-small" else "e5-small"
    both = dense_records(other).map(lambda record: dataclasses.replace(info, other_dense=(record,)))
    return st.just(info) | both


index_infos = st.sampled_from(_SIDECAR_ANALYSES).flatmap(lambda analysis: st.builds(
    IndexInfo,
    language=st.just(analysis[0]),
    analyzer_kind=st.just(analysis[1]),
    analyzer_name=st.text(max_size=10),
    documents=st.integers(0, 10**9),
    collection=st.text(max_size=20),
    collection_sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
    store_raw=st.booleans(),
    created_by=st.text(max_size=20),
    seconds=st.floats(0, 1e6),
    shards=st.integers(1, 64),
    dense=st.none() | st.sampled_from(["use-m3", "e5-small"]).flatmap(dense_records),
)).flatmap(with_other_encoder)


@given(info=index_infos)
def test_index_sidecar_round_trip(info: IndexInfo) -> None:
    """What `clir index` writes in a sidecar is what searches read back."""
    with scratch() as directory:
        write_sidecar(directory, info)
        assert read_index_info(directory) == info


@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.text(max_size=200),
        objects_with(SIDECAR_KEYS).map(json_text),
        json_values.map(json_text),
    )
)
def test_index_sidecar_reader_on_anything(data: bytes | str) -> None:
    with scratch() as directory:
        put(directory, "clir-index.json", data)
        only_clir_errors(lambda: read_index_info(directory))


def test_index_sidecar_reader_known_failures() -> None:
    """Inputs that once escaped as other exceptions: invalid UTF-8, a huge integer, deep
    nesting."""
    escaping = []
    for data in [b'{"language": "fr\xff"}', '{"documents": ' + HUGE_INT + "}", DEEP]:
        with scratch() as directory:
            put(directory, "clir-index.json", data)
            try:
                read_index_info(directory)
            except ClirError:
                pass
            except Exception as exc:  # noqa: BLE001 (recorded, reported below)
                escaping.append(type(exc).__name__)
    assert escaping == []


# The placeholders must really produce what they stand for.
def test_json_placeholders() -> None:
    assert json_text(["@HUGE@"]) == f"[{HUGE_INT}]"
    assert json_text({"a": "@DEEP@"}) == '{"a": ' + DEEP + "}"
    assert json_text("\ud800") == '"\\ud800"'
    assert math.isnan(json.loads(json_text(float("nan"))))


# ---------------------------------------------------------------------------------------------
# Command-line options (declared parameters read from text)
# ---------------------------------------------------------------------------------------------


def _declared_options() -> list[Any]:
    from clir_toolkit.expand.feedback import FEEDBACK_PARAMS
    from clir_toolkit.rerank.candidates import SCORE_PARAMS
    from clir_toolkit.rerank.sentence.tuned_config import TUNED_PARAMS
    from clir_toolkit.rerank.word.train_config import TRAIN_PARAMS
    from clir_toolkit.search import BM25_PARAMS
    from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS

    tables = (BM25_PARAMS, TRANSLATION_PARAMS, FEEDBACK_PARAMS, TRAIN_PARAMS, TUNED_PARAMS,
              SCORE_PARAMS)  # fmt: skip
    return [param for table in tables for param in table.values() if param.type is not bool]


option_text = st.one_of(
    st.text(max_size=30),
    st.integers().map(str),
    st.integers(min_value=2**31 - 10, max_value=2**70).map(str),
    st.floats().map(repr),
    st.sampled_from(["nan", "-inf", "1e39", "-0", "0x10", "1_000", " 7 ", "٣"]),
)


@given(param=st.sampled_from(_declared_options()), text=option_text)
def test_an_option_reads_any_text_as_a_value_in_its_range_or_one_line(
    param: Any, text: str
) -> None:
    """What ``clir --OPTION TEXT`` gets: a value its declaration accepts (a number within the
    range every number has), or a ParamError in one line: never another exception, so never
    a value that fails later inside Java or torch."""
    from clir_toolkit.params import LARGEST_INT, LARGEST_NUMBER, ParamError

    try:
        value = param.parse(text)
    except ParamError as exc:
        assert "\n" not in str(exc) and exc.problem.startswith("expected ")
        return
    one = dataclasses.replace(param, shape="one", optional=False)
    assert one.check(value) == value
    if isinstance(value, int):
        assert abs(value) <= LARGEST_INT
    if isinstance(value, float):
        assert math.isfinite(value) and abs(value) <= LARGEST_NUMBER
