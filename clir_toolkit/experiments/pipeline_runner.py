"""Running a pipeline recipe (``kind = "pipeline"``): ``clir pipeline``'s pipeline as a row.

The recipe holds no stage of its own: what it runs is the one definition of the pipeline
(:mod:`clir_toolkit.pipeline`), as a user would run it for a collection's own topics::

    clir pipeline train --in-domain --collection data/C --output models/C/NAME
    clir pipeline search --models models/C/NAME --index indexes/C --topics SPLIT --output RUN

and as ``clir demo`` runs it. A recipe::

    name = "pipeline"
    kind = "pipeline"
    languages = ["fr", "de"]

    [pipeline]              # optional
    encoder = "use-m3"      # the first stage's dense encoder (default: --in-domain's)

The models are trained on the collection's train split (reused while their inputs, settings
and code are the same: :mod:`clir_toolkit.pipeline.models`), λ is chosen on its dev split,
and the dev and test topics are searched. Each split's run is kept beside the run of the
pipeline's own first stage (``NAME.first-stage.trec``), which RESULTS.md tests it against.
A run is reused while the pipeline's stages and model files, the split's topics, the indexed
collection and the code of the pipeline's search are the same.
"""

from __future__ import annotations

import time
from pathlib import Path

from clir_toolkit.experiments.context import RunContext, ensure_collection, ensure_vectors
from clir_toolkit.experiments.records import Recipe, RecipeOutcome
from clir_toolkit.freshness import mark_fresh

SPLITS = ("dev", "test")
SEARCH_CODE = ("clir_toolkit.pipeline.search",)
"""The code a pipeline run depends on besides the pipeline's files (its import closure:
the hybrid search, the translation, the reranker's scoring)."""


def run_pipeline_recipe(recipe: Recipe, language: str, context: RunContext) -> RecipeOutcome:
    """Train the pipeline for the collection's own topics, then write the dev and test runs
    of one language (and the first stage's of each)."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.pipeline.search import search_key, search_pipeline
    from clir_toolkit.pipeline.train import train_pipeline

    started = time.perf_counter()
    workspace = context.workspace
    family, variant = recipe.collection, recipe.variant
    root = ensure_collection(context, family, language, variant)
    encoder, index = pipeline_index(recipe, language, context)
    models = workspace.models / workspace.collection_name(family, language, variant) / recipe.name
    context.log(f"  training the pipeline of {recipe.name} → {models}")
    pipeline = train_pipeline(
        models, [root], quiet=context.quiet, in_domain=True, encoder=encoder, indexes=[index],
    )  # fmt: skip
    collection = open_collection(root)
    runs = {split: workspace.run(recipe, language, split) for split in SPLITS}
    first = {split: first_stage_run(run) for split, run in runs.items()}
    for split in SPLITS:
        topics = collection.split_file("topics", split)
        key = search_key(models, pipeline, index, topics)
        if context.reusable(runs[split], key, SEARCH_CODE) and first[split].is_file():
            context.log(f"  reusing the {split} run of {recipe.name} on {language} (unchanged)")
            continue
        context.log(f"  searching the {split} topics with the pipeline of {models}")
        runs[split].parent.mkdir(parents=True, exist_ok=True)
        search_pipeline(models, index, topics, runs[split], collection=root, tag=recipe.name,
                        quiet=context.quiet, first_stage_output=first[split])  # fmt: skip
        mark_fresh(runs[split], key, code=SEARCH_CODE)
    chosen = {"hybrid_weight": pipeline.first_stage.hybrid_weight}
    if pipeline.reranking is not None:
        chosen["interpolate"] = pipeline.reranking.interpolate
    seconds = time.perf_counter() - started
    return RecipeOutcome(recipe, language, runs, chosen, seconds, first_stage=first)


def pipeline_index(recipe: Recipe, language: str, context: RunContext) -> tuple[str, Path]:
    """The first stage's encoder and the collection's index holding its vectors (added when
    missing): what ``clir run --ray`` makes in the driver before the jobs share it."""
    from clir_toolkit.pipeline.train import first_stage_defaults

    encoder = recipe.pipeline.get("encoder") or first_stage_defaults(in_domain=True).encoder
    return encoder, ensure_vectors(context, recipe.collection, language, recipe.variant, encoder)


def first_stage_run(run: Path) -> Path:
    """Where the run of the pipeline's first stage is kept beside ``run``."""
    return run.with_name(f"{run.stem}.first-stage.trec")
