"""``clir run``: every recipe on each of its languages, then RESULTS.md.

Recipes are read and checked first (one wrong recipe of many stops the run before any work);
each kind of recipe is run by the function :data:`~clir_toolkit.experiments.tables.KINDS`
names, with one :class:`~clir_toolkit.experiments.context.RunContext` for the whole run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from clir_toolkit.distributed.cluster import ClusterSpec
from clir_toolkit.errors import ClirError
from clir_toolkit.experiments.context import RunContext, Workspace
from clir_toolkit.experiments.recipe import check_distinct_names, load_recipe
from clir_toolkit.experiments.records import RecipeOutcome
from clir_toolkit.experiments.tables import recipe_runner


def run_recipes(
    paths: Sequence[str | Path],
    workspace: Workspace | None = None,
    quiet: bool = False,
    results: Path | None = None,
    force: bool = False,
    cluster: ClusterSpec | None = None,
) -> Path:
    """Run every recipe on its languages and regenerate RESULTS.md; returns its path. The
    figures that the markdown files beside it quote from it are rewritten too
    (:mod:`clir_toolkit.experiments.figures`).

    A file a recipe made before is reused when it is fresh (same inputs, same settings, same
    code of the modules it depends on:
    :meth:`~clir_toolkit.experiments.context.RunContext.reusable`), unless ``force``. With
    ``cluster``, the (recipe, language) jobs run in parallel on that Ray cluster
    (:mod:`clir_toolkit.experiments.cluster_runner`), with the same outcomes.
    """
    from clir_toolkit.experiments.figures import refresh as refresh_figures
    from clir_toolkit.experiments.results import write_results

    context = RunContext(workspace or Workspace(), quiet=quiet, force=force)
    unique: dict[Path, Path] = {}  # a file named twice (two shell patterns match it) runs once
    for path in paths:
        unique.setdefault(Path(path).resolve(), Path(path))
    recipes = [load_recipe(p) for p in unique.values()]
    if not recipes:
        raise ClirError("no recipes given (e.g. clir run baselines/*.toml)")
    check_distinct_names(recipes)
    outcomes: list[RecipeOutcome] = []
    started = time.perf_counter()
    if cluster is not None:
        from clir_toolkit.experiments.cluster_runner import run_jobs_on_ray

        jobs = [(recipe, language) for recipe in recipes for language in recipe.languages]
        for outcome in run_jobs_on_ray(cluster, jobs, context):
            outcomes.extend(outcome if isinstance(outcome, list) else [outcome])
    for recipe in recipes if cluster is None else ():
        runner = recipe_runner(recipe.kind)
        for language in recipe.languages:
            context.log(f"[{time.perf_counter() - started:6.0f} s] {recipe.name} on {language}")
            outcome = runner(recipe, language, context)
            outcomes.extend(outcome if isinstance(outcome, list) else [outcome])
    target = results or recipes[0].path.parent / "RESULTS.md"
    command = "clir run " + " ".join(str(p) for p in paths)
    write_results(target, outcomes, context.workspace, command, time.perf_counter() - started)
    for note in sorted(target.parent.glob("*.md")):  # the notes beside it quote the new table
        refresh_figures(note)
    return target
