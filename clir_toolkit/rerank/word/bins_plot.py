"""The kernel-bin analysis of a K-NRM model drawn as a figure (thesis *Neural CLIR*, §6.2).

:func:`clir_toolkit.rerank.word.bins.kernel_bin_analysis` gives, per RBF kernel, its mean
``mu``, its learned weight and how many (query word, document word) pairs fall in its bin:
the thesis' Table 6.4. The figure shows the same numbers in two panels sharing one x axis,
the kernels from ``mu = -0.9`` on the left to the exact-match kernel (labelled ``exact``)
on the right, evenly spaced (the exact kernel's ``mu = 1`` lies only 0.1 from its
neighbour's):

* **learned weight** per bin (the thesis' Figure 6.2): a positive weight (green) makes
  pairs in the bin evidence for relevance, a negative one (red) evidence against it;
* **share of the pairs** per bin, on a log axis since shares range from hundredths of a
  percent to half of all pairs; a bin no pair falls in has no bar and is marked ``0 pairs``.

Read together, they say which bins decide the score and how much text feeds them: a large
weight on a bin that holds 0.01 % of the pairs moves few scores.

Drawn with matplotlib's object API (no display, no global state), imported only when a
figure is drawn, so that the command line starts without it; written as a PNG atomically
(:func:`clir_toolkit.files.atomic_write`), as the other figures of the toolkit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from clir_toolkit.errors import UsageError
from clir_toolkit.figures import write_png
from clir_toolkit.rerank.word.bins import BinRow

PLOT_SUFFIX = ".png"

COLOURS = {"positive": "tab:green", "negative": "tab:red", "share": "tab:blue"}


def check_plot_path(path: str | Path) -> None:
    """Refuse, in one line naming the file, a figure path that does not end in ``.png``."""
    if Path(path).suffix.lower() != PLOT_SUFFIX:
        raise UsageError(f"{path}: the kernel-bin figure is a PNG image; name it FILE{PLOT_SUFFIX}")


def bin_label(row: BinRow) -> str:
    """The x-axis label of a bin: its ``mu``, or ``exact`` for the exact-match kernel."""
    return "exact" if row.exact else f"{row.mu:g}"


def figure(rows: Sequence[BinRow], title: str) -> Any:
    """The two-panel figure of the bins (weights above, shares of pairs below), a matplotlib
    ``Figure`` titled ``title``; the bins are ordered by ``mu``, the exact kernel last."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    ordered = sorted(rows, key=lambda row: (row.exact, row.mu))
    positions = range(len(ordered))
    total = sum(row.pairs for row in ordered)
    chart = Figure(figsize=(8.4, 6.2), layout="constrained")
    weights, shares = chart.subplots(2, 1, sharex=True)

    values = [row.weight for row in ordered]
    weights.bar(
        positions,
        values,
        width=0.7,
        color=[COLOURS["positive" if v >= 0 else "negative"] for v in values],
    )
    weights.axhline(0.0, color="black", linewidth=0.8)
    largest = max((abs(v) for v in values), default=0.0) or 1.0
    for x, value in zip(positions, values, strict=True):
        weights.annotate(
            f"{value:+.3f}",
            (x, value),
            xytext=(0, 3 if value >= 0 else -3),
            textcoords="offset points",
            ha="center",
            va="bottom" if value >= 0 else "top",
            fontsize=7,
        )
    weights.set_ylim(
        min(0.0, min(values, default=0.0)) - 0.18 * largest,
        max(0.0, max(values, default=0.0)) + 0.18 * largest,
    )  # room for the labels above and below the bars
    weights.set_ylabel("learned weight $w_k$")
    weights.grid(axis="y", alpha=0.3)

    percents = [100.0 * row.pairs / total if total else 0.0 for row in ordered]
    filled = [(x, p) for x, p in zip(positions, percents, strict=True) if p > 0]
    shares.set_yscale("log")
    if filled:
        shares.bar([x for x, _ in filled], [p for _, p in filled], width=0.7,
                   color=COLOURS["share"])  # fmt: skip
        smallest = min(p for _, p in filled)
        shares.set_ylim(smallest / 4, max(p for _, p in filled) * 4)
    else:
        shares.set_ylim(0.01, 100.0)
    bottom = shares.get_ylim()[0]
    for x, percent in zip(positions, percents, strict=True):
        if percent > 0:
            shares.annotate(f"{percent:.2f}%", (x, percent), xytext=(0, 3),
                            textcoords="offset points", ha="center", va="bottom",
                            fontsize=7)  # fmt: skip
        else:  # log axes have no zero: an empty bin is a mark on the floor
            shares.annotate("0 pairs", (x, bottom), xytext=(0, 3), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, color="grey")  # fmt: skip
    shares.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}%"))
    shares.set_ylabel(f"share of the {total:,} word pairs")
    shares.grid(axis="y", alpha=0.3)
    shares.set_xticks(list(positions), [bin_label(row) for row in ordered])
    shares.set_xlabel("kernel mean μ (cosine similarity of the pair)")
    chart.suptitle(title, fontsize=10)
    return chart


def plot_title(model: str | Path, run: str | Path, depth: int) -> str:
    """The figure's title: the model file, and the run and depth its pairs came from."""
    return (
        f"K-NRM kernel bins of {Path(model).name}\n"
        f"word pairs of the top {depth} documents per query of {Path(run).name}"
    )


def save_png(rows: Sequence[BinRow], title: str, handle: IO[bytes]) -> None:
    """Draw the figure and write it as PNG into ``handle``
    (:func:`clir_toolkit.figures.write_png`)."""
    write_png(figure(rows, title), handle)
