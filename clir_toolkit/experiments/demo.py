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

→ the pipeline, trained for this collection's own topics and run on them, as a user would
with ``clir pipeline train --in-domain --collection C`` then ``clir pipeline search``
(:mod:`clir_toolkit.pipeline`: one definition of the pipeline, which the demo only calls):

* ``tuned-hybrid``, its first stage: the hybrid again, its dense run through the towers of
  ``use-m3`` fine-tuned on the train split with the smooth cosine and SOSL (what a bare
  ``clir rerank train`` does): fine-tuned to rerank, the towers also retrieve better than
  the pretrained encoder over the whole collection;
* ``knrm+tuned-hybrid``: that run reranked by K-NRM on USE-m3's pretrained subword table,
  trained on the train split (what ``clir rerank train --model knrm`` does), interpolated
  with its first stage's scores at the λ best on the dev split (the test split uses the dev
  split's λ): the best pipeline measured, above BM25 of the human translations on the man
  pages (docs/dense.md)

→ the evaluation table with paired t-tests against the untranslated run, and each stage
tested against the run before it.

Models, indexes and vectors made before from the same inputs with the same settings by the
same code are reused (:mod:`clir_toolkit.freshness`). A collection without a train and a dev
split (``--collection`` with the hand-made ``tests/fixtures/tiny-fr``, whose numbers mean
nothing) gets the first stages only. Progress goes to stderr; the report is returned (and
printed by the command).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.errors import ClirError
from clir_toolkit.evaluate import evaluate_runs, format_result
from clir_toolkit.formats import read_topics
from clir_toolkit.index import read_index_info
from clir_toolkit.pipeline.definition import FirstStage, Pipeline
from clir_toolkit.pipeline.search import search_first_stage, search_pipeline
from clir_toolkit.pipeline.train import (
    ensure_index,
    first_stage_defaults,
    has_split,
    train_pipeline,
)
from clir_toolkit.progress import log
from clir_toolkit.search import DEFAULT_HITS, search_to_run
from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

#: The dictionary translation a bare ``clir search --translate dict`` makes.
DICTIONARY = TranslationOptions(translate="dict")


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
#: The zero-shot hybrid first stage, the pipeline's first stage through the fine-tuned
#: towers, and the pipeline's run: the best measured.
HYBRID_RUN = "hybrid"
TUNED_HYBRID_RUN = "tuned-hybrid"
KNRM_RUN = "knrm+tuned-hybrid"


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
    topics = collection.split_file("topics", split)
    for needed in (topics, qrels):
        if not needed.is_file():
            raise ClirError(
                f"{needed}: missing; the demo needs topics and qrels of split '{split}'"
            )
    stage = first_stage_defaults(in_domain=True)
    index = ensure_index(collection, workdir / "indexes" / name, stage.encoder, quiet)
    runs_dir = workdir / "runs" / name / split
    untranslated, dictionary, human = (
        _search(collection, index, stage, system, split, runs_dir, quiet) for system in SYSTEMS
    )
    assert untranslated is not None and dictionary is not None  # the split's topics exist
    hybrid = runs_dir / f"{HYBRID_RUN}.trec"
    log(quiet, f"searching {split} topics: {HYBRID_RUN}")
    search_first_stage(workdir, Pipeline(stage, None), index, topics, hybrid, tag=HYBRID_RUN,
                       quiet=quiet)  # fmt: skip
    runs = [untranslated, dictionary, hybrid]
    steps: list[tuple[Path, Path]] = []  # (the run before, the run after a stage)
    pipeline: Pipeline | None = None
    if has_split(collection, "train") and has_split(collection, "dev"):
        models = workdir / "models" / str(name) / "pipeline"
        pipeline = train_pipeline(models, [collection.root], workdir, quiet, in_domain=True)
        tuned_hybrid, knrm = runs_dir / f"{TUNED_HYBRID_RUN}.trec", runs_dir / f"{KNRM_RUN}.trec"
        log(quiet, f"searching {split} topics: the pipeline of {models}")
        search_pipeline(models, index, topics, knrm, tag=KNRM_RUN, quiet=quiet,
                        first_stage_output=tuned_hybrid)  # fmt: skip
        runs += [tuned_hybrid, knrm]
        steps += [(hybrid, tuned_hybrid), (tuned_hybrid, knrm), (hybrid, knrm)]
    else:
        log(quiet, f"{collection.root}: no train and dev splits, so no reranker is trained")
    if human is not None:
        runs.append(human)

    header = (
        f"{name} ({collection.query_lang}→{collection.doc_lang}), {split} split: BM25 "
        f"(k1 {stage.k1:g}, b {stage.b:g}) with the English queries untranslated, translated "
        "by dictionary (Pirkola structure, English word kept), and written by people"
        f"\n{HYBRID_RUN}: the dictionary run fused with the dense run of {stage.encoder} "
        f"(min-max normalised, weight {stage.hybrid_weight:g} on the dense scores)"
    )
    if pipeline is not None and pipeline.reranking is not None:
        header += (
            f"\n{TUNED_HYBRID_RUN}: the same through the towers of {stage.encoder} fine-tuned on "
            "the train split (smooth cosine + SOSL; epoch chosen on dev)"
            f"\n{KNRM_RUN}: the {TUNED_HYBRID_RUN} run reranked by K-NRM on {stage.encoder}'s "
            "subword table, trained on the train split (epoch chosen on dev), interpolated "
            f"with the {TUNED_HYBRID_RUN} scores (λ {pipeline.reranking.interpolate:g}, chosen "
            "on dev)"
        )
    report = [header, format_result(evaluate_runs(qrels, runs, baseline=str(runs[0])), "table")]
    if steps:
        report += ["", "Each stage against the run before it, then the pipeline against the "
                   "zero-shot hybrid:"]  # fmt: skip
        for before, after in steps:
            versus = evaluate_runs(qrels, [before, after], baseline=str(before))
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
    stage: FirstStage,
    system: System,
    split: str,
    directory: Path,
    quiet: bool,
    hits: int = DEFAULT_HITS,
) -> Path | None:
    """One BM25 run of ``system`` on ``split`` at the first ``stage``'s k1 and b; None when
    the collection lacks its topics."""
    topics = collection.split_file(system.topics_kind, split)
    if not topics.is_file():
        return None
    run = directory / f"{system.name}.trec"
    log(quiet, f"searching {split} topics: {system.name}")
    doc_lang = read_index_info(index).language
    queries = build_queries(read_topics(topics), system.translation, doc_lang)
    search_to_run(
        index, queries, run, hits=hits, k1=stage.k1, b=stage.b,
        structure=system.translation.structure(), tag=system.name, progress=not quiet,
    )  # fmt: skip
    return run
