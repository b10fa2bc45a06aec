"""Reranking experiments as recipes (``kind = "rerank"``): first stage → training → reranking.

A rerank recipe names a first-stage search recipe (a ``kind = "search"`` recipe in the same
directory, on the same ``collection`` family), a reranker and how it is trained and tested;
``clir run rerank/*.toml`` then, for every language of the recipe:

1. builds the collection and its index if they are missing (:mod:`clir_toolkit.recipes`);
2. makes the first-stage runs of the train, dev and test splits, or reuses them when they
   are present and fresh (same search options, topics, index and toolkit code: one rule
   for every reused file, :mod:`clir_toolkit.freshness`). The train split's run
   gives the training negatives, the dev split's the candidates for model selection;
3. trains the reranker with :func:`clir_toolkit.rerank.train.train_reranker` on the train
   split, keeping the epoch with the best dev nDCG@10, or reuses the model file when one
   trained with the same settings on the same files by the same code is there
   (``models/<collection>/``);
   (``clir run --force`` makes runs and models again, each once per run, even when fresh);
4. reranks the top ``depth`` candidates of the dev and test runs (what
   :func:`clir_toolkit.rerank.score.score_run` does, scored once so that an interpolation
   weight can be chosen on dev) and writes them under ``runs/`` like any other run.

Every reranked row of RESULTS.md is then tested against its own first stage
(:mod:`clir_toolkit.results`), and :mod:`clir_toolkit.rerank.report` draws the figures.

An example, the smooth-cosine dual encoder with SOSL (Liu et al., Table 2)::

    name = "dual-sosl"
    title = "dual encoder (avg), SOSL, ε = 1"
    group = "loss (Table 2)"
    kind = "rerank"
    languages = ["fr", "de"]
    topics = "english"            # the queries the reranker sees on dev and test

    [rerank]
    first_stage = "bm25-dict-syn" # rerank/bm25-dict-syn.toml, kind = "search"
    model = "dual"
    loss = "sosl"
    epsilon = 1.0
    negatives = 40
    epochs = 10
    figure = "figure-3-densities" # a panel of score densities per grade on the training set

The ``[rerank]`` keys:

* ``first_stage`` (required): the search recipe whose dev and test runs are reranked;
  ``train_first_stage``: the one whose train run gives the negatives and whose dev run
  selects the epoch (default: ``first_stage``).
* ``train_topics``: ``"english"`` or ``"human"``, the queries the model is trained on
  (default: the recipe's ``topics``). ``"human"`` trains monolingually on the human queries
  in the documents' language (thesis *Neural CLIR*, §6.1.1); ``"english"`` bilingually on
  the English queries, one vocabulary per language (§6.1.3).
* Testing with translated queries (thesis §6.1.2): ``translate`` (``"dict"``, ``"mt"`` or
  ``"embed"``) and the options of ``clir search`` that go with it (``dictionary``,
  ``dict_mode``, ``mt``, ``mt_target_lang``, ``embed``, ``embed_top``) turn the English dev
  and test queries into the documents' language before the model reads them; the model must
  have been trained on queries in that language (``train_topics = "human"``).
* ``pretrained``: fine-tune this pretrained sentence encoder (``"use-m3"``, ``"e5-small"``,
  ``"hf:DIR"``; :mod:`clir_toolkit.rerank.tuned`, the default of ``clir rerank train``)
  instead of training a word-level model. It reads the English queries and takes only
  ``negatives``, ``epochs``, ``lr``, ``batch_size``, ``seed``, ``loss``, ``epsilon`` and
  ``thresholds`` of the training keys below.
* ``model_from``: reuse the model of another rerank recipe of the directory (trained there,
  or here first if it is missing): the thesis' monolingual model tested with translated
  queries. The training keys then come from that recipe and may not be given here.
* Training (:class:`~clir_toolkit.rerank.train.TrainConfig`): ``model``, ``encoder``,
  ``loss``, ``negatives`` (per query), ``epochs``, ``lr``, ``batch_size``, ``dim``,
  ``max_query_len``, ``max_doc_len``, ``min_count``, ``max_vocab``, ``seed``, ``device``,
  ``precision``, ``grad_clip``, ``embeddings`` (a ``.vec`` file), ``depth`` (dev
  candidates per query for model selection, and candidates reranked per query).
* Options of the model and the loss that ``TrainConfig`` does not carry: ``epsilon`` (the
  dual encoder's smoothness ε, Liu et al. eq. 1), ``thresholds`` (SOSL's inner θ1, θ2,
  §3.4; default 0.2, 0.7) and ``tie_embeddings`` (query-table rows of words that are also
  in the document vocabulary start as copies of the document rows, so that a word matches
  itself exactly, as in a monolingual K-NRM with one vocabulary).
* ``interpolate``: λ, or a list of λ chosen on dev: ``λ·neural + (1 − λ)·first stage``
  after per-query min-max normalisation (:func:`clir_toolkit.rerank.candidates.rerank_rows`).
* ``figure`` (and ``figure_title``): the PNG, beside RESULTS.md, that the row is drawn in.
* ``[rerank.sweep]``: lists of values of one or more keys, read in parallel (the i-th value
  of each key makes point i). Each point is a row of its own, named
  ``<name>-<value of the first key>``; a figure of a sweep plots the measures against the
  first key (Liu et al., Figures 4 and 5).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit import plugins
from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.freshness import digest, is_fresh, mark_fresh, read_sidecar
from clir_toolkit.params import (
    SAFE_NAME,
    Param,
    check_value,
    reject_unknown_keys,
    renamed,
    show,
)
from clir_toolkit.plugins import Names

if TYPE_CHECKING:
    from clir_toolkit.recipes import Recipe, RecipeOutcome, Workspace

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
    from clir_toolkit.recipes import RECIPE_PARAMS, SEARCH_PARAMS
    from clir_toolkit.rerank.candidates import SCORE_PARAMS
    from clir_toolkit.rerank.train import TRAIN_PARAMS
    from clir_toolkit.rerank.tuned import TUNED_PARAMS

    recipe_name = RECIPE_PARAMS["name"]
    translation = {key: SEARCH_PARAMS[key] for key in TRANSLATION_KEYS}
    translation["translate"] = dataclasses.replace(
        translation["translate"],
        choices=Names(("dict", "mt", "embed"), plugins.TRANSLATORS),  # "none" is leaving it out
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
        "pretrained": Param(
            "pretrained",
            str,
            doc="fine-tune this pretrained sentence encoder (rerank/tuned.py) instead of "
            "training a word-level model",
        ),
        "train_queries": TUNED_PARAMS["train_queries"],
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
    (*TRAINING_KEYS, "epsilon", "thresholds", "depth", "interpolate", "train_queries")
) - {
    "model",
    "device",
    "precision",
    "embeddings",
}
SYMBOLS = {"epsilon": "ε", "thresholds": "θ", "interpolate": "λ", "train_queries": "N"}
"""How a swept key is written in a row's title."""

SPLITS = ("dev", "test")
ALL_SPLITS = ("train", "dev", "test")
SELECTION_MEASURE = "nDCG@10"


# ---------------------------------------------------------------------------------------------
# The [rerank] table
# ---------------------------------------------------------------------------------------------


def check_rerank_table(path: Path, values: Mapping[str, Any]) -> None:
    """Validate a rerank recipe's TOML values (called by :func:`clir_toolkit.recipes.load_recipe`).

    Every value is checked by its declared parameter (:data:`RERANK_PARAMS`); every problem
    is a :class:`~clir_toolkit.errors.FormatError` naming the recipe file, so that
    ``clir run`` stops before any work when one recipe of many is wrong.
    """
    if values.get("search") or values.get("tune"):
        raise FormatError(
            path,
            None,
            "a rerank recipe takes no [search] or [tune] table",
            "put its options in [rerank]; the first stage's in its own search recipe",
        )
    table = values.get("rerank")
    if not isinstance(table, dict) or "first_stage" not in table:
        raise FormatError(
            path,
            None,
            "a rerank recipe needs [rerank] first_stage",
            'name a search recipe of the same directory, e.g. first_stage = "bm25-dict-syn"',
        )
    reject_unknown_keys(
        path,
        table,
        RERANK_KEYS,
        "[rerank] keys",
        f"a [rerank] table may have: {', '.join(sorted(RERANK_KEYS))}",
    )
    for key, value in table.items():
        if key != "sweep":
            check_value(path, "rerank", RERANK_PARAMS[key], value)
    for point in _points(path, table):
        _check_point(path, point, values.get("topics", "english"))
        if "sweep" in table:
            _check_point_name(
                path, point_name(str(values.get("name", path.stem)), table["sweep"], point)
            )


def _check_point(path: Path, table: Mapping[str, Any], topics: str) -> None:
    """What one point's values must satisfy together (each value was checked alone)."""
    if "model_from" in table:
        given = sorted(set(table) & (set(TRAINING_KEYS) | set(MODEL_OPTION_KEYS)) - {"device"})
        given += sorted({"train_first_stage", "train_topics"} & set(table))
        if given:
            raise FormatError(
                path,
                None,
                f"[rerank] {', '.join(given)} cannot be set with model_from",
                "the model and its training come from the recipe that model_from names",
            )
    if "translate" in table and topics != "english":
        raise FormatError(
            path, None, '[rerank] translate needs topics = "english" (the queries translated)'
        )
    if table.get("translate") == "mt" and "mt" not in table:
        raise FormatError(path, None, '[rerank] translate = "mt" needs mt, e.g. "apertium:eng-spa"')
    if table.get("translate") == "embed" and "embed" not in table:
        raise FormatError(path, None, '[rerank] translate = "embed" needs embed = "FILE.vec"')


def _check_point_name(path: Path, name: str) -> None:
    """A sweep point's name must be a valid name too (it may be too long)."""
    if not re.fullmatch(SAFE_NAME.regex, name):
        raise FormatError(
            path,
            None,
            f"the sweep point name {show(name)} is not {SAFE_NAME.description}",
            "shorten the recipe's name",
        )


def _points(path: Path, table: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The [rerank] table of each point of the sweep (the table itself when there is none)."""
    sweep = table.get("sweep")
    base = {k: v for k, v in table.items() if k != "sweep"}
    if sweep is None:
        return [base]
    if not isinstance(sweep, dict) or not sweep:
        raise FormatError(
            path, None, "[rerank.sweep] must be a table of lists, e.g. epsilon = [0, 1]"
        )
    reject_unknown_keys(
        path,
        sweep,
        SWEEP_KEYS,
        "[rerank.sweep] keys",
        f"a sweep may vary: {', '.join(sorted(SWEEP_KEYS))}",
    )
    both = sorted(set(sweep) & set(base))
    if both:
        raise FormatError(
            path,
            None,
            f"[rerank.sweep] {', '.join(both)} also set in [rerank]",
            "give a swept key its values in [rerank.sweep] only",
        )
    lengths = {len(v) if isinstance(v, list) else 0 for v in sweep.values()}
    if len(lengths) != 1 or 0 in lengths:
        raise FormatError(
            path, None, "[rerank.sweep] needs non-empty lists of one length (read in parallel)"
        )
    for key, values in sweep.items():
        for value in values:
            check_value(path, "rerank.sweep", RERANK_PARAMS[key], value)
    count = lengths.pop()
    return [{**base, **{key: values[i] for key, values in sweep.items()}} for i in range(count)]


@dataclass(frozen=True)
class RerankSpec:
    """The validated [rerank] table of one recipe (of one sweep point)."""

    first_stage: str
    train_first_stage: str
    train_topics: str
    test_topics: str
    model_from: str | None
    pretrained: str | None
    train_queries: int | None
    training: dict[str, Any]
    epsilon: float | None
    thresholds: tuple[float, float] | None
    tie_embeddings: bool
    depth: int
    interpolate: tuple[float, ...]
    translation: dict[str, Any]
    figure: str | None
    figure_title: str | None


def rerank_spec(recipe: Recipe) -> RerankSpec:
    """The :class:`RerankSpec` of a recipe without a sweep (or of one sweep point)."""
    table = {k: v for k, v in recipe.rerank.items() if k != "sweep"}
    interpolate = table.get("interpolate")
    thresholds = table.get("thresholds")
    return RerankSpec(
        first_stage=table["first_stage"],
        train_first_stage=table.get("train_first_stage", table["first_stage"]),
        train_topics=table.get("train_topics", recipe.topics),
        test_topics=recipe.topics,
        model_from=table.get("model_from"),
        pretrained=table.get("pretrained"),
        train_queries=table.get("train_queries"),
        training={field: table[key] for key, field in TRAINING_KEYS.items() if key in table},
        epsilon=float(table["epsilon"]) if "epsilon" in table else None,
        thresholds=(float(thresholds[0]), float(thresholds[1])) if thresholds else None,
        tie_embeddings=bool(table.get("tie_embeddings", False)),
        depth=int(table.get("depth", RERANK_PARAMS["depth"].default)),
        interpolate=tuple(
            float(v)
            for v in (
                []
                if interpolate is None
                else interpolate
                if isinstance(interpolate, list)
                else [interpolate]
            )
        ),
        translation={k: table[k] for k in TRANSLATION_KEYS if k in table},
        figure=table.get("figure"),
        figure_title=table.get("figure_title"),
    )


def _format_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "/".join(_format_value(v) for v in value)
    return str(value)


def point_name(name: str, sweep: Mapping[str, Any], point: Mapping[str, Any]) -> str:
    """``<name>-<value of the first swept key>``: ``eps-0.5``, ``t-0.1_0.6`` (θ1_θ2), ``x-1e06``.

    The name is part of file names: a list is joined by ``_``, and an exponent has no ``+``.
    """
    suffix = _format_value(point[next(iter(sweep))]).replace("/", "_").replace("+", "")
    return f"{name}-{suffix}"


def sweep_recipes(recipe: Recipe) -> list[tuple[Recipe, dict[str, Any]]]:
    """One recipe per sweep point, named ``<name>-<value>``, with the point's values."""
    sweep = recipe.rerank.get("sweep")
    if not sweep:
        return [(recipe, {})]
    points = []
    for table in _points(recipe.path, recipe.rerank):
        values = {key: table[key] for key in sweep}
        label = ", ".join(f"{SYMBOLS.get(k, k)} = {_format_value(v)}" for k, v in values.items())
        point = dataclasses.replace(
            recipe,
            name=point_name(recipe.name, sweep, table),
            title=f"{recipe.title}, {label}",
            rerank=table,
        )
        points.append((point, values))
    return points


# ---------------------------------------------------------------------------------------------
# Freshness: reuse a run, a translation or a model made from the same inputs
# ---------------------------------------------------------------------------------------------


def reusable(path: Path, key: str) -> bool:
    """Whether to reuse ``path``: fresh and, under ``clir run --force``, made by this run.

    So a forced run makes everything again, but a model that two recipes share only once.
    """
    from clir_toolkit import recipes

    if recipes.FORCE_RERUN and path.is_file() and path.stat().st_mtime < recipes.RUN_STARTED:
        return False
    return is_fresh(path, key)


# ---------------------------------------------------------------------------------------------
# Recipes of the same directory
# ---------------------------------------------------------------------------------------------


def find_recipe(referrer: Recipe, name: str, kind: str, key: str) -> Recipe:
    """The recipe called ``name`` in the directory of ``referrer`` (``NAME.toml`` first),
    of the given kind and of the referrer's collection family."""
    from clir_toolkit.recipes import load_recipe

    directory = referrer.path.parent
    candidates = [directory / f"{name}.toml"] + sorted(directory.glob("*.toml"))
    for path in candidates:
        if not path.is_file() or path.resolve() == referrer.path.resolve():
            continue
        recipe = load_recipe(path)
        if recipe.name != name:
            continue
        if recipe.kind != kind:
            raise FormatError(
                referrer.path, None, f'[rerank] {key} names {path}, which is not kind = "{kind}"'
            )
        if recipe.collection != referrer.collection:
            raise FormatError(
                referrer.path,
                None,
                f"[rerank] {key} names {path}, which runs on collection = "
                f"{show(recipe.collection)}, not collection = {show(referrer.collection)}",
                "name a recipe of the same collection family",
            )
        return recipe
    raise FormatError(
        referrer.path,
        None,
        f'[rerank] {key} = "{name}": no recipe of that name in {directory}',
        f'add {directory / (name + ".toml")} (kind = "{kind}")',
    )


# ---------------------------------------------------------------------------------------------
# Step 2: first-stage runs of every split
# ---------------------------------------------------------------------------------------------


def topics_kind(topics: str) -> str:
    """The collection's topics file for ``"english"`` or ``"human"`` queries."""
    return "topics-human" if topics == "human" else "topics"


def ensure_first_stage(
    search: Recipe, language: str, workspace: Workspace, quiet: bool
) -> dict[str, Path]:
    """The search recipe's runs of the train, dev and test splits, made if not fresh."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.files import sha256_file
    from clir_toolkit.index import read_index_info
    from clir_toolkit.recipes import ensure_index, log, resolve_auto_resources, search_run

    if search.tune:
        raise FormatError(
            search.path,
            None,
            "a first stage of reranking cannot have a [tune] table",
            "write the values chosen on dev into [search]",
        )
    index = ensure_index(workspace, search.collection, language, search.variant, quiet)
    collection = open_collection(workspace.collection(search.collection, language, search.variant))
    indexed = read_index_info(index).collection_sha256
    runs = {}
    for split in ALL_SPLITS:
        topics = collection.split_file(topics_kind(search.topics), split)
        if not topics.is_file():
            raise ClirError(f"{topics}: no such file (a reranker needs train, dev and test splits)")
        output = workspace.run(search, language, split)
        key = digest(
            {
                "search": search.search,
                "topics": search.topics,
                "topics_sha256": sha256_file(topics),
                "index": indexed,
            }
        )
        if not reusable(output, key):
            log(quiet, f"first stage {search.name} on {language}, {split} split → {output}")
            options = resolve_auto_resources(search.search, language, workspace)
            search_run(search, options, index, topics, output, language, quiet)
            mark_fresh(output, key)
        runs[split] = output
    return runs


# ---------------------------------------------------------------------------------------------
# Step 3: training (or reusing) the model
# ---------------------------------------------------------------------------------------------


@dataclass
class TrainedModel:
    """A model file and what its training reported (kept in the model's sidecar)."""

    path: Path
    summary: dict[str, Any]
    reused: bool


def model_path(recipe: Recipe, language: str, workspace: Workspace) -> Path:
    name = workspace.collection_name(recipe.collection, language, recipe.variant)
    return workspace.models / name / f"{recipe.name}.pt"


def train_config(
    recipe: Recipe, spec: RerankSpec, language: str, workspace: Workspace, quiet: bool
) -> Any:
    """The :class:`TrainConfig` of a recipe (its first-stage runs made on the way), or with
    ``pretrained`` the :class:`~clir_toolkit.rerank.tuned.TunedConfig`."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.rerank.train import TrainConfig

    first = find_recipe(recipe, spec.train_first_stage, "search", "train_first_stage")
    runs = ensure_first_stage(first, language, workspace, quiet)
    collection = open_collection(workspace.collection(recipe.collection, language, recipe.variant))
    kind = topics_kind(spec.train_topics)
    doc_language = collection.doc_lang or language
    if spec.pretrained is not None:
        return _tuned_config(recipe, spec, collection, kind, runs, workspace, language, quiet)
    if spec.train_queries is not None:
        raise FormatError(
            recipe.path, None, "[rerank] train_queries applies with pretrained",
            "for a word-level model, make a collection whose train split is smaller",
        )  # fmt: skip
    return TrainConfig(
        **_training_files(recipe, collection, kind, runs, workspace, language),
        depth=spec.depth,
        query_language=doc_language if spec.train_topics == "human" else None,
        doc_language=doc_language,
        verbose=not quiet,
        epsilon=spec.epsilon,
        sosl_thresholds=spec.thresholds,
        tie_embeddings=spec.tie_embeddings,
        **spec.training,
    )


def _training_files(
    recipe: Recipe, collection: Any, kind: str, runs: Mapping[str, Path], workspace: Workspace,
    language: str,
) -> dict[str, Any]:  # fmt: skip
    """The inputs and output of a training, word-level or fine-tuned: the train split's
    topics, qrels and first-stage run, the dev split's for model selection, the model file."""
    return {
        "collection": collection.root,
        "topics": collection.split_file(kind, "train"),
        "qrels": collection.split_file("qrels", "train"),
        "run": runs["train"],
        "output": model_path(recipe, language, workspace),
        "dev_topics": collection.split_file(kind, "dev"),
        "dev_qrels": collection.split_file("qrels", "dev"),
        "dev_run": runs["dev"],
    }


#: [rerank] keys a fine-tuned encoder takes, and their TunedConfig fields.
TUNED_KEYS = {"negatives_per_query": "negatives", "epochs": "epochs", "lr": "lr",
              "batch_size": "batch_size", "seed": "seed", "loss": "loss"}  # fmt: skip
"""TrainConfig fields that a fine-tuned encoder takes too → their TunedConfig names."""


def _tuned_config(
    recipe: Recipe, spec: RerankSpec, collection: Any, kind: str, runs: Mapping[str, Path],
    workspace: Workspace, language: str, quiet: bool,
) -> Any:  # fmt: skip
    """The :class:`TunedConfig` of a recipe with ``pretrained``: English queries only."""
    from clir_toolkit.rerank.tuned import TunedConfig

    other = sorted(set(spec.training) - set(TUNED_KEYS))
    if other or spec.tie_embeddings or spec.train_topics != "english":
        what = other[0] if other else "tie_embeddings" if spec.tie_embeddings else "train_topics"
        raise FormatError(
            recipe.path, None,
            f"[rerank] {what} does not apply with pretrained (a fine-tuned encoder reads the "
            "English queries; it takes negatives, epochs, lr, batch_size, seed, loss, "
            "epsilon, thresholds)",
        )  # fmt: skip
    assert spec.pretrained is not None
    options = {TUNED_KEYS[key]: value for key, value in spec.training.items()}
    if spec.epsilon is not None:
        options["epsilon"] = spec.epsilon
    if spec.train_queries is not None:
        options["train_queries"] = spec.train_queries
    return TunedConfig(
        **_training_files(recipe, collection, kind, runs, workspace, language),
        encoder=spec.pretrained,
        depth=spec.depth,
        sosl_thresholds=spec.thresholds,
        verbose=not quiet,
        **options,
    )


def _training_key(config: Any, spec: RerankSpec) -> str:
    """What a model depends on: its settings and the content of every input file."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.files import sha256_file
    from clir_toolkit.rerank.data import ANALYSIS_VERSION
    from clir_toolkit.rerank.model_file import MODEL_FORMAT
    from clir_toolkit.rerank.pretrained import encoder_fingerprint
    from clir_toolkit.rerank.tuned import MODEL_FORMAT as TUNED_FORMAT

    volatile = {"output", "verbose", "cache_dir", "resume", "device"}
    settings = {
        k: str(v) if isinstance(v, Path) else v
        for k, v in dataclasses.asdict(config).items()
        if k not in volatile
    }
    files = {
        name: sha256_file(getattr(config, name))
        for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run", "embeddings")
        if getattr(config, name, None) is not None
    }
    return digest(
        {
            "settings": settings,
            "files": files,
            "collection": open_collection(config.collection).fingerprint(),
            "epsilon": spec.epsilon,
            "thresholds": spec.thresholds,
            "tie_embeddings": spec.tie_embeddings,
            "analysis": ANALYSIS_VERSION,
            "format": TUNED_FORMAT if spec.pretrained is not None else MODEL_FORMAT,
            **({"encoder": encoder_fingerprint(spec.pretrained)} if spec.pretrained else {}),
        }
    )


def train_model(recipe: Recipe, language: str, workspace: Workspace, quiet: bool) -> TrainedModel:
    """The recipe's model for ``language``: reused when fresh, trained otherwise."""
    from clir_toolkit.recipes import log
    from clir_toolkit.rerank.train import train_reranker
    from clir_toolkit.rerank.tuned import train_tuned

    spec = rerank_spec(recipe)
    config = train_config(recipe, spec, language, workspace, quiet)
    key = _training_key(config, spec)
    output = config.output
    if reusable(output, key):
        log(quiet, f"reusing {output} (trained with the same settings on the same files)")
        return TrainedModel(output, read_sidecar(output).get("summary", {}), reused=True)
    log(quiet, f"training {recipe.name} on {language} → {output}")
    if spec.pretrained is not None:
        report = train_tuned(config)
    else:
        report = train_reranker(config)
        report.checkpoint.unlink(missing_ok=True)  # a finished training needs no checkpoint
    summary = {
        "model": report.model,
        "loss": report.loss,
        "device": report.device,
        "examples": report.examples,
        "query_vocab_size": report.query_vocab_size,
        "doc_vocab_size": report.doc_vocab_size,
        "best_epoch": report.best_epoch,
        "best_dev": report.best_dev,
        "epochs": len(report.history),
        "history": [dataclasses.asdict(r) for r in report.history],
        "seconds": report.seconds,
        "train_topics": spec.train_topics,
        "train_first_stage": spec.train_first_stage,
        "pretrained": spec.pretrained,
        "epsilon": config.epsilon if spec.pretrained is not None else spec.epsilon,
        "thresholds": spec.thresholds,
        "tie_embeddings": spec.tie_embeddings,
        "settings": {k: str(v) for k, v in dataclasses.asdict(config).items()},
    }
    mark_fresh(output, key, {"summary": summary})
    return TrainedModel(output, summary, reused=False)


# ---------------------------------------------------------------------------------------------
# Step 4: the queries the model reads, and reranking
# ---------------------------------------------------------------------------------------------


def reranker_topics(
    recipe: Recipe, spec: RerankSpec, language: str, split: str, workspace: Workspace, quiet: bool
) -> Path:
    """The topics the reranker reads on ``split``: English, human, or English translated."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.files import sha256_file
    from clir_toolkit.formats import read_topics
    from clir_toolkit.recipes import log
    from clir_toolkit.translate.pipeline import (
        TranslationOptions,
        build_queries,
        write_translations,
    )

    collection = open_collection(workspace.collection(recipe.collection, language, recipe.variant))
    topics = collection.split_file(topics_kind(spec.test_topics), split)
    if not spec.translation:
        return topics
    output = workspace.run(recipe, language, split).with_suffix(".queries.tsv")
    key = digest(
        {"translation": spec.translation, "topics": sha256_file(topics), "lang": language}
    )
    if not reusable(output, key):
        log(quiet, f"translating the {split} queries for {recipe.name} → {output}")
        options = TranslationOptions(**spec.translation)
        write_translations(output, build_queries(read_topics(topics), options, language))
        mark_fresh(output, key)
    return output


def query_oov(reranker: Any, topics: Path) -> float:
    """Share of the query tokens that are outside the model's query vocabulary."""
    from clir_toolkit.formats import read_topics
    from clir_toolkit.rerank.data import rerank_tokens

    vocab = reranker.query_vocab
    tokens = [
        token
        for topic in read_topics(topics)
        for token in rerank_tokens(vocab.language, topic.query)[: reranker.max_query_len]
    ]
    return sum(token not in vocab for token in tokens) / len(tokens) if tokens else 0.0


def training_scores(
    reranker: Any, config_settings: Mapping[str, str], device: Any
) -> dict[int, list[float]]:
    """Model scores of the pointwise training examples, by grade (Liu et al., Figure 3).

    The examples are those training used: every judged relevant document of a training query
    and its first ``negatives`` non-relevant first-stage candidates.
    """
    from clir_toolkit.collection import open_collection
    from clir_toolkit.formats import read_qrels, read_run, read_topics
    from clir_toolkit.rerank.candidates import encode_candidates, score_encoded
    from clir_toolkit.rerank.data import DocumentEncoder, cache_dir_for, relevance_examples

    collection = open_collection(config_settings["collection"])
    topics = {t.qid: t.query for t in read_topics(config_settings["topics"])}
    examples = relevance_examples(
        read_qrels(config_settings["qrels"]),
        read_run(config_settings["run"]),
        int(config_settings["negatives_per_query"]),
        topics,
    )
    candidates: dict[str, list[str]] = {}
    for example in examples:
        candidates.setdefault(example.qid, []).append(example.docid)
    encoder = DocumentEncoder(
        collection.corpus,
        reranker.doc_vocab,
        reranker.max_doc_len,
        cache_dir_for(collection.root, None),
    )
    encoded = encode_candidates(
        topics, candidates, reranker.query_vocab, reranker.max_query_len, encoder
    )
    scores = score_encoded(reranker.model, encoded, device)
    by_grade: dict[int, list[float]] = {}
    for example in examples:
        by_grade.setdefault(example.grade, []).append(scores[(example.qid, example.docid)])
    return by_grade


@dataclass
class RerankDetails:
    """What RESULTS.md reports about a reranked row besides its measures."""

    first_stage: str
    model: Path
    model_description: str
    trained_on: str
    tested_with: str
    summary: dict[str, Any]
    reused: bool
    query_oov: dict[str, float]
    sweep: dict[str, Any] = field(default_factory=dict)
    figure: str | None = None
    figure_title: str | None = None
    training_scores: dict[int, list[float]] = field(default_factory=dict)
    thresholds: tuple[float, float] | None = None


def describe_model(summary: Mapping[str, Any]) -> str:
    """``dual avg, sosl, ε=1`` or ``knrm, hinge`` from a training summary."""
    settings = summary.get("settings", {})
    if summary.get("pretrained"):
        epsilon = summary.get("epsilon")
        return f"{summary['pretrained']} fine-tuned, {summary.get('loss', '?')}, ε={epsilon:g}"
    parts = [str(summary.get("model", "?"))]
    if parts[0] == "dual":
        parts[0] += f" {settings.get('encoder', 'avg')}"
    parts.append(str(summary.get("loss", "?")))
    if parts[0].startswith("dual"):
        epsilon = summary.get("epsilon")
        parts.append(f"ε={1.0 if epsilon is None else epsilon:g}")
    if summary.get("thresholds"):
        parts.append("θ=" + "/".join(f"{t:g}" for t in summary["thresholds"]))
    if summary.get("tie_embeddings"):
        parts.append("tied")
    return ", ".join(parts)


def _queries_label(topics: str, language: str, translation: Mapping[str, Any]) -> str:
    if topics == "human":
        return f"human {language} queries"
    if not translation:
        return "English queries"
    how = translation.get("mt") or translation.get("dictionary") or translation["translate"]
    mode = f", {translation['dict_mode']}" if "dict_mode" in translation else ""
    return f"English queries, {translation['translate']}-translated ({how}{mode})"


def run_rerank_recipe(
    recipe: Recipe, language: str, workspace: Workspace, quiet: bool
) -> RecipeOutcome | list[RecipeOutcome]:
    """Run a rerank recipe on one language: one outcome, or one per sweep point."""
    points = sweep_recipes(recipe)
    if len(points) == 1 and not points[0][1]:
        return rerank_one(recipe, language, workspace, quiet)
    return [rerank_one(point, language, workspace, quiet, values) for point, values in points]


def rerank_one(
    recipe: Recipe,
    language: str,
    workspace: Workspace,
    quiet: bool,
    sweep: Mapping[str, Any] | None = None,
) -> RecipeOutcome:
    """Steps 1–4 of the module docstring for one recipe (or sweep point) and language."""
    from clir_toolkit.recipes import ensure_index
    from clir_toolkit.rerank.candidates import encode_run, score_encoded
    from clir_toolkit.rerank.device import resolve_device
    from clir_toolkit.rerank.model_file import load_model

    started = time.perf_counter()
    spec = rerank_spec(recipe)
    first = find_recipe(recipe, spec.first_stage, "search", "first_stage")
    trainer = recipe
    if spec.model_from is not None:
        trainer = find_recipe(recipe, spec.model_from, "rerank", "model_from")
        if trainer.rerank.get("sweep"):
            raise FormatError(recipe.path, None, "[rerank] model_from cannot name a sweep recipe")
    ensure_index(workspace, recipe.collection, language, recipe.variant, quiet)
    collection = workspace.collection(recipe.collection, language, recipe.variant)
    first_runs = ensure_first_stage(first, language, workspace, quiet)
    trained = train_model(trainer, language, workspace, quiet)
    trainer_spec = rerank_spec(trainer)
    device = resolve_device(
        str(recipe.rerank.get("device", trainer_spec.training.get("device", "auto")))
    )
    if trainer_spec.pretrained is not None:
        if spec.test_topics != "english" or spec.translation:
            raise FormatError(
                recipe.path, None, "a fine-tuned encoder reads the English queries: no "
                "translate and no human topics",
            )  # fmt: skip
        neural, ranked = _tuned_scores(trained.path, collection, first_runs, spec.depth, quiet)
        return _reranked_outcome(
            recipe, language, workspace, spec, first, trained, trainer_spec, collection,
            first_runs, neural, ranked, {}, device, sweep, started,
        )  # fmt: skip
    reranker = load_model(trained.path, device)
    expected = "en" if spec.test_topics == "english" and not spec.translation else None
    if expected is None:
        from clir_toolkit.collection import open_collection

        expected = open_collection(collection).doc_lang or language
    if reranker.query_language != expected:
        raise ClirError(
            f"{recipe.path}: the model {trained.path} reads {reranker.query_language} queries, "
            f"but this recipe gives it {expected} queries; train it on such queries "
            "(train_topics) or translate the test queries (translate)"
        )

    # Score each split once; choose λ (if several) by nDCG@10 on dev.
    neural, ranked, oov = {}, {}, {}
    for split in SPLITS:
        topics = reranker_topics(recipe, spec, language, split, workspace, quiet)
        oov[split] = query_oov(reranker, topics)
        ranked[split], encoded = encode_run(
            reranker, collection, topics, first_runs[split], spec.depth
        )
        neural[split] = score_encoded(reranker.model, encoded, device)
    return _reranked_outcome(
        recipe, language, workspace, spec, first, trained, trainer_spec, collection, first_runs,
        neural, ranked, oov, device, sweep, started, reranker,
    )  # fmt: skip


def _tuned_scores(
    model: Path, collection: Path, first_runs: Mapping[str, Path], depth: int, quiet: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Scores and first-stage rows of the dev and test candidates, by a fine-tuned encoder."""
    from clir_toolkit.rerank.candidates import read_candidates
    from clir_toolkit.rerank.model_file import read_model_file
    from clir_toolkit.rerank.tuned import score_run_tuned

    data = read_model_file(model)
    neural, ranked = {}, {}
    for split in SPLITS:
        read = read_candidates(collection, collection / f"topics.{split}.tsv", first_runs[split],
                               depth)  # fmt: skip
        neural[split], _ = score_run_tuned(model, data, read, None, not quiet)
        ranked[split] = read.ranked
    return neural, ranked


def _reranked_outcome(
    recipe: Recipe, language: str, workspace: Workspace, spec: RerankSpec, first: Recipe,
    trained: TrainedModel, trainer_spec: RerankSpec, collection: Path,
    first_runs: Mapping[str, Path], neural: Mapping[str, Any], ranked: Mapping[str, Any],
    oov: dict[str, float], device: Any, sweep: Mapping[str, Any] | None, started: float,
    reranker: Any = None,
) -> RecipeOutcome:  # fmt: skip
    """λ chosen on dev (if several), the runs written, the outcome of the row."""
    from clir_toolkit.formats import read_qrels, write_run
    from clir_toolkit.recipes import RecipeOutcome
    from clir_toolkit.rerank.candidates import rerank_rows
    from clir_toolkit.rerank.train import mean_measure

    chosen: dict[str, Any] = {"epoch": trained.summary.get("best_epoch")}
    weight: float | None = spec.interpolate[0] if len(spec.interpolate) == 1 else None
    if len(spec.interpolate) > 1:
        dev_qrels = read_qrels(collection / "qrels.dev.txt")
        scores = {
            lam: mean_measure(
                dev_qrels,
                rerank_rows(ranked["dev"], neural["dev"], spec.depth, lam, recipe.name),
                SELECTION_MEASURE,
            )
            for lam in spec.interpolate
        }
        weight = max(spec.interpolate, key=lambda lam: (scores[lam], -spec.interpolate.index(lam)))
        chosen["λ"] = weight
    elif weight is not None:
        chosen["λ"] = weight
    runs = {}
    for split in SPLITS:
        output = workspace.run(recipe, language, split)
        write_run(
            output, rerank_rows(ranked[split], neural[split], spec.depth, weight, recipe.name)
        )
        runs[split] = output

    scores_by_grade: dict[int, list[float]] = {}
    if spec.figure and not sweep and reranker is not None:
        scores_by_grade = training_scores(reranker, trained.summary["settings"], device)
    details = RerankDetails(
        first_stage=first.name,
        model=trained.path,
        model_description=describe_model(trained.summary),
        trained_on=_queries_label(trainer_spec.train_topics, language, {}),
        tested_with=_queries_label(spec.test_topics, language, spec.translation),
        summary=trained.summary,
        reused=trained.reused,
        query_oov=oov,
        sweep=dict(sweep or {}),
        figure=spec.figure,
        figure_title=spec.figure_title,
        training_scores=scores_by_grade,
        thresholds=trainer_spec.thresholds,
    )
    return RecipeOutcome(
        recipe,
        language,
        runs,
        chosen,
        time.perf_counter() - started,
        first_stage={split: first_runs[split] for split in SPLITS},
        rerank=details,
    )
