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

The collections of a family are :data:`COLLECTIONS`'s: ``collection = "ddtp"`` runs on
``ddtp-en-L[-hard]`` (built from the apt lists an earlier fetch saved under
``$CLIR_DATA/ddtp/lists``, else fetched there), and its runs go to
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
described in :mod:`clir_toolkit.rerank.recipe`.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit import freshness
from clir_toolkit.collection import ddtp, manpages
from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.params import (
    SAFE_NAME,
    Param,
    check_table,
    check_value,
    declare,
    reject_unknown_keys,
    show,
)
from clir_toolkit.translate.pipeline import EXPANSIONS, TRANSLATIONS

if TYPE_CHECKING:
    from clir_toolkit.rerank.recipe import RerankDetails

SPLITS = ("dev", "test")


@dataclass(frozen=True)
class CollectionFamily:
    """A family of collections that recipes name with ``collection = "..."``."""

    languages: tuple[str, ...]
    name: Callable[[str, str], str]
    """(language, variant) → the collection's directory name (under data/, indexes/, runs/)."""
    build: Callable[[str, Path, str, bool], object]
    """(language, out, variant, progress): build the collection into ``out``."""


def _build_manpages(language: str, out: Path, variant: str, progress: bool) -> object:
    return manpages.build_manpages_collection(language, out, variant=variant, progress=progress)


def _build_ddtp(language: str, out: Path, variant: str, progress: bool) -> object:
    lists = ddtp.saved_lists(language)  # None: fetch them, as `clir collection build ddtp`
    return ddtp.build_ddtp_collection(
        language, out, variant=variant, lists=lists, progress=progress
    )


#: The collection families, by the name a recipe gives them.
COLLECTIONS = {
    "manpages": CollectionFamily(tuple(manpages.LANGUAGES), manpages.collection_name,
                                 _build_manpages),
    "ddtp": CollectionFamily(tuple(ddtp.LANGUAGES), ddtp.collection_name, _build_ddtp),
}  # fmt: skip
TUNE_MEASURE = "nDCG@10"
TUNE_HITS = 20
AUTO_EMBED_DIM = 100
AUTO_EMBED_EPOCHS = 10

SEARCH_PARAMS = declare(
    Param("translate", str, "none", "how the English queries become document-language ones",
          choices=TRANSLATIONS),
    Param("dictionary", str, doc="freedict:eng-fra[+fra-eng], cedict or a TSV file"),
    Param("dict_mode", str, "all", "dictionary candidates kept per term",
          choices=("all", "first", "weighted")),
    Param("parallel", str, doc='parallel text of dict_mode = "weighted" ("auto": built)'),
    Param("mt", str, doc="apertium:eng-spa, hf:MODEL_DIR or file:T.tsv"),
    Param("mt_target_lang", str, doc="target language token of NLLB/M2M100 models"),
    Param("embed", str, doc='aligned embeddings, a .vec file ("auto": trained)'),
    Param("embed_top", int, 1, "embedding candidates per term", minimum=1),
    Param("w_major", float, 1.0, "equation 5.2: weight of the term", minimum=0),
    Param("w_context", float, 0.2, "equation 5.2: weight of the context", minimum=0),
    Param("expand", str, doc="pre-translation expansion", choices=EXPANSIONS),
    Param("wordnet_synonyms", int, 3, "WordNet synonyms added per term", minimum=0),
    Param("wordnet_weight", float, 0.5, "weight of a synonym", minimum=0),
    Param("keep_source", float, 0.0, "weight of the kept English word, relative to the best "
          "translation (0: translations only; clir search's default is 0.5)", minimum=0),
    Param("structure", str, "or", "how a term's alternatives combine",
          choices=("and", "or", "syn")),
    Param("k1", float, 0.9, "BM25 k1", minimum=0),
    Param("b", float, 0.4, "BM25 b", minimum=0, maximum=1),
    Param("hits", int, 1000, "documents retrieved per query", minimum=1),
    Param("prf", str, doc="pseudo-relevance feedback", choices=("rocchio", "rm3")),
    Param("fb_docs", int, 10, "feedback documents", minimum=1),
    Param("fb_terms", int, 10, "feedback terms", minimum=1),
    Param("alpha", float, 1.0, "Rocchio: weight of the original query", minimum=0),
    Param("beta", float, 0.75, "Rocchio: weight of the feedback terms", minimum=0),
    Param("original_weight", float, 0.5, "RM3: weight of the original query",
          minimum=0, maximum=1),
)  # fmt: skip
"""The ``[search]`` table: the options of ``clir search``, with underscores."""
SEARCH_KEYS = frozenset(SEARCH_PARAMS)
SEARCH_FIX = f"use the option names of 'clir search' with underscores: {', '.join(SEARCH_PARAMS)}"

RECIPE_PARAMS = declare(
    Param("name", str, doc="the run's name and tag, a file name (default: the recipe's)",
          form=SAFE_NAME),
    Param("title", str, doc="the row label in RESULTS.md (default: the name)"),
    Param("group", str, "other", 'rows compared with each other (several: a list)',
          shape="one or list"),
    Param("collection", str, "manpages",
          "the collection family: Debian man pages or package descriptions (DDTP)",
          choices=tuple(COLLECTIONS)),
    Param("languages", str, ("fr",), "the family's collections en→L", shape="list"),
    Param("variant", str, "standard", "the collection variant", choices=("standard", "hard")),
    Param("topics", str, "english", "the queries: English, or the human translations",
          choices=("english", "human")),
    Param("baseline", bool, False, "the run others are tested against"),
    Param("kind", str, "search", "first stage, or a neural reranker",
          choices=("search", "rerank")),
)  # fmt: skip
"""The top-level keys of a recipe; its tables are ``[search]``, ``[tune]`` and ``[rerank]``."""
TABLES = ("search", "tune", "rerank")


@dataclass(frozen=True)
class Recipe:
    """One system, as read from its TOML file."""

    path: Path
    name: str
    title: str
    group: str
    languages: tuple[str, ...]
    collection: str = "manpages"
    variant: str = "standard"
    topics: str = "english"
    baseline: bool = False
    kind: str = "search"
    search: dict[str, Any] = field(default_factory=dict)
    tune: dict[str, list[Any]] = field(default_factory=dict)
    rerank: dict[str, Any] = field(default_factory=dict)

    @property
    def groups(self) -> tuple[str, ...]:
        """The groups the row belongs to (``group`` may list several, joined by " / ")."""
        return tuple(g.strip() for g in self.group.split(" / "))


@dataclass(frozen=True)
class Workspace:
    """Where collections, indexes and runs live (relative to the repository root)."""

    data: Path = Path("data")
    indexes: Path = Path("indexes")
    runs: Path = Path("runs")
    models: Path = Path("models")

    def collection_name(self, family: str, language: str, variant: str) -> str:
        """``manpages-en-fr``, ``ddtp-en-fr-hard``: the family's name of the collection."""
        return COLLECTIONS[family].name(language, variant)

    def collection(self, family: str, language: str, variant: str) -> Path:
        return self.data / self.collection_name(family, language, variant)

    def index(self, family: str, language: str, variant: str) -> Path:
        return self.indexes / self.collection_name(family, language, variant)

    def run(self, recipe: Recipe, language: str, split: str) -> Path:
        name = self.collection_name(recipe.collection, language, recipe.variant)
        return self.runs / name / split / f"{recipe.name}.trec"


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
    search = check_table(
        path, "search", values.get("search", {}), SEARCH_PARAMS, "options", SEARCH_FIX
    )
    tune = _check_tune(path, values.get("tune", {}))
    if kind == "rerank":
        from clir_toolkit.rerank.recipe import check_rerank_table

        check_rerank_table(path, {**values, **top, "name": name})
    elif "rerank" in values:
        raise FormatError(
            path, None, "a search recipe takes no [rerank] table", 'add kind = "rerank"'
        )
    group = top.get("group", "other")
    return Recipe(
        path=path,
        name=name,
        title=top.get("title", name),
        group=" / ".join(group if isinstance(group, tuple) else [group]),
        languages=languages,
        collection=collection,
        variant=top.get("variant", "standard"),
        topics=top.get("topics", "english"),
        baseline=top.get("baseline", False),
        kind=kind,
        search=search,
        tune=tune,
        rerank=dict(values.get("rerank", {})),
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
        choices=COLLECTIONS[family].languages,
    )
    return tuple(check_value(path, "", param, languages))


def _check_tune(path: Path, table: Any) -> dict[str, list[Any]]:
    """The ``[tune]`` grid: a non-empty list of valid ``[search]`` values per option."""
    lists = {key: dataclasses.replace(param, shape="list") for key, param in SEARCH_PARAMS.items()}
    checked = check_table(path, "tune", table, lists, "options", SEARCH_FIX)
    return {key: list(values) for key, values in checked.items()}


def ensure_collection(
    workspace: Workspace, family: str, language: str, variant: str, quiet: bool
) -> Path:
    """The family's collection en→language, built if it is not there yet."""
    path = workspace.collection(family, language, variant)
    if not (path / "manifest.json").is_file():
        log(quiet, f"building collection {path}")
        COLLECTIONS[family].build(language, path, variant, not quiet)
    return path


def ensure_index(
    workspace: Workspace, family: str, language: str, variant: str, quiet: bool
) -> Path:
    """The index of that collection, built if missing or built from another collection."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.index import build_index, read_index_info

    collection = ensure_collection(workspace, family, language, variant, quiet)
    index = workspace.index(family, language, variant)
    fingerprint = open_collection(collection).fingerprint()
    try:
        current = read_index_info(index).collection_sha256 == fingerprint
    except ClirError:
        current = False
    if not current:
        log(quiet, f"indexing {collection} → {index}")
        build_index(collection, index, verbose=False)
    return index


def log(quiet: bool, message: str) -> None:
    if not quiet:
        print(message, file=sys.stderr)


def resolve_auto_resources(
    options: dict[str, Any], language: str, workspace: Workspace
) -> dict[str, Any]:
    """Replace ``"auto"`` resources by files under ``data/``, built when missing.

    ``parallel = "auto"``: the gettext parallel text en→language (``clir resource parallel``);
    ``embed = "auto"``: aligned embeddings trained offline (``clir embed train``).
    """
    options = dict(options)
    if options.get("parallel") == "auto":
        path = workspace.data / "parallel" / f"en-{language}.tsv"
        if not path.is_file():
            from clir_toolkit.resources.parallel import collect_parallel

            collect_parallel(language, path)
        options["parallel"] = str(path)
    if options.get("embed") == "auto":
        path = workspace.data / "embeddings" / f"en-{language}.vec"
        if not path.is_file():
            from clir_toolkit.translate.embed_train import train_bilingual_embeddings

            # Smaller than `clir embed train`'s defaults (300-d, 20 epochs) so that the
            # recipes stay within their time budget on two cores.
            train_bilingual_embeddings(
                language, path, dim=AUTO_EMBED_DIM, epochs=AUTO_EMBED_EPOCHS, progress=False
            )
        options["embed"] = str(path)
    return options


def search_run(
    recipe: Recipe,
    options: dict[str, Any],
    index: Path,
    topics_path: Path,
    output: Path,
    language: str,
    quiet: bool,
) -> None:
    """One first-stage run with the recipe's options (``clir search`` as a library call)."""
    from clir_toolkit.expand.feedback import Feedback
    from clir_toolkit.formats import read_topics
    from clir_toolkit.search import search_to_run
    from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

    translation_keys = set(TranslationOptions.__dataclass_fields__)
    translation = TranslationOptions(**{k: v for k, v in options.items() if k in translation_keys})
    if recipe.topics == "human":
        translation = replace(translation, translate="none", expand=None)
    feedback = None
    if options.get("prf") == "rm3":
        feedback = Feedback.rm3(
            options.get("fb_docs", 10),
            options.get("fb_terms", 10),
            options.get("original_weight", 0.5),
        )
    elif options.get("prf") == "rocchio":
        feedback = Feedback(
            "rocchio",
            options.get("fb_docs", 10),
            options.get("fb_terms", 10),
            options.get("alpha", 1.0),
            options.get("beta", 0.75),
        )
    queries = build_queries(read_topics(topics_path), translation, language)
    search_to_run(
        index,
        queries,
        output,
        hits=options.get("hits", 1000),
        k1=options.get("k1", 0.9),
        b=options.get("b", 0.4),
        structure=options.get("structure", "or"),
        tag=recipe.name,
        progress=False,
        feedback=feedback,
    )


@dataclass
class RecipeOutcome:
    """The runs one recipe wrote for one language (``runs``: split → run file).

    A rerank recipe also names the first-stage run it reranked on each split, which
    RESULTS.md tests it against, and the details of its reranker.
    """

    recipe: Recipe
    language: str
    runs: dict[str, Path]
    chosen: dict[str, Any]
    seconds: float
    first_stage: dict[str, Path] = field(default_factory=dict)
    rerank: RerankDetails | None = None


def grid(tune: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the [tune] values (one empty combination when none)."""
    keys = sorted(tune)
    return [
        dict(zip(keys, values, strict=True))
        for values in itertools.product(*(tune[k] for k in keys))
    ]


def run_search_recipe(
    recipe: Recipe, language: str, workspace: Workspace, quiet: bool
) -> RecipeOutcome:
    """Tune on dev (if asked), then write the dev and test runs of one language."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.evaluate import evaluate_runs

    started = time.perf_counter()
    index = ensure_index(workspace, recipe.collection, language, recipe.variant, quiet)
    collection = open_collection(workspace.collection(recipe.collection, language, recipe.variant))
    stamp = run_stamp(recipe, collection.fingerprint())
    reused = reusable_runs(recipe, language, workspace, stamp)
    if reused is not None:
        log(quiet, f"  reusing the runs of {recipe.name} on {language} (unchanged)")
        return reused
    kind = "topics-human" if recipe.topics == "human" else "topics"
    chosen: dict[str, Any] = {}
    search = resolve_auto_resources(recipe.search, language, workspace)
    dev_run = workspace.run(recipe, language, "dev")
    candidates = grid(recipe.tune)
    if len(candidates) > 1:
        best = None
        for combination in candidates:
            # nDCG@10 needs the top 10 only: tuning runs retrieve 20, the final runs all hits.
            options = {**search, **combination, "hits": TUNE_HITS}
            search_run(
                recipe, options, index, collection.split_file(kind, "dev"), dev_run, language, quiet
            )
            result = evaluate_runs(
                collection.split_file("qrels", "dev"), [dev_run], measures=TUNE_MEASURE
            )
            score = next(iter(result.means.values()))[TUNE_MEASURE]
            if best is None or score > best[0]:
                best = (score, combination)
        assert best is not None
        chosen = best[1]
    elif candidates and candidates[0]:
        chosen = candidates[0]
    runs = {}
    for split in SPLITS:
        output = workspace.run(recipe, language, split)
        search_run(
            recipe,
            {**search, **chosen},
            index,
            collection.split_file(kind, split),
            output,
            language,
            quiet,
        )
        runs[split] = output
    write_stamp(recipe, language, workspace, stamp, chosen)
    return RecipeOutcome(recipe, language, runs, chosen, time.perf_counter() - started)


def run_stamp(recipe: Recipe, collection_fingerprint: str) -> dict[str, str]:
    """What a recipe's runs depend on: the recipe file, the collection, the toolkit's code."""
    import hashlib

    from clir_toolkit import __version__

    return {
        "recipe_sha256": hashlib.sha256(recipe.path.read_bytes()).hexdigest(),
        "collection_sha256": collection_fingerprint,
        "toolkit": __version__,
        "code_sha256": freshness.source_fingerprint(),
    }


def _stamp_path(recipe: Recipe, language: str, workspace: Workspace) -> Path:
    return workspace.run(recipe, language, "dev").parent.parent / f"{recipe.name}.stamp.json"


def reusable_runs(
    recipe: Recipe, language: str, workspace: Workspace, stamp: dict[str, str]
) -> RecipeOutcome | None:
    """The outcome recorded by an earlier ``clir run`` of the same recipe, if still valid."""
    import json

    if FORCE_RERUN:
        return None
    path = _stamp_path(recipe, language, workspace)
    runs = {split: workspace.run(recipe, language, split) for split in SPLITS}
    if not path.is_file() or not all(run.is_file() for run in runs.values()):
        return None
    recorded = json.loads(path.read_text(encoding="utf-8"))
    if recorded.get("stamp") != stamp:
        return None
    return RecipeOutcome(recipe, language, runs, recorded.get("chosen", {}), 0.0)


def write_stamp(
    recipe: Recipe,
    language: str,
    workspace: Workspace,
    stamp: dict[str, str],
    chosen: dict[str, Any],
) -> None:
    import json

    from clir_toolkit.files import atomic_write

    with atomic_write(_stamp_path(recipe, language, workspace)) as handle:
        json.dump({"stamp": stamp, "chosen": chosen}, handle, indent=2, sort_keys=True)


#: ``clir run --force`` sets this: every recipe runs again even when its runs are current.
FORCE_RERUN = False

#: When the current ``run_recipes`` began (``time.time()``): under ``--force``, rerank recipes
#: reuse only what was made since (a model two recipes share is trained once).
RUN_STARTED = 0.0


RecipeRunner = Callable[[Recipe, str, Workspace, bool], "RecipeOutcome | list[RecipeOutcome]"]
"""Runs a recipe on one language: one outcome, or one per point of a rerank sweep."""


def run_recipes(
    paths: Sequence[str | Path],
    workspace: Workspace | None = None,
    quiet: bool = False,
    results: Path | None = None,
    force: bool = False,
) -> Path:
    """Run every recipe on its languages and regenerate RESULTS.md; returns its path.

    A recipe whose runs are current (same recipe file, same collection, same toolkit
    version: see :func:`run_stamp`) is not run again unless ``force``.
    """
    from clir_toolkit.results import write_results

    global FORCE_RERUN, RUN_STARTED
    FORCE_RERUN = force
    RUN_STARTED = time.time()
    workspace = workspace or Workspace()
    recipes = [load_recipe(p) for p in paths]
    if not recipes:
        raise ClirError("no recipes given (e.g. clir run baselines/*.toml)")
    check_distinct_names(recipes)
    outcomes: list[RecipeOutcome] = []
    started = time.perf_counter()
    for recipe in recipes:
        runner = recipe_runner(recipe)
        for language in recipe.languages:
            log(quiet, f"[{time.perf_counter() - started:6.0f} s] {recipe.name} on {language}")
            outcome = runner(recipe, language, workspace, quiet)
            outcomes.extend(outcome if isinstance(outcome, list) else [outcome])
    target = results or recipes[0].path.parent / "RESULTS.md"
    command = "clir run " + " ".join(str(p) for p in paths)
    write_results(target, outcomes, workspace, command, time.perf_counter() - started)
    return target


def run_names(recipe: Recipe) -> list[str]:
    """The names of the runs a recipe writes: its own, or one per point of a rerank sweep."""
    if recipe.kind == "rerank" and recipe.rerank.get("sweep"):
        from clir_toolkit.rerank.recipe import sweep_recipes

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


def recipe_runner(recipe: Recipe) -> RecipeRunner:
    if recipe.kind == "rerank":
        from clir_toolkit.rerank.recipe import run_rerank_recipe

        return run_rerank_recipe
    return run_search_recipe
