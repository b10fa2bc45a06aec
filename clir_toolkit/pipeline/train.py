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

**In domain** (``--in-domain``: one collection, whose own topics the pipeline will search, as
``clir demo`` does), what helps on a collection's own topics is kept too. USE-m3 is
fine-tuned on its train split (the smooth cosine and SOSL, ``clir rerank train``'s defaults,
negatives of the same BM25 run) and its towers carry the first stage's dense run; the
collection is indexed with the encoder's vectors; λ is the best on its dev split's first
stage (:func:`clir_toolkit.rerank.interpolation.interpolation_on_dev`), which is then the dev
figure. That dev run and its score at each λ are kept and reused, as the models are, while
their inputs and code are the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.encoders import encoder_names
from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.pipeline.definition import (
    IN_DOMAIN_ENCODER,
    TRANSFER_ENCODER,
    FirstStage,
    Pipeline,
    Reranking,
    write_pipeline,
)
from clir_toolkit.pipeline.mixture import Part, write_mixture
from clir_toolkit.pipeline.models import made_once
from clir_toolkit.progress import log
from clir_toolkit.registry import homes
from clir_toolkit.search import DEFAULT_B, DEFAULT_HITS, DEFAULT_K1
from clir_toolkit.translate.pipeline import TranslationOptions

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
TOWERS_FILE = "tuned-use-m3.pt"
"""The fine-tuned encoder of an in-domain pipeline."""
KNRM_CODE = ("clir_toolkit.rerank.word.train", *homes("losses", "rerankers"))
"""The code K-NRM's model depends on (:func:`clir_toolkit.freshness.code_fingerprint`)."""
TUNED_CODE = ("clir_toolkit.rerank.sentence.tuned", *homes("losses"))
"""The code a fine-tuned encoder depends on."""
RUN_CODE = ("clir_toolkit.search.runs", "clir_toolkit.translate.pipeline")
"""The code a first-stage run depends on."""
DEV_CHOICE_CODE = ("clir_toolkit.pipeline.search", "clir_toolkit.rerank.interpolation")
"""The code the in-domain dev run and its λ scores depend on."""
MEASURE = "nDCG@10"


def first_stage_defaults(encoder: str | None = None, in_domain: bool = False) -> FirstStage:
    """The hybrid first stage at ``clir search``'s defaults (chosen by transfer), with the
    dense run of ``encoder`` (default: :data:`TRANSFER_ENCODER`, or :data:`IN_DOMAIN_ENCODER`
    in domain; several joined by commas) at their hybrid weight."""
    from clir_toolkit.search.hybrid import default_weight_of_encoders

    if encoder is None:
        encoder = IN_DOMAIN_ENCODER if in_domain else TRANSFER_ENCODER
    return FirstStage(
        k1=DEFAULT_K1, b=DEFAULT_B, translate=DICTIONARY.translate,
        structure=DICTIONARY.structure(), encoder=encoder,
        hybrid_weight=default_weight_of_encoders(encoder), hits=DEFAULT_HITS,
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
    in_domain: bool = False,
    encoder: str | None = None,
    indexes: Sequence[Path] | None = None,
) -> Pipeline:
    """Train the pipeline on ``collections`` (None: :data:`DEFAULT_MIX`, built under
    ``workdir/data``) into ``output``; the index of each collection is the one of
    ``indexes`` at its place (default: ``workdir/indexes/<its name>``). With ``in_domain``,
    for the one collection given, with its fine-tuned encoder and its dev split's λ.
    ``encoder``: the first stage's dense encoder (default: :func:`first_stage_defaults`'s).
    See the module docstring for the procedure."""
    from clir_toolkit.rerank.word.family import SUBWORD_INTERPOLATION

    stage = first_stage_defaults(encoder, in_domain)
    if in_domain and len(encoder_names(stage.encoder)) > 1:
        raise UsageError(
            f"--encoder {stage.encoder}: in domain, one encoder's towers are fine-tuned; "
            "name one encoder"
        )
    paths = list(collections) if collections else default_collections(workdir, quiet)
    opened = _training_collections(paths, in_domain)
    output.mkdir(parents=True, exist_ok=True)
    dense = stage.encoder if in_domain else None
    if indexes is not None and len(indexes) != len(opened):
        raise UsageError(f"{len(indexes)} indexes for {len(opened)} collections: give one each")
    places = indexes or [workdir / "indexes" / _name(collection) for collection in opened]
    parts, part_indexes = [], []
    for collection, place in zip(opened, places, strict=True):
        name = _name(collection)
        index = ensure_index(collection, place, dense, quiet)
        runs = {
            split: _first_stage_run(collection, index, split, stage, output / "runs" / name,
                                    RERANK_DEPTH if split == "train" else stage.hits, quiet)
            for split in ("train", "dev")
            if has_split(collection, split)
        }  # fmt: skip
        parts.append(Part(collection, runs))
        part_indexes.append(index)
    mixture, mixed_runs = write_mixture(output / "mixture", parts)
    model = _train_knrm(mixture, mixed_runs, output / MODEL_FILE, quiet)
    trained_on = [_trained_on(part) for part in parts]
    if in_domain:
        part, index = parts[0], part_indexes[0]
        _train_towers(part, stage.encoder, output / TOWERS_FILE, quiet)
        stage = dataclasses.replace(stage, towers=TOWERS_FILE)
        pipeline = Pipeline(stage, None, trained_on)
        reranking, figures = _interpolation_on_dev(output, pipeline, part, index, model, quiet)
        pipeline = dataclasses.replace(pipeline, reranking=reranking, dev=[figures])
    else:
        reranking = Reranking(MODEL_FILE, RERANK_DEPTH, SUBWORD_INTERPOLATION)
        dev = [_dev_figures(part, model, reranking, output, quiet) for part in parts
               if "dev" in part.runs]  # fmt: skip
        pipeline = Pipeline(stage, reranking, trained_on, dev)
    write_pipeline(output, pipeline)
    return pipeline


def _training_collections(paths: Sequence[Path], in_domain: bool) -> list[Collection]:
    """The collections at ``paths``, each with a train split, their names distinct; in
    domain, one collection with a dev split too."""
    opened = [open_collection(path) for path in paths]
    if in_domain and len(opened) != 1:
        raise UsageError(
            f"--in-domain trains for one collection's own topics, and {len(opened)} were given; "
            "give one --collection"
        )
    if in_domain and not has_split(opened[0], "dev"):
        raise ClirError(
            f"{opened[0].root}: no dev split (topics.dev.tsv and qrels.dev.txt) to choose λ on "
            "in domain; train without --in-domain"
        )
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
    there; with ``dense`` (an encoder, or several joined by commas), with each one's vectors
    (added to an index that lacks them)."""
    from clir_toolkit.index import add_dense_vectors, build_index, read_index_info

    try:
        current = read_index_info(index).collection_sha256 == collection.fingerprint()
    except ClirError:
        current = False
    if not current:
        log(quiet, f"indexing {collection.root} → {index}")
        build_index(collection.root, index, verbose=not quiet)
    held = read_index_info(index).encoders
    for encoder in encoder_names(dense):  # (None: [None], no vectors)
        if encoder is not None and encoder not in held:
            log(quiet, f"adding the {encoder} vectors of {collection.root} to {index}")
            add_dense_vectors(index, encoder, collection.root, verbose=not quiet)
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

    config = TrainConfig(**_training_files(mixture, runs), output=output, model="knrm",
                         depth=RERANK_DEPTH, verbose=not quiet)  # fmt: skip
    return made_once(config, mixture, KNRM_CODE, train_reranker, quiet)


def _train_towers(part: Part, encoder: str, output: Path, quiet: bool) -> Path:
    """``encoder`` fine-tuned on ``part``'s train split (negatives from its first-stage BM25
    run, the epoch best on its dev split) with the defaults of ``clir rerank train``."""
    from clir_toolkit.rerank.sentence.tuned import train_tuned
    from clir_toolkit.rerank.sentence.tuned_config import TunedConfig

    config = TunedConfig(**_training_files(part.collection, part.runs), output=output,
                         encoder=encoder, depth=RERANK_DEPTH, verbose=not quiet)  # fmt: skip
    return made_once(config, part.collection, TUNED_CODE, train_tuned, quiet)


def _training_files(collection: Collection, runs: dict[str, Path]) -> dict[str, Any]:
    """A trainer's input files: the train split's and its run, and the dev split's when there
    is a dev run."""
    files: dict[str, Any] = {
        "collection": collection.root,
        "topics": collection.split_file("topics", "train"),
        "qrels": collection.split_file("qrels", "train"),
        "run": runs["train"],
    }
    if "dev" in runs:
        files.update(
            dev_topics=collection.split_file("topics", "dev"),
            dev_qrels=collection.split_file("qrels", "dev"),
            dev_run=runs["dev"],
        )
    return files


def _interpolation_on_dev(
    output: Path, pipeline: Pipeline, part: Part, index: Path, model: Path, quiet: bool
) -> tuple[Reranking, dict[str, Any]]:
    """In domain: the reranking at the λ best on ``part``'s dev split, over the pipeline's own
    first stage there, and that split's figures (the first stage's nDCG@10, the pipeline's).
    The dev run and the dev score of each λ are kept, and reused while the first stage, its
    towers, the index, the topics, the model and the code are the same."""
    from clir_toolkit.evaluate import evaluate_runs
    from clir_toolkit.files import sha256_file
    from clir_toolkit.freshness import is_fresh, mark_fresh, read_sidecar
    from clir_toolkit.pipeline.search import search_first_stage, search_key
    from clir_toolkit.rerank.interpolation import (
        best_interpolation,
        describe_choice,
        interpolation_on_dev,
    )

    collection, name = part.collection, _name(part.collection)
    first = output / "runs" / name / "first-stage.dev.trec"
    topics = collection.split_file("topics", "dev")
    key = search_key(output, pipeline, index, topics, model=sha256_file(model),
                     depth=RERANK_DEPTH)  # fmt: skip
    if is_fresh(first, key, DEV_CHOICE_CODE):
        scores = {float(w): s for w, s in read_sidecar(first)["lambda_scores"].items()}
        log(quiet, f"reusing the dev run {first} and its λ scores (the same inputs)")
    else:
        log(quiet, f"searching the dev topics of {collection.root} (the pipeline's first stage)")
        search_first_stage(output, pipeline, index, topics, first, tag="first-stage",
                           quiet=quiet)  # fmt: skip
        log(quiet, f"choosing λ on the dev topics of {collection.root}")
        scores = interpolation_on_dev(model, collection.root, first, RERANK_DEPTH,
                                      verbose=not quiet).scores  # fmt: skip
        kept = {str(weight): score for weight, score in scores.items()}
        mark_fresh(first, key, {"lambda_scores": kept}, DEV_CHOICE_CODE)
    weight = best_interpolation(scores)
    log(quiet, f"K-NRM's λ on dev, {describe_choice(scores, weight)}")
    result = evaluate_runs(collection.split_file("qrels", "dev"), [first], [MEASURE])
    figures = {
        "name": name,
        "first_stage": "hybrid through the fine-tuned towers",
        MEASURE: result.means[result.runs[0]][MEASURE],
        f"reranked {MEASURE}": scores[weight],
        "queries": len(result.qids),
    }
    return Reranking(MODEL_FILE, RERANK_DEPTH, weight, f"dev of {name}"), figures


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
        "first_stage": "BM25, dictionary",
        MEASURE: result.means[first_name][MEASURE],
        f"reranked {MEASURE}": result.means[reranked_name][MEASURE],
        "queries": len(result.qids),
    }
