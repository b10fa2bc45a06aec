"""Run fusion (``clir fuse``, :mod:`clir_toolkit.search.fusion`): the fused scores agree with
ranx's ``fuse`` (the oracle) for every method and normalisation, hand-computed values hold,
ties go by docid as trec_eval reads a run, and bad input is one line that writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.formats import RunRow, read_run, write_run
from clir_toolkit.search.fusion import fuse
from tests.conftest import assert_one_line_error, run_clir

#: Three runs of two queries with distinct scores (no ties: ranx orders ties its own way),
#: overlapping partly (ranx wants every query in every run).
RUNS = {
    "a": {"q1": {"d1": 12.5, "d2": 9.0, "d3": 7.25, "d4": 1.0}, "q2": {"d5": 3.0, "d6": 2.0}},
    "b": {"q1": {"d2": 0.91, "d5": 0.42, "d1": 0.33, "d7": -0.2}, "q2": {"d6": 0.8, "d8": 0.1}},
    "c": {"q1": {"d7": 40.0, "d3": 30.0, "d2": 5.0}, "q2": {"d9": 1.5, "d5": 0.5}},
}

#: Our names of the methods and normalisations, and ranx's.
RANX_METHODS = {"rrf": "rrf", "combsum": "sum", "combmnz": "mnz", "interpolate": "wsum"}
RANX_NORMS = {"minmax": "min-max", "max": "max", "sum": "sum", "zmuv": "zmuv"}


def as_rows(run: dict[str, dict[str, float]], tag: str) -> list[RunRow]:
    return [RunRow(qid, docid, 0, score, tag) for qid, scores in run.items()
            for docid, score in scores.items()]  # fmt: skip


def fused_scores(rows: list[RunRow]) -> dict[str, dict[str, float]]:
    result: dict[str, dict[str, float]] = {}
    for row in rows:
        result.setdefault(row.qid, {})[row.docid] = row.score
    return result


@pytest.mark.parametrize("method", list(RANX_METHODS))
@pytest.mark.parametrize("normalisation", list(RANX_NORMS))
def test_fusion_agrees_with_ranx(method: str, normalisation: str) -> None:
    ranx = pytest.importorskip("ranx")
    weights = [0.2, 0.5, 0.3] if method == "interpolate" else None
    ours = fused_scores(fuse([as_rows(run, name) for name, run in RUNS.items()], method,
                             weights=weights, normalisation=normalisation))  # fmt: skip
    params = {"weights": weights} if weights else ({"k": 60} if method == "rrf" else {})
    # ranx fuses the queries of its first run: q1 and q2 are in run a.
    oracle = ranx.fuse(
        [ranx.Run({qid: dict(scores) for qid, scores in run.items()}, name=name)
         for name, run in RUNS.items()],
        norm=RANX_NORMS[normalisation], method=RANX_METHODS[method], params=params,
    ).to_dict()  # fmt: skip
    assert set(ours) == set(oracle)
    for qid, scores in oracle.items():
        assert set(ours[qid]) == set(scores), qid
        for docid, score in scores.items():
            assert ours[qid][docid] == pytest.approx(score, rel=1e-9, abs=1e-12), (qid, docid)


def test_rrf_and_combmnz_by_hand_with_ties_by_docid() -> None:
    a = [RunRow("q", "x", 0, 2.0, "a"), RunRow("q", "y", 0, 1.0, "a")]
    b = [RunRow("q", "y", 0, 5.0, "b"), RunRow("q", "x", 0, 4.0, "b")]
    # x: 1/61 + 1/62, y: 1/62 + 1/61: a tie, broken by docid descending as trec_eval does
    rows = fuse([a, b], "rrf")
    assert [r.docid for r in rows] == ["y", "x"]
    assert rows[0].score == rows[1].score == pytest.approx(1 / 61 + 1 / 62)
    # min-max: a gives x 1, y 0; b gives y 1, x 0; c retrieves only z (its single score: 0)
    c = [RunRow("q", "z", 0, 3.0, "c")]
    mnz = {r.docid: r.score for r in fuse([a, b, c], "combmnz")}
    assert mnz == {"x": 2.0, "y": 2.0, "z": 0.0}
    weighted = {r.docid: r.score for r in fuse([a, b], "interpolate", weights=[0.25, 0.75])}
    assert weighted == {"x": 0.25, "y": 0.75}


def test_depth_keeps_the_top_of_each_query() -> None:
    runs = [as_rows(run, name) for name, run in RUNS.items()]
    rows = fuse(runs, "combsum", depth=2)
    assert [(r.qid, r.rank) for r in rows] == [("q1", 1), ("q1", 2), ("q2", 1), ("q2", 2)]
    full = fuse(runs, "combsum")
    assert rows[:2] == full[:2]


def test_clir_fuse_writes_the_fused_run(tmp_path: Path) -> None:
    paths = []
    for name, run in RUNS.items():
        paths.append(tmp_path / f"{name}.run")
        write_run(paths[-1], as_rows(run, name))
    out = tmp_path / "fused.run"
    result = run_clir("fuse", *map(str, paths), "--output", str(out), "--method", "interpolate",
                      "--weights", "0.2", "0.5", "0.3", "--normalise", "max", "--quiet")
    assert result.returncode == 0, result.stderr
    expected = fuse([read_run(p) for p in paths], "interpolate", weights=[0.2, 0.5, 0.3],
                    normalisation="max", tag="interpolate")  # fmt: skip
    assert read_run(out) == expected
    assert {row.tag for row in expected} == {"interpolate"}


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--weights", "0.5", "0.5"], "one weight per run: 3 runs, 2 weights"),
        (["--weights", "1", "-1", "1"], "--weights"),
        (["--rrf-k", "0"], "--rrf-k"),
        (["--tag", ""], "argument --tag: empty tag"),
        (["--tag", "a b"], "contains whitespace"),
    ],
)
def test_clir_fuse_refuses_bad_options_in_one_line_and_writes_nothing(
    tmp_path: Path, extra: list[str], fragment: str
) -> None:
    paths = []
    for name, run in RUNS.items():
        paths.append(tmp_path / f"{name}.run")
        write_run(paths[-1], as_rows(run, name))
    out = tmp_path / "fused.run"
    out.write_text("kept\n")
    result = run_clir("fuse", *map(str, paths), "--output", str(out), *extra)
    assert_one_line_error(result, fragment, status=2)
    assert out.read_text() == "kept\n"


def test_clir_fuse_names_a_bad_run_file_and_its_line(tmp_path: Path) -> None:
    good = tmp_path / "a.run"
    write_run(good, as_rows(RUNS["a"], "a"))
    bad = tmp_path / "b.run"
    bad.write_text("q1 Q0 d1 1 0.5 b\nq1 Q0 d2 2 oops b\n")
    result = run_clir("fuse", str(good), str(bad), "--output", str(tmp_path / "f.run"))
    assert_one_line_error(result, str(bad), ":2")
    assert not (tmp_path / "f.run").exists()


@pytest.mark.parametrize("normalisation", ["minmax", "max", "sum", "zmuv"])
def test_scores_near_the_largest_float_fuse_as_the_same_scores_scaled_down(
    normalisation: str,
) -> None:
    """Scores of ±1e308 overflowed in the normalisations (inf − inf: NaN, or an
    OverflowError in zmuv); every normalisation is unchanged by a positive scale, so they
    fuse as the same scores divided by 1e300 do."""
    huge = [RunRow("q1", "a", 1, 1e308, "x"), RunRow("q1", "b", 2, 5e307, "x"),
            RunRow("q1", "c", 3, -1e308, "x")]  # fmt: skip
    other = [RunRow("q1", "b", 1, 2.0, "y"), RunRow("q1", "c", 2, 1.0, "y")]
    scaled = [RunRow(r.qid, r.docid, r.rank, r.score / 1e300, r.tag) for r in huge]
    fused = fuse([huge, other], "combsum", normalisation=normalisation, depth=10, tag="f")
    expected = fuse([scaled, other], "combsum", normalisation=normalisation, depth=10, tag="f")
    assert [r.docid for r in fused] == [r.docid for r in expected]
    assert [r.score for r in fused] == pytest.approx([r.score for r in expected])
