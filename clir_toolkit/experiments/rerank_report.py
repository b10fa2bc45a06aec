"""The reranking sections of RESULTS.md: each reranker's details, and the figures as PNG.

:func:`clir_toolkit.experiments.results.write_results` calls :func:`rerank_sections` when
some recipe outcome is a reranked run (:mod:`clir_toolkit.experiments.rerank_runner`).
Figures, drawn with matplotlib's object API (no display, no global state) and written beside
RESULTS.md:

* a **sweep** (``[rerank.sweep]``) is drawn as the measures of the test split against the
  swept value, with the first stage's values as dotted lines: Liu et al., *Smooth Learning*,
  Figure 4 (ε from 0 to 2) and Figure 5 (negatives per query from 20 to 100);
* rows **without a sweep** that share a ``figure`` are drawn as one panel each: the density
  of the model's score on the training examples, per relevance grade (Figure 3 of the same
  paper, one panel per loss), with SOSL's segment boundaries θ as vertical lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.figures import write_png
from clir_toolkit.files import atomic_write

if TYPE_CHECKING:
    from clir_toolkit.experiments.context import Workspace
    from clir_toolkit.experiments.records import RecipeOutcome

FIGURE_MEASURES = ("P(rel=2)@1", "nDCG@5", "AP", "RR(rel=2)")
"""The measures of Liu et al.'s Figures 4 and 5, spelled for ir_measures."""

PAPER_NAMES = {"P(rel=2)@1": "P_mr@1", "nDCG@5": "NDCG@5", "AP": "MAP", "RR(rel=2)": "MRR_mr"}
GRADE_NAMES = {0: "NR (grade 0)", 1: "SR (grade 1)", 2: "MR (grade 2)"}
GRADE_COLOURS = {0: "tab:red", 1: "tab:orange", 2: "tab:green"}
DEFAULT_THRESHOLDS = (0.2, 0.7)


def rerank_sections(
    outcomes: Sequence[RecipeOutcome],
    workspace: Workspace,
    directory: Path,
    known: Mapping[Path, Mapping[str, float]] | None = None,
) -> list[str]:
    """Markdown lines: the rerankers' table, then every figure (whose PNGs are written).

    ``known`` holds the means (run → measure → value) that RESULTS.md's measures tables
    already computed; runs or measures missing there are evaluated here.
    """
    reranked = [o for o in outcomes if o.rerank is not None]
    lines = [
        "",
        "## Rerankers",
        "",
        "Epoch kept: the epoch with the best dev nDCG@10 when the dev first-stage run is "
        "reranked with the training queries (model selection uses the dev split only). "
        "Query OOV: share of the query words the model reads on dev/test that are not in "
        "its query vocabulary.",
        "",
        "| run | lang | model | trained on | tested with | first stage | epoch kept "
        "| dev nDCG@10 (selection) | training examples | query OOV dev/test | training |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for outcome in reranked:
        details = outcome.rerank
        assert details is not None
        summary = details.summary
        best = summary.get("best_dev")
        lines.append(
            f"| {outcome.recipe.name} | {outcome.language} | {details.model_description} "
            f"| {details.trained_on} | {details.tested_with} | {details.first_stage} "
            f"| {summary.get('best_epoch', '?')} of {summary.get('epochs', '?')} "
            f"| {'—' if best is None else f'{best:.4f}'} | {summary.get('examples', '?')} "
            f"| {_oov(details.query_oov)} "
            f"| {_training_time(details.summary, details.reused)} |"
        )
    figures = _figures(reranked)
    if figures:
        lines += ["", "## Figures"]
        for (name, language), members in sorted(figures.items(), key=lambda item: item[0][0]):
            lines += _figure(name, language, members, workspace, directory, known or {})
    return lines


def _oov(query_oov: dict[str, float]) -> str:
    """``dev / test`` shares, or — for a model without a vocabulary (a fine-tuned encoder)."""
    if not query_oov:
        return "—"
    return f"{query_oov.get('dev', 0):.1%} / {query_oov.get('test', 0):.1%}"


def _training_time(summary: dict[str, Any], reused: bool) -> str:
    seconds = float(summary.get("seconds", 0.0))
    text = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
    return f"{text} (reused)" if reused else text


def _figures(
    outcomes: Sequence[RecipeOutcome],
) -> dict[tuple[str, str], list[RecipeOutcome]]:
    """Outcomes by (figure, language), in the order they first appear."""
    figures: dict[tuple[str, str], list[RecipeOutcome]] = {}
    for outcome in outcomes:
        assert outcome.rerank is not None
        if outcome.rerank.figure:
            figures.setdefault((outcome.rerank.figure, outcome.language), []).append(outcome)
    return figures


def _figure(
    name: str,
    language: str,
    members: Sequence[RecipeOutcome],
    workspace: Workspace,
    directory: Path,
    known: Mapping[Path, Mapping[str, float]],
) -> list[str]:
    first = members[0].rerank
    assert first is not None
    title = f"{first.figure_title or name} ({language})"
    filename = f"{name}-{language}.png"
    recipe = members[0].recipe
    collection = workspace.collection(recipe.collection, language, recipe.variant)
    if first.sweep:
        table = plot_sweep(members, collection, title, directory / filename, known)
    else:
        table = plot_densities(members, title, directory / filename)
    return ["", f"### {title}", "", f"![{title}]({filename})", "", *table]


# ---------------------------------------------------------------------------------------------
# Figures 4 and 5: measures against a swept value
# ---------------------------------------------------------------------------------------------


def _means(
    qrels: Path,
    paths: Sequence[Path],
    measures: Sequence[str],
    known: Mapping[Path, Mapping[str, float]],
) -> dict[Path, Mapping[str, float]]:
    """Mean of each measure for each run: from ``known`` if there, else evaluated."""
    from clir_toolkit.evaluate import evaluate_runs

    means: dict[Path, Mapping[str, float]] = {
        path: known[path] for path in paths if all(m in known.get(path, {}) for m in measures)
    }
    missing = [path for path in dict.fromkeys(paths) if path not in means]
    if missing:
        result = evaluate_runs(qrels, missing, measures=list(measures))
        means.update(
            (path, result.means[run]) for path, run in zip(missing, result.runs, strict=True)
        )
    return means


def plot_sweep(
    members: Sequence[RecipeOutcome],
    collection: Path,
    title: str,
    output: Path,
    known: Mapping[Path, Mapping[str, float]],
) -> list[str]:
    """Draw the test-split measures against the swept value; return a markdown table of them."""
    from matplotlib.figure import Figure

    key = next(iter(members[0].rerank.sweep))  # type: ignore[union-attr]
    points = sorted(members, key=lambda o: o.rerank.sweep[key])  # type: ignore[union-attr]
    xs = [o.rerank.sweep[key] for o in points]  # type: ignore[union-attr]
    measures = (*FIGURE_MEASURES, "nDCG@10")
    test = _means(
        collection / "qrels.test.txt",
        [o.runs["test"] for o in points] + [o.first_stage["test"] for o in points],
        measures,
        known,
    )
    dev = _means(collection / "qrels.dev.txt", [o.runs["dev"] for o in points], ["nDCG@10"], known)

    figure = Figure(figsize=(8.4, 4.4), layout="constrained")
    axes = figure.subplots()
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:red")
    for measure, colour in zip(FIGURE_MEASURES, colours, strict=True):
        curve = [test[o.runs["test"]][measure] for o in points]
        axes.plot(xs, curve, marker="o", color=colour, label=PAPER_NAMES[measure])
        stages = {o.first_stage["test"] for o in points}
        if len(stages) == 1:
            level = test[stages.pop()][measure]
            axes.axhline(level, color=colour, linestyle=":", linewidth=1.2)
    axes.set_xlabel(_axis_label(key))
    axes.set_ylabel("test split")
    if key in LOG_SCALE_KEYS:
        axes.set_xscale("log")
    axes.set_xticks(xs, [f"{x:,}" if isinstance(x, int) else f"{x:g}" for x in xs])
    axes.set_xticks([], minor=True)  # a log axis' own minor labels would overlap the points'
    axes.grid(alpha=0.3)
    figure.suptitle(title, fontsize=11)  # above the legend too: a long title does not run into it
    first_stage = points[0].rerank.first_stage  # type: ignore[union-attr]
    axes.plot([], [], color="grey", linestyle=":", label=f"first stage ({first_stage})")
    figure.legend(fontsize=8, loc="outside lower center", ncols=len(FIGURE_MEASURES) + 1)
    _save(figure, output)

    header = [
        _axis_label(key),
        "nDCG@10 dev",
        "nDCG@10 test",
        *(PAPER_NAMES[m] for m in FIGURE_MEASURES),
    ]
    lines = [
        "Test-split measures of each point (solid) and of the first stage it reranked "
        "(dotted); the last rows of the table are the first stage's.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for x, outcome in zip(xs, points, strict=True):
        values = test[outcome.runs["test"]]
        cells = [
            f"{x:g}" if isinstance(x, float) else str(x),
            f"{dev[outcome.runs['dev']]['nDCG@10']:.4f}",
            f"{values['nDCG@10']:.4f}",
            *(f"{values[m]:.4f}" for m in FIGURE_MEASURES),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    for stage in dict.fromkeys(o.first_stage["test"] for o in points):
        values = test[stage]
        cells = [
            f"first stage {stage.stem}",
            "",
            f"{values['nDCG@10']:.4f}",
            *(f"{values[m]:.4f}" for m in FIGURE_MEASURES),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _axis_label(key: str) -> str:
    return {
        "epsilon": "ε (smoothness of the cosine)",
        "negatives": "negatives per query (training) = candidates reranked",
        "train_queries": "training queries (log scale)",
    }.get(key, key)


LOG_SCALE_KEYS = frozenset({"train_queries"})
"""Swept keys whose values grow by factors: drawn on a logarithmic axis."""


# ---------------------------------------------------------------------------------------------
# Figure 3: densities of the training scores per grade
# ---------------------------------------------------------------------------------------------


def density(values: Sequence[float], grid: Any) -> list[float]:
    """Gaussian kernel density of ``values`` on ``grid`` (a histogram when they are constant)."""
    import numpy as np
    from scipy.stats import gaussian_kde

    data = np.asarray(values, dtype=float)
    points = np.asarray(grid, dtype=float)
    if data.size > 1 and float(data.std()) > 1e-9:
        return [float(v) for v in gaussian_kde(data)(points)]
    # All scores equal (a collapsed model): a narrow spike of area 1 at that value.
    width = float(points[1] - points[0])
    spike = np.zeros_like(points)
    spike[int(np.abs(points - (data[0] if data.size else 0.0)).argmin())] = 1.0 / width
    return [float(v) for v in spike]


def plot_densities(members: Sequence[RecipeOutcome], title: str, output: Path) -> list[str]:
    """One panel per row: score densities per grade; returns a markdown table of the means."""
    import numpy as np
    from matplotlib.figure import Figure

    columns = 2 if len(members) > 1 else 1
    rows = (len(members) + columns - 1) // columns
    figure = Figure(figsize=(4.6 * columns, 3.2 * rows + 0.4), layout="constrained")
    panels = np.atleast_1d(figure.subplots(rows, columns, squeeze=False).ravel())
    grid = np.linspace(-1.05, 1.05, 421)
    lines = [
        "Mean model score on the training examples per grade (and their number).",
        "",
        "| run | model | NR (0) | SR (1) | MR (2) |",
        "|---|---|---|---|---|",
    ]
    for axes, outcome in zip(panels, members, strict=False):
        details = outcome.rerank
        assert details is not None
        for grade in sorted(details.training_scores):
            values = details.training_scores[grade]
            axes.plot(
                grid,
                density(values, grid),
                color=GRADE_COLOURS.get(grade, "black"),
                label=f"{GRADE_NAMES.get(grade, grade)}, n={len(values)}",
            )
        for theta in details.thresholds or DEFAULT_THRESHOLDS:
            axes.axvline(theta, color="grey", linestyle="--", linewidth=0.8)
        axes.set_title(details.model_description, fontsize=10)
        axes.set_xlabel("predicted relevance score")
        axes.set_ylabel("density")
        axes.set_xlim(-1.05, 1.05)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=7, loc="upper left")
        means = {
            g: f"{sum(v) / len(v):+.3f} ({len(v)})" if v else "—"
            for g, v in details.training_scores.items()
        }
        lines.append(
            f"| {outcome.recipe.name} | {details.model_description} | "
            + " | ".join(means.get(g, "—") for g in (0, 1, 2))
            + " |"
        )
    for axes in panels[len(members) :]:
        axes.set_visible(False)
    figure.suptitle(f"{title}: dashed lines at SOSL's θ", fontsize=11)
    _save(figure, output)
    return lines


def _save(figure: Any, output: Path) -> None:
    """Write the figure as PNG, atomically (no date or version in its metadata)."""
    with atomic_write(output, "wb", encoding=None) as handle:
        write_png(figure, handle)
