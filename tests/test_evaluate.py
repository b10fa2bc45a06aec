"""clir eval: per-query values, means over every qrels query, paired tests, output formats."""

from __future__ import annotations

import csv
import io
import json
import shutil
import warnings
from pathlib import Path

import ir_measures
import pytest

from clir_toolkit.errors import ClirError
from clir_toolkit.evaluate import (
    DEFAULT_MEASURES,
    bonferroni,
    evaluate_runs,
    format_result,
    holm,
    parse_measures,
)
from clir_toolkit.formats import Qrel, RunRow, write_qrels, write_run
from tests.conftest import assert_one_line_error, run_clir

QIDS = [f"q{i:02d}" for i in range(1, 11)]


def _qrels() -> list[Qrel]:
    """Per query: one page (2), one partially relevant page (1), one judged non-relevant (0)."""
    qrels = []
    for qid in QIDS:
        qrels += [Qrel(qid, f"{qid}-a", 2), Qrel(qid, f"{qid}-b", 1), Qrel(qid, f"{qid}-c", 0)]
    return qrels


def _rows(ranking: dict[str, list[str]], tag: str) -> list[RunRow]:
    rows = []
    for qid, docids in ranking.items():
        for rank, docid in enumerate(docids, start=1):
            rows.append(RunRow(qid, docid, rank, float(100 - rank), tag))
    return rows


def _good(qids: list[str] = QIDS) -> dict[str, list[str]]:
    """The page first, the partial one second: near perfect on every query."""
    return {q: [f"{q}-a", f"{q}-b", f"{q}-c", f"{q}-x"] for q in qids}


def _weak(qids: list[str] = QIDS) -> dict[str, list[str]]:
    """Unjudged and non-relevant documents first; the page sinks lower on later queries."""
    ranking = {}
    for i, q in enumerate(qids):
        noise = [f"{q}-x{j}" for j in range(i % 4)]
        ranking[q] = [f"{q}-c", *noise, f"{q}-b", f"{q}-y", f"{q}-a"]
    return ranking


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "qrels": tmp_path / "qrels.txt",
        "weak": tmp_path / "weak.trec",
        "good": tmp_path / "good.trec",
    }
    write_qrels(paths["qrels"], _qrels())
    write_run(paths["weak"], _rows(_weak(), "weak"))
    write_run(paths["good"], _rows(_good(), "good"))
    return paths


def _ir_measures_aggregate(qrels: list[Qrel], rows: list[RunRow]) -> dict[str, float]:
    """The reference: ir_measures' own aggregate on the same records, keyed by our names."""
    measures = {name: ir_measures.parse_measure(name) for name in DEFAULT_MEASURES}
    aggregate = ir_measures.calc_aggregate(
        list(measures.values()),
        [ir_measures.Qrel(q.qid, q.docid, q.relevance) for q in qrels],
        [ir_measures.ScoredDoc(r.qid, r.docid, r.score) for r in rows],
    )
    return {name: aggregate[measure] for name, measure in measures.items()}


# --- the figures ------------------------------------------------------------------------------


def test_means_equal_ir_measures_when_every_query_is_answered(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]])
    assert result.measures == list(DEFAULT_MEASURES)
    assert result.runs == ["weak", "good"]
    assert result.qids == QIDS
    for run, ranking in (("weak", _weak()), ("good", _good())):
        expected = _ir_measures_aggregate(_qrels(), _rows(ranking, run))
        for measure, value in expected.items():
            assert result.means[run][measure] == pytest.approx(value), (run, measure)
    # The good run is ranked perfectly on every query.
    assert result.means["good"]["P(rel=2)@1"] == 1.0
    assert result.means["good"]["RR(rel=1)"] == 1.0
    assert result.means["weak"]["P(rel=2)@1"] == 0.0


def test_missing_query_scores_zero_and_unjudged_query_is_ignored(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.trec"
    write_qrels(qrels, [Qrel("1", "a", 2), Qrel("2", "b", 1), Qrel("3", "c", 2)])
    # q1: the page at rank 1; q2: its only relevant document at rank 2; q3: no answer;
    # q9 is not in the qrels and must not count.
    write_run(run, _rows({"1": ["a", "z"], "2": ["z", "b"], "9": ["a"]}, "run"))
    result = evaluate_runs(qrels, [run], measures="P(rel=2)@1 RR(rel=1) AP")
    assert result.qids == ["1", "2", "3"]
    per_query = result.per_query["run"]
    assert per_query["RR(rel=1)"] == {"1": 1.0, "2": 0.5, "3": 0.0}
    assert per_query["P(rel=2)@1"] == {"1": 1.0, "2": 0.0, "3": 0.0}
    # Means over all three qrels queries, not over the two the run answers.
    assert result.means["run"]["P(rel=2)@1"] == pytest.approx(1 / 3)
    assert result.means["run"]["RR(rel=1)"] == pytest.approx(1.5 / 3)
    assert result.means["run"]["AP"] == pytest.approx(1.5 / 3)


def test_a_run_without_any_judged_query_is_refused_not_scored_zero(tmp_path: Path) -> None:
    """A run of another split or collection would print a row of zeros with exit 0."""
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "other.trec"
    write_qrels(qrels, [Qrel("1", "a", 2), Qrel("2", "b", 1)])
    write_run(run, _rows({"7": ["a"], "8": ["b"]}, "other"))
    with pytest.raises(ClirError) as caught:
        evaluate_runs(qrels, [run], measures=["nDCG@10", "AP"])
    assert str(caught.value).startswith(
        f"{run}: answers none of the 2 queries of {qrels} (its 2 queries are all unjudged"
    )
    result = run_clir("eval", "--qrels", str(qrels), str(run))
    assert_one_line_error(result, f"{run}: answers none of the 2 queries")
    assert result.stdout == ""


def test_a_partly_unjudged_run_is_evaluated_with_one_warning_line(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.trec"
    write_qrels(qrels, [Qrel("1", "a", 2), Qrel("2", "b", 1), Qrel("3", "c", 2)])
    write_run(run, _rows({"1": ["a"], "8": ["b"], "9": ["c"]}, "run"))
    result = run_clir("eval", "--qrels", str(qrels), str(run), "--measures", "P(rel=2)@1")
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"clir: warning: run: 2 of its 3 queries are not judged in {qrels} and are ignored; "
        "it answers 1 of the 3 queries judged there (the others score 0)"
    ]
    assert "0.3333" in result.stdout
    quiet = run_clir("eval", "--qrels", str(qrels), str(run), "--quiet")
    assert quiet.returncode == 0 and quiet.stderr == ""


# --- corrections ------------------------------------------------------------------------------


def test_holm_against_hand_computed_values() -> None:
    # Sorted: 0.001 x4 = 0.004; 0.02 x3 = 0.06; 0.3 x2 = 0.6; 0.5 x1 = 0.5 -> raised to 0.6.
    assert holm([0.5, 0.001, 0.02, 0.3]) == pytest.approx([0.6, 0.004, 0.06, 0.6])
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.6, 0.7]) == [1.0, 1.0]
    assert holm([0.2]) == [0.2]
    assert holm([]) == []


def test_bonferroni_against_hand_computed_values() -> None:
    assert bonferroni([0.01, 0.3, 0.5]) == pytest.approx([0.03, 0.9, 1.0])
    assert bonferroni([0.04]) == [0.04]
    assert bonferroni([]) == []


def test_holm_never_exceeds_bonferroni() -> None:
    p = [0.001, 0.012, 0.013, 0.04, 0.2]
    assert all(h <= b for h, b in zip(holm(p), bonferroni(p), strict=True))
    assert holm(p) != bonferroni(p)


# --- significance -----------------------------------------------------------------------------


@pytest.mark.parametrize("test", ["ttest", "wilcoxon"])
def test_run_identical_to_baseline_gets_p_one_and_no_marker(
    files: dict[str, Path], test: str
) -> None:
    copy = files["weak"].with_name("copy.trec")
    shutil.copy(files["weak"], copy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = evaluate_runs(
            files["qrels"], [files["weak"], copy], baseline=str(files["weak"]), test=test
        )
    assert result.baseline == "weak"
    assert set(result.p_values) == {"copy"}
    assert result.p_values["copy"] == dict.fromkeys(DEFAULT_MEASURES, 1.0)
    copy_line = next(line for line in format_result(result).splitlines() if line.startswith("copy"))
    assert "▲" not in copy_line and "▼" not in copy_line


def test_clearly_better_run_is_marked_better_with_the_t_test(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]], baseline="weak")
    assert result.test == "ttest" and result.correction == "holm"
    assert result.p_values["good"]["nDCG@10"] < 0.001
    lines = format_result(result).splitlines()
    good = next(line for line in lines if line.startswith("good"))
    weak = next(line for line in lines if line.startswith("weak"))
    assert f"{result.means['good']['nDCG@10']:.4f}▲" in good
    assert "(baseline)" in weak and "▲" not in weak and "▼" not in weak
    legend = lines[-1]
    assert "t-test" in legend and "Holm" in legend and "0.05" in legend
    assert "10 queries" in legend


def test_a_difference_on_one_query_is_not_significant(files: dict[str, Path]) -> None:
    nearly = files["qrels"].with_name("nearly.trec")
    ranking = _weak()
    ranking["q01"] = _good()["q01"]
    write_run(nearly, _rows(ranking, "nearly"))
    result = evaluate_runs(files["qrels"], [files["weak"], nearly], baseline="weak")
    assert result.means["nearly"]["nDCG@10"] > result.means["weak"]["nDCG@10"]
    assert 0.05 < result.p_values["nearly"]["nDCG@10"] < 1.0
    nearly_line = next(line for line in format_result(result).splitlines() if "nearly" in line)
    assert "▲" not in nearly_line and "▼" not in nearly_line


def test_worse_run_is_marked_worse(files: dict[str, Path]) -> None:
    result = evaluate_runs(
        files["qrels"], [files["weak"], files["good"]], baseline="good", test="wilcoxon"
    )
    # Ten queries, all differences negative: the exact two-sided Wilcoxon p is 2 / 2**10.
    assert result.p_values["weak"]["nDCG@10"] == pytest.approx(2 / 2**10)
    weak = next(line for line in format_result(result).splitlines() if line.startswith("weak"))
    assert f"{result.means['weak']['nDCG@10']:.4f}▼" in weak
    assert "▲" not in weak


def test_correction_is_applied_across_the_compared_runs(files: dict[str, Path]) -> None:
    middle = files["qrels"].with_name("middle.trec")
    ranking = {q: _good()[q] if i % 2 else _weak()[q] for i, q in enumerate(QIDS)}
    write_run(middle, _rows(ranking, "middle"))
    runs = [files["weak"], files["good"], middle]
    raw = evaluate_runs(files["qrels"], runs, baseline="weak", correction="none")
    corrected = evaluate_runs(files["qrels"], runs, baseline="weak", correction="bonferroni")
    for run in ("good", "middle"):
        for measure in DEFAULT_MEASURES:
            expected = min(1.0, 2 * raw.p_values[run][measure])
            assert corrected.p_values[run][measure] == pytest.approx(expected)


def test_baseline_outside_the_runs_is_evaluated_and_listed_first(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["good"]], baseline=str(files["weak"]))
    assert result.runs == ["weak", "good"]
    assert result.baseline == "weak"
    assert set(result.p_values) == {"good"}


def test_runs_with_the_same_stem_get_distinct_names(files: dict[str, Path]) -> None:
    other = files["qrels"].parent / "other" / "weak.trec"
    other.parent.mkdir()
    shutil.copy(files["good"], other)
    result = evaluate_runs(files["qrels"], [files["weak"], other], measures="AP")
    assert len(set(result.runs)) == 2
    assert result.means[result.runs[0]]["AP"] < result.means[result.runs[1]]["AP"]


# --- output formats ---------------------------------------------------------------------------


def test_csv_parses_and_carries_means_and_p_values(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]], baseline="weak")
    rows = list(csv.DictReader(io.StringIO(format_result(result, "csv"))))
    assert [row["run"] for row in rows] == ["weak", "good"]
    for row in rows:
        for measure in DEFAULT_MEASURES:
            assert float(row[measure]) == pytest.approx(result.means[row["run"]][measure], abs=5e-5)
    assert rows[0]["nDCG@10 p"] == ""
    assert float(rows[1]["nDCG@10 p"]) == pytest.approx(
        result.p_values["good"]["nDCG@10"], rel=1e-3
    )


def test_csv_per_query_lists_every_run_and_query(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]], measures="RR(rel=1)")
    rows = list(csv.DictReader(io.StringIO(format_result(result, "csv", per_query=True))))
    per_query = [row for row in rows if row["qid"] != "all"]
    assert len(per_query) == 2 * len(QIDS)
    assert {row["run"] for row in per_query if row["RR(rel=1)"] == "1.0000"} == {"good"}
    summary = {row["run"]: float(row["RR(rel=1)"]) for row in rows if row["qid"] == "all"}
    assert summary == {"good": 1.0, "weak": pytest.approx(result.means["weak"]["RR(rel=1)"], 1e-3)}


def test_json_parses_and_carries_means_p_values_and_per_query(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]], baseline="weak")
    document = json.loads(format_result(result, "json"))
    assert document["means"] == result.means
    assert document["p_values"] == result.p_values
    assert document["baseline"] == "weak" and document["queries"] == 10
    assert "per_query" not in document
    detailed = json.loads(format_result(result, "json", per_query=True))
    assert detailed["per_query"]["good"]["AP"]["q03"] == result.per_query["good"]["AP"]["q03"]


def test_markdown_is_a_pipe_table_with_markers(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]], baseline="weak")
    text = format_result(result, "markdown")
    table = [line for line in text.splitlines() if line.startswith("|")]
    assert table[0] == "| run | " + " | ".join(DEFAULT_MEASURES) + " |"
    assert len(table) == 4  # header, rule, two runs
    assert table[2].startswith("| weak (baseline) |")
    assert "▲" in table[3]
    assert "paired t-test" in text.splitlines()[-1]


def test_table_columns_are_aligned_and_per_query_lines_come_first(
    files: dict[str, Path],
) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]], baseline="weak")
    summary = format_result(result).splitlines()
    header, weak, good = summary[:3]
    # Every column ends at the same place in every row (values padded to the same width).
    assert weak.index("(baseline)") > 0
    assert len({len(line.rstrip("▲▼ ")) for line in (header, weak, good)}) == 1
    detailed = format_result(result, per_query=True).splitlines()
    query_lines = [line for line in detailed if line.split()[:1] in (["weak"], ["good"])]
    assert len(query_lines) == 2 * len(QIDS) + 2  # one per (run, qid), then the summary
    assert detailed[1].split()[:2] == ["weak", "q01"]


def test_no_baseline_means_no_tests(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["weak"], files["good"]])
    assert result.baseline is None and result.p_values == {}
    text = format_result(result)
    assert "▲" not in text and "▼" not in text


# --- errors -----------------------------------------------------------------------------------


def test_parse_measures_splits_on_commas_and_whitespace() -> None:
    parsed = parse_measures("nDCG@10, P(rel=2)@5  AP")
    assert parsed == [ir_measures.parse_measure(m) for m in ("nDCG@10", "P(rel=2)@5", "AP")]
    assert len(parse_measures(None)) == len(DEFAULT_MEASURES)


def test_two_spellings_of_one_measure_are_computed_once(files: dict[str, Path]) -> None:
    result = evaluate_runs(files["qrels"], [files["good"]], measures="RR RR(rel=1) AP")
    assert result.measures == ["RR", "AP"]
    assert result.means["good"] == {"RR": 1.0, "AP": 1.0}


def test_unknown_measure_is_a_clir_error_naming_it(files: dict[str, Path]) -> None:
    with pytest.raises(ClirError, match="Bogus@3") as caught:
        parse_measures("nDCG@10 Bogus@3")
    assert "\n" not in str(caught.value)
    assert "ir_measures" in str(caught.value)
    with pytest.raises(ClirError, match="nDCG@ten"):
        evaluate_runs(files["qrels"], [files["good"]], measures=["nDCG@ten"])


@pytest.mark.parametrize(
    ("measure", "fragment"),
    [
        ("nDCG@0", "its cutoff @k (the documents looked at) must be an integer from 1 to"),
        ("P@0", "its cutoff @k"),
        ("Judged@0", "its cutoff @k"),
        ("nDCG@99999999999999999999", "its cutoff @k"),
        ("P(rel=0)@5", "its relevance level rel=r (the least grade that counts) must be"),
        ("RR(rel=99999999999)", "its relevance level"),
    ],
)
def test_a_measure_that_would_abort_the_evaluation_is_one_line(
    files: dict[str, Path], measure: str, fragment: str
) -> None:
    """trec_eval aborts the process on a cutoff of 0 (SIGABRT, exit 134, in pytrec_eval) and
    fails on other counts out of range: they are refused before any evaluation."""
    for args in (
        ("eval", "--qrels", str(files["qrels"]), str(files["good"]), "--measures", measure),
        ("compare", str(files["weak"]), str(files["good"]), "--qrels", str(files["qrels"]),
         "--measure", measure),
    ):  # fmt: skip
        assert_one_line_error(run_clir(*args), f"measure {measure!r}: {fragment}")


def test_unknown_baseline_is_a_clir_error(files: dict[str, Path]) -> None:
    with pytest.raises(ClirError, match="nosuchrun"):
        evaluate_runs(files["qrels"], [files["good"]], baseline="nosuchrun")
