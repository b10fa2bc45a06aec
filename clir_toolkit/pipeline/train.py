"""``clir pipeline train``: the pipeline's model trained on several collections at once.

The procedure, for collections C₁ … Cₙ (by default :data:`DEFAULT_MIX`, built when missing):

1. **First stages of the training data.** Each collection is indexed (BM25 only: the
   training needs no vectors) and its train and dev topics are searched with the dictionary
   translation at the first stage's k1 and b, :data:`RERANK_DEPTH` deep on train (the
   negatives) and 1,000 deep on dev. Indexes and runs are reused while their inputs are the
   same.
2. **One training collection.** The collections' train and dev splits become one
   (:mod:`clir_toolkit.pipeline.mixture`).
3. **K-NRM** on USE-m3's subword table is trained on it with the defaults of ``clir rerank
   train --model knrm`` (the epoch kept is the best on the mixed dev queries), unless a model
   of the same inputs, settings and code is there (:mod:`clir_toolkit.pipeline.models`).
4. **λ** is the default for a collection the model never saw,
   :data:`clir_toolkit.rerank.word.family.SUBWORD_INTERPOLATION`, chosen on the transfer
   matrix (docs/transfer.md); the first stage's k1, b and hybrid weight are the defaults of
   ``clir search``, chosen there too. Nothing is tuned on the training collections' dev
   splits: in-domain choices did not transfer (λ 0.8, chosen in-domain, sank every
   transfer cell).
5. **Dev figures.** Each collection's dev run is reranked by the model at λ; nDCG@10 before
   and after goes into ``pipeline.json`` beside the stages and the collections trained on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.pipeline.definition import FirstStage, Pipeline, Reranking, write_pipeline
from clir_toolkit.pipeline.mixture import Part, write_mixture
from clir_toolkit.pipeline.models import made_once
from clir_toolkit.progress import log
from clir_toolkit.registry import homes
from clir_toolkit.search import DEFAULT_B, DEFAULT_HITS, DEFAULT_K1
from clir_toolkit.search.dense import DEFAULT_HYBRID_WEIGHT
from clir_toolkit.translate.pipeline import TranslationOptions
from clir_toolkit.vectors import DEFAULT_DENSE_ENCODER

DEFAULT_MIX = (
    ("manpages", "fr", "standard"),
    ("manpages", "de", "standard"),
    ("ddtp", "fr", "hard"),
    ("ddtp", "de", "hard"),
)
"""(family, language, variant) of the collections trained on when none is given: the four
of the transfer matrix, each built from installed Debian packages."""
DICTIONARY = TranslationOptions(translate="dict")
"""The first stage's translation: what a bare ``clir search --translate dict`` does."""
RERANK_DEPTH = 100
"""Candidates reranked per query, and the depth of the train split's run (the negatives)."""
MODEL_FILE = "knrm.pt"
KNRM_CODE = ("clir_toolkit.rerank.word.train", *homes("losses", "rerankers"))
"""The code K-NRM's model depends on (:func:`clir_toolkit.freshness.code_fingerprint`)."""
RUN_CODE = ("clir_toolkit.search.runs", "clir_toolkit.translate.pipeline")
"""The code a first-stage run depends on."""
MEASURE = "nDCG@10"


def first_stage_defaults() -> FirstStage:
    """The hybrid first stage at ``clir search``'s defaults (chosen by transfer)."""
    return FirstStage(
        k1=DEFAULT_K1, b=DEFAULT_B, translate=DICTIONARY.translate,
        structure=DICTIONARY.structure(), encoder=DEFAULT_DENSE_ENCODER,
        hybrid_weight=DEFAULT_HYBRID_WEIGHT, hits=DEFAULT_HITS,
    )  # fmt: skip


def default_collections(workdir: Path, quiet: bool = False) -> list[Path]:
    """The collections of :data:`DEFAULT_MIX` under ``workdir/data``, built when missing."""
    from clir_toolkit.collection.builder import family as collection_family

    paths = []
    for name, language, variant in DEFAULT_MIX:
        family = collection_family(name)
        path = workdir / "data" / family.collection_name(language, variant)
        if not (path / "manifest.json").is_file():
            log(quiet, f"building the collection {path}")
            family.build(language, path, variant, not quiet)
        paths.append(path)
    return paths


def train_pipeline(
    output: Path,
    collections: Sequence[Path] | None = None,
    workdir: Path = Path("."),
    quiet: bool = False,
) -> Pipeline:
    """Train the pipeline on ``collections`` (None: :data:`DEFAULT_MIX`, built under
    ``workdir/data``) into ``output``; indexes go to ``workdir/indexes``. See the module
    docstring for the procedure."""
    from clir_toolkit.rerank.word.family import SUBWORD_INTERPOLATION

    paths = list(collections) if collections else default_collections(workdir, quiet)
    opened = _training_collections(paths)
    output.mkdir(parents=True, exist_ok=True)
    stage = first_stage_defaults()
    parts = []
    for collection in opened:
        name = _name(collection)
        index = ensure_index(collection, workdir / "indexes" / name, None, quiet)
        runs = {
            split: _first_stage_run(collection, index, split, stage, output / "runs" / name,
                                    RERANK_DEPTH if split == "train" else stage.hits, quiet)
            for split in ("train", "dev")
            if has_split(collection, split)
        }  # fmt: skip
        parts.append(Part(collection, runs))
    mixture, mixed_runs = write_mixture(output / "mixture", parts)
    model = _train_knrm(mixture, mixed_runs, output / MODEL_FILE, quiet)
    reranking = Reranking(MODEL_FILE, RERANK_DEPTH, SUBWORD_INTERPOLATION)
    pipeline = Pipeline(
        first_stage=stage,
        reranking=reranking,
        trained_on=[_trained_on(part) for part in parts],
        dev=[_dev_figures(part, model, reranking, output, quiet) for part in parts
             if "dev" in part.runs],
    )  # fmt: skip
    write_pipeline(output, pipeline)
    return pipeline


def _training_collections(paths: Sequence[Path]) -> list[Collection]:
    """The collections at ``paths``, each with a train split, their names distinct."""
    opened = [open_collection(path) for path in paths]
    names: dict[str, Path] = {}
    for collection in opened:
        if not has_split(collection, "train"):
            raise ClirError(
                f"{collection.root}: no train split (topics.train.tsv and qrels.train.txt); "
                "train on collections that have one"
            )
        name = _name(collection)
        if name in names:
            raise UsageError(
                f"{collection.root} and {names[name]} are both named {name!r}; "
                "give each collection once"
            )
        names[name] = collection.root
    return opened


def _name(collection: Collection) -> str:
    return str(collection.manifest.get("name") or collection.root.name)


def has_split(collection: Collection, split: str) -> bool:
    """Whether ``collection`` has topics and qrels of ``split``."""
    return all(collection.split_file(kind, split).is_file() for kind in ("topics", "qrels"))


def ensure_index(collection: Collection, index: Path, dense: str | None, quiet: bool) -> Path:
    """``collection``'s index at ``index``, built unless one of this very collection is
    there; with ``dense``, with that encoder's vectors (added to an index that lacks them)."""
    from clir_toolkit.index import add_dense_vectors, build_index, read_index_info

    try:
        info = read_index_info(index)
        current = info.collection_sha256 == collection.fingerprint()
    except ClirError:
        current = False
    if not current:
        log(quiet, f"indexing {collection.root} → {index}")
        build_index(collection.root, index, verbose=not quiet, dense=dense)
    elif dense is not None and (info.dense is None or info.dense.encoder != dense):
        log(quiet, f"adding the {dense} vectors of {collection.root} to {index}")
        add_dense_vectors(index, dense, collection.root, verbose=not quiet)
    return index


def _first_stage_run(
    collection: Collection, index: Path, split: str, stage: FirstStage, directory: Path,
    hits: int, quiet: bool,
) -> Path:  # fmt: skip
    """BM25 of ``split``'s dictionary-translated topics, ``hits`` deep, reused while the
    index, the topics, the settings and the search code are the same."""
    from clir_toolkit.files import sha256_file
    from clir_toolkit.formats import read_topics
    from clir_toolkit.freshness import digest, is_fresh, mark_fresh
    from clir_toolkit.index import read_index_info
    from clir_toolkit.search import search_to_run
    from clir_toolkit.translate.pipeline import build_queries

    topics_file = collection.split_file("topics", split)
    run = directory / f"bm25-dict.{split}.trec"
    info = read_index_info(index)
    key = digest({
        "index": info.collection_sha256, "documents": info.documents,
        "topics": sha256_file(topics_file), "hits": hits, "k1": stage.k1, "b": stage.b,
        "translate": stage.translate, "structure": stage.structure,
    })  # fmt: skip
    if is_fresh(run, key, RUN_CODE):
        return run
    log(quiet, f"searching the {split} topics of {collection.root} (BM25, dictionary)")
    directory.mkdir(parents=True, exist_ok=True)
    queries = build_queries(read_topics(topics_file), DICTIONARY, info.language)
    search_to_run(
        index, queries, run, hits=hits, k1=stage.k1, b=stage.b, structure=stage.structure,
        tag="bm25-dict", progress=not quiet, info=info,
    )  # fmt: skip
    mark_fresh(run, key, code=RUN_CODE)
    return run


def _train_knrm(mixture: Collection, runs: dict[str, Path], output: Path, quiet: bool) -> Path:
    """K-NRM trained on the mixture with ``clir rerank train --model knrm``'s defaults."""
    from clir_toolkit.rerank.word.train import train_reranker
    from clir_toolkit.rerank.word.train_config import TrainConfig

    files: dict[str, Any] = {
        "collection": mixture.root,
        "topics": mixture.split_file("topics", "train"),
        "qrels": mixture.split_file("qrels", "train"),
        "run": runs["train"],
    }
    if "dev" in runs:
        files.update(dev_topics=mixture.split_file("topics", "dev"),
                     dev_qrels=mixture.split_file("qrels", "dev"), dev_run=runs["dev"])  # fmt: skip
    config = TrainConfig(**files, output=output, model="knrm", depth=RERANK_DEPTH,
                         verbose=not quiet)  # fmt: skip
    return made_once(config, mixture, KNRM_CODE, train_reranker, quiet)


def _trained_on(part: Part) -> dict[str, Any]:
    from clir_toolkit.formats import read_topics

    collection = part.collection
    return {
        "name": _name(collection),
        "path": str(collection.root),
        "doc_lang": collection.doc_lang,
        "fingerprint": collection.fingerprint(),
        "train_queries": len(read_topics(collection.split_file("topics", "train"))),
    }


def _dev_figures(
    part: Part, model: Path, reranking: Reranking, output: Path, quiet: bool
) -> dict[str, Any]:
    """nDCG@10 on ``part``'s dev split: its first-stage run, and that run reranked by
    ``model`` at the pipeline's λ (the reranked run is kept beside the first stage's)."""
    from clir_toolkit.evaluate import evaluate_runs
    from clir_toolkit.rerank.score import score_run

    collection, first = part.collection, part.runs["dev"]
    reranked = first.with_name("knrm.dev.trec")
    log(quiet, f"reranking the dev topics of {collection.root}")
    score_run(model, collection.root, collection.split_file("topics", "dev"), first, reranked,
              depth=reranking.depth, interpolate=reranking.interpolate, tag="knrm",
              verbose=not quiet)  # fmt: skip
    result = evaluate_runs(collection.split_file("qrels", "dev"), [first, reranked], [MEASURE])
    first_name, reranked_name = result.runs
    return {
        "name": _name(collection),
        "first_stage": "bm25-dict",
        MEASURE: result.means[first_name][MEASURE],
        f"reranked {MEASURE}": result.means[reranked_name][MEASURE],
        "queries": len(result.qids),
    }
