"""The per-query chart of a :class:`~clir_toolkit.evaluate.compare.Comparison`, written as
PNG, SVG or a self-contained HTML page.

The chart has one bar per query, sorted from the largest gain to the largest loss of the
compared run over the baseline: green bars are wins, red bars losses, ties have no height;
the title gives the measure, the mean delta, the wins/ties/losses and the p-value. The area
on each side of the zero line shows at a glance whether a mean gain is broad or carried by
a few queries (the per-query difference charts of TREC track overviews).

Drawn with matplotlib's object API (no display, no global state; imported only when a chart
is drawn), as the figures of RESULTS.md. An ``.html`` file holds the chart as inline SVG,
whose bars name their query when hovered, and the tables of the largest wins and losses
with their query texts: one file to open in a browser or attach to a report. Every file is
written atomically (:func:`clir_toolkit.files.atomic_write`).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.evaluate.compare import (
    DEFAULT_TOP,
    TEST_NAMES,
    Comparison,
    QueryDelta,
    format_p,
    query_header,
    query_rows,
)
from clir_toolkit.figures import write_png
from clir_toolkit.files import atomic_write

PLOT_SUFFIXES = (".png", ".svg", ".html")
COLOURS = {"win": "tab:green", "loss": "tab:red", "tie": "tab:gray"}
LABELLED_QUERIES = 40
"""Up to this many queries, each bar is labelled with its query id."""


def check_plot_path(path: str | Path) -> str:
    """The chart's format from its file name (``png``, ``svg`` or ``html``), or a one-line
    :class:`UsageError` naming the file."""
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_SUFFIXES:
        raise UsageError(
            f"{path}: cannot draw a chart into a {suffix or 'suffix-less'} file "
            f"(name it {', '.join('FILE' + s for s in PLOT_SUFFIXES)})"
        )
    return suffix[1:]


def figure(comparison: Comparison) -> Any:
    """The sorted per-query delta chart, a matplotlib ``Figure``; bar i has the SVG id
    ``bar-i`` and stands for ``comparison.queries[i]``."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    queries = comparison.queries
    n = len(queries)
    chart = Figure(figsize=(8.4, 4.4), layout="constrained")
    axes = chart.subplots()
    bars = axes.bar(
        range(n),
        [q.delta for q in queries],
        width=0.8 if n <= LABELLED_QUERIES else 1.0,
        color=[COLOURS[q.outcome] for q in queries],
        linewidth=0,
    )
    for index, bar in enumerate(bars):
        bar.set_gid(f"bar-{index}")
    axes.axhline(0.0, color="black", linewidth=0.8)
    largest = max((abs(q.delta) for q in queries), default=0.0)
    limit = max(largest, 0.05) * 1.08
    axes.set_ylim(-limit, limit)  # symmetric, so that gains and losses compare by area
    axes.set_xlim(-0.6, n - 0.4)
    if n <= LABELLED_QUERIES:
        axes.set_xticks(range(n), [q.qid for q in queries], rotation=90, fontsize=7)
    else:
        axes.set_xticks([])
    axes.set_xlabel(f"{n} queries, sorted by Δ (largest gain on the left)")
    axes.set_ylabel(f"Δ {comparison.measure} ({comparison.run} − {comparison.baseline})")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(
        handles=[
            Patch(color=COLOURS["win"], label=f"{comparison.wins} wins"),
            Patch(color=COLOURS["tie"], label=f"{comparison.ties} ties (no bar)"),
            Patch(color=COLOURS["loss"], label=f"{comparison.losses} losses"),
        ],
        loc="upper right",
        fontsize=8,
    )
    axes.set_title(
        f"{comparison.run} against {comparison.baseline}: {comparison.measure} per query\n"
        f"mean Δ {comparison.mean_delta:+.4f}, W/T/L {comparison.wins}/{comparison.ties}/"
        f"{comparison.losses}, {TEST_NAMES[comparison.test]} p = {format_p(comparison.p_value)}",
        fontsize=10,
    )
    return chart


def _tooltip(query: QueryDelta) -> str:
    text = f"{query.qid}: {query.baseline:.4f} → {query.run:.4f} (Δ {query.delta:+.4f})"
    return f"{text} {query.text}" if query.text else text


def svg(comparison: Comparison) -> str:
    """The chart as an SVG document; each bar carries a ``<title>`` (its query, both scores
    and Δ) that a browser shows on hover. The same input gives the same bytes."""
    import io

    import matplotlib

    buffer = io.StringIO()
    # A fixed salt makes the clip-path ids, and so the file, reproducible.
    with matplotlib.rc_context({"svg.hashsalt": "clir compare"}):
        figure(comparison).savefig(buffer, format="svg", metadata={"Date": None})
    queries = comparison.queries

    def titled(match: re.Match[str]) -> str:
        title = html.escape(_tooltip(queries[int(match.group(1))]))
        return f"{match.group(0)}\n   <title>{title}</title>"

    return re.sub(r'<g id="bar-(\d+)">', titled, buffer.getvalue())


_STYLE = """
body { font-family: system-ui, sans-serif; color: #222; max-width: 62em; margin: 2em auto;
       padding: 0 1em; }
svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; margin: 0.5em 0 2em; }
th, td { padding: 0.2em 0.8em; border-bottom: 1px solid #ddd; text-align: left; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
td.win { color: #2ca02c; } td.loss { color: #d62728; }
p.note { color: #666; font-size: 0.9em; }
"""


def _html_table(comparison: Comparison, queries: list[QueryDelta]) -> list[str]:
    """The queries as an HTML table, the columns of the text table; query texts in full."""
    header = query_header(comparison)
    lines = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for query, row in zip(queries, query_rows(comparison, queries), strict=True):
        qid, baseline, run, delta = (html.escape(cell) for cell in row[:4])
        cells = [
            f"<td>{qid}</td>",
            f'<td class="number">{baseline}</td>',
            f'<td class="number">{run}</td>',
            f'<td class="number {query.outcome}">{delta}</td>',
        ]
        if len(header) > 4:
            cells.append(f"<td>{html.escape(query.text)}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return [*lines, "</table>"]


def html_page(comparison: Comparison, top: int = DEFAULT_TOP) -> str:
    """A self-contained HTML page: the chart as inline SVG, then the ``top`` largest wins
    and losses with their query texts."""
    title = f"{comparison.run} against {comparison.baseline}: {comparison.measure} per query"
    drawing = svg(comparison)
    drawing = drawing[drawing.index("<svg") :]  # no XML declaration or DOCTYPE inside HTML
    n = len(comparison.queries)
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{n} queries (every qrels query; a query a run has no answer for scores 0). "
        f"{html.escape(comparison.summary())}.</p>",
        f"<figure>{drawing}<figcaption>One bar per query, sorted by Δ; hover a bar to see "
        "its query.</figcaption></figure>",
    ]
    for heading, queries, total in (
        ("Largest wins", comparison.top_wins(top), comparison.wins),
        ("Largest losses", comparison.top_losses(top), comparison.losses),
    ):
        lines.append(f"<h2>{heading} ({len(queries)} of {total})</h2>")
        lines += _html_table(comparison, queries) if queries else ["<p>None.</p>"]
    lines += [
        '<p class="note">Made by <code>clir compare</code> (clir_toolkit).</p>',
        "</body>",
        "</html>",
    ]
    return "\n".join(lines) + "\n"


def write_plot(comparison: Comparison, path: str | Path, top: int = DEFAULT_TOP) -> Path:
    """Write the chart to ``path``, in the format its suffix names (PNG, SVG or an HTML page
    with the ``top`` largest wins and losses), atomically; return the path."""
    kind = check_plot_path(path)
    if kind == "png":
        chart = figure(comparison)
        with atomic_write(path, "wb", encoding=None) as handle:
            write_png(chart, handle)
    else:
        text = svg(comparison) if kind == "svg" else html_page(comparison, top)
        with atomic_write(path) as handle:
            handle.write(text)
    return Path(path)
