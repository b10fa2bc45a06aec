"""Generating RESULTS.md from the runs that ``clir run`` wrote.

For every collection (family, language and variant) and split, one table of the seeds' measures
over all recipes' runs, with paired t-tests (Holm-corrected) against the recipe marked
``baseline = true``; then, per language, the row of each group that wins on the dev
split's nDCG@10; then, per language whose recipes include human-translated queries
(``topics = "human"``), the best run against them (:func:`best_over_human`); then the
hand-written ``NOTES.md`` beside the recipes, if there is one
(where the results are discussed against the papers' conclusions).

Rerank recipes add a table per collection and split that tests every reranked run against
the first-stage run it reranked (its own, not the baseline row's), the details of each
reranker and the figures (:mod:`clir_toolkit.experiments.rerank_report`).
"""

from __future__ import annotations

import platform
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.evaluate import EvalResult, evaluate_runs, format_result, holm, paired_test
from clir_toolkit.files import atomic_write

if TYPE_CHECKING:
    from clir_toolkit.experiments.context import Workspace
    from clir_toolkit.experiments.records import RecipeOutcome

WIN_MEASURE = "nDCG@10"
ALPHA = 0.05
HUMAN_GOAL = 0.95
"""The share of the human translation's nDCG@10 (test) that the best run aims at."""


def write_results(
    path: Path,
    outcomes: Sequence[RecipeOutcome],
    workspace: Workspace,
    command: str,
    seconds: float,
) -> None:
    """Write RESULTS.md (atomically) for the given recipe outcomes."""
    by_collection: dict[tuple[str, str, str], list[RecipeOutcome]] = defaultdict(list)
    for outcome in outcomes:
        recipe = outcome.recipe
        by_collection[(recipe.collection, outcome.language, recipe.variant)].append(outcome)
    lines = [
        f"# {path.parent.name.capitalize()} results",
        "",
        "Generated — do not edit. Regenerate with:",
        "",
        f"    {command}",
        "",
        f"Took {seconds / 60:.1f} min on {platform.machine()} with "
        f"{_cpu_count()} cores. Measures as in the README (the papers' measures in "
        "ir_measures spelling); ▲/▼: significantly better/worse "
        "than the baseline row (paired t-test, Holm correction over the other rows, "
        "α = 0.05). Parameters in a recipe's [tune] table were chosen on the dev split; the "
        "test split is reported as it came out.",
        "",
        "## Systems",
        "",
        "| run | system | group | parameters chosen on dev |",
        "|---|---|---|---|",
    ]
    seen = set()
    for outcome in outcomes:
        recipe = outcome.recipe
        if recipe.name in seen:
            continue
        seen.add(recipe.name)
        chosen = "; ".join(
            f"{o.language}: " + ", ".join(f"{k}={v}" for k, v in sorted(o.chosen.items()))
            for o in outcomes
            if o.recipe.name == recipe.name and o.chosen
        )
        baseline = " (baseline)" if recipe.baseline else ""
        lines.append(
            f"| {recipe.name}{baseline} | {recipe.title} | {recipe.group} | {chosen or '—'} |"
        )
    winners: list[str] = []
    against_human: list[str] = []
    comparisons: list[list[str]] = []
    means: dict[Path, dict[str, float]] = {}  # run → measure → mean, for the rerank figures
    for (family, language, variant), group in by_collection.items():
        name = workspace.collection_name(family, language, variant)
        base = next((o for o in group if o.recipe.baseline), None)
        by_split: dict[str, EvalResult] = {}
        for split in ("dev", "test"):
            runs = [o.runs[split] for o in group if split in o.runs]
            if not runs:
                continue
            qrels = workspace.collection(family, language, variant) / f"qrels.{split}.txt"
            result = evaluate_runs(qrels, runs, baseline=str(base.runs[split]) if base else None)
            by_split[split] = result
            lines += [
                "",
                f"## {name} — {split} ({len(result.qids)} queries)",
                "",
                format_result(result, "markdown"),
            ]
            if split == "dev":
                winners += _winners(name, group, result)
            means.update(zip(runs, (result.means[r] for r in result.runs), strict=True))
            reranked = [o for o in group if split in o.first_stage and split in o.runs]
            if reranked:
                known = dict(zip(runs, (result.per_query[r] for r in result.runs), strict=True))
                comparisons.append(_first_stage_table(name, split, reranked, qrels, known))
        line = best_over_human(name, group, by_split)
        if line:
            against_human.append(line)
    if winners:
        lines += [
            "",
            f"## Best of each group on the dev split ({WIN_MEASURE})",
            "",
            "| collection | group | best run | nDCG@10 | runner-up |",
            "|---|---|---|---|---|",
            *winners,
        ]
    if against_human:
        lines += [
            "",
            f"## Best run against the human translation ({WIN_MEASURE}, test)",
            "",
            f"The run of English queries with the best dev {WIN_MEASURE} (the best run, chosen "
            "without looking at the test split), its test "
            f"{WIN_MEASURE} divided by that of the human-translated queries (the best of "
            f"them on dev): the share of monolingual retrieval the system reaches (the goal: "
            f"at least {HUMAN_GOAL}).",
            "",
            *against_human,
        ]
    if comparisons:
        lines += [
            "",
            f"## Reranked runs against their own first stage ({WIN_MEASURE})",
            "",
            f"Each reranked run against the first-stage run whose candidates it reranked, on "
            f"the same queries: paired t-test of the per-query {WIN_MEASURE} (two-sided), "
            "Holm correction over the rows of each table; ▲/▼: significantly better/worse "
            "(α = 0.05).",
        ]
        for table in comparisons:
            lines += ["", *table]
    if any(o.rerank is not None for o in outcomes):
        from clir_toolkit.experiments.rerank_report import rerank_sections

        lines += rerank_sections(outcomes, workspace, path.parent, means)
    notes = path.parent / "NOTES.md"
    if notes.is_file():
        lines += ["", notes.read_text(encoding="utf-8").rstrip()]
    with atomic_write(path) as handle:
        handle.write("\n".join(lines) + "\n")


def _first_stage_table(
    collection: str,
    split: str,
    outcomes: Sequence[RecipeOutcome],
    qrels: Path,
    known: dict[Path, dict[str, dict[str, float]]],
) -> list[str]:
    """Markdown rows: each reranked run against its own first stage, paired t-test + Holm.

    ``known`` holds the per-query values (measure → qid → value) of the runs already
    evaluated for the measures table; the other first-stage runs are evaluated here.
    """
    paths = list(dict.fromkeys(p for o in outcomes for p in (o.first_stage[split], o.runs[split])))
    per_query = {path: values[WIN_MEASURE] for path, values in known.items()}
    missing = [p for p in paths if p not in per_query]
    if missing:
        result = evaluate_runs(qrels, missing, measures=WIN_MEASURE)
        runs = (result.per_query[run][WIN_MEASURE] for run in result.runs)
        per_query.update(zip(missing, runs, strict=True))
    qids = list(per_query[paths[0]])  # every qrels query, in the evaluation's order
    rows, raw = [], []
    for outcome in outcomes:
        before, after = per_query[outcome.first_stage[split]], per_query[outcome.runs[split]]
        raw.append(paired_test([after[q] for q in qids], [before[q] for q in qids]))
        mean_before = sum(before.values()) / len(qids)
        mean_after = sum(after.values()) / len(qids)
        rows.append((outcome, mean_before, mean_after))
    lines = [
        f"### {collection} — {split} ({len(qids)} queries)",
        "",
        f"| run | first stage | {WIN_MEASURE} first stage → reranked | Δ | p (Holm) |",
        "|---|---|---|---|---|",
    ]
    for (outcome, before_mean, after_mean), p in zip(rows, holm(raw), strict=True):
        delta = after_mean - before_mean
        marker = ("▲" if delta > 0 else "▼" if delta < 0 else "") if p < ALPHA else ""
        lines.append(
            f"| {outcome.recipe.name} | {outcome.first_stage[split].stem} | "
            f"{before_mean:.4f} → {after_mean:.4f}{marker} | {delta:+.4f} | {p:.3g} |"
        )
    return lines


def best_over_human(
    collection: str, group: Sequence[RecipeOutcome], results: dict[str, EvalResult]
) -> str | None:
    """``- C: best / human: X (best run R, nDCG@10 test A / H)``, or None without a run of
    human-translated queries or of English ones on both splits.

    The best run and the human run are each the best of their kind by dev nDCG@10; X is the
    ratio of their test nDCG@10.
    """
    if set(results) != {"dev", "test"}:
        return None

    def score(outcome: RecipeOutcome, split: str) -> float:
        return results[split].means[outcome.runs[split].stem][WIN_MEASURE]

    def best(topics: str) -> RecipeOutcome | None:
        kind = [o for o in group if o.recipe.topics == topics and {"dev", "test"} <= set(o.runs)]
        return max(kind, key=lambda o: (score(o, "dev"), o.runs["dev"].stem), default=None)

    system, human = best("english"), best("human")
    if system is None or human is None or score(human, "test") == 0:
        return None
    mine, theirs = score(system, "test"), score(human, "test")
    return (
        f"- {collection}: best / human: {mine / theirs:.3f} (best run {system.runs['test'].stem}, "
        f"{WIN_MEASURE} test {mine:.4f} / {theirs:.4f} of {human.runs['test'].stem})"
    )


def _winners(collection: str, group: Sequence[RecipeOutcome], result: EvalResult) -> list[str]:
    """One table row per group of recipes with at least two members."""
    by_group: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for outcome in group:
        score = result.means[outcome.runs["dev"].stem][WIN_MEASURE]
        for group_name in outcome.recipe.groups:
            by_group[group_name].append((score, outcome.recipe.name))
    rows = []
    for name, members in sorted(by_group.items()):
        if len(members) < 2:
            continue
        ranked = sorted(members, key=lambda m: (-m[0], m[1]))
        best, second = ranked[0], ranked[1]
        rows.append(
            f"| {collection} | {name} | {best[1]} | {best[0]:.4f} | {second[1]} ({second[0]:.4f}) |"
        )
    return rows


def _cpu_count() -> int:
    import os

    return os.cpu_count() or 1
