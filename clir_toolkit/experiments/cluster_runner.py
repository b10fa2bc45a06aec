"""``clir run --ray CLUSTER``: the recipes' (recipe, language) jobs in parallel on Ray.

Each job is what one process does for that recipe and language (the runner of its kind,
:data:`~clir_toolkit.experiments.tables.KINDS`), so its runs, models and outcome are the
same; only what several jobs share is made first, once, in the driver, so that no two
workers build it at the same time:

1. every collection and index the jobs read (:func:`~.context.ensure_index`), the
   ``"auto"`` resources of their search options (parallel text, embeddings), the fine-tuned
   models that search recipes search through (:func:`~.search_runner.fine_tuned_model`),
   the first-stage runs of the rerank recipes (:func:`~.search_runner.ensure_first_stage`),
   and the indexes with their vectors that pipeline recipes search
   (:func:`~.pipeline_runner.pipeline_index`);
2. then, in waves: the search recipes; the rerank recipes that train their own model and
   the pipeline recipes; the rerank recipes that reuse another's (``model_from``), once
   those models exist.

The outcomes come back in the order of the recipes, and the driver writes RESULTS.md as one
process does (the same runs and tables; where two recipes share a model, which of them
trained it and which reused it may differ, and so may the training times). A job whose
worker dies is run again by Ray; every file a job writes is written atomically and checked
for freshness, so a job run twice leaves what one run leaves.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from clir_toolkit.distributed.cluster import RETRIES, ClusterSpec, connected, gather
from clir_toolkit.experiments.context import RunContext, ensure_index, resolve_auto_resources
from clir_toolkit.experiments.pipeline_runner import pipeline_index
from clir_toolkit.experiments.recipe import find_recipe
from clir_toolkit.experiments.records import Recipe, RecipeOutcome
from clir_toolkit.experiments.rerank_table import rerank_spec, sweep_recipes
from clir_toolkit.experiments.search_runner import (
    ALL_SPLITS,
    SPLITS,
    ensure_first_stage,
    fine_tuned_model,
)
from clir_toolkit.experiments.tables import recipe_runner

Job = tuple[Recipe, str]
"""A recipe and one of its languages."""


def _run_job(directory: str, recipe: Recipe, language: str, context: RunContext) -> Any:
    """What a worker does: run one recipe on one language, from the driver's directory."""
    os.chdir(directory)  # the workspace and the recipes may be named relative to it
    return recipe_runner(recipe.kind)(recipe, language, context)


def prepare(jobs: Sequence[Job], context: RunContext) -> None:
    """Step 1: what several jobs would otherwise build at the same time."""
    for recipe, language in jobs:
        ensure_index(context, recipe.collection, language, recipe.variant)
        if recipe.kind == "search":
            resolve_auto_resources(recipe.search, language, context)
            fine_tuned_model(recipe, language, context)
            continue
        if recipe.kind == "pipeline":  # trains in its own directory; shares the index
            pipeline_index(recipe, language, context)
            continue
        for point, _ in sweep_recipes(recipe):
            spec = rerank_spec(point)
            # A recipe that reuses another's model (model_from) reranks its own first stage's
            # dev and test runs; the model's training runs are the other recipe's.
            stages = [("first_stage", spec.first_stage, SPLITS if spec.model_from else ALL_SPLITS)]
            if spec.model_from is None:
                stages.append(("train_first_stage", spec.train_first_stage, ALL_SPLITS))
            for key, name, splits in stages:
                first = find_recipe(point, name, "search", key)
                resolve_auto_resources(first.search, language, context)
                ensure_first_stage(first, language, context, splits)


def waves(jobs: Sequence[Job]) -> list[list[int]]:
    """Step 2: the jobs by wave (indices into ``jobs``): search recipes, rerank recipes that
    train their model, rerank recipes that reuse another's."""

    def wave(index: int) -> int:
        recipe = jobs[index][0]
        if recipe.kind == "search":
            return 0
        return 2 if "model_from" in recipe.rerank else 1

    order: list[list[int]] = [[], [], []]
    for index in range(len(jobs)):
        order[wave(index)].append(index)
    return [members for members in order if members]


def run_jobs_on_ray(
    cluster: ClusterSpec, jobs: Sequence[Job], context: RunContext
) -> list[RecipeOutcome | list[RecipeOutcome]]:
    """The outcome of every job, in the order of ``jobs``, computed on ``cluster``."""
    prepare(jobs, context)
    directory = os.getcwd()
    results: dict[int, Any] = {}
    with connected(cluster) as ray:
        task = ray.remote(max_retries=RETRIES, retry_exceptions=False)(_run_job)
        for members in waves(jobs):
            context.log(f"on Ray ({cluster.label}): {len(members)} job(s)")
            pending = [task.remote(directory, *jobs[i], context) for i in members]
            results.update(zip(members, gather(ray, pending), strict=True))
    return [results[i] for i in range(len(jobs))]
