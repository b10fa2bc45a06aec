"""``clir run``: every recipe on each of its languages, then RESULTS.md.

Recipes are read and checked first (one wrong recipe of many stops the run before any work);
each kind of recipe is run by the function :data:`~clir_toolkit.experiments.tables.KINDS`
names, with one :class:`~clir_toolkit.experiments.context.RunContext` for the whole run.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from clir_toolkit.errors import ClirError
from clir_toolkit.experiments.context import RunContext, Workspace
from clir_toolkit.experiments.recipe import Recipe, RecipeOutcome, check_distinct_names, load_recipe
from clir_toolkit.experiments.tables import KINDS

RecipeRunner = Callable[[Recipe, str, RunContext], "RecipeOutcome | list[RecipeOutcome]"]
"""Runs a recipe on one language: one outcome, or one per point of a rerank sweep."""


def run_recipes(
    paths: Sequence[str | Path],
    workspace: Workspace | None = None,
    quiet: bool = False,
    results: Path | None = None,
    force: bool = False,
) -> Path:
    """Run every recipe on its languages and regenerate RESULTS.md; returns its path.

    A file a recipe made before is reused when it is fresh (same inputs, same settings, same
    toolkit code: :meth:`~clir_toolkit.experiments.context.RunContext.reusable`), unless
    ``force``.
    """
    from clir_toolkit.experiments.results import write_results

    context = RunContext(workspace or Workspace(), quiet=quiet, force=force)
    recipes = [load_recipe(p) for p in paths]
    if not recipes:
        raise ClirError("no recipes given (e.g. clir run baselines/*.toml)")
    check_distinct_names(recipes)
    outcomes: list[RecipeOutcome] = []
    started = time.perf_counter()
    for recipe in recipes:
        runner = recipe_runner(recipe.kind)
        for language in recipe.languages:
            context.log(f"[{time.perf_counter() - started:6.0f} s] {recipe.name} on {language}")
            outcome = runner(recipe, language, context)
            outcomes.extend(outcome if isinstance(outcome, list) else [outcome])
    target = results or recipes[0].path.parent / "RESULTS.md"
    command = "clir run " + " ".join(str(p) for p in paths)
    write_results(target, outcomes, context.workspace, command, time.perf_counter() - started)
    return target


def recipe_runner(kind: str) -> RecipeRunner:
    """The function that runs a recipe of ``kind``
    (:data:`~clir_toolkit.experiments.tables.KINDS`)."""
    module, function = KINDS[kind].split(":")
    runner: RecipeRunner = getattr(importlib.import_module(module), function)
    return runner
