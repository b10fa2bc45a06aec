"""The ``[rerank]`` table of a rerank recipe: checked, read into a :class:`RerankSpec`, swept.

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
  ``"hf:DIR"``; :mod:`clir_toolkit.rerank.sentence.tuned`, the default of ``clir rerank train``)
  instead of training a word-level model. It reads the English queries and takes only
  ``negatives``, ``epochs``, ``lr``, ``batch_size``, ``seed``, ``loss``, ``epsilon`` and
  ``thresholds`` of the training keys below.
* The queries of the training data (thesis §6.3; :mod:`clir_toolkit.experiments.topic_variants`):
  ``query_case`` (``"lower"`` or ``"first-lower"``, Table 6.5: the English train, dev and
  test queries lower-cased), ``train_max_relevant`` (leave out the training queries with
  more relevant documents, Table 6.9) with ``train_drop_at_random`` (as many left out at
  random: the control group), ``train_queries`` (the first N training queries, Table 6.10).
* ``model_from``: reuse the model of another rerank recipe of the directory (trained there,
  or here first if it is missing): the thesis' monolingual model tested with translated
  queries. The training keys then come from that recipe and may not be given here.
* Transfer: ``train_collection``, ``train_variant`` and ``train_language`` train the model
  (this recipe's, or the one ``model_from`` names) on another collection than the one it
  reranks: a family, its variant and a language (each defaults to the reranked one's;
  another family's variant to ``standard``). The model is then tested where it never saw a
  query, as on a user's own collection (``transfer/``).
* Training (:class:`~clir_toolkit.rerank.word.train_config.TrainConfig`): ``model``, ``encoder``,
  ``loss``, ``negatives`` (per query), ``epochs``, ``lr``, ``batch_size``, ``dim``,
  ``max_query_len``, ``max_doc_len``, ``min_count``, ``max_vocab``, ``seed``, ``device``,
  ``precision``, ``grad_clip``, ``embeddings`` (a ``.vec`` file, or ``use-m3-tokens``),
  ``train_embeddings`` (``no``: the pretrained table stays frozen), ``depth`` (dev
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
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit import registry
from clir_toolkit.errors import FormatError
from clir_toolkit.experiments.records import Recipe
from clir_toolkit.experiments.tables import (
    MODEL_OPTION_KEYS,
    RERANK_KEYS,
    RERANK_PARAMS,
    SWEEP_KEYS,
    SYMBOLS,
    TRAINING_KEYS,
    TRANSLATION_KEYS,
)
from clir_toolkit.experiments.topic_variants import TopicVariant, variant_of
from clir_toolkit.params import SAFE_NAME, check_value, reject_unknown_keys, show


def check_rerank_table(path: Path, values: Mapping[str, Any]) -> None:
    """Validate a rerank recipe's TOML values (called by
    :func:`clir_toolkit.experiments.recipe.load_recipe`).

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
        given += sorted(
            {"train_first_stage", "train_topics", "train_queries", "train_max_relevant",
             "train_drop_at_random", "query_case"} & set(table)
        )  # fmt: skip
        if given:
            raise FormatError(
                path,
                None,
                f"[rerank] {', '.join(given)} cannot be set with model_from",
                "the model and its training come from the recipe that model_from names",
            )
    if "query_case" in table and (
        topics != "english"
        or table.get("train_topics", "english") != "english"
        or "translate" in table
        or "pretrained" in table
    ):
        raise FormatError(
            path, None, "[rerank] query_case changes the English queries of a word-level "
            'model: it needs topics = "english", no translate and no pretrained',
        )  # fmt: skip
    if table.get("train_drop_at_random") and "train_max_relevant" not in table:
        raise FormatError(
            path, None, "[rerank] train_drop_at_random needs train_max_relevant",
            "it leaves out as many training queries as that threshold would, at random",
        )  # fmt: skip
    if "translate" in table and topics != "english":
        raise FormatError(
            path, None, '[rerank] translate needs topics = "english" (the queries translated)'
        )
    if "translate" in table:
        translator = registry.component("translators", table["translate"])
        for key in translator.traits.get("requires", ()):  # a built-in's declared needs
            if key not in table:
                raise FormatError(
                    path,
                    None,
                    f"[rerank] translate = {show(translator.name)} needs {key}",
                    RERANK_PARAMS[key].describe(),
                )


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
    #: Where the model is trained, when not on the reranked collection: family, variant,
    #: language (None: the reranked one's).
    train_collection: str | None
    train_variant: str | None
    train_language: str | None
    pretrained: str | None
    train_queries: int | None
    #: What the model's queries change: case, and which training queries it keeps.
    topic_variant: TopicVariant
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
        train_collection=table.get("train_collection"),
        train_variant=table.get("train_variant"),
        train_language=table.get("train_language"),
        pretrained=table.get("pretrained"),
        train_queries=table.get("train_queries"),
        topic_variant=variant_of(table, word_level="pretrained" not in table),
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
