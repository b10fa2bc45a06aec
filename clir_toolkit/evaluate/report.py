"""Printing an :class:`~clir_toolkit.evaluate.result.EvalResult`: an aligned table, Markdown,
CSV or JSON; means (and, asked for, per-query values), with ``▲``/``▼`` where a run is
significantly better or worse than the baseline after correction.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.evaluate.result import EvalResult

FORMATS = ("table", "markdown", "csv", "json")


BETTER = "▲"


WORSE = "▼"


_TEST_NAMES = {"ttest": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test"}


_CORRECTION_NAMES = {
    "holm": "Holm correction",
    "bonferroni": "Bonferroni correction",
    "none": "no correction",
}


def significance_mark(result: EvalResult, run: str, measure: str) -> str:
    """``▲``/``▼`` when ``run`` differs significantly from the baseline on ``measure``, else
    nothing."""
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
        + [
            f"{result.means[run][m]:.4f}{significance_mark(result, run, m)}"
            for m in result.measures
        ]
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
