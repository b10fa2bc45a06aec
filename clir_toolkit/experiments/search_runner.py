"""Running a search recipe (``kind = "search"``): first-stage runs of the dev and test splits.

Values in ``[tune]`` are chosen by nDCG@10 on the dev split (tuning runs retrieve the top
:data:`TUNE_HITS` only, in a scratch directory: the runs in place are replaced only by
complete final runs), then the dev and test runs are written with the chosen values. A
run is reused when it is fresh (:meth:`~clir_toolkit.experiments.context.RunContext.reusable`):
its sidecar records the recipe file, the split's topics and the indexed collection it was
made from, its code (:func:`run_code`) and, for a dense or hybrid run, the version of its
encoder (whose document vectors are added to the index when it holds none:
:func:`~clir_toolkit.experiments.context.ensure_vectors`) and the fine-tuned model it
searches through (``[search] model_from``: :func:`fine_tuned_model`). A rerank recipe's first stage
(:func:`ensure_first_stage`) goes through the same rule with the same key, for the train
split as well; the train run of a first stage with a ``[tune]`` table is searched with the
values chosen on dev, and its key records them.
"""

from __future__ import annotations

import importlib
import itertools
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.experiments.context import (
    RunContext,
    ensure_index,
    ensure_vectors,
    resolve_auto_resources,
)
from clir_toolkit.experiments.records import Recipe, RecipeOutcome
from clir_toolkit.experiments.tables import SEARCH_PARAMS
from clir_toolkit.files import scratch
from clir_toolkit.freshness import digest, mark_fresh, read_sidecar
from clir_toolkit.params import show
from clir_toolkit.translate.pipeline import TRANSLATION_CODE

if TYPE_CHECKING:
    from clir_toolkit.translate.pipeline import TranslationOptions

SPLITS = ("dev", "test")
ALL_SPLITS = ("train", "dev", "test")
TUNE_MEASURE = "nDCG@10"
TUNE_HITS = 20
RUN_CODE = (__name__, *TRANSLATION_CODE)
"""The code a first-stage run depends on (:func:`clir_toolkit.freshness.code_fingerprint`):
this module and what it imports — search, translation, expansion, analysis, the recipes'
declared defaults — with the translators and expanders the registry loads by name
(:data:`~clir_toolkit.translate.pipeline.TRANSLATION_CODE`), but not the rerankers, the
reports or the command line."""
DENSE_CODE = ("clir_toolkit.search.dense", "clir_toolkit.search.hybrid")
"""The dense and hybrid searches, part of the code of a dense or hybrid run only
(:func:`run_code`). This module reaches them by name (:func:`_dense_search`), not by an
import: it imports the fine-tuned encoders (for ``clir search --model``), and a change to
their training code must not make BM25 runs stale."""


def search_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """Every ``[search]`` option: the given ones, the others at their declared defaults."""
    return {key: param.default for key, param in SEARCH_PARAMS.items()} | dict(given)


def translation_options(given: Mapping[str, Any]) -> TranslationOptions:
    """The :class:`TranslationOptions` of ``[search]`` (or ``[rerank]``) translation keys."""
    from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS, TranslationOptions

    values = search_options(given)
    return TranslationOptions.of({key: values[key] for key in TRANSLATION_PARAMS})


def search_run(
    recipe: Recipe,
    options: dict[str, Any],
    index: Path,
    topics_path: Path,
    output: Path,
    language: str,
    components: dict[tuple[Any, ...], Any] | None = None,
    model: Path | None = None,
) -> None:
    """One first-stage run with the recipe's options (``clir search`` as a library call):
    BM25 of the translated queries, the dense run of the topics' own text (``dense``), or
    the two fused (``hybrid``). A dense or hybrid run needs the index's vectors by the
    options' encoder (:func:`first_stage_index`); ``model``, a fine-tuned encoder, encodes
    its queries and documents through its towers (``clir search --model``). ``components``
    keeps a hybrid run's two searched runs for the next call that differs in its weight or
    ``hits`` alone (the points of a ``[tune]`` grid of weights, then the final dev run),
    which then only fuses."""
    from clir_toolkit.expand.feedback import feedback_from
    from clir_toolkit.formats import read_topics
    from clir_toolkit.search import search_to_run
    from clir_toolkit.translate.pipeline import build_queries

    values = search_options(options)
    topics = read_topics(topics_path)
    common = {"hits": values["hits"], "tag": recipe.name, "progress": False}
    if values["dense"]:
        # The encoder maps the topic's own text near its documents: nothing to translate.
        _dense_search("dense").dense_search_to_run(
            index, topics, output, encoder=values["encoder"], model=model, **common
        )
        return
    translation = translation_options(values)
    if recipe.topics == "human":
        translation = replace(translation, translate="none", expand=None)
    queries = build_queries(topics, translation, language)
    bm25 = {
        "k1": values["k1"],
        "b": values["b"],
        "structure": values["structure"],
        "feedback": feedback_from(values),
    }
    if values["hybrid"]:
        dense = _dense_search("hybrid")
        searched = None
        if components is not None:
            depth = dense.check_hybrid(queries, topics, values["hybrid_weight"], values["hits"])
            key = (str(topics_path), depth, *sorted(
                (name, repr(value)) for name, value in values.items()
                if name not in ("hybrid_weight", "hits")
            ))  # fmt: skip
            if key not in components:
                components[key] = dense.hybrid_components(
                    index, queries, topics, depth=depth, tag=recipe.name,
                    encoder=values["encoder"], model=model, progress=False, **bm25,
                )  # fmt: skip
            searched = components[key]
        dense.hybrid_search_to_run(
            index, queries, topics, output, hybrid_weight=values["hybrid_weight"],
            encoder=values["encoder"], model=model, components=searched, **common, **bm25,
        )  # fmt: skip
    else:
        search_to_run(index, queries, output, **common, **bm25)


def _dense_search(kind: str) -> Any:
    """The module of the ``dense`` or the ``hybrid`` search, of :data:`DENSE_CODE`."""
    return importlib.import_module(f"clir_toolkit.search.{kind}")


def fine_tuned_model(recipe: Recipe, language: str, context: RunContext) -> Path | None:
    """The model file of the rerank recipe that ``[search] model_from`` names, for
    ``language`` (trained there first when it is missing or stale: the rule of
    :func:`~clir_toolkit.experiments.rerank_training.train_model`); None without one.

    It must fine-tune a pretrained encoder (``[rerank] pretrained``), the recipe's
    ``encoder``, whose document vectors its towers read. The modules are reached by name, as
    :data:`DENSE_CODE` is: a run through the model depends on the model file, whose content
    is in the run's key (:func:`run_key`), not on the training code, and a BM25 run depends
    on neither.
    """
    name = recipe.search.get("model_from")
    if name is None:
        return None
    recipes = importlib.import_module("clir_toolkit.experiments.recipe")
    training = importlib.import_module("clir_toolkit.experiments.rerank_training")
    trainer = recipes.find_recipe(recipe, name, "rerank", "model_from", table="search")
    encoder = search_options(recipe.search)["encoder"]
    pretrained = training.rerank_spec(trainer).pretrained
    if pretrained != encoder or trainer.rerank.get("sweep"):
        raise FormatError(
            recipe.path, None,
            f"[search] model_from = {show(name)} names {trainer.path}, which "
            + ("sweeps several models" if trainer.rerank.get("sweep")
               else f"does not fine-tune the encoder {show(encoder)} of this recipe"),
            f'name a rerank recipe with [rerank] pretrained = "{encoder}" and no sweep',
        )  # fmt: skip
    path: Path = training.train_model(trainer, language, context).path
    return path


def run_code(recipe: Recipe) -> tuple[str, ...]:
    """The code the recipe's runs depend on: :data:`RUN_CODE`, and :data:`DENSE_CODE` when
    a point of its grid is dense or hybrid."""
    return (*RUN_CODE, *DENSE_CODE) if dense_encoders(recipe) else RUN_CODE


def first_stage_index(
    context: RunContext, recipe: Recipe, language: str, options: Mapping[str, Any]
) -> Path:
    """The index a run of ``recipe`` with ``options`` searches, made if missing: with the
    documents' vectors by the options' encoder when the run is dense or hybrid."""
    values = search_options(options)
    if values["dense"] or values["hybrid"]:
        return ensure_vectors(
            context, recipe.collection, language, recipe.variant, values["encoder"]
        )
    return ensure_index(context, recipe.collection, language, recipe.variant)


def dense_encoders(recipe: Recipe) -> list[str]:
    """The encoders whose vectors the recipe's runs may search: none when no point of its
    grid is dense or hybrid."""
    defaults = search_options(recipe.search)

    def values(key: str) -> list[Any]:
        return recipe.tune.get(key, [defaults[key]])

    if True not in values("dense") and True not in values("hybrid"):
        return []
    return sorted(set(values("encoder")))


def grid(tune: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the [tune] values (one empty combination when none)."""
    keys = sorted(tune)
    return [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(tune[k] for k in keys))
    ]


def run_key(recipe: Recipe, topics: Path, index: Path, model: Path | None = None) -> str:
    """What a first-stage run is made from: the recipe file, the split's topics, the indexed
    collection and, for a dense or hybrid run, the version of each encoder whose vectors it
    searches and the fine-tuned ``model`` it searches through (its code, :func:`run_code`,
    is checked beside the key)."""
    from clir_toolkit.encoders import encoder_fingerprint
    from clir_toolkit.files import sha256_file
    from clir_toolkit.index import read_index_info

    inputs: dict[str, Any] = {
        "recipe_sha256": sha256_file(recipe.path),
        "topics_sha256": sha256_file(topics),
        "index": read_index_info(index).collection_sha256,
    }
    encoders = dense_encoders(recipe)
    if encoders:  # (a BM25 run's key is what it was before dense runs)
        inputs["encoders"] = {name: encoder_fingerprint(name) for name in encoders}
    if model is not None:
        inputs["model_sha256"] = sha256_file(model)
    return digest(inputs)


def run_search_recipe(recipe: Recipe, language: str, context: RunContext) -> RecipeOutcome:
    """Tune on dev (if asked), then write the dev and test runs of one language."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.evaluate import evaluate_runs

    started = time.perf_counter()
    workspace = context.workspace
    model = fine_tuned_model(recipe, language, context)
    index = ensure_index(context, recipe.collection, language, recipe.variant)
    collection = open_collection(workspace.collection(recipe.collection, language, recipe.variant))
    topics = {split: collection.split_file(topics_kind(recipe.topics), split) for split in SPLITS}
    runs = {split: workspace.run(recipe, language, split) for split in SPLITS}
    keys = {split: run_key(recipe, topics[split], index, model) for split in SPLITS}
    code = run_code(recipe)
    if all(context.reusable(runs[split], keys[split], code) for split in SPLITS):
        context.log(f"  reusing the runs of {recipe.name} on {language} (unchanged)")
        earlier = read_sidecar(runs["dev"]).get("chosen", {})
        return RecipeOutcome(recipe, language, runs, earlier, 0.0)
    chosen: dict[str, Any] = {}
    search = resolve_auto_resources(recipe.search, language, context)
    candidates = grid(recipe.tune)
    components: dict[tuple[Any, ...], Any] = {}  # a hybrid run's two runs, searched once
    if len(candidates) > 1:
        # The tuning runs are written in a scratch directory beside the dev run, never over
        # it: until the final runs replace them, the earlier runs stay complete (clir run
        # --force interrupted while tuning leaves them and their sidecars as they were).
        best = None
        with scratch(runs["dev"]) as tuning:
            trial = tuning / runs["dev"].name
            for combination in candidates:
                # nDCG@10 needs the top 10 only: tuning runs retrieve 20, the final runs all.
                options = {**search, **combination, "hits": TUNE_HITS}
                searched = first_stage_index(context, recipe, language, options)
                search_run(
                    recipe, options, searched, topics["dev"], trial, language, components, model
                )
                result = evaluate_runs(
                    collection.split_file("qrels", "dev"), [trial], measures=TUNE_MEASURE
                )
                score = next(iter(result.means.values()))[TUNE_MEASURE]
                if best is None or score > best[0]:
                    best = (score, combination)
        assert best is not None
        chosen = best[1]
    elif candidates and candidates[0]:
        chosen = candidates[0]
    searched = first_stage_index(context, recipe, language, {**search, **chosen})
    for split in SPLITS:
        # Each run replaces the earlier one atomically, complete; its sidecar follows (a run
        # whose sidecar is still the earlier one's is not fresh: its checksum differs).
        search_run(recipe, {**search, **chosen}, searched, topics[split], runs[split], language,
                   components, model)  # fmt: skip
        mark_fresh(runs[split], keys[split], {"chosen": chosen}, code)
    return RecipeOutcome(recipe, language, runs, chosen, time.perf_counter() - started)


def topics_kind(topics: str) -> str:
    """The collection's topics file for ``"english"`` or ``"human"`` queries."""
    return "topics-human" if topics == "human" else "topics"


def ensure_first_stage(
    search: Recipe, language: str, context: RunContext, splits: tuple[str, ...] = ALL_SPLITS
) -> dict[str, Path]:
    """The search recipe's runs of ``splits`` (train, dev and test), made if not fresh.

    A recipe with a ``[tune]`` table (the hybrid run's weight, say) is first run as a search
    recipe (:func:`run_search_recipe`: its values chosen on dev, its dev and test runs
    written or reused); its train run is then made with the values chosen on dev, which its
    key records. A reranker that only reranks (``model_from``) asks for dev and test alone.
    """
    from clir_toolkit.collection import open_collection

    chosen = run_search_recipe(search, language, context).chosen if search.tune else {}
    workspace = context.workspace
    index = ensure_index(context, search.collection, language, search.variant)
    collection = open_collection(workspace.collection(search.collection, language, search.variant))
    model = fine_tuned_model(search, language, context)
    runs = {}
    for split in splits:
        topics = collection.split_file(topics_kind(search.topics), split)
        if not topics.is_file():
            raise ClirError(f"{topics}: no such file (a reranker needs train, dev and test splits)")
        output = workspace.run(search, language, split)
        runs[split] = output
        if search.tune and split in SPLITS:
            continue  # written by run_search_recipe with the values chosen on dev
        key = run_key(search, topics, index, model)
        if chosen:
            key = digest({"run": key, "chosen": chosen})
        if not context.reusable(output, key, run_code(search)):
            context.log(f"first stage {search.name} on {language}, {split} split → {output}")
            options = {**resolve_auto_resources(search.search, language, context), **chosen}
            searched = first_stage_index(context, search, language, options)
            search_run(search, options, searched, topics, output, language, model=model)
            mark_fresh(output, key, {"chosen": chosen}, run_code(search))
    return runs
