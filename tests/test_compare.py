"""clir compare: per-query deltas, wins/ties/losses, the sorted delta chart, one-line errors.

The runs are written by hand, so that every per-query value, and so every delta, is known.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from scipy import stats

from clir_toolkit.cli import main
from clir_toolkit.evaluate import compare_runs, evaluate_runs, format_comparison, write_plot
from clir_toolkit.formats import Qrel, RunRow, write_qrels, write_run

from .conftest import TINY_FR, assert_one_line_error, run_clir


def _run(path: Path, ranking: dict[str, list[str]], tag: str) -> Path:
    rows = [
        RunRow(qid, docid, rank, float(100 - rank), tag)
        for qid, docids in ranking.items()
        for rank, docid in enumerate(docids, start=1)
    ]
    write_run(path, rows)
    return path


@pytest.fixture()
def handmade(tmp_path: Path) -> dict[str, Path]:
    """Five queries, one relevant document each (``qN-r``); measured by RR, the reciprocal
    rank of that document, which is 1/rank by construction:

    ======  ===================  ====================  =======
    query   A (baseline)         B                     Δ
    ======  ===================  ====================  =======
    q1      rank 1: 1            rank 1: 1             0 (tie)
    q2      rank 2: 0.5          rank 1: 1             +0.5
    q3      rank 4: 0.25         rank 2: 0.5           +0.25
    q4      rank 1: 1            rank 4: 0.25          −0.75
    q10     no answer: 0         rank 1: 1             +1
    ======  ===================  ====================  =======

    B also answers q9, which the qrels do not judge (ignored).
    """
    qrels = tmp_path / "qrels.txt"
    write_qrels(qrels, [Qrel(q, f"{q}-r", 1) for q in ("q1", "q2", "q3", "q4", "q10")])

    def at(qid: str, rank: int) -> list[str]:
        return [f"{qid}-x{i}" for i in range(1, rank)] + [f"{qid}-r"]

    ranks_a = {"q1": 1, "q2": 2, "q3": 4, "q4": 1}
    ranks_b = {"q1": 1, "q2": 1, "q3": 2, "q4": 4, "q10": 1, "q9": 1}
    a = _run(tmp_path / "a.trec", {q: at(q, rank) for q, rank in ranks_a.items()}, "a")
    b = _run(tmp_path / "b.trec", {q: at(q, rank) for q, rank in ranks_b.items()}, "b")
    topics = tmp_path / "topics.tsv"
    topics.write_text(
        "q1\tlist files\nq2\tcopy files\nq3\tremove <dirs> & files\nq4\tkill a process\n"
        "q10\tchange password\n",
        encoding="utf-8",
    )
    return {"qrels": qrels, "a": a, "b": b, "topics": topics}


# --- the figures ------------------------------------------------------------------------------


def test_deltas_outcomes_and_order_are_the_hand_computed_ones(handmade: dict[str, Path]) -> None:
    comparison = compare_runs(handmade["qrels"], handmade["a"], handmade["b"], measure="RR")
    assert (comparison.measure, comparison.baseline, comparison.run) == ("RR", "a", "b")
    assert [(q.qid, q.baseline, q.run) for q in comparison.queries] == [
        ("q10", 0.0, 1.0),
        ("q2", 0.5, 1.0),
        ("q3", 0.25, 0.5),
        ("q1", 1.0, 1.0),
        ("q4", 1.0, 0.25),
    ]
    assert [q.delta for q in comparison.queries] == [1.0, 0.5, 0.25, 0.0, -0.75]
    assert [q.outcome for q in comparison.queries] == ["win", "win", "win", "tie", "loss"]
    assert (comparison.wins, comparison.ties, comparison.losses) == (3, 1, 1)
    assert comparison.mean_baseline == pytest.approx(2.75 / 5)
    assert comparison.mean_run == pytest.approx(3.75 / 5)
    assert comparison.mean_delta == pytest.approx(0.2)
    assert [q.qid for q in comparison.top_wins(2)] == ["q10", "q2"]
    assert [q.qid for q in comparison.top_losses(2)] == ["q4"]


def test_the_values_and_p_value_are_clir_evals(handmade: dict[str, Path]) -> None:
    comparison = compare_runs(handmade["qrels"], handmade["a"], handmade["b"], measure="RR")
    result = evaluate_runs(handmade["qrels"], [handmade["a"], handmade["b"]], "RR", baseline="a")
    for query in comparison.queries:
        assert query.baseline == result.per_query["a"]["RR"][query.qid]
        assert query.run == result.per_query["b"]["RR"][query.qid]
    assert comparison.p_value == pytest.approx(result.p_values["b"]["RR"])
    a, b = [1.0, 0.5, 0.25, 1.0, 0.0], [1.0, 1.0, 0.5, 0.25, 1.0]  # q1 q2 q3 q4 q10
    assert comparison.p_value == pytest.approx(stats.ttest_rel(b, a).pvalue)
    wilcoxon = compare_runs(
        handmade["qrels"], handmade["a"], handmade["b"], measure="RR", test="wilcoxon"
    )
    assert wilcoxon.p_value == pytest.approx(stats.wilcoxon(b, a).pvalue)


def test_equal_deltas_are_ordered_by_query_id(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    write_qrels(qrels, [Qrel(q, "r", 1) for q in ("10", "2", "1")])
    a = _run(tmp_path / "a.trec", {"1": ["x", "r"], "2": ["x", "r"], "10": ["x", "r"]}, "a")
    b = _run(tmp_path / "b.trec", {"1": ["r"], "2": ["r"], "10": ["r"]}, "b")
    comparison = compare_runs(qrels, a, b, measure="RR")
    assert [q.qid for q in comparison.queries] == ["1", "2", "10"]
    reverse = compare_runs(qrels, b, a, measure="RR")
    assert [q.qid for q in reverse.top_losses()] == ["1", "2", "10"]


def test_text_lists_the_largest_wins_and_losses_with_their_queries(
    handmade: dict[str, Path],
) -> None:
    comparison = compare_runs(
        handmade["qrels"], handmade["a"], handmade["b"], measure="RR", topics=handmade["topics"]
    )
    lines = format_comparison(comparison, top=2).splitlines()
    assert lines[0].startswith("RR per query: b against the baseline a, 5 queries")
    assert "mean 0.5500 → 0.7500 (Δ +0.2000); W/T/L 3/1/1; paired t-test p = " in lines[1]
    wins = lines.index("Largest wins (2 of 3):")
    assert lines[wins + 1].split() == ["qid", "a", "b", "Δ", "query"]
    assert lines[wins + 2].split() == ["q10", "0.0000", "1.0000", "+1.0000", "change", "password"]
    assert lines[wins + 3].split()[:4] == ["q2", "0.5000", "1.0000", "+0.5000"]
    losses = lines.index("Largest losses (1 of 1):")
    assert lines[losses + 2].split()[:4] == ["q4", "1.0000", "0.2500", "-0.7500"]
    assert lines[losses + 2].endswith("  kill a process")
    assert lines[-1] == lines[losses + 2]  # nothing after the last table
    # The numbers' columns end where their headers end.
    header = lines[wins + 1]
    assert lines[wins + 2].index("+1.0000") + len("+1.0000") == header.index("Δ") + 1
    without_topics = compare_runs(handmade["qrels"], handmade["a"], handmade["b"], measure="RR")
    plain = format_comparison(without_topics).splitlines()
    assert plain[plain.index("Largest wins (3 of 3):") + 1].split() == ["qid", "a", "b", "Δ"]


# --- the chart --------------------------------------------------------------------------------


def test_png_is_a_real_png(handmade: dict[str, Path], tmp_path: Path) -> None:
    comparison = compare_runs(handmade["qrels"], handmade["a"], handmade["b"], measure="RR")
    output = write_plot(comparison, tmp_path / "chart.png")
    data = output.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert 5_000 < len(data) < 200_000


def test_svg_has_one_titled_bar_per_query(handmade: dict[str, Path], tmp_path: Path) -> None:
    comparison = compare_runs(
        handmade["qrels"], handmade["a"], handmade["b"], measure="RR", topics=handmade["topics"]
    )
    output = write_plot(comparison, tmp_path / "chart.svg")
    root = ET.parse(output).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    bars = [g for g in root.iter(f"{svg}g") if g.get("id", "").startswith("bar-")]
    assert len(bars) == len(comparison.queries) == 5
    titles = [bar.findtext(f"{svg}title") or "" for bar in bars]
    assert titles[0] == "q10: 0.0000 → 1.0000 (Δ +1.0000) change password"
    assert titles[2] == "q3: 0.2500 → 0.5000 (Δ +0.2500) remove <dirs> & files"
    assert [t.split(":")[0] for t in titles] == ["q10", "q2", "q3", "q1", "q4"]
    assert write_plot(comparison, tmp_path / "again.svg").read_bytes() == output.read_bytes()


def test_html_holds_the_chart_and_the_tables(handmade: dict[str, Path], tmp_path: Path) -> None:
    comparison = compare_runs(
        handmade["qrels"], handmade["a"], handmade["b"], measure="RR", topics=handmade["topics"]
    )
    page = write_plot(comparison, tmp_path / "chart.html", top=1).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 1
    assert "<?xml" not in page  # the SVG is inline, without its XML declaration
    assert "<h2>Largest wins (1 of 3)</h2>" in page
    assert "<h2>Largest losses (1 of 1)</h2>" in page
    assert "<td>q10</td>" in page and "<td>change password</td>" in page
    assert "<td>q4</td>" in page and "<td>kill a process</td>" in page
    assert "<td>q2</td>" not in page  # the second win, beyond --top 1
    assert "remove &lt;dirs&gt; &amp; files" in page  # escaped, in the bar's title
    assert "W/T/L 3/1/1" in page


# --- the command line -------------------------------------------------------------------------


def _clir(*args: str) -> subprocess.CompletedProcess[str]:
    """``clir`` in this process (quicker than a subprocess for the error checks)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(args))
        except SystemExit as exit:
            status = int(exit.code or 0)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def test_clir_compare_on_tiny_fr_writes_the_page(tmp_path: Path) -> None:
    # P(rel=2)@1: 1 when the first document is the page of grade 2.
    # A: right on q1, q3, q5; B: right on q2 to q6 but wrong on q1 (q6: A has no answer).
    first_a = {"q1": "ls.1", "q2": "mv.1", "q3": "rm.1", "q4": "sort.1", "q5": "kill.1"}
    first_b = {"q1": "mkdir.1", "q2": "cp.1", "q3": "rm.1", "q4": "grep.1", "q5": "kill.1"}
    first_b["q6"] = "passwd.1"
    a = _run(tmp_path / "a.trec", {q: [docid] for q, docid in first_a.items()}, "a")
    b = _run(tmp_path / "b.trec", {q: [docid] for q, docid in first_b.items()}, "b")
    page = tmp_path / "compare.html"
    result = run_clir("compare", str(a), str(b), "--qrels", str(TINY_FR / "qrels.dev.txt"),
                      "--measure", "P(rel=2)@1", "--topics", str(TINY_FR / "topics.dev.tsv"),
                      "--plot", str(page), "--top", "2")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("P(rel=2)@1 per query: b against the baseline a, 6 queries")
    assert "mean 0.5000 → 0.8333 (Δ +0.3333); W/T/L 3/2/1" in lines[1]
    first_win = lines[lines.index("Largest wins (2 of 3):") + 2]
    assert first_win.split()[:4] == ["q2", "0.0000", "1.0000", "+1.0000"]
    assert lines[-1].split()[:4] == ["q1", "1.0000", "0.0000", "-1.0000"]
    assert lines[-1].endswith("list directory contents")
    assert f"chart → {page}" in result.stderr
    text = page.read_text(encoding="utf-8")
    assert "<svg" in text and "<td>q2</td>" in text and "<td>q1</td>" in text


@pytest.fixture()
def runs(handmade: dict[str, Path]) -> list[str]:
    return [str(handmade["a"]), str(handmade["b"]), "--qrels", str(handmade["qrels"])]


def test_missing_run_is_one_line_naming_it(runs: list[str], tmp_path: Path) -> None:
    missing = tmp_path / "nope.trec"
    plot = tmp_path / "chart.png"
    result = _clir("compare", runs[0], str(missing), *runs[2:], "--plot", str(plot))
    assert_one_line_error(result, f"{missing}: no such run file", "clir search --output")
    assert not plot.exists()


def test_run_without_any_qrels_query_is_refused(runs: list[str], tmp_path: Path) -> None:
    other = _run(tmp_path / "other.trec", {"z1": ["d"], "z2": ["d"]}, "other")
    result = _clir("compare", runs[0], str(other), *runs[2:])
    assert_one_line_error(result, f"{other}: answers none of the 5 queries", "split")


def test_unknown_measure_is_one_line(runs: list[str]) -> None:
    assert_one_line_error(_clir("compare", *runs, "--measure", "Bogus@3"), "Bogus@3")


def test_option_misuse_is_a_usage_error_and_writes_nothing(runs: list[str], tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir())
    result = _clir("compare", *runs, "--plot", str(tmp_path / "chart.pdf"))
    assert_one_line_error(result, "chart.pdf", ".png, FILE.svg, FILE.html", status=2)
    result = _clir("compare", *runs, "--measure", "nDCG@10 AP")
    assert_one_line_error(result, "one measure at a time", "clir eval", status=2)
    assert_one_line_error(_clir("compare", *runs, "--top", "0"), "--top", status=2)
    assert sorted(tmp_path.iterdir()) == before


def test_clir_eval_points_to_clir_compare() -> None:
    result = _clir("eval", "--help")
    assert "clir compare" in " ".join(result.stdout.split())
