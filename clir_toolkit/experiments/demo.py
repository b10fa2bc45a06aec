"""``clir demo``: the toolkit's main job end to end on real data, in a few minutes on 2 cores.

By default: build the English→French man-page collection from the installed Debian
packages (unless it is already there) → index it, with the dense vectors of the pretrained
multilingual sentence encoder ``use-m3`` beside Lucene's postings (``clir index --dense``)
→ runs on the dev split for

* the English queries untranslated, BM25 (the CLIR floor),
* the English queries translated with FreeDict, BM25, as a bare ``clir search --translate
  dict`` does it (Pirkola's structure, the English word kept beside its translations),
* the hybrid first stage: that BM25 run fused with the dense run of ``use-m3`` (what
  ``clir search --hybrid --translate dict`` does),
* the human French queries, BM25 (the monolingual reference),

→ rerank and search again:

* the dictionary run by ``use-m3`` fine-tuned on the train split with the smooth cosine and
  SOSL (what a bare ``clir rerank train`` does, about 15 s here), interpolated with BM25
  (λ 0.7, the default of ``clir rerank score`` for such a model): the best pipeline before
  the hybrid first stage;
* the hybrid first stage again, its dense run through the fine-tuned encoder's towers (what
  ``clir search --hybrid --model tuned-use-m3.pt`` does): fine-tuned to rerank, the towers
  also retrieve better than the pretrained encoder over the whole collection;
* that run by K-NRM on USE-m3's pretrained subword table, trained on the train split
  (what ``clir rerank train --model knrm`` does, with the negatives of the train split's
  :data:`KNRM_NEGATIVES` run; 2–4 minutes here), interpolated with its first stage's scores
  at the λ best on the dev split's candidates (:mod:`clir_toolkit.rerank.interpolation`;
  the test split uses the dev split's λ): the best pipeline measured, above BM25 of the
  human translations on the man pages (docs/dense.md)

→ the evaluation table with paired t-tests against the untranslated run, and the reranked
runs tested against their own first stage.

A model trained before on the same inputs with the same settings by the same training code
is reused (the sidecar ``<model>.json`` records what it was made from, as ``clir run`` does
for recipes: :mod:`clir_toolkit.freshness`); so are the index's vectors. A collection
without a train split (``--collection`` with the hand-made ``tests/fixtures/tiny-fr``, whose
numbers mean nothing) gets the first stages only. Progress goes to stderr; the report is
returned (and printed by the command).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.errors import ClirError
from clir_toolkit.evaluate import evaluate_runs, format_result
from clir_toolkit.formats import read_topics
from clir_toolkit.index import read_index_info
from clir_toolkit.pipeline.models import made_once
from clir_toolkit.pipeline.train import ensure_index, has_split
from clir_toolkit.progress import log
from clir_toolkit.registry import homes
from clir_toolkit.rerank.sentence.tuned_config import INTERPOLATION as TUNED_INTERPOLATION
from clir_toolkit.rerank.word.family import SUBWORD_INTERPOLATION
from clir_toolkit.search import DEFAULT_HITS, search_to_run
from clir_toolkit.search.dense import DEFAULT_HYBRID_WEIGHT
from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

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
#: The fine-tuned encoder's run: the dictionary run reranked, interpolated with BM25.
TUNED_RUN = "tuned-use-m3+bm25"
#: The pretrained sentence encoder of the demo: the index's vectors and the fine-tuned model.
PRETRAINED = "use-m3"
#: The hybrid first stage: with the pretrained encoder's vectors, and through the fine-tuned
#: encoder's towers (what ``clir search --hybrid --model tuned-use-m3.pt`` does).
HYBRID_RUN = "hybrid"
TUNED_HYBRID_RUN = "tuned-hybrid"
#: K-NRM's run of the tuned hybrid: the best pipeline measured.
KNRM_RUN = "knrm+tuned-hybrid"
#: The train split's run that gives K-NRM its negatives (see docs/training.md).
KNRM_NEGATIVES = "bm25-dict"
TUNED_CODE = ("clir_toolkit.rerank.sentence.tuned", *homes("losses"))
KNRM_CODE = ("clir_toolkit.rerank.word.train", *homes("losses", "rerankers"))
"""The code a model depends on (:func:`clir_toolkit.freshness.code_fingerprint`): its
trainer and what it imports, and what it reaches by name through the registry; the demo's
settings are in the model's key."""


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
    index = ensure_index(collection, workdir / "indexes" / name, PRETRAINED, quiet)
    runs_dir = workdir / "runs" / name
    untranslated, dictionary, human = (
        _search(collection, index, system, split, runs_dir / split, quiet) for system in SYSTEMS
    )
    assert untranslated is not None and dictionary is not None  # the split's topics exist
    hybrid = _hybrid(collection, index, split, runs_dir / split, quiet)
    runs = [untranslated, dictionary, hybrid]
    rerankings: list[tuple[Path, Path]] = []  # (first stage, reranked run)
    knrm_weight: float | None = None
    if has_split(collection, "train"):
        models = workdir / "models" / name
        tuned = _tuned_model(collection, index, models, runs_dir, split, quiet)
        tuned_run = _rerank(collection, tuned, split, dictionary, runs_dir / split, TUNED_RUN,
                            TUNED_INTERPOLATION, quiet)  # fmt: skip
        tuned_hybrid = _hybrid(collection, index, split, runs_dir / split, quiet, model=tuned)
        knrm = _knrm_model(collection, index, models, runs_dir, split, quiet)
        knrm_run, knrm_weight = _knrm_rerank(
            collection, index, knrm, tuned, tuned_hybrid, runs_dir, split, quiet
        )
        runs += [tuned_run, tuned_hybrid, knrm_run]
        rerankings += [(dictionary, tuned_run), (tuned_hybrid, knrm_run), (tuned_run, knrm_run)]
    else:
        log(quiet, f"{collection.root}: no train split, so no reranker is trained")
    if human is not None:
        runs.append(human)

    header = (
        f"{name} ({collection.query_lang}→{collection.doc_lang}), {split} split: BM25 "
        f"(k1 {K1}, b {B}) with the English queries untranslated, translated by dictionary "
        "(Pirkola structure, English word kept), and written by people"
        f"\n{HYBRID_RUN}: the dictionary run fused with the dense run of {PRETRAINED} "
        f"(min-max normalised, weight {DEFAULT_HYBRID_WEIGHT:g} on the dense scores)"
    )
    if rerankings:
        weight = SUBWORD_INTERPOLATION if knrm_weight is None else knrm_weight
        chosen = "the default: no dev split" if knrm_weight is None else "chosen on dev"
        header += (
            f"\n{TUNED_RUN}: the dictionary run reranked by {PRETRAINED} fine-tuned on the "
            "train split (smooth cosine + SOSL; epoch chosen on dev), interpolated with BM25 "
            f"(λ {TUNED_INTERPOLATION:g})"
            f"\n{TUNED_HYBRID_RUN}: the hybrid of the dictionary run and the dense run through "
            f"the fine-tuned {PRETRAINED}'s towers"
            f"\n{KNRM_RUN}: the {TUNED_HYBRID_RUN} run reranked by K-NRM on {PRETRAINED}'s "
            f"subword table, trained on the train split ({KNRM_NEGATIVES} negatives; epoch "
            f"chosen on dev), interpolated with the {TUNED_HYBRID_RUN} scores (λ {weight:g}, "
            f"{chosen})"
        )
    report = [header, format_result(evaluate_runs(qrels, runs, baseline=str(runs[0])), "table")]
    if rerankings:
        report += ["", "Each reranking against its first stage, then the pipeline against the "
                   "best before it:"]  # fmt: skip
        for first, reranked in rerankings:
            versus = evaluate_runs(qrels, [first, reranked], baseline=str(first))
            report.append(format_result(versus, "table"))
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


def _hybrid(
    collection: Collection, index: Path, split: str, directory: Path, quiet: bool,
    hits: int = DEFAULT_HITS, model: Path | None = None,
) -> Path:  # fmt: skip
    """The hybrid run of ``split``: the dictionary run's BM25 fused with the dense run, the
    pretrained encoder's (:data:`HYBRID_RUN`) or through a fine-tuned ``model``'s towers
    (:data:`TUNED_HYBRID_RUN`)."""
    from clir_toolkit.search.dense import hybrid_search_to_run

    topics = read_topics(collection.split_file("topics", split))
    name = HYBRID_RUN if model is None else TUNED_HYBRID_RUN
    run = directory / f"{name}.trec"
    log(quiet, f"searching {split} topics: {name}")
    queries = build_queries(topics, DICTIONARY, read_index_info(index).language)
    hybrid_search_to_run(
        index, queries, topics, run, hits=hits, k1=K1, b=B, tag=name,
        structure=DICTIONARY.structure(), encoder=PRETRAINED, model=model, progress=not quiet,
    )  # fmt: skip
    return run


def _training_runs(
    collection: Collection, index: Path, runs_dir: Path, split: str, first_stage: str,
    quiet: bool,
) -> tuple[Path, Path | None]:  # fmt: skip
    """The train split's ``first_stage`` run (the negatives, :data:`RERANK_DEPTH` deep) and
    the dev split's (the candidates the epoch is chosen on; None without a dev split)."""

    def run(of_split: str, hits: int = DEFAULT_HITS) -> Path | None:
        directory = runs_dir / of_split
        if first_stage == HYBRID_RUN:
            return _hybrid(collection, index, of_split, directory, quiet, hits=hits)
        return _search(collection, index, SYSTEMS[1], of_split, directory, quiet, hits=hits)

    train_run = run("train", RERANK_DEPTH)  # more hits would only cost time
    assert train_run is not None
    dev_run: Path | None = runs_dir / "dev" / f"{first_stage}.trec"
    if split != "dev" and has_split(collection, "dev"):
        dev_run = run("dev")
    return train_run, dev_run if dev_run is not None and dev_run.is_file() else None


def _tuned_model(
    collection: Collection, index: Path, models: Path, runs_dir: Path, split: str, quiet: bool
) -> Path:
    """:data:`PRETRAINED` fine-tuned on the train split (negatives from its dictionary run)
    with the defaults of ``clir rerank train``."""
    from clir_toolkit.rerank.sentence.tuned import train_tuned
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

    train_run, dev_run = _training_runs(collection, index, runs_dir, split, "bm25-dict", quiet)
    config = TunedConfig(
        **_training_files(collection, train_run, dev_run),
        output=models / f"tuned-{PRETRAINED}.pt", encoder=PRETRAINED, depth=RERANK_DEPTH,
        verbose=not quiet,
    )  # fmt: skip
    return made_once(config, collection, TUNED_CODE, train_tuned, quiet)


def _knrm_model(
    collection: Collection, index: Path, models: Path, runs_dir: Path, split: str, quiet: bool
) -> Path:
    """K-NRM on the pretrained subword table, trained on the train split with the defaults
    of ``clir rerank train --model knrm`` (negatives from the :data:`KNRM_NEGATIVES` run)."""
    from clir_toolkit.rerank.word.train import train_reranker
    from clir_toolkit.rerank.word.train_config import TrainConfig

    train_run, dev_run = _training_runs(collection, index, runs_dir, split, KNRM_NEGATIVES, quiet)
    config = TrainConfig(
        **_training_files(collection, train_run, dev_run),
        output=models / "knrm.pt", model="knrm", depth=RERANK_DEPTH, verbose=not quiet,
    )  # fmt: skip
    return made_once(config, collection, KNRM_CODE, train_reranker, quiet)


def _training_files(collection: Collection, run: Path, dev_run: Path | None) -> dict[str, Any]:
    """A training's input files: the train split's, and the dev split's when there is one."""
    files: dict[str, Any] = {
        "collection": collection.root,
        "topics": collection.split_file("topics", "train"),
        "qrels": collection.split_file("qrels", "train"),
        "run": run,
    }
    if dev_run is not None:
        files.update(
            dev_topics=collection.split_file("topics", "dev"),
            dev_qrels=collection.split_file("qrels", "dev"),
            dev_run=dev_run,
        )
    return files


def _rerank(
    collection: Collection, model: Path, split: str, run: Path, directory: Path, name: str,
    interpolate: float | None, quiet: bool,
) -> Path:  # fmt: skip
    """The top :data:`RERANK_DEPTH` of ``run`` reranked by ``model`` into the run ``name``,
    interpolated with ``run``'s scores at ``interpolate`` (None: the model's default λ)."""
    from clir_toolkit.rerank.score import score_run

    output = directory / f"{name}.trec"
    log(quiet, f"reranking the top {RERANK_DEPTH} of {run} with {model}")
    score_run(
        model, collection.root, collection.split_file("topics", split), run, output,
        depth=RERANK_DEPTH, interpolate=interpolate, tag=name, verbose=not quiet,
    )  # fmt: skip
    return output


def _knrm_rerank(
    collection: Collection, index: Path, knrm: Path, tuned: Path, first_stage: Path,
    runs_dir: Path, split: str, quiet: bool,
) -> tuple[Path, float | None]:  # fmt: skip
    """``first_stage`` (the split's :data:`TUNED_HYBRID_RUN`) reranked by ``knrm`` into
    :data:`KNRM_RUN`, interpolated at the λ best on the dev split's own tuned hybrid run
    (:mod:`clir_toolkit.rerank.interpolation`: its candidates scored once, each λ tried); the
    model's default λ when there is no dev split. Returns the run and the λ chosen (None: the
    default)."""
    from clir_toolkit.rerank.interpolation import interpolation_on_dev
    from clir_toolkit.rerank.score import score_candidates, write_scored

    if not has_split(collection, "dev"):
        run = _rerank(collection, knrm, split, first_stage, runs_dir / split, KNRM_RUN, None,
                      quiet)  # fmt: skip
        return run, None
    dev_run = first_stage
    if split != "dev":
        dev_run = _hybrid(collection, index, "dev", runs_dir / "dev", quiet, model=tuned)
    log(quiet, f"scoring the top {RERANK_DEPTH} of {dev_run} with {knrm}")
    started = time.perf_counter()
    dev = interpolation_on_dev(knrm, collection.root, dev_run, RERANK_DEPTH, verbose=not quiet)
    log(quiet, f"K-NRM's λ on dev, {dev.describe()}")
    candidates = dev.candidates
    if split != "dev":
        log(quiet, f"scoring the top {RERANK_DEPTH} of {first_stage} with {knrm}")
        started = time.perf_counter()
        candidates = score_candidates(
            knrm, collection.root, collection.split_file("topics", split), first_stage,
            depth=RERANK_DEPTH, verbose=not quiet,
        )  # fmt: skip
    output = runs_dir / split / f"{KNRM_RUN}.trec"
    write_scored(candidates, output, RERANK_DEPTH, dev.weight, KNRM_RUN, started, not quiet)
    return output, dev.weight
