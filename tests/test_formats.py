"""Readers and writers of topics, qrels, runs and corpora: formats, round trips, errors."""

from __future__ import annotations

import gzip
import inspect
import json
import re
from pathlib import Path

import pytest

from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.formats import (
    Doc,
    Qrel,
    RunRow,
    Topic,
    count_lines,
    iter_corpus,
    read_qrels,
    read_run,
    read_topics,
    sort_run,
    write_corpus_jsonl,
    write_qrels,
    write_ranked_run,
    write_run,
    write_topics_tsv,
)


def write(directory: Path, name: str, content: str | bytes) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8"))
    else:
        path.write_bytes(content)
    return path


def at(path: Path, line: int | None, message: str) -> str:
    """A regex matching the start of an error message: ``file:line: message``."""
    where = f"{path}:{line}" if line is not None else f"{path}"
    return "^" + re.escape(f"{where}: {message}")


# ---------------------------------------------------------------------------------------------
# Topics: TSV
# ---------------------------------------------------------------------------------------------


def test_tsv_topics(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "101\thow to mount a usb drive\n102\tcopy files \n")
    assert read_topics(path, lang="en") == [
        Topic("101", "how to mount a usb drive", lang="en"),
        Topic("102", "copy files", lang="en"),
    ]


def test_tsv_topics_with_bom_and_crlf(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", b"\xef\xbb\xbf101\tune requ\xc3\xaate\r\n102\tdeux\r\n")
    assert [(t.qid, t.query) for t in read_topics(path)] == [
        ("101", "une requête"),
        ("102", "deux"),
    ]


def test_a_byte_order_mark_inside_a_run_names_its_line(tmp_path: Path) -> None:
    """Two runs joined with cat: the second's mark would hide in its first qid, whose query
    would then score 0 without a word."""
    first = b"\xef\xbb\xbfq1 Q0 d1 1 2.0 a\n"
    path = write(tmp_path, "joined.trec", first + first.replace(b"q1", b"q2"))
    with pytest.raises(FormatError, match=r"joined.trec:2: a byte-order mark starts the line"):
        read_run(path)
    assert read_run(write(tmp_path, "one.trec", first))[0].qid == "q1"


def test_txt_topics_with_tab_are_tsv(tmp_path: Path) -> None:
    path = write(tmp_path, "queries.txt", "7\tseven\n")
    assert read_topics(path) == [Topic("7", "seven")]


def test_tsv_hash_line_is_a_topic_not_a_comment(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "#1\tfirst\n2\tsecond\n")
    assert [t.qid for t in read_topics(path)] == ["#1", "2"]


def test_tsv_wrong_column_count(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\tone\n2\ttwo\textra\n")
    with pytest.raises(FormatError, match=at(path, 2, "expected 2 tab-separated columns")):
        read_topics(path)


def test_tsv_empty_qid(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\tone\n\ttwo\n")
    with pytest.raises(FormatError, match=at(path, 2, "empty qid")):
        read_topics(path)


def test_tsv_empty_query(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\t  \n")
    with pytest.raises(FormatError, match=at(path, 1, "empty query for topic 1")):
        read_topics(path)


def test_tsv_duplicate_qid(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\tone\n2\ttwo\n1\tagain\n")
    with pytest.raises(FormatError, match=at(path, 3, "topic 1 appears twice (first at line 1)")):
        read_topics(path)


def test_tsv_blank_line_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\tone\n\n2\ttwo\n")
    with pytest.raises(FormatError, match=at(path, 2, "blank line")):
        read_topics(path)


def test_topics_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", b"1\tone\n2\ttwo\n3\tcaf\xe9\n")
    with pytest.raises(FormatError, match=at(path, 3, "invalid UTF-8")):
        read_topics(path)


def test_topics_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "")
    expected = f"{path}: the file is empty (expected one 'qid<TAB>query' line per topic)"
    with pytest.raises(FormatError, match="^" + re.escape(expected) + "$"):
        read_topics(path)


def test_topics_unknown_format_lists_accepted_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.txt", "101 how to mount\n")
    with pytest.raises(FormatError, match=at(path, None, "unknown topic format")) as info:
        read_topics(path)
    assert "qid<TAB>query" in str(info.value) and "<top>" in str(info.value)
    assert ".jsonl" in str(info.value)


def test_topics_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.tsv"
    with pytest.raises(FormatError, match=at(path, None, "cannot read the file")):
        read_topics(path)


def test_topics_unknown_field_is_a_usage_error(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\tone\n")
    with pytest.raises(UsageError, match="narrative"):
        read_topics(path, field="narrative")


def test_source_on_a_file_without_translations_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "1\tone\n")
    with pytest.raises(FormatError, match="selects a translation"):
        read_topics(path, source="human translation")


def test_write_topics_tsv_round_trip_replaces_tabs_and_newlines(tmp_path: Path) -> None:
    path = tmp_path / "out" / "topics.tsv"
    topics = [Topic("1", "tab\there"), Topic("2", "two\nlines\r\n"), Topic("3", "plain")]
    write_topics_tsv(path, topics)
    assert path.read_text(encoding="utf-8") == "1\ttab here\n2\ttwo lines\n3\tplain\n"
    assert read_topics(path) == [Topic("1", "tab here"), Topic("2", "two lines"), topics[2]]


def test_write_topics_tsv_rejects_duplicates_and_keeps_old_file(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.tsv", "old\tcontent\n")
    with pytest.raises(FormatError, match=at(path, None, "topic 1 appears twice")):
        write_topics_tsv(path, [Topic("1", "a"), Topic("1", "b")])
    assert path.read_text(encoding="utf-8") == "old\tcontent\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topics.tsv"]


# ---------------------------------------------------------------------------------------------
# Topics: TREC SGML
# ---------------------------------------------------------------------------------------------

UNCLOSED_SGML = """
<top>
<num> Number: 401
<title> foreign minorities,
   Germany

<desc> Description:
What language and cultural differences impede the integration
of foreign minorities in Germany?

<narr> Narrative:
A relevant document will focus on the causes.
</top>

<top>
<num> Number: 402
<title> behavioral genetics
<desc> Description:
What is happening in the field of behavioral genetics?
<narr> Narrative:
Relevant documents include research.
</top>
"""

CLOSED_SGML = (
    "<top><num>C041</num><title>Pesticides in baby food</title>"
    "<desc>Find reports on pesticides.</desc><narr>Relevant: any.</narr></top>\n"
)


def test_sgml_unclosed_tags(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.401-450.txt", UNCLOSED_SGML)
    topics = read_topics(path)
    assert topics[0] == Topic(
        "401",
        "foreign minorities, Germany",
        "What language and cultural differences impede the integration "
        "of foreign minorities in Germany?",
        "A relevant document will focus on the causes.",
    )
    assert [t.qid for t in topics] == ["401", "402"]
    assert topics[1].query == "behavioral genetics"


def test_sgml_closed_tags(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.sgml", CLOSED_SGML)
    assert read_topics(path, lang="en") == [
        Topic(
            "C041", "Pesticides in baby food", "Find reports on pesticides.", "Relevant: any.", "en"
        )
    ]


def test_sgml_field_selection(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.txt", UNCLOSED_SGML)
    assert read_topics(path, field="desc")[1].query == (
        "What is happening in the field of behavioral genetics?"
    )
    assert read_topics(path, field="title+desc")[1].query == (
        "behavioral genetics What is happening in the field of behavioral genetics?"
    )


def test_sgml_unclosed_top(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.txt", "<top>\n<num> Number: 1\n<title> a\n")
    with pytest.raises(FormatError, match=at(path, 1, "<top> is never closed")):
        read_topics(path)


def test_sgml_duplicate_topic(tmp_path: Path) -> None:
    text = "<top>\n<num> 1\n<title> a\n</top>\n<top>\n<num> 1\n<title> b\n</top>\n"
    path = write(tmp_path, "topics.txt", text)
    with pytest.raises(FormatError, match=at(path, 5, "topic 1 appears twice (first at line 1)")):
        read_topics(path)


def test_sgml_missing_title(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.txt", "<top>\n<num> 9\n<desc> only a description\n</top>\n")
    with pytest.raises(FormatError, match=at(path, 1, "empty query for topic 9")):
        read_topics(path)
    assert read_topics(path, field="desc")[0].query == "only a description"


# ---------------------------------------------------------------------------------------------
# Topics: JSON Lines
# ---------------------------------------------------------------------------------------------


def test_jsonl_simple_topics_accept_each_key_spelling(tmp_path: Path) -> None:
    lines = [
        {"qid": "1", "query": "one"},
        {"query_id": 2, "title": "two"},
        {"id": "3", "text": "three", "lang": "fr"},
    ]
    path = write(tmp_path, "topics.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    assert read_topics(path, lang="en") == [
        Topic("1", "one", lang="en"),
        Topic("2", "two", lang="en"),
        Topic("3", "three", lang="fr"),
    ]


def test_jsonl_invalid_json(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.jsonl", '{"qid": "1", "query": "a"}\n{"qid": "2", "query": \n')
    with pytest.raises(FormatError, match=at(path, 2, "invalid JSON")):
        read_topics(path)


def test_jsonl_empty_query(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.jsonl", '{"qid": "1", "query": ""}\n')
    with pytest.raises(FormatError, match=at(path, 1, "empty query for topic 1")):
        read_topics(path)


def test_jsonl_duplicate_qid(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.jsonl", '{"qid": "1", "query": "a"}\n{"qid": 1, "query": "b"}\n')
    with pytest.raises(FormatError, match=at(path, 2, "topic 1 appears twice (first at line 1)")):
        read_topics(path)


def hc4_line(topic_id: str, *, variant: bool = False) -> str:
    title, desc = ("title", "description") if variant else ("topic_title", "topic_description")
    record = {
        "topic_id": topic_id,
        "topics": [
            {"lang": "eng", "source": "original", title: f"ev {topic_id}", desc: "English desc"},
            {"lang": "zho", "source": "human translation", title: f"电动车 {topic_id}", desc: "人"},
            {
                "lang": "zho",
                "source": "google translation",
                title: f"电动汽车 {topic_id}",
                desc: "机",
            },
        ],
        "narratives": {"eng": {"very_valuable": "Very.", "not_valuable": "Not."}, "zho": "中文"},
    }
    return json.dumps(record, ensure_ascii=False) + "\n"


def test_hc4_topics_default_to_the_original(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.jsonl", hc4_line("1") + hc4_line("2"))
    topics = read_topics(path)
    assert topics[0] == Topic("1", "ev 1", "English desc", "Very. Not.", "eng")
    assert [t.qid for t in topics] == ["1", "2"]


def test_hc4_topics_default_to_the_original_wherever_it_is_listed(tmp_path: Path) -> None:
    record = {
        "topic_id": "9",
        "topics": [
            {"lang": "rus", "source": "human translation", "topic_title": "выборы"},
            {"lang": "eng", "source": "original", "topic_title": "elections"},
        ],
    }
    path = write(tmp_path, "topics.jsonl", json.dumps(record) + "\n")
    assert read_topics(path)[0] == Topic("9", "elections", lang="eng")
    assert read_topics(path, lang="rus")[0] == Topic("9", "выборы", lang="rus")


def test_hc4_topics_select_human_or_machine_translation(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.jsonl", hc4_line("1"))
    human = read_topics(path, lang="zho", source="human translation")[0]
    machine = read_topics(path, lang="zho", source="google translation")[0]
    assert (human.query, human.lang, human.narrative) == ("电动车 1", "zho", "中文")
    assert machine.query == "电动汽车 1"
    assert read_topics(path, lang="zho", field="title+desc")[0].query == "电动车 1 人"


def test_hc4_variant_keys_title_description(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.json", hc4_line("5", variant=True))
    topic = read_topics(path, lang="zho", source="google translation", field="desc")[0]
    assert (topic.qid, topic.query, topic.description) == ("5", "机", "机")


def test_hc4_missing_translation_lists_available_pairs(tmp_path: Path) -> None:
    path = write(tmp_path, "topics.jsonl", hc4_line("1") + hc4_line("2"))
    with pytest.raises(
        FormatError, match=at(path, 1, "topic 1 has no version with lang='fas'")
    ) as info:
        read_topics(path, lang="fas")
    message = str(info.value)
    assert "(eng, original)" in message
    assert "(zho, human translation)" in message and "(zho, google translation)" in message


# ---------------------------------------------------------------------------------------------
# Qrels
# ---------------------------------------------------------------------------------------------


def test_qrels_round_trip(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "1 0 d1 2\n1 0 d2 0\n2\tQ0\td1\t-1\n")
    qrels = read_qrels(path)
    assert qrels == [Qrel("1", "d1", 2), Qrel("1", "d2", 0), Qrel("2", "d1", -1, "Q0")]
    out = tmp_path / "copy.txt"
    write_qrels(out, qrels)
    assert out.read_text(encoding="utf-8") == "1 0 d1 2\n1 0 d2 0\n2 0 d1 -1\n"
    assert [(q.qid, q.docid, q.relevance) for q in read_qrels(out)] == [
        (q.qid, q.docid, q.relevance) for q in qrels
    ]


@pytest.mark.parametrize(("line", "found"), [("1 0 d2", 3), ("1 0 d2 1 extra", 5)])
def test_qrels_column_count(tmp_path: Path, line: str, found: int) -> None:
    path = write(tmp_path, "qrels.txt", f"1 0 d1 1\n{line}\n")
    expected = f"expected 4 columns (qid iteration docid relevance), found {found}"
    with pytest.raises(FormatError, match=at(path, 2, expected)):
        read_qrels(path)


@pytest.mark.parametrize("grade", ["high", "1.5", "1_0"])
def test_qrels_relevance_must_be_an_integer(tmp_path: Path, grade: str) -> None:
    path = write(
        tmp_path, "qrels.txt", "".join(f"1 0 d{i} 1\n" for i in range(6)) + f"1 0 x {grade}\n"
    )
    with pytest.raises(FormatError, match=at(path, 7, f"relevance '{grade}' is not an integer")):
        read_qrels(path)


def test_qrels_duplicate_judgement(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "1 0 d1 1\n1 0 d1 0\n")
    with pytest.raises(FormatError, match=at(path, 2, "docid d1 is judged twice for query 1")):
        read_qrels(path)


def test_qrels_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "")
    with pytest.raises(FormatError, match=at(path, None, "the file is empty")):
        read_qrels(path)


def test_qrels_invalid_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", b"1 0 d1 1\n1 0 d\xff 1\n")
    with pytest.raises(FormatError, match=at(path, 2, "invalid UTF-8")):
        read_qrels(path)


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def test_read_run(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", "1 Q0 d1 1 12.5 bm25\n1 Q0 d2 2 -3e-2 bm25\n")
    assert read_run(path) == [
        RunRow("1", "d1", 1, 12.5, "bm25"),
        RunRow("1", "d2", 2, -0.03, "bm25"),
    ]


def test_run_column_count(tmp_path: Path) -> None:
    path = write(tmp_path, "runs/x.trec", "1 Q0 d1 1 3.0 t\n1 Q0 d2 2 2.0 t\n1 Q0 d3 3 1.0\n")
    expected = f"{path}:3: expected 6 columns (qid Q0 docid rank score tag), found 5"
    with pytest.raises(FormatError, match="^" + re.escape(expected) + "$"):
        read_run(path)


def test_run_rank_must_be_an_integer(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", "1 Q0 d1 1.0 3.0 t\n")
    with pytest.raises(FormatError, match=at(path, 1, "rank '1.0' is not an integer")):
        read_run(path)


@pytest.mark.parametrize(
    ("score", "problem"),
    [
        ("high", "is not a number"),
        ("nan", "is not a finite number"),
        ("-inf", "is not a finite number"),
        ("1e999", "is not a finite number"),
    ],
)
def test_run_score_must_be_a_finite_number(tmp_path: Path, score: str, problem: str) -> None:
    path = write(tmp_path, "x.trec", f"1 Q0 d1 1 2.0 t\n1 Q0 d2 2 {score} t\n")
    with pytest.raises(FormatError, match=at(path, 2, f"score '{score}' {problem}")):
        read_run(path)


def test_run_duplicate_docid(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", "1 Q0 d1 1 2.0 t\n2 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n")
    expected = "docid d1 appears twice for query 1 (first at line 1)"
    with pytest.raises(FormatError, match=at(path, 3, expected)):
        read_run(path)


def test_run_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", "")
    with pytest.raises(FormatError, match=at(path, None, "the file is empty")):
        read_run(path)


def test_run_invalid_utf8(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", b"1 Q0 d1 1 2.0 t\n1 Q0 \xc3\x28 2 1.0 t\n")
    with pytest.raises(FormatError, match=at(path, 2, "invalid UTF-8")):
        read_run(path)


def test_sort_run_orders_like_trec_eval_and_renumbers() -> None:
    rows = [
        RunRow("q2", "a", 7, 1.0),
        RunRow("q1", "b", 1, 5.0),
        RunRow("q1", "a", 9, 5.0),  # tie with b: trec_eval puts the larger docid first
        RunRow("q1", "c", 2, 9.0),
        RunRow("q2", "b", 3, 2.0),
        RunRow("q1", "d", 4, 5.0),
    ]
    assert [(r.qid, r.docid, r.rank) for r in sort_run(rows)] == [
        ("q2", "b", 1),
        ("q2", "a", 2),
        ("q1", "c", 1),
        ("q1", "d", 2),
        ("q1", "b", 3),
        ("q1", "a", 4),
    ]


def test_write_run_file_and_round_trip(tmp_path: Path) -> None:
    rows = [
        RunRow("q1", "a", 1, 1.5, "x"),
        RunRow("q1", "b", 5, 2.0, "x"),
        RunRow("0", "c", 3, 0.0),
    ]
    path = tmp_path / "runs" / "x.trec"
    write_run(path, rows)
    assert path.read_text(encoding="utf-8") == (
        "q1 Q0 b 1 2.0 x\nq1 Q0 a 2 1.5 x\n0 Q0 c 1 0.0 clir\n"
    )
    assert read_run(path) == sort_run(rows)


def test_write_run_tag_overrides_row_tags(tmp_path: Path) -> None:
    path = tmp_path / "x.trec"
    write_run(path, [RunRow("1", "a", 1, 1.0, "old"), RunRow("1", "b", 2, 0.5, "other")], tag="new")
    assert {row.tag for row in read_run(path)} == {"new"}


def test_write_run_keeps_scores_that_differ_below_six_decimals(tmp_path: Path) -> None:
    # A reranker's probabilities: %.6f would print both as 0.000000 and trec_eval would then
    # rank z above a by docid, reversing the system's decision.
    rows = [RunRow("1", "a", 1, 3.2e-9), RunRow("1", "z", 2, 3.1e-9)]
    path = tmp_path / "x.trec"
    write_run(path, rows)
    back = read_run(path)
    assert [r.docid for r in back] == ["a", "z"]
    assert [r.score for r in back] == [3.2e-9, 3.1e-9]
    assert sort_run(back) == back


def test_write_run_is_byte_identical_across_writes(tmp_path: Path) -> None:
    rows = [RunRow(f"q{i % 3}", f"d{i}", 0, float(i % 4) / 3) for i in range(30)]
    first, second = tmp_path / "a.trec", tmp_path / "b.trec"
    write_run(first, rows)
    write_run(second, rows)
    assert first.read_bytes() == second.read_bytes()
    # The same rows in another order within each query give the same file.
    shuffled = sorted(rows, key=lambda row: (row.qid, -int(row.docid[1:])))
    write_run(second, shuffled)
    assert first.read_bytes() == second.read_bytes()


def test_write_run_duplicate_leaves_destination_untouched(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", "old content\n")
    rows = [RunRow("1", "a", 1, 2.0), RunRow("1", "b", 2, 1.0), RunRow("1", "a", 3, 0.5)]
    with pytest.raises(FormatError, match=at(path, None, "docid a appears twice for query 1")):
        write_run(path, rows)
    assert path.read_text(encoding="utf-8") == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.trec"]


def test_write_run_rejects_whitespace_in_ids_and_non_finite_scores(tmp_path: Path) -> None:
    path = tmp_path / "x.trec"
    with pytest.raises(FormatError, match="docid 'a b' contains whitespace"):
        write_run(path, [RunRow("1", "a b", 1, 1.0)])
    with pytest.raises(FormatError, match="not a finite number"):
        write_run(path, [RunRow("1", "a", 1, float("nan"))])
    assert not path.exists()


def test_write_run_order_matches_trec_eval_on_ties(tmp_path: Path) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rows = [RunRow("1", f"d{i}", 0, 1.0) for i in range(5)]
    path = tmp_path / "x.trec"
    write_run(path, rows)
    top = read_run(path)[0].docid
    for relevant in (f"d{i}" for i in range(5)):
        evaluator = pytrec_eval.RelevanceEvaluator({"1": {relevant: 1}}, {"P_1"})
        run = {"1": {row.docid: row.score for row in read_run(path)}}
        assert evaluator.evaluate(run)["1"]["P_1"] == (1.0 if relevant == top else 0.0)


# ---------------------------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------------------------


def test_corpus_jsonl_contents_and_title_text(tmp_path: Path) -> None:
    lines = [
        {"id": "a", "contents": "alpha text"},
        {"docid": "b", "contents": "beta", "title": "Beta"},
        {"doc_id": 3, "title": "Gamma", "text": "gamma text"},
        {"id": "d", "text": "no title"},
    ]
    path = write(tmp_path, "corpus.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    assert list(iter_corpus(path)) == [
        Doc("a", "alpha text"),
        Doc("b", "beta", "Beta"),
        Doc("3", "Gamma\ngamma text", "Gamma"),
        Doc("d", "no title"),
    ]


def test_corpus_gzip(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write('{"id": "a", "contents": "été"}\n{"id": "b", "contents": "hiver"}\n')
    assert list(iter_corpus(path)) == [Doc("a", "été"), Doc("b", "hiver")]
    assert count_lines(path) == 2


def test_corpus_trec_sgml(tmp_path: Path) -> None:
    text = (
        "<DOC>\n<DOCNO> LA010189-0001 </DOCNO>\n<HEADLINE>\n<P>Big news</P>\n</HEADLINE>\n"
        "<TEXT>\n<P>First paragraph.</P>\n\n<P>Second.</P>\n</TEXT>\n</DOC>\n"
        "<DOC><DOCNO>FT-2</DOCNO><TEXT>one line</TEXT></DOC>\n"
    )
    path = write(tmp_path, "la.trec", text)
    assert list(iter_corpus(path)) == [
        Doc("LA010189-0001", "Big news First paragraph. Second.", "Big news"),
        Doc("FT-2", "one line"),
    ]


def test_corpus_is_a_lazy_generator(tmp_path: Path) -> None:
    path = write(tmp_path, "corpus.jsonl", '{"id": "a", "contents": "x"}\n{"id": "b", "co\n')
    docs = iter_corpus(path)
    assert inspect.isgenerator(docs)
    assert next(docs) == Doc("a", "x")
    with pytest.raises(FormatError, match=at(path, 2, "invalid JSON")):
        next(docs)


def test_corpus_empty_id(tmp_path: Path) -> None:
    path = write(
        tmp_path, "corpus.jsonl", '{"id": "a", "contents": "x"}\n{"id": " ", "contents": "y"}\n'
    )
    with pytest.raises(FormatError, match=at(path, 2, "empty document id")):
        list(iter_corpus(path))


def test_corpus_id_longer_than_the_limit_is_refused_with_its_line(tmp_path: Path) -> None:
    long_id = "x" * 40_000  # a document's text pasted into its id: Lucene cannot index it
    path = write(
        tmp_path,
        "corpus.jsonl",
        '{"id": "a", "contents": "x"}\n' + json.dumps({"id": long_id, "contents": "y"}) + "\n",
    )
    with pytest.raises(FormatError, match=at(path, 2, "document id 'xxxx")) as info:
        list(iter_corpus(path))
    message = str(info.value)
    assert "(40,000 characters) is longer than 1,000 characters" in message
    assert len(message) < 300


@pytest.mark.parametrize("control", ["\x00", "\x01", "\x1b", "\x7f", "\x9b"])
def test_corpus_id_with_a_control_character_is_refused(tmp_path: Path, control: str) -> None:
    path = write(tmp_path, "corpus.jsonl", json.dumps({"id": f"d{control}1", "contents": "x"}))
    code = f"U+{ord(control):04X}"
    with pytest.raises(FormatError, match=at(path, 1, "document id ")) as info:
        list(iter_corpus(path))
    assert f"contains the control character {code}" in str(info.value)


def test_sgml_docno_with_a_control_character_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "c.sgml", "<DOC>\n<DOCNO>ab\x07c</DOCNO>\none\n</DOC>\n")
    with pytest.raises(FormatError, match=at(path, 1, "document id 'ab\\x07c' contains the "
                                                      "control character U+0007")):
        list(iter_corpus(path))


def test_run_docid_with_a_control_character_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "run.trec", "q1 Q0 d\x001 1 2.5 tag\n")
    with pytest.raises(FormatError, match=at(path, 1, "docid 'd\\x001' contains the control")):
        read_run(path)


def test_corpus_missing_text_names_accepted_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "corpus.jsonl", '{"id": "a", "body": "x"}\n')
    with pytest.raises(FormatError, match=at(path, 1, "document a has no text")) as info:
        list(iter_corpus(path))
    assert "'contents'" in str(info.value) and "'text'" in str(info.value)


def test_corpus_invalid_utf8(tmp_path: Path) -> None:
    path = write(
        tmp_path, "corpus.jsonl", b'{"id": "a", "contents": "x"}\n{"id": "b", "contents": "\xe9"}\n'
    )
    with pytest.raises(FormatError, match=at(path, 2, "invalid UTF-8")):
        list(iter_corpus(path))


def test_corpus_duplicate_id(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "corpus.jsonl",
        '{"id": "a", "contents": "x"}\n'
        '{"id": "b", "contents": "y"}\n'
        '{"id": "a", "contents": "z"}\n',
    )
    with pytest.raises(
        FormatError, match=at(path, 3, "document id a appears twice (first at line 1)")
    ):
        list(iter_corpus(path))


def test_corpus_duplicate_docno_in_sgml(tmp_path: Path) -> None:
    text = "<DOC>\n<DOCNO>x</DOCNO>\none\n</DOC>\n<DOC>\n<DOCNO>x</DOCNO>\ntwo\n</DOC>\n"
    path = write(tmp_path, "c.sgml", text)
    with pytest.raises(
        FormatError, match=at(path, 5, "document id x appears twice (first at line 1)")
    ):
        list(iter_corpus(path))


def test_corpus_sgml_unclosed_doc(tmp_path: Path) -> None:
    path = write(
        tmp_path, "c.sgml", "<DOC>\n<DOCNO>x</DOCNO>\none\n</DOC>\n<DOC>\n<DOCNO>y</DOCNO>\n"
    )
    docs = iter_corpus(path)
    assert next(docs).id == "x"
    with pytest.raises(FormatError, match=at(path, 5, "<DOC> is never closed")):
        next(docs)


def test_corpus_empty_file(tmp_path: Path) -> None:
    path = write(tmp_path, "corpus.jsonl", "")
    with pytest.raises(FormatError, match=at(path, None, "the file is empty")):
        list(iter_corpus(path))


def test_corpus_unknown_format(tmp_path: Path) -> None:
    path = write(tmp_path, "corpus.csv", "id,contents\n")
    with pytest.raises(FormatError, match=at(path, None, "unknown corpus format")) as info:
        list(iter_corpus(path))
    assert "<DOC>" in str(info.value) and ".jsonl" in str(info.value)


def test_write_corpus_jsonl_round_trip(tmp_path: Path) -> None:
    docs = [Doc("a", "première ligne\nseconde", "Titre"), Doc("b", "plain")]
    path = tmp_path / "data" / "corpus.jsonl"
    assert write_corpus_jsonl(path, iter(docs)) == 2
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[1] == '{"id": "b", "contents": "plain"}'
    assert "première" in text  # not escaped to \\u00e8
    assert list(iter_corpus(path)) == docs


def test_write_corpus_jsonl_duplicate_keeps_old_file(tmp_path: Path) -> None:
    path = write(tmp_path, "corpus.jsonl", '{"id": "old", "contents": "kept"}\n')
    with pytest.raises(FormatError, match=at(path, None, "document id a appears twice")):
        write_corpus_jsonl(path, [Doc("a", "x"), Doc("a", "y")])
    assert list(iter_corpus(path)) == [Doc("old", "kept")]
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.jsonl"]


def test_count_lines(tmp_path: Path) -> None:
    assert count_lines(write(tmp_path, "a.txt", "1\n2\n3")) == 3
    assert count_lines(write(tmp_path, "b.txt", "1\n2\n")) == 2
    assert count_lines(write(tmp_path, "c.txt", "")) == 0


# ---------------------------------------------------------------------------------------------
# Pathological input: every reader answers with one FormatError naming file:line
# ---------------------------------------------------------------------------------------------

HUGE = "9" * 5000  # more digits than Python's int() reads (4,300)


def test_run_rank_with_more_digits_than_python_reads(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", f"1 Q0 d1 {HUGE} 3.0 t\n")
    with pytest.raises(FormatError, match=at(path, 1, "rank '99999")) as info:
        read_run(path)
    assert "out of range" in str(info.value) and len(str(info.value)) < 300


@pytest.mark.parametrize("grade", [HUGE, "2147483648", "-2147483649"])
def test_qrels_grade_beyond_a_c_int(tmp_path: Path, grade: str) -> None:
    path = write(tmp_path, "qrels.txt", f"1 0 d1 1\n1 0 d2 {grade}\n")
    with pytest.raises(FormatError, match=at(path, 2, f"relevance {grade[:20]!r}"[:-1])) as info:
        read_qrels(path)
    assert "out of range" in str(info.value) and "pytrec_eval" in str(info.value)


def test_qrels_grades_at_the_c_int_limits_are_read(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels.txt", "1 0 d1 2147483647\n1 0 d2 -2147483648\n")
    assert [q.relevance for q in read_qrels(path)] == [2**31 - 1, -(2**31)]


@pytest.mark.parametrize("grade", [2**31, 1.5, True])
def test_write_qrels_refuses_what_read_qrels_refuses(tmp_path: Path, grade: object) -> None:
    path = write(tmp_path, "qrels.txt", "1 0 old 1\n")
    with pytest.raises(FormatError, match=at(path, None, "relevance")):
        write_qrels(path, [Qrel("1", "d1", grade)])  # type: ignore[arg-type]
    assert path.read_text(encoding="utf-8") == "1 0 old 1\n"


def test_jsonl_integer_id_with_more_digits_than_python_reads(tmp_path: Path) -> None:
    text = '{"qid": "1", "query": "a"}\n{"qid": ' + HUGE + ', "query": "b"}\n'
    path = write(tmp_path, "t.jsonl", text)
    with pytest.raises(FormatError, match=at(path, 2, "JSON integer with 5000 digits")):
        read_topics(path)


@pytest.mark.parametrize("name", ["topics.jsonl", "corpus.jsonl"])
def test_jsonl_nested_a_thousand_levels(tmp_path: Path, name: str) -> None:
    deep = "[" * 1000 + "]" * 1000
    path = write(tmp_path, name, '{"id": "1", "qid": "1", "query": "q", "contents": "c"}\n'
                 f'{{"id": "2", "qid": "2", "query": "q", "contents": "c", "x": {deep}}}\n')
    with pytest.raises(FormatError, match=at(path, 2, "JSON nested")):
        read_topics(path) if name.startswith("topics") else list(iter_corpus(path))


def test_jsonl_nested_less_than_python_limit_but_too_deep(tmp_path: Path) -> None:
    deep = "[" * 200 + "]" * 200
    path = write(tmp_path, "t.jsonl", f'{{"qid": "1", "query": "q", "x": {deep}}}\n')
    with pytest.raises(FormatError, match=at(path, 1, "JSON nested more than 64 levels")):
        read_topics(path)


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"qid": "1", "query": "a\\ud800b"}', "'query'"),
        ('{"qid": "1\\udfff", "query": "a"}', "'qid'"),
        ('{"qid": "1", "query": "a", "\\ud800": 1}', "a key"),
        ('{"topic_id": "1", "topics": [{"lang": "en", "topic_title": "\\ud800"}]}',
         "'topics[0].topic_title'"),
    ],
)
def test_jsonl_topics_lone_surrogate(tmp_path: Path, line: str, field: str) -> None:
    path = write(tmp_path, "t.jsonl", line + "\n")
    with pytest.raises(FormatError, match=at(path, 1, "lone surrogate \\u")) as info:
        read_topics(path)
    assert f"in {field}" in str(info.value) or f"in field {field}" in str(info.value)


def test_corpus_lone_surrogate(tmp_path: Path) -> None:
    text = '{"id": "a", "contents": "x"}\n{"id": "b", "contents": "\\udc80"}\n'
    path = write(tmp_path, "c.jsonl", text)
    expected = "lone surrogate \\udc80 in field 'contents'"
    with pytest.raises(FormatError, match=at(path, 2, expected)):
        list(iter_corpus(path))


def test_json_surrogate_pair_is_one_character(tmp_path: Path) -> None:
    path = write(tmp_path, "c.jsonl", '{"id": "a", "contents": "\\ud83d\\ude00 ok"}\n')
    assert list(iter_corpus(path)) == [Doc("a", "\U0001f600 ok")]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_jsonl_nan_is_not_json(tmp_path: Path, constant: str) -> None:
    path = write(tmp_path, "c.jsonl", f'{{"id": "a", "contents": "x", "score": {constant}}}\n')
    with pytest.raises(FormatError, match=at(path, 1, "invalid JSON")):
        list(iter_corpus(path))


@pytest.mark.parametrize("contents", ["", "   ", "\\n\\t", "\\u0001 "])
def test_corpus_document_without_text_is_named(tmp_path: Path, contents: str) -> None:
    path = write(tmp_path, "c.jsonl", '{"id": "a", "contents": "x"}\n'
                 f'{{"id": "doc-7", "contents": "{contents}"}}\n')
    with pytest.raises(FormatError, match=at(path, 2, "document doc-7 has empty contents")):
        list(iter_corpus(path))


def test_corpus_sgml_document_without_text_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "c.trec", "<DOC><DOCNO>a</DOCNO>x</DOC>\n<DOC>\n<DOCNO>FT-9</DOCNO>\n"
                 "<TEXT> </TEXT>\n</DOC>\n")
    with pytest.raises(FormatError, match=at(path, 2, "document FT-9 has empty contents")):
        list(iter_corpus(path))


@pytest.mark.parametrize(
    "doc", [Doc("a", " \n"), Doc("a\ud800", "x"), Doc("a", "x\udfff"), Doc("a", "x", "\ud800")]
)
def test_write_corpus_refuses_what_iter_corpus_refuses(tmp_path: Path, doc: Doc) -> None:
    path = write(tmp_path, "corpus.jsonl", '{"id": "old", "contents": "kept"}\n')
    with pytest.raises(FormatError, match=at(path, None, "")):
        write_corpus_jsonl(path, [doc])
    assert list(iter_corpus(path)) == [Doc("old", "kept")]


def test_writers_refuse_lone_surrogates(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="lone surrogate"):
        write_topics_tsv(tmp_path / "t.tsv", [Topic("1", "a\ud800")])
    with pytest.raises(FormatError, match="lone surrogate"):
        write_run(tmp_path / "r.trec", [RunRow("1", "d\udc00", 1, 1.0)])
    with pytest.raises(FormatError, match="lone surrogate"):
        write_qrels(tmp_path / "q.txt", [Qrel("1\ud800", "d", 1)])
    assert list(tmp_path.iterdir()) == []


def test_error_messages_show_a_bounded_part_of_a_huge_field(tmp_path: Path) -> None:
    path = write(tmp_path, "x.trec", f"1 Q0 d1 1 {'x' * 100000} t\n")
    with pytest.raises(FormatError) as info:
        read_run(path)
    assert len(str(info.value)) < 300


# ---------------------------------------------------------------------------------------------
# The same pathological input in the readers beside this module
# ---------------------------------------------------------------------------------------------


def collection_with(tmp_path: Path, manifest: str | bytes) -> Path:
    write(tmp_path, "col/corpus.jsonl", '{"id": "a", "contents": "x"}\n')
    write(tmp_path, "col/manifest.json", manifest)
    return tmp_path / "col"


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ('{"doc_lang": 5}', "'doc_lang' must be a language code"),
        ('{"query_lang": ["en"]}', "'query_lang' must be a language code"),
        ('{"doc_lang": ""}', "'doc_lang' must be a language code"),
        ('{"doc_lang": "f r"}', "'doc_lang' must be a language code"),
        ('{"name": {"x": 1}}', "'name' must be a string"),
        ('{"splits": "dev"}', "'splits' must be a list of split names"),
        ('{"splits": ["dev", "../x"]}', "'splits' must be a list of split names"),
        ('["doc_lang", "fr"]', "the manifest must be a JSON object"),
        ('{"doc_lang": "fr",}', "invalid JSON"),
        ('{"doc_lang": "fr", "n": ' + HUGE + "}", "JSON integer with 5000 digits"),
        ('{"doc_lang": "fr", "n": ' + "[" * 1000 + "]" * 1000 + "}", "JSON nested"),
        ('{"doc_lang": "fr", "n": ' + "[" * 100 + "]" * 100 + "}", "JSON nested"),
        ('{"doc_lang": "fr\\ud800"}', "lone surrogate \\ud800 in field 'doc_lang'"),
        ('{"doc_lang": NaN}', "invalid JSON"),
    ],
)
def test_collection_manifest_of_the_wrong_shape(
    tmp_path: Path, manifest: str, problem: str
) -> None:
    from clir_toolkit.collection import open_collection

    root = collection_with(tmp_path, manifest)
    with pytest.raises(FormatError, match=re.escape(f"{root / 'manifest.json'}")) as info:
        open_collection(root)
    assert problem in str(info.value)


def test_collection_manifest_not_utf8(tmp_path: Path) -> None:
    from clir_toolkit.collection import open_collection

    root = collection_with(tmp_path, b'{"doc_lang": "fr\xff"}')
    with pytest.raises(FormatError, match=at(root / "manifest.json", 1, "invalid UTF-8")):
        open_collection(root)


def test_collection_manifest_languages_are_read(tmp_path: Path) -> None:
    from clir_toolkit.collection import open_collection

    root = collection_with(tmp_path, '{"doc_lang": "zh-hant", "query_lang": "en", "n": 3}')
    collection = open_collection(root)
    assert (collection.doc_lang, collection.query_lang) == ("zh-hant", "en")
    assert collection.split_file("qrels", "dev") == root / "qrels.dev.txt"


@pytest.mark.parametrize(("kind", "split"), [("qrels", "../dev"), ("qrels", ""), ("runs", "dev")])
def test_collection_split_file_refuses_other_names(tmp_path: Path, kind: str, split: str) -> None:
    from clir_toolkit.collection import open_collection

    collection = open_collection(collection_with(tmp_path, "{}"))
    with pytest.raises(UsageError):
        collection.split_file(kind, split)


@pytest.mark.parametrize(
    ("content", "line", "problem"),
    [
        ("١٢ 3\nfile 1 0 0\n", 1, "vector count '١٢' is not an integer"),
        ("2 ٣\nfile 1 0 0\n", 1, "dimension '٣' is not an integer"),
        (f"{HUGE} 3\nfile 1 0 0\n", 1, "vector count '99999"),
        ("1 0\nfile\n", 1, "dimension '0' is out of range"),
        ("3 2\nfile 1 0\ncopy 1 0\n", 1, "the header announces 3 vectors but the file has 2"),
        ("1 3\nfile 1 ٢ 0\n", 2, "'٢' is not a number"),
        ("1 3\nfile 1 1_0 0\n", 2, "'1_0' is not a number"),
        ("1 3\nfile 1 0\t 0\n", 2, "'0\\t' is not a number"),
    ],
)
def test_vec_file_pathological_numbers(
    tmp_path: Path, content: str, line: int, problem: str
) -> None:
    from clir_toolkit.resources.embeddings import load_vec

    path = write(tmp_path, "e.vec", content)
    with pytest.raises(FormatError, match=at(path, line, problem)) as info:
        load_vec(path)
    assert len(str(info.value)) < 300


@pytest.mark.parametrize("weight", ["١٢", "1_0", "0x1", "१"])
def test_dictionary_weight_in_ascii_digits(tmp_path: Path, weight: str) -> None:
    from clir_toolkit.resources.dictionary.tsv import read_dictionary_tsv

    path = write(tmp_path, "d.tsv", f"file\tfichier\t1\ncopy\tcopier\t{weight}\n")
    with pytest.raises(FormatError, match=at(path, 2, f"weight '{weight}' is not a positive")):
        read_dictionary_tsv(path)


def test_topics_and_documents_are_read_in_one_unicode_form(tmp_path: Path) -> None:
    """A word written with a combining accent (e + U+0301, as some editors and macOS file
    names write it) is read as the composed character, in topics as in documents: the two
    forms must meet in the index."""
    decomposed, composed = "re\u0301pertoire cre\u0301e\u0301", "répertoire créé"
    topics = write(tmp_path, "topics.tsv", f"q1\t{decomposed}\n")
    assert read_topics(topics) == [Topic("q1", composed)]
    sgml = write(tmp_path, "topics.sgml", f"<top>\n<num> 2\n<title> {decomposed}\n"
                 f"<desc> {decomposed}\n</top>\n")
    (topic,) = read_topics(sgml, field="title+desc")
    assert topic.query == f"{composed} {composed}" and topic.description == composed
    corpus = write(tmp_path, "corpus.jsonl",
                   json.dumps({"id": "d", "title": decomposed, "text": decomposed}) + "\n")
    assert list(iter_corpus(corpus)) == [Doc("d", f"{composed}\n{composed}", composed)]


def test_ranked_hits_are_written_as_the_rows_made_of_them(tmp_path: Path) -> None:
    from clir_toolkit.search import Hit
    from clir_toolkit.search.runs import ranked_rows

    ranked = [
        ("q2", [Hit("b", 2.5), Hit("a", 1.0), Hit("c", 1.0)]),  # a tie, listed out of order
        ("q1", []),  # found nothing: no line
        ("q3", [Hit("d", -0.0), Hit("e", 0.1 + 0.2)]),
        ("q2", [Hit("z", 0.5)]),  # a query id seen again: its rows join the first ones
    ]
    rows, _ = ranked_rows(ranked, "t")
    write_run(tmp_path / "rows.trec", rows, tag="t")
    write_ranked_run(tmp_path / "hits.trec", ranked, tag="t")
    assert (tmp_path / "hits.trec").read_bytes() == (tmp_path / "rows.trec").read_bytes()


def test_ranked_hits_are_checked_as_rows_are(tmp_path: Path) -> None:
    from clir_toolkit.search import Hit

    output = tmp_path / "run.trec"
    output.write_text("kept\n", encoding="utf-8")
    for hits, message in [
        ([Hit("a", 1.0), Hit("a", 0.5)], "docid a appears twice for query q"),
        ([Hit("a b", 1.0)], "contains whitespace"),
        ([Hit("a", float("nan"))], "is not a finite number"),
    ]:
        with pytest.raises(FormatError, match=message):
            write_ranked_run(output, [("q", hits)], tag="t")
        assert output.read_text(encoding="utf-8") == "kept\n"


def test_a_document_longer_than_the_indexer_reads_is_refused_at_its_line(tmp_path: Path) -> None:
    """Anserini's JSON reader drops a document of more than 20 million characters with a
    Java stack trace; it is refused here first, naming the line."""
    from clir_toolkit.formats.corpus import MAX_DOCUMENT_CHARS

    short = json.dumps({"id": "d1", "contents": "mot"})
    long = json.dumps({"id": "d2", "contents": "x" * (MAX_DOCUMENT_CHARS + 1)})
    path = write(tmp_path, "corpus.jsonl", f"{short}\n{long}\n")
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: document d2 has 20,000,001 characters"):
        list(iter_corpus(path))
