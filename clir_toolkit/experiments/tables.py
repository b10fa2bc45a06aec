"""The tables of a recipe file, each key declared once: type, choices, default, doc.

A recipe's top-level keys (:data:`RECIPE_PARAMS`), its ``[search]`` table (the options of
``clir search``, :data:`SEARCH_PARAMS`), its ``[tune]`` grid (lists of the same) and a rerank
recipe's ``[rerank]`` table (:data:`RERANK_PARAMS`: the training options as
:class:`~clir_toolkit.rerank.word.train_config.TrainConfig` declares them, the translation
options as ``[search]`` does, the scoring options as
:func:`~clir_toolkit.rerank.score.score_run` does).
Validation, error messages and defaults all come from these declarations
(:mod:`clir_toolkit.params`); :data:`KINDS` names the function that runs each kind of recipe.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from clir_toolkit import registry
from clir_toolkit.encoders import ENCODER_NAMES
from clir_toolkit.expand.feedback import FEEDBACK_PARAMS
from clir_toolkit.params import SAFE_NAME, Param, declare, renamed
from clir_toolkit.search import BM25_PARAMS
from clir_toolkit.translate.pipeline import TRANSLATION_PARAMS
from clir_toolkit.vectors import DEFAULT_DENSE_ENCODER

if TYPE_CHECKING:
    from clir_toolkit.experiments.context import RunContext
    from clir_toolkit.experiments.records import Recipe, RecipeOutcome

KINDS = {
    "search": "clir_toolkit.experiments.search_runner:run_search_recipe",
    "rerank": "clir_toolkit.experiments.rerank_runner:run_rerank_recipe",
    "pipeline": "clir_toolkit.experiments.pipeline_runner:run_pipeline_recipe",
}
"""The kinds of recipe (``kind = "..."``) and the function that runs one on a language."""

RecipeRunner = Callable[["Recipe", str, "RunContext"], "RecipeOutcome | list[RecipeOutcome]"]
"""Runs a recipe on one language: one outcome, or one per point of a rerank sweep."""


def recipe_runner(kind: str) -> RecipeRunner:
    """The function that runs a recipe of ``kind``
    (:data:`~clir_toolkit.experiments.tables.KINDS`)."""
    module, function = KINDS[kind].split(":")
    runner: RecipeRunner = getattr(importlib.import_module(module), function)
    return runner


DENSE_PARAMS: dict[str, Param] = importlib.import_module("clir_toolkit.search.dense").DENSE_PARAMS
"""``clir search``'s dense and hybrid options, by name: the search module is part of the code
of dense and hybrid runs only (``search_runner.DENSE_CODE``), not of every recipe's runs."""

DENSE_KEYS = ("dense", "hybrid", "hybrid_weight", "encoder")
"""The options of ``clir search``'s dense and hybrid first stages that a recipe takes (not
``model``, ``approximate`` and ``ef_search``: a recipe searches every vector of the
encoder it names)."""


def _search_params() -> dict[str, Param]:
    """``clir search``'s declared options (translation, BM25, feedback, dense and hybrid),
    with what differs in a recipe: ``parallel`` and ``embed`` may be ``"auto"``;
    ``keep_source`` defaults to 0 and ``structure`` to ``"or"`` (the recipes' rows were
    measured so; each recipe says otherwise where it needs to); ``encoder`` defaults to
    :data:`~clir_toolkit.vectors.DEFAULT_DENSE_ENCODER` (the recipe, not the index, says
    which vectors its runs come from: ``clir run`` adds them to the index when missing) and
    must name an encoder; no ``threads``; ``model_from`` names the rerank recipe whose
    fine-tuned encoder a dense or hybrid run searches through, where ``clir search`` takes
    the model file (``--model``)."""
    translation = dict(TRANSLATION_PARAMS)
    keep_source = translation.pop("keep_source")
    search = {key: BM25_PARAMS[key] for key in ("structure", "k1", "b", "hits")}
    dense = {key: DENSE_PARAMS[key] for key in DENSE_KEYS}
    recipe = {
        "parallel": dataclasses.replace(
            translation["parallel"], doc='parallel text of dict_mode = "weighted" ("auto": built)'
        ),
        "embed": dataclasses.replace(
            translation["embed"], doc='aligned embeddings, a .vec file ("auto": trained)'
        ),
        "keep_source": dataclasses.replace(
            keep_source, default=0.0, doc="weight of the kept English word, relative to the "
            "best translation (0: translations only; clir search's default is 0.5)",
        ),
        "structure": dataclasses.replace(search["structure"], default="or"),
        "encoder": dataclasses.replace(
            dense["encoder"], default=DEFAULT_DENSE_ENCODER, optional=False, choices=ENCODER_NAMES,
            doc="the sentence encoder of dense and hybrid: its vectors are added to the index "
            "when missing",
        ),
        "model_from": Param(
            "model_from", str, optional=True, form=SAFE_NAME,
            doc="the dense and hybrid runs through the towers of a fine-tuned encoder (clir "
            "search --model): the rerank recipe of the directory that trains it "
            "(pretrained = ...), trained first when missing",
        ),
    }  # fmt: skip
    params = {**translation, "keep_source": keep_source, **search, **FEEDBACK_PARAMS, **dense}
    params["model_from"] = recipe["model_from"]
    return {key: recipe.get(key, param) for key, param in params.items()}


SEARCH_PARAMS = _search_params()
"""The ``[search]`` table: the options of ``clir search``, with underscores."""

SEARCH_FIX = f"use the option names of 'clir search' with underscores: {', '.join(SEARCH_PARAMS)}"


RECIPE_PARAMS = declare(
    Param("name", str, doc="the run's name and tag, a file name (default: the recipe's)",
          form=SAFE_NAME),
    Param("title", str, doc="the row label in RESULTS.md (default: the name)"),
    Param("group", str, "other", 'rows compared with each other (several: a list)',
          shape="one or list"),
    Param("collection", str, "manpages",
          "the collection family: Debian man pages or package descriptions (DDTP), or a "
          "plug-in's", choices=registry.names("collections")),
    Param("languages", str, ("fr",), "the family's collections en→L", shape="list"),
    Param("variant", str, "standard",
          "the collection variant, one of the family's (manpages, ddtp: standard or hard)"),
    Param("topics", str, "english", "the queries: English, or the human translations",
          choices=("english", "human")),
    Param("baseline", bool, False, "the run others are tested against"),
    Param("kind", str, "search", "first stage, a neural reranker, or clir pipeline's pipeline",
          choices=tuple(KINDS)),
)  # fmt: skip
"""The top-level keys of a recipe; its tables are ``[search]``, ``[tune]``, ``[rerank]`` and
``[pipeline]``."""


TABLES = ("search", "tune", "rerank", "pipeline")


PIPELINE_PARAMS = declare(
    Param("encoder", str, doc="the first stage's dense encoder, whose towers are fine-tuned "
          "(default: clir pipeline train --in-domain's)", choices=ENCODER_NAMES),
)  # fmt: skip
"""The ``[pipeline]`` table of a ``kind = "pipeline"`` recipe
(:mod:`clir_toolkit.experiments.pipeline_runner`)."""


# [rerank] key → TrainConfig field.
TRAINING_KEYS = {
    "model": "model",
    "encoder": "encoder",
    "loss": "loss",
    "negatives": "negatives_per_query",
    "pairs_per_query": "pairs_per_query",
    "epochs": "epochs",
    "lr": "lr",
    "batch_size": "batch_size",
    "dim": "dim",
    "max_query_len": "max_query_len",
    "max_doc_len": "max_doc_len",
    "min_count": "min_count",
    "max_vocab": "max_vocab",
    "seed": "seed",
    "device": "device",
    "precision": "precision",
    "grad_clip": "grad_clip",
    "embeddings": "embeddings",
    "train_embeddings": "train_embeddings",
    "exact_match": "exact_match",
}


# [rerank] key → TrainConfig field of the model and loss options.
MODEL_OPTION_FIELDS = {
    "epsilon": "epsilon",
    "thresholds": "sosl_thresholds",
    "tie_embeddings": "tie_embeddings",
}


MODEL_OPTION_KEYS = tuple(MODEL_OPTION_FIELDS)


TRANSLATION_KEYS = (
    "translate",
    "dictionary",
    "dict_mode",
    "mt",
    "mt_target_lang",
    "embed",
    "embed_top",
)


def _rerank_params() -> dict[str, Param]:
    """The ``[rerank]`` table: training options as :class:`TrainConfig` declares them, the
    translation options as ``[search]`` does, scoring options as :func:`score_run` does."""
    from clir_toolkit.experiments.topic_variants import QUERY_CASES
    from clir_toolkit.rerank.candidates import SCORE_PARAMS
    from clir_toolkit.rerank.sentence.tuned_config import TUNED_PARAMS
    from clir_toolkit.rerank.word.train_config import TRAIN_PARAMS

    recipe_name = RECIPE_PARAMS["name"]
    translation = {key: SEARCH_PARAMS[key] for key in TRANSLATION_KEYS}
    translation["translate"] = dataclasses.replace(
        translation["translate"],
        choices=registry.Names("translators", exclude=("none",)),  # "none": leave it out
        default=None,
    )
    return {
        "first_stage": dataclasses.replace(
            recipe_name, name="first_stage", doc="the search recipe whose runs are reranked"
        ),
        "train_first_stage": dataclasses.replace(
            recipe_name,
            name="train_first_stage",
            doc="the search recipe giving the training negatives (default: first_stage)",
        ),
        "train_topics": Param(
            "train_topics",
            str,
            doc="the queries the model is trained on (default: the recipe's topics)",
            choices=("english", "human"),
        ),
        "model_from": dataclasses.replace(
            recipe_name, name="model_from", doc="the rerank recipe whose model is reused"
        ),
        "train_collection": dataclasses.replace(
            RECIPE_PARAMS["collection"], name="train_collection", default=None,
            doc="the collection family the model is trained on (default: the recipe's): a "
            "model tested where it was not trained",
        ),
        "train_language": Param(
            "train_language", str, doc="the language of the collection the model is trained "
            "on (default: the language it reranks)",
        ),
        "train_variant": Param(
            "train_variant", str, doc="the variant of the collection the model is trained on "
            "(default: the recipe's, or standard in another family)",
        ),
        "pretrained": Param(
            "pretrained",
            str,
            doc="fine-tune this pretrained sentence encoder (rerank/sentence/) instead of "
            "training a word-level model",
        ),
        "train_queries": dataclasses.replace(
            TUNED_PARAMS["train_queries"],
            doc="train on the first N training queries (the thesis' Table 6.10 question)",
        ),
        "train_max_relevant": Param(
            "train_max_relevant",
            int,
            doc="leave out the training queries with more relevant "
            "documents (the thesis' ambiguous queries, Table 6.9)",
            minimum=0,
        ),
        "train_drop_at_random": Param(
            "train_drop_at_random",
            bool,
            doc="instead, leave out as many training queries at random (Table 6.9's control group)",
        ),
        "query_case": Param(
            "query_case",
            str,
            doc="lower-case the English queries the model reads: every "
            "word, or the first when the second is lower-case (Table 6.5)",
            choices=QUERY_CASES,
        ),
        **renamed(TRAIN_PARAMS, TRAINING_KEYS),
        **renamed(TRAIN_PARAMS, MODEL_OPTION_FIELDS),
        **translation,
        "depth": SCORE_PARAMS["depth"],
        "interpolate": dataclasses.replace(
            SCORE_PARAMS["interpolate"], shape="one or list", doc="λ, or λs to choose from on dev"
        ),
        "figure": Param(
            "figure", str, doc="the PNG beside RESULTS.md that the row is drawn in", form=SAFE_NAME
        ),
        "figure_title": Param("figure_title", str, doc="the title of that figure"),
    }


RERANK_PARAMS = _rerank_params()
"""The keys of ``[rerank]`` (``sweep`` aside), each declared once where its value is used."""


RERANK_KEYS = frozenset((*RERANK_PARAMS, "sweep"))


SWEEP_KEYS = frozenset(
    (
        *TRAINING_KEYS,
        "epsilon",
        "thresholds",
        "depth",
        "interpolate",
        "train_queries",
        "train_max_relevant",
        "query_case",
    )
) - {
    "model",
    "device",
    "precision",
    "embeddings",
}


SYMBOLS = {
    "epsilon": "ε",
    "thresholds": "θ",
    "interpolate": "λ",
    "train_queries": "N",
    "train_max_relevant": "T",
    "query_case": "case",
}
"""How a swept key is written in a row's title."""
