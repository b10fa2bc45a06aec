"""Evaluate several runs side by side, with paired significance tests against a baseline.

The procedure, step by step (``clir eval --qrels Q RUN...`` calls :func:`evaluate_runs`, then
:func:`format_result`):

1. **Read and validate.** The qrels and every run are read with :mod:`clir_toolkit.formats`,
   so that a malformed line is reported as ``file:line`` before any measure is computed.
2. **Per-query values.** For each run, ``ir_measures.iter_calc`` computes every measure for
   every query (ir_measures delegates to ``pytrec_eval``, i.e. to trec_eval's own code).
   Measures are written as ir_measures names: ``nDCG@10``, ``P(rel=2)@1``, ``AP``,
   ``RR(rel=2)``, ... (https://ir-measur.es/en/latest/measures.html); they are parsed,
   never ``eval``'ed.
3. **Every qrels query counts.** The set of queries is the set of query ids in the qrels.
   A query the run has no answer for scores 0, as with ``trec_eval -c``; a query the run
   answers but the qrels do not judge is ignored, as trec_eval ignores it. Means are taken
   over all the qrels queries, so a run cannot look better by skipping hard queries.
4. **Paired test per measure.** Each run is compared with the baseline on the same queries:
   the paired t-test (``scipy.stats.ttest_rel``) or the Wilcoxon signed-rank test
   (``scipy.stats.wilcoxon``), both two-sided. When the two runs score identically on every
   query the difference is exactly zero and p = 1.
5. **Family-wise correction.** Comparing k runs with one baseline makes k tests per measure,
   and the chance that at least one of them is "significant" by luck grows with k. The k
   p-values of each measure are therefore adjusted together: Holm's step-down method
   (Holm 1979, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6(2):65-70), which controls the family-wise error rate like
   Bonferroni but rejects at least as often; or Bonferroni itself; or no correction.
   A run is marked ``▲`` (better) or ``▼`` (worse) when its corrected p-value is below alpha.
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.errors import ClirError, UsageError

DEFAULT_MEASURES = (
    "nDCG@5",
    "nDCG@10",
    "P(rel=2)@1",
    "P(rel=2)@5",
    "P(rel=1)@5",
    "AP",
    "RR(rel=2)",
    "RR(rel=1)",
    "R@100",
)
"""The measures of the source papers, spelled for ir_measures (the README lists them)."""

TESTS = ("ttest", "wilcoxon")
CORRECTIONS = ("holm", "bonferroni", "none")
FORMATS = ("table", "markdown", "csv", "json")

BETTER = "▲"
WORSE = "▼"

_TEST_NAMES = {"ttest": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test"}
_CORRECTION_NAMES = {
    "holm": "Holm correction",
    "bonferroni": "Bonferroni correction",
    "none": "no correction",
}
_MEASURE_HELP = (
    "write measures in ir_measures syntax, e.g. nDCG@10 P(rel=2)@5 AP RR(rel=2); "
    "see https://ir-measur.es/en/latest/measures.html"
)


# ---------------------------------------------------------------------------------------------
# Measures
# ---------------------------------------------------------------------------------------------


def _split_measure_names(spec: str | Sequence[str] | None) -> list[str]:
    """Measure names from a string or a sequence of strings, split on commas and whitespace.

    Separators inside parentheses belong to the measure (``P(rel=2, judged_only=True)@5``).
    Duplicates are dropped, the first spelling kept; ``None`` gives :data:`DEFAULT_MEASURES`.
    """
    if spec is None:
        return list(DEFAULT_MEASURES)
    parts = [spec] if isinstance(spec, str) else [str(item) for item in spec]
    names: list[str] = []
    for part in parts:
        depth = 0
        current = ""
        for char in part:
            depth += (char == "(") - (char == ")")
            if depth <= 0 and (char == "," or char.isspace()):
                if current:
                    names.append(current)
                current = ""
            elif not (depth > 0 and char.isspace()):
                current += char
        if current:
            names.append(current)
    return list(dict.fromkeys(names))


def _parse_one(name: str) -> Any:
    import ir_measures

    try:
        measure = ir_measures.parse_measure(name)
        measure.validate_params()  # an unsupported parameter, e.g. P(foo=1)@5
    except Exception as exc:  # ir_measures raises NameError, ValueError, AssertionError, ...
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ClirError(f"unknown measure {name!r}: {reason} ({_MEASURE_HELP})") from None
    return measure


def parse_measures(spec: str | Sequence[str] | None) -> list:
    """Parse measure names (``"nDCG@10 P(rel=2)@1, AP"``) into ir_measures measure objects.

    ``None`` gives :data:`DEFAULT_MEASURES`. An unknown or malformed name raises
    :class:`ClirError` naming it.
    """
    names = _split_measure_names(spec)
    if not names:
        raise ClirError(f"no measures given ({_MEASURE_HELP})")
    return [_parse_one(name) for name in names]


# ---------------------------------------------------------------------------------------------
# Multiple-comparison corrections
# ---------------------------------------------------------------------------------------------


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Bonferroni-adjusted p-values: ``p'_i = min(1, m * p_i)`` for m tests."""
    m = len(p_values)
    return [min(1.0, m * p) for p in p_values]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, returned in the input order.

    Sort the m p-values ascending, ``p_(1) <= ... <= p_(m)``; then
    ``p'_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))``. The running maximum keeps the
    adjusted values in the same order as the raw ones; rejecting ``p'_(i) < alpha`` is
    Holm's procedure, and ``p'_i <= `` the Bonferroni value always.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def _correct(p_values: Sequence[float], correction: str) -> list[float]:
    if correction == "holm":
        return holm(p_values)
    if correction == "bonferroni":
        return bonferroni(p_values)
    return [min(1.0, p) for p in p_values]


def paired_test(values: Sequence[float], baseline: Sequence[float], test: str = "ttest") -> float:
    """Two-sided p-value of a paired test between two lists of per-query values.

    ``test`` is ``"ttest"`` (``scipy.stats.ttest_rel``) or ``"wilcoxon"``
    (``scipy.stats.wilcoxon``). Identical values on every query give p = 1, as does a
    comparison on fewer than two queries, where no test is defined.
    """
    from scipy import stats

    differences = [a - b for a, b in zip(values, baseline, strict=True)]
    if len(differences) < 2 or all(d == 0 for d in differences):
        return 1.0
    with warnings.catch_warnings():
        # Constant non-zero differences make scipy warn about a zero variance; its answer
        # (p = 0 for the t-test) is still the right limit, so the warning is only noise.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "ttest":
            p = stats.ttest_rel(values, baseline).pvalue
        else:
            p = stats.wilcoxon(values, baseline).pvalue
    p = float(p)
    return 1.0 if math.isnan(p) else p


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


@dataclass
class EvalResult:
    """Everything :func:`format_result` prints: per-query values, means and p-values."""

    measures: list[str]
    runs: list[str]
    qids: list[str]
    per_query: dict[str, dict[str, dict[str, float]]]
    means: dict[str, dict[str, float]]
    baseline: str | None = None
    test: str = "ttest"
    correction: str = "holm"
    p_values: dict[str, dict[str, float]] = field(default_factory=dict)
    alpha: float = 0.05

    def to_dataframe(self, per_query: bool = False) -> Any:
        """The means as a pandas DataFrame (one row per run, one column per measure, and a
        ``p <measure>`` column per measure when there is a baseline); with ``per_query``,
        one row per (run, query) instead."""
        import pandas as pd

        if per_query:
            rows = [
                {"run": run, "qid": qid, **{m: self.per_query[run][m][qid] for m in self.measures}}
                for run in self.runs
                for qid in self.qids
            ]
            return pd.DataFrame(rows, columns=["run", "qid", *self.measures])
        table = pd.DataFrame(
            [[self.means[run][m] for m in self.measures] for run in self.runs],
            index=pd.Index(self.runs, name="run"),
            columns=self.measures,
        )
        if self.p_values:
            for measure in self.measures:
                table[f"p {measure}"] = [
                    self.p_values.get(run, {}).get(measure) for run in self.runs
                ]
        return table


def _display_names(paths: Sequence[Path]) -> list[str]:
    """Run names for tables: the file's stem; ``parent/stem`` or ``stem-2`` where stems clash."""
    stems = [path.stem for path in paths]
    names = [
        f"{path.parent.name}/{path.stem}"
        if stems.count(path.stem) > 1 and path.parent.name
        else path.stem
        for path in paths
    ]
    unique: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in unique:
            n += 1
            candidate = f"{name}-{n}"
        unique.append(candidate)
    return unique


def _qid_order(qid: str) -> tuple[int, int, str]:
    """Sort key for query ids: numeric ids by value (2 before 10), the others after, by name."""
    return (0, int(qid), qid) if qid.isdigit() else (1, 0, qid)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _per_query_values(
    measures: Sequence[Any], names: Sequence[str], qrels: list, run_path: Path, qids: Sequence[str]
) -> dict[str, dict[str, float]]:
    """measure name → qid → value for one run; 0.0 where the run has no answer."""
    import ir_measures

    from clir_toolkit.formats import read_run

    judged = set(qids)
    run = [
        ir_measures.ScoredDoc(row.qid, row.docid, float(row.score))
        for row in read_run(run_path)
        if row.qid in judged  # unjudged queries are ignored, as trec_eval ignores them
    ]
    values = {name: dict.fromkeys(qids, 0.0) for name in names}
    if not run:
        return values
    name_of = dict(zip(measures, names, strict=True))
    for metric in ir_measures.iter_calc(list(measures), qrels, run):
        name = name_of.get(metric.measure)
        if name is not None and metric.query_id in judged:
            values[name][metric.query_id] = float(metric.value)
    return values


def evaluate_runs(
    qrels_path: str | Path,
    run_paths: Sequence[str | Path],
    measures: str | Sequence[str] | None = None,
    baseline: str | None = None,
    test: str = "ttest",
    correction: str = "holm",
    alpha: float = 0.05,
) -> EvalResult:
    """Evaluate runs against qrels and test each against ``baseline`` (see the module doc).

    ``baseline`` is one of ``run_paths``, a run's display name, or the path of another run,
    which is then evaluated too and listed first. Without a baseline no test is made.
    """
    import ir_measures

    from clir_toolkit.formats import read_qrels

    if test not in TESTS:
        raise UsageError(f"unknown test {test!r} (choose one of {', '.join(TESTS)})")
    if correction not in CORRECTIONS:
        raise UsageError(
            f"unknown correction {correction!r} (choose one of {', '.join(CORRECTIONS)})"
        )
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must lie between 0 and 1, not {alpha}")
    # Two spellings of one measure (RR and RR(rel=1)) are computed once, under the first.
    first: dict[Any, str] = {}
    for measure, name in zip(parse_measures(measures), _split_measure_names(measures), strict=True):
        first.setdefault(measure, name)
    parsed, names = list(first), list(first.values())
    paths = [Path(p) for p in run_paths]
    if not paths and baseline is None:
        raise UsageError("no run files given (pass one or more TREC run files)")

    baseline_index: int | None = None
    if baseline is not None:
        candidates = [i for i, p in enumerate(paths) if _same_file(p, Path(baseline))]
        if not candidates:
            candidates = [i for i, n in enumerate(_display_names(paths)) if n == baseline]
        if candidates:
            baseline_index = candidates[0]
        elif Path(baseline).is_file():
            paths.insert(0, Path(baseline))
            baseline_index = 0
        else:
            raise UsageError(
                f"baseline {baseline!r} is neither one of the runs "
                f"({', '.join(_display_names(paths))}) nor a run file"
            )
    run_names = _display_names(paths)

    records = read_qrels(qrels_path)
    qrels = [ir_measures.Qrel(q.qid, q.docid, int(q.relevance)) for q in records]
    qids = sorted({q.qid for q in records}, key=_qid_order)
    if not qids:
        raise ClirError(f"{qrels_path}: the qrels judge no query (is it the right file?)")

    per_query = {
        name: _per_query_values(parsed, names, qrels, path, qids)
        for name, path in zip(run_names, paths, strict=True)
    }
    means = {
        run: {m: sum(values[m].values()) / len(qids) for m in names}
        for run, values in per_query.items()
    }

    base_name = run_names[baseline_index] if baseline_index is not None else None
    p_values: dict[str, dict[str, float]] = {}
    if base_name is not None:
        others = [run for run in run_names if run != base_name]
        p_values = {run: {} for run in others}
        for m in names:
            base_values = [per_query[base_name][m][q] for q in qids]
            raw = [
                paired_test([per_query[run][m][q] for q in qids], base_values, test)
                for run in others
            ]
            for run, p in zip(others, _correct(raw, correction), strict=True):
                p_values[run][m] = p

    return EvalResult(
        measures=names,
        runs=run_names,
        qids=qids,
        per_query=per_query,
        means=means,
        baseline=base_name,
        test=test,
        correction=correction,
        p_values=p_values,
        alpha=alpha,
    )


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------


def _marker(result: EvalResult, run: str, measure: str) -> str:
    """``▲``/``▼`` when ``run`` differs significantly from the baseline on ``measure``."""
    p = result.p_values.get(run, {}).get(measure)
    if result.baseline is None or p is None or not p < result.alpha:
        return ""
    difference = result.means[run][measure] - result.means[result.baseline][measure]
    return BETTER if difference > 0 else WORSE if difference < 0 else ""


def _run_label(result: EvalResult, run: str) -> str:
    return f"{run} (baseline)" if run == result.baseline else run


def _legend(result: EvalResult) -> str:
    n = len(result.qids)
    queries = f"{n} {'query' if n == 1 else 'queries'} (every qrels query; missing ones score 0)"
    if result.baseline is None:
        return f"{queries}; no baseline, so no significance tests."
    compared = len(result.runs) - 1
    return (
        f"{BETTER}/{WORSE}: significantly better/worse than the baseline {result.baseline} "
        f"at alpha = {result.alpha:g}, {_TEST_NAMES[result.test]} (two-sided), "
        f"{_CORRECTION_NAMES[result.correction]} over {compared} "
        f"{'run' if compared == 1 else 'runs'} per measure; {queries}."
    )


def _summary_rows(result: EvalResult) -> list[list[str]]:
    return [
        [_run_label(result, run)]
        + [f"{result.means[run][m]:.4f}{_marker(result, run, m)}" for m in result.measures]
        for run in result.runs
    ]


def _query_rows(result: EvalResult) -> list[list[str]]:
    return [
        [run, qid] + [f"{result.per_query[run][m][qid]:.4f}" for m in result.measures]
        for run in result.runs
        for qid in result.qids
    ]


def _aligned(header: list[str], rows: list[list[str]], text_columns: int) -> str:
    """Plain-text table: text columns left-aligned, numbers right-aligned with their markers.

    A value without a marker (and a column name) gets a space in the marker's place, so that
    the last digits line up under the end of the column name.
    """

    def pad(cell: str) -> str:
        return cell if cell.endswith((BETTER, WORSE)) else cell + " "

    table = [row[:text_columns] + [pad(c) for c in row[text_columns:]] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for row in table:
        cells = [
            cell.ljust(widths[i]) if i < text_columns else cell.rjust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _markdown(header: list[str], rows: list[list[str]], text_columns: int) -> str:
    def escape(cell: str) -> str:
        return cell.replace("|", "\\|")

    rule = ["---"] * text_columns + ["---:"] * (len(header) - text_columns)
    lines = ["| " + " | ".join(escape(c) for c in row) + " |" for row in [header, rule, *rows]]
    return "\n".join(lines)


def _csv(result: EvalResult, per_query: bool) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = ["run"] + (["qid"] if per_query else [])
    for m in result.measures:
        header += [m, f"{m} p"]
    writer.writerow(header)
    if per_query:
        for run in result.runs:
            for qid in result.qids:
                row = [run, qid]
                for m in result.measures:
                    row += [f"{result.per_query[run][m][qid]:.4f}", ""]
                writer.writerow(row)
    for run in result.runs:
        row = [run] + (["all"] if per_query else [])
        for m in result.measures:
            p = result.p_values.get(run, {}).get(m)
            row += [f"{result.means[run][m]:.4f}", "" if p is None else f"{p:.4g}"]
        writer.writerow(row)
    return buffer.getvalue().rstrip("\n")


def _json(result: EvalResult, per_query: bool) -> str:
    document: dict[str, Any] = {
        "measures": result.measures,
        "runs": result.runs,
        "baseline": result.baseline,
        "test": result.test,
        "correction": result.correction,
        "alpha": result.alpha,
        "queries": len(result.qids),
        "qids": result.qids,
        "means": result.means,
        "p_values": result.p_values,
    }
    if per_query:
        document["per_query"] = result.per_query
    return json.dumps(document, indent=2, ensure_ascii=False)


def format_result(result: EvalResult, fmt: str = "table", per_query: bool = False) -> str:
    """Render ``result``: runs as rows, measures as columns, values to 4 decimals.

    ``fmt`` is ``table`` (aligned plain text), ``markdown``, ``csv`` (with a ``<measure> p``
    column of corrected p-values after each measure) or ``json`` (means, p-values and, with
    ``per_query``, every per-query value at full precision). In table and markdown a value
    significantly better than the baseline's is followed by ``▲``, a worse one by ``▼``, and a
    legend under the table names the test, the correction, alpha and the number of queries.
    With ``per_query`` the table, markdown and csv first list one line per (run, query), as
    ``trec_eval -q`` does; csv then gives the means in rows whose qid is ``all``.
    The text has no trailing newline.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (choose one of {', '.join(FORMATS)})")
    if fmt == "csv":
        return _csv(result, per_query)
    if fmt == "json":
        return _json(result, per_query)
    text_columns = 2 if per_query else 1
    query_header = ["run", "qid", *result.measures]
    header = ["run", *result.measures]
    if fmt == "table":
        summary = _aligned(header, _summary_rows(result), text_columns=1)
        text = summary + "\n" + _legend(result)
        if per_query:
            text = _aligned(query_header, _query_rows(result), text_columns) + "\n\n" + text
        return text
    blocks = [_markdown(header, _summary_rows(result), text_columns=1), _legend(result)]
    if per_query:
        blocks.insert(0, _markdown(query_header, _query_rows(result), text_columns))
    return "\n\n".join(blocks)
