"""``clir demo``: the toolkit's main job end to end on real data, in a few minutes on 2 cores.

By default: build the English→French man-page collection from the installed Debian
packages (unless it is already there) → index it → BM25 runs on the dev split for

* the English queries untranslated (the CLIR floor),
* the English queries translated with FreeDict, as a bare ``clir search --translate dict``
  does it (Pirkola's structure, the English word kept beside its translations),
* the human French queries (the monolingual reference),

→ rerank the dictionary run:

* by the pretrained multilingual sentence encoder ``use-m3`` with no training, interpolated
  with BM25 (λ 0.7, the default of ``clir rerank score --pretrained``);
* by the same encoder fine-tuned on the train split with the smooth cosine and SOSL (what a
  bare ``clir rerank train`` does, about 15 s here), alone and interpolated with BM25 (λ 0.7,
  the default of ``clir rerank score`` for such a model)

→ the evaluation table with paired t-tests against the untranslated run, and the reranked
runs tested against their own first stage.

A model trained before on the same inputs with the same settings by the same training code
is reused (the sidecar ``<model>.json`` records what it was made from, as ``clir run`` does
for recipes: :mod:`clir_toolkit.freshness`). A
collection without a train split (``--collection`` with the hand-made
``tests/fixtures/tiny-fr``, whose numbers mean nothing) gets the BM25 runs only.
Progress goes to stderr; the report is returned (and printed by the command).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.encoders import default_interpolation
from clir_toolkit.errors import ClirError
from clir_toolkit.evaluate import evaluate_runs, format_result
from clir_toolkit.experiments.context import log
from clir_toolkit.formats import read_topics
from clir_toolkit.index import build_index, read_index_info
from clir_toolkit.registry import homes
from clir_toolkit.rerank.sentence.tuned_config import INTERPOLATION as TUNED_INTERPOLATION
from clir_toolkit.search import DEFAULT_HITS, search_to_run
from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

if TYPE_CHECKING:
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

#: BM25 parameters chosen on the dev split of the French man pages (baselines/RESULTS.md).
K1, B = 1.2, 0.75
#: The dictionary translation a bare ``clir search --translate dict`` makes.
DICTIONARY = TranslationOptions(translate="dict")
#: Candidates reranked per query.
RERANK_DEPTH = 100


@dataclass(frozen=True)
class System:
    """One BM25 run of the demo: its name, topics kind and translation."""

    name: str
    topics_kind: str
    translation: TranslationOptions


SYSTEMS = (
    System("bm25-untranslated", "topics", TranslationOptions()),
    System("bm25-dict", "topics", DICTIONARY),
    System("bm25-human", "topics-human", TranslationOptions()),
)
#: The fine-tuned encoder's runs: alone (λ 1) and interpolated with BM25 (its default λ).
TUNED_RUNS = {"tuned-use-m3": 1.0, "tuned-use-m3+bm25": None}
#: The pretrained sentence encoder of the demo, and its run.
PRETRAINED = "use-m3"
PRETRAINED_RUN = "use-m3+bm25"
MODEL_CODE = ("clir_toolkit.rerank.sentence.tuned", *homes("losses"))
"""The code the fine-tuned model depends on (:func:`clir_toolkit.freshness.code_fingerprint`):
the trainer and what it imports, and the losses it reaches by name through the registry; the
demo's settings are in the model's key."""


def run_demo(
    collection_dir: Path | None,
    workdir: Path,
    split: str = "dev",
    language: str = "fr",
    quiet: bool = False,
) -> str:
    """Run the demonstration and return its report (the evaluation tables)."""
    collection = _collection(collection_dir, workdir, language, quiet)
    name = collection.manifest.get("name") or collection.root.name
    qrels = collection.split_file("qrels", split)
    for needed in (collection.split_file("topics", split), qrels):
        if not needed.is_file():
            raise ClirError(
                f"{needed}: missing; the demo needs topics and qrels of split '{split}'"
            )
    index = _index(collection, workdir / "indexes" / name, quiet)
    runs_dir = workdir / "runs" / name
    runs = [
        run
        for system in SYSTEMS
        if (run := _search(collection, index, system, split, runs_dir / split, quiet)) is not None
    ]
    dictionary_run = runs_dir / split / "bm25-dict.trec"
    rerankings = [_rerank(collection, None, split, dictionary_run, runs_dir / split, quiet)]
    model = None
    if _has_split(collection, "train"):
        models = workdir / "models" / name
        model = _trained_model(collection, index, models, runs_dir, split, quiet)
        rerankings += [
            _rerank(collection, model, split, dictionary_run, runs_dir / split, quiet, run_name)
            for run_name in TUNED_RUNS
        ]
    else:
        log(quiet, f"{collection.root}: no train split, so no reranker is trained")
    runs[2:2] = rerankings

    header = (
        f"{name} ({collection.query_lang}→{collection.doc_lang}), {split} split: BM25 "
        f"(k1 {K1}, b {B}) with the English queries untranslated, translated by dictionary "
        "(Pirkola structure, English word kept), and written by people"
    )
    header += (
        f"\n{PRETRAINED_RUN}: the dictionary run reranked by the pretrained multilingual "
        f"sentence encoder {PRETRAINED}, interpolated with BM25 "
        f"(λ {default_interpolation(PRETRAINED):g})"
    )
    if model is not None:
        runs_named = " and ".join(TUNED_RUNS)
        header += (
            f"\nFine-tuned ({runs_named}): the dictionary run reranked by {PRETRAINED} "
            "fine-tuned on the train split (smooth cosine + SOSL; epoch chosen on dev), alone "
            f"and interpolated with BM25 (λ {TUNED_INTERPOLATION:g})"
        )
    report = [header, format_result(evaluate_runs(qrels, runs, baseline=str(runs[0])), "table")]
    versus_first_stage = evaluate_runs(
        qrels, [dictionary_run, *rerankings], baseline=str(dictionary_run)
    )
    report += [
        "",
        "Reranking against its first stage:",
        format_result(versus_first_stage, "table"),
    ]
    return "\n".join(report)


def _collection(
    collection_dir: Path | None, workdir: Path, language: str, quiet: bool
) -> Collection:
    """The given collection, or the man-page collection en→language, built if missing."""
    if collection_dir is None:
        collection_dir = workdir / "data" / f"manpages-en-{language}"
        if not (collection_dir / "manifest.json").is_file():
            from clir_toolkit.collection.manpages import build_manpages_collection, format_summary

            log(quiet, f"building the collection {collection_dir}")
            summary = build_manpages_collection(language, collection_dir, progress=not quiet)
            log(quiet, format_summary(summary))
    return open_collection(collection_dir)


def _index(collection: Collection, index: Path, quiet: bool) -> Path:
    """The collection's index, built unless one of this very collection is there."""
    try:
        current = read_index_info(index).collection_sha256 == collection.fingerprint()
    except ClirError:
        current = False
    if not current:
        log(quiet, f"indexing {collection.root} → {index}")
        build_index(collection.root, index, verbose=not quiet)
    return index


def _has_split(collection: Collection, split: str) -> bool:
    return all(collection.split_file(kind, split).is_file() for kind in ("topics", "qrels"))


def _search(
    collection: Collection,
    index: Path,
    system: System,
    split: str,
    directory: Path,
    quiet: bool,
    hits: int = DEFAULT_HITS,
) -> Path | None:
    """One BM25 run of ``system`` on ``split``; None when the collection lacks its topics."""
    topics = collection.split_file(system.topics_kind, split)
    if not topics.is_file():
        return None
    run = directory / f"{system.name}.trec"
    log(quiet, f"searching {split} topics: {system.name}")
    doc_lang = read_index_info(index).language
    queries = build_queries(read_topics(topics), system.translation, doc_lang)
    search_to_run(
        index,
        queries,
        run,
        hits=hits,
        k1=K1,
        b=B,
        structure=system.translation.structure(),
        tag=system.name,
        progress=not quiet,
    )
    return run


def _trained_model(
    collection: Collection,
    index: Path,
    models: Path,
    runs_dir: Path,
    split: str,
    quiet: bool,
) -> Path:
    """The encoder fine-tuned on the train split (negatives from its dictionary run) with
    the defaults of ``clir rerank train``, reused when one trained with the same settings on
    the same files is there."""
    from clir_toolkit.freshness import is_fresh, mark_fresh
    from clir_toolkit.rerank.sentence.tuned import train_tuned
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

    dictionary = SYSTEMS[1]
    # The model reads the top RERANK_DEPTH candidates; more hits would only cost time.
    train_run = _search(
        collection, index, dictionary, "train", runs_dir / "train", quiet, hits=RERANK_DEPTH
    )
    assert train_run is not None
    config = TunedConfig(
        collection=collection.root,
        topics=collection.split_file("topics", "train"),
        qrels=collection.split_file("qrels", "train"),
        run=train_run,
        output=models / f"tuned-{PRETRAINED}.pt",
        encoder=PRETRAINED,
        depth=RERANK_DEPTH,
        verbose=not quiet,
    )
    # The epoch is chosen on the dev split's dictionary run (made already if dev is shown).
    dev_run = runs_dir / "dev" / "bm25-dict.trec"
    if split != "dev" and _has_split(collection, "dev"):
        dev_run = _search(collection, index, dictionary, "dev", dev_run.parent, quiet) or dev_run
    if dev_run.is_file():
        config = dataclasses.replace(
            config,
            dev_topics=collection.split_file("topics", "dev"),
            dev_qrels=collection.split_file("qrels", "dev"),
            dev_run=dev_run,
        )
    key = _model_key(config, collection)
    if is_fresh(config.output, key, MODEL_CODE):
        log(quiet, f"reusing {config.output} (trained with the same settings on the same files)")
        return config.output
    log(
        quiet,
        f"training the reranker on the train split ({config.epochs} epochs) -> {config.output}",
    )
    train_tuned(config)
    mark_fresh(config.output, key, code=MODEL_CODE)
    return config.output


def _model_key(config: TunedConfig, collection: Collection) -> str:
    """What the model is made from: its settings, the content of its input files and the
    model format (its training code, :data:`MODEL_CODE`, is checked beside the key)."""
    from clir_toolkit.encoders import encoder_fingerprint
    from clir_toolkit.files import sha256_file
    from clir_toolkit.freshness import digest
    from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT

    settings: dict[str, Any] = {
        field.name: str(value) if isinstance(value, Path) else value
        for field in dataclasses.fields(config)
        if field.name not in {"output", "verbose", "cache_dir", "resume", "device"}
        and (value := getattr(config, field.name)) is not None
    }
    for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run"):
        path = getattr(config, name)
        if path is not None:
            settings[f"{name}_sha256"] = sha256_file(path)
    settings.update(
        collection=collection.fingerprint(),
        encoder=encoder_fingerprint(config.encoder),
        format=MODEL_FORMAT,
    )
    return digest(settings)


def _rerank(
    collection: Collection, model: Path | None, split: str, run: Path, directory: Path,
    quiet: bool, name: str = PRETRAINED_RUN,
) -> Path:  # fmt: skip
    """The dictionary run of ``split`` reranked: by the fine-tuned ``model`` into the run
    ``name`` of :data:`TUNED_RUNS` (with its λ), or by :data:`PRETRAINED` with no training
    when ``model`` is None (its default λ)."""
    from clir_toolkit.rerank.score import score_run
    from clir_toolkit.rerank.sentence.pretrained import score_run_pretrained

    output = directory / f"{name}.trec"
    log(quiet, f"reranking the top {RERANK_DEPTH} of {run} with {model or PRETRAINED}")
    topics = collection.split_file("topics", split)
    if model is None:
        score_run_pretrained(
            PRETRAINED, collection.root, topics, run, output, depth=RERANK_DEPTH,
            tag=name, verbose=not quiet,
        )  # fmt: skip
    else:
        score_run(
            model, collection.root, topics, run, output, depth=RERANK_DEPTH,
            interpolate=TUNED_RUNS[name], tag=name, verbose=not quiet,
        )  # fmt: skip
    return output
