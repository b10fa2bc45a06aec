"""Recipes: one TOML file per system, run over collections, with a generated RESULTS.md.

A recipe names a system and the collections it runs on; ``clir run baselines/*.toml``
builds what is missing (collections, indexes), writes every run under ``runs/`` and
regenerates ``RESULTS.md`` beside the recipes. A first-stage (``kind = "search"``) recipe::

    name = "dict-syn"                       # the run's name and tag
    title = "dictionary, Pirkola structure" # the row label in RESULTS.md
    group = "dictionary form"               # rows compared with each other (or a list)
    collection = "manpages"                 # or "ddtp" (Debian's package descriptions)
    languages = ["fr", "de"]                # the family's collections en→L
    variant = "standard"                    # or "hard" (documents without NAME / synopsis)
    topics = "english"                      # or "human" (the monolingual reference)
    baseline = false                        # true for the run others are tested against

    [search]                                # options of `clir search`
    translate = "dict"
    structure = "syn"
    k1 = 1.2
    b = 0.75

    [tune]                                  # optional grid, chosen on the dev split only
    k1 = [0.9, 1.2]

A dense or hybrid first stage (``clir search --dense`` and ``--hybrid``) names the sentence
encoder whose document vectors it searches; ``clir run`` adds them to the index when it
holds none of that encoder (``clir index --dense ENCODER``)::

    [search]
    hybrid = true                           # or dense = true: the dense run alone
    hybrid_weight = 0.5                     # the dense run's weight in the fusion
    encoder = "use-m3"                      # (the default) e5-small, or hf:DIR
    translate = "dict"                      # the BM25 side of hybrid, as above
    model_from = "tuned-use-m3"             # optional: through this rerank recipe's model

``model_from`` names a rerank recipe of the directory that fine-tunes the encoder
(``[rerank] pretrained = "use-m3"``): the dense side then goes through the fine-tuned
encoder's towers (``clir search --model``); ``clir run`` trains that model first when it is
missing, and the runs are made again when it is trained anew.

A family's collections, languages and variants are its own
(:class:`~clir_toolkit.collection.builder.CollectionFamily`, built-in or plug-in):
``collection = "ddtp"`` runs on ``ddtp-en-L[-hard]`` (built from the apt lists an earlier
fetch saved under ``$CLIR_DATA/ddtp/lists``, else fetched there), and its runs go to
``runs/ddtp-en-L[-hard]/``.

Parameters in ``[tune]`` are chosen by nDCG@10 on the dev split; the test split is then
run once with the chosen values and reported as it comes out.

Every value is checked when the recipe is read, against the declared parameters of its
table (:data:`RECIPE_PARAMS`, :data:`SEARCH_PARAMS`; :mod:`clir_toolkit.params`): a value of
the wrong type or out of range is one line naming the file, the table and the key, before
any work starts. The name is part of file names (letters, digits, ``-``, ``_`` and ``.``,
not starting with a dot), and no two recipes of one ``clir run`` may write the same runs.

A ``kind = "rerank"`` recipe reranks the runs of a search recipe of its directory with a
neural model trained on the train split; its ``[rerank]`` table and what it produces are
described in :mod:`clir_toolkit.experiments.rerank_table` and run by
:mod:`clir_toolkit.experiments.rerank_runner`. A ``kind = "pipeline"`` recipe is ``clir
pipeline train --in-domain`` then ``clir pipeline search`` on each split, nothing of its own
(:mod:`clir_toolkit.experiments.pipeline_runner`).
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.collection.builder import family as collection_family
from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.experiments.records import Recipe
from clir_toolkit.experiments.rerank_table import check_rerank_table, sweep_recipes
from clir_toolkit.experiments.tables import (
    PIPELINE_PARAMS,
    RECIPE_PARAMS,
    SEARCH_FIX,
    SEARCH_PARAMS,
    TABLES,
)
from clir_toolkit.params import SAFE_NAME, check_table, check_value, reject_unknown_keys, show


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate one recipe file (every problem a one-line error naming it)."""
    path = Path(path)
    values = _read_toml(path)
    reject_unknown_keys(
        path,
        values,
        [*RECIPE_PARAMS, *TABLES],
        "keys",
        f"a recipe may have: {', '.join(sorted([*RECIPE_PARAMS, *TABLES]))}",
    )
    top = {
        key: check_value(path, "", param, values[key])
        for key, param in RECIPE_PARAMS.items()
        if key in values
    }
    name = top.get("name") or _name_from_file(path)
    kind = top.get("kind", "search")
    collection = top.get("collection", "manpages")
    languages = _check_languages(path, collection, top.get("languages", ("fr",)))
    variant = _check_variant(path, collection, top.get("variant", "standard"))
    search = check_table(
        path, "search", values.get("search", {}), SEARCH_PARAMS, "options", SEARCH_FIX
    )
    tune = _check_tune(path, values.get("tune", {}))
    _check_first_stage(path, search, tune)
    if kind == "rerank":
        check_rerank_table(path, {**values, **top, "name": name})
    elif "rerank" in values:
        raise FormatError(
            path, None, f"a {kind} recipe takes no [rerank] table", 'add kind = "rerank"'
        )
    pipeline = check_table(path, "pipeline", values.get("pipeline", {}), PIPELINE_PARAMS)
    if kind == "pipeline" and (search or tune):
        raise FormatError(
            path, None, "a pipeline recipe takes no [search] or [tune] table",
            "its stages are clir pipeline's; name the dense encoder in [pipeline] encoder",
        )  # fmt: skip
    if kind != "pipeline" and pipeline:
        raise FormatError(
            path, None, f"a {kind} recipe takes no [pipeline] table", 'add kind = "pipeline"'
        )
    group = top.get("group", "other")
    return Recipe(
        path=path,
        name=name,
        title=top.get("title", name),
        group=" / ".join(group if isinstance(group, tuple) else [group]),
        languages=languages,
        collection=collection,
        variant=variant,
        topics=top.get("topics", "english"),
        baseline=top.get("baseline", False),
        kind=kind,
        search=search,
        tune=tune,
        rerank=dict(values.get("rerank", {})),
        pipeline=pipeline,
    )


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML document of a recipe file, or one ClirError saying why it cannot be read."""
    try:
        text = path.read_bytes().decode("utf-8")
        return tomllib.loads(text)
    except FileNotFoundError:
        raise ClirError(f"{path}: no such recipe") from None
    except IsADirectoryError:
        raise ClirError(f"{path}: a directory, not a recipe file") from None
    except OSError as exc:
        raise ClirError(f"{path}: cannot read the recipe ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise FormatError(
            path, None, f"not UTF-8 text (byte {exc.start})", "save the recipe as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise FormatError(path, None, f"invalid TOML: {exc}") from None
    except RecursionError:
        raise FormatError(path, None, "tables or arrays nested too deep to read") from None


def _name_from_file(path: Path) -> str:
    """The recipe's name when it gives none: its file name, if that is a valid name."""
    try:
        return str(RECIPE_PARAMS["name"].check(path.stem))
    except ClirError:
        raise FormatError(
            path,
            None,
            f"the file name {show(path.stem)} cannot name the runs",
            f'add name = "..." made of {SAFE_NAME.description}',
        ) from None


def _check_languages(path: Path, family: str, languages: tuple[str, ...]) -> tuple[str, ...]:
    """``languages`` if the family has a collection for each, else one line listing those."""
    param = dataclasses.replace(
        RECIPE_PARAMS["languages"],
        doc=f"the collections en→L of collection = {show(family)}",
        choices=collection_family(family).languages,
    )
    return tuple(check_value(path, "", param, languages))


def _check_variant(path: Path, family: str, variant: str) -> str:
    """``variant`` if the family has it, else one line listing those it has."""
    param = dataclasses.replace(
        RECIPE_PARAMS["variant"],
        doc=f"the variants of collection = {show(family)}",
        choices=collection_family(family).variants,
    )
    return str(check_value(path, "", param, variant))


def _check_tune(path: Path, table: Any) -> dict[str, list[Any]]:
    """The ``[tune]`` grid: a non-empty list of valid ``[search]`` values per option."""
    lists = {key: dataclasses.replace(param, shape="list") for key, param in SEARCH_PARAMS.items()}
    checked = check_table(path, "tune", table, lists, "options", SEARCH_FIX)
    return {key: list(values) for key, values in checked.items()}


def _check_first_stage(path: Path, search: dict[str, Any], tune: dict[str, list[Any]]) -> None:
    """Refuse a recipe whose runs (any point of its grid) would be dense and hybrid at once,
    as ``clir search --dense --hybrid`` is refused, that names an ``hf:DIR`` encoder whose
    directory is not there, or a fine-tuned model (``model_from``) for BM25 runs alone or in
    its ``[tune]`` grid (before any work)."""

    def values(key: str) -> list[Any]:
        return tune.get(key, [search.get(key, SEARCH_PARAMS[key].default)])

    for encoder in values("encoder"):
        directory = encoder.removeprefix("hf:")
        if directory != encoder and not Path(directory).is_dir():
            raise FormatError(
                path,
                None,
                f"[search] encoder = {show(encoder)}: no such directory {directory}",
                "name a local transformers model's directory, or use-m3",
            )
    if "model_from" in tune:
        raise FormatError(
            path, None, "[tune] model_from: the fine-tuned model is not tuned",
            "name one rerank recipe in [search] model_from",
        )  # fmt: skip
    if "model_from" in search and True not in values("dense") + values("hybrid"):
        raise FormatError(
            path, None, "[search] model_from needs a dense or hybrid run: the fine-tuned "
            "encoder's towers encode the queries and documents of dense retrieval",
            "add dense = true or hybrid = true to [search]",
        )  # fmt: skip
    if True in values("dense") and True in values("hybrid"):
        raise FormatError(
            path,
            None,
            "[search] dense and hybrid are both true",
            "choose one: dense = true (the dense run alone) or hybrid = true (fused with BM25)",
        )


def run_names(recipe: Recipe) -> list[str]:
    """The names of the runs a recipe writes: its own, or one per point of a rerank sweep."""
    if recipe.kind == "rerank" and recipe.rerank.get("sweep"):
        return [point.name for point, _ in sweep_recipes(recipe)]
    return [recipe.name]


def check_distinct_names(recipes: Sequence[Recipe]) -> None:
    """Refuse two recipes (or sweep points) whose runs would be written to the same files.

    Names are compared without case, as a case-insensitive file system would.
    """
    seen: dict[str, Path] = {}
    for recipe in recipes:
        for name in run_names(recipe):
            key = name.casefold()
            if key in seen:
                where = "another point of its sweep" if seen[key] == recipe.path else seen[key]
                raise FormatError(
                    recipe.path,
                    None,
                    f"the run name {show(name)} is also that of {where}",
                    "give every recipe (and sweep point) its own name",
                )
            seen[key] = recipe.path


def retarget(recipe: Recipe, family: str, variant: str) -> Recipe:
    """``recipe`` run on the collections of another family or variant: what a model trained
    elsewhere (``[rerank] train_collection``, ``train_variant``) is trained by. The recipes
    it names (its first stages) are found in its directory and moved with it; its runs and
    model go where that collection's go (``runs/<collection>/``, ``models/<collection>/``).
    """
    if (family, variant) == (recipe.collection, recipe.variant):
        return recipe
    _check_variant(recipe.path, family, variant)
    return dataclasses.replace(recipe, collection=family, variant=variant, retargeted=True)


def find_recipe(referrer: Recipe, name: str, kind: str, key: str, table: str = "rerank") -> Recipe:
    """The recipe called ``name`` in the directory of ``referrer`` (``NAME.toml`` first),
    of the given kind and of the referrer's collection family (moved onto it when the
    referrer was, :func:`retarget`); ``[table] key`` is what named it (for the error
    messages)."""
    directory = referrer.path.parent
    candidates = [directory / f"{name}.toml"] + sorted(directory.glob("*.toml"))
    for path in candidates:
        if not path.is_file() or path.resolve() == referrer.path.resolve():
            continue
        recipe = load_recipe(path)
        if recipe.name != name:
            continue
        if referrer.retargeted:  # a trainer moved onto another collection takes its own along
            recipe = retarget(recipe, referrer.collection, referrer.variant)
        if recipe.kind != kind:
            raise FormatError(
                referrer.path, None, f'[{table}] {key} names {path}, which is not kind = "{kind}"'
            )
        if recipe.collection != referrer.collection:
            raise FormatError(
                referrer.path,
                None,
                f"[{table}] {key} names {path}, which runs on collection = "
                f"{show(recipe.collection)}, not collection = {show(referrer.collection)}",
                "name a recipe of the same collection family",
            )
        return recipe
    raise FormatError(
        referrer.path,
        None,
        f'[{table}] {key} = "{name}": no recipe of that name in {directory}',
        f'add {directory / (name + ".toml")} (kind = "{kind}")',
    )
