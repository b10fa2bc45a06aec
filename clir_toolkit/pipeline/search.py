"""``clir pipeline search``: a trained pipeline run on any collection, no judgements needed.

The stages ``pipeline.json`` names (:mod:`clir_toolkit.pipeline.definition`), one after the
other, as a user would run them by hand:

1. the hybrid first stage, what ``clir search --hybrid --translate dict`` does with the
   stored k1, b, encoder and weight (the index must hold that encoder's vectors), through a
   fine-tuned encoder's towers when the pipeline has one (``--model``);
2. the reranking, what ``clir rerank score --model DIR/knrm.pt --depth D --interpolate λ``
   does to that run with the stored depth and λ.

With a cluster (``--ray``) both stages run there, as ``clir search --ray`` and ``clir rerank
score --ray`` run them: the same run file. The first stage's run is written beside the
output (``<output>.first-stage``) while the reranker reads it, and removed after (kept at
``first_stage_output`` when asked); the output is written once, whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError
from clir_toolkit.pipeline.definition import Pipeline, model_path, read_pipeline, towers_path

if TYPE_CHECKING:
    from clir_toolkit.distributed.cluster import ClusterSpec

TAG = "pipeline"


def search_pipeline(
    models: Path,
    index: Path,
    topics: Path,
    output: Path,
    collection: Path | None = None,
    threads: int | None = None,
    device: str = "auto",
    tag: str = TAG,
    quiet: bool = False,
    cluster: ClusterSpec | None = None,
    workers: int | None = None,
    worker_env: dict[str, str] | None = None,
    first_stage_output: Path | None = None,
) -> Pipeline:
    """Run the pipeline of the directory ``models`` on ``topics`` over ``index`` (documents
    read from ``collection``, by default the one the index was built from) into the TREC run
    ``output``; return the pipeline run. With ``cluster``, both stages run on it (``workers``
    chunks or actors, ``worker_env`` set in each). ``first_stage_output``: where to keep the
    first stage's run too."""
    from clir_toolkit.index import read_index_info
    from clir_toolkit.rerank.score import score_run

    pipeline = read_pipeline(models)
    reranking = pipeline.reranking
    first = first_stage_output or output
    if reranking is not None and first_stage_output is None:
        first = output.with_name(output.name + ".first-stage")
    try:
        search_first_stage(
            models, pipeline, index, topics, first, tag=tag, quiet=quiet, threads=threads,
            cluster=cluster, workers=workers, worker_env=worker_env,
        )  # fmt: skip
        if reranking is not None:
            documents = collection or Path(read_index_info(index).collection)
            model = model_path(models, pipeline)
            assert model is not None
            if cluster is None:
                score_run(
                    model, documents, topics, first, output, depth=reranking.depth,
                    device=device, interpolate=reranking.interpolate, tag=tag,
                    verbose=not quiet,
                )  # fmt: skip
            else:
                from clir_toolkit.distributed.rerank import score_run_on_ray

                score_run_on_ray(
                    cluster, model, documents, topics, first, output, workers=workers,
                    depth=reranking.depth, device=device, interpolate=reranking.interpolate,
                    tag=tag, verbose=not quiet,
                )  # fmt: skip
    finally:
        if first not in (output, first_stage_output):
            first.unlink(missing_ok=True)
    return pipeline


def search_first_stage(
    models: Path,
    pipeline: Pipeline,
    index: Path,
    topics: Path,
    output: Path,
    *,
    tag: str = TAG,
    quiet: bool = False,
    threads: int | None = None,
    cluster: ClusterSpec | None = None,
    workers: int | None = None,
    worker_env: dict[str, str] | None = None,
) -> None:
    """The pipeline's first stage: the hybrid run of ``topics`` over ``index`` with the stored
    settings (through the towers of the pipeline's fine-tuned encoder, if it has one), written
    to ``output``. The index must hold the stage's encoder's vectors: if not, one line says how
    to add them."""
    from clir_toolkit.encoders import encoder_names
    from clir_toolkit.formats import read_topics
    from clir_toolkit.index import read_index_info
    from clir_toolkit.search.hybrid import hybrid_search_to_run
    from clir_toolkit.translate.pipeline import TranslationOptions, build_queries

    stage = pipeline.first_stage
    info = read_index_info(index)
    missing = [name for name in encoder_names(stage.encoder) if name not in info.encoders]
    if missing:
        held = f"{', '.join(info.encoders)}'s vectors" if info.encoders else "no vectors"
        raise ClirError(
            f"{index}: the pipeline's first stage needs {stage.encoder}'s vectors and the index "
            f"has {held}; add them with: clir index --collection {info.collection} --index "
            f"{index} --dense {','.join(str(name) for name in missing)}"
        )
    read = read_topics(topics)
    queries = build_queries(read, TranslationOptions(translate=stage.translate), info.language)
    towers = towers_path(models, pipeline)
    if cluster is None:
        hybrid_search_to_run(
            index, queries, read, output, hybrid_weight=stage.hybrid_weight, hits=stage.hits,
            tag=tag, encoder=stage.encoder, model=towers, progress=not quiet, k1=stage.k1,
            b=stage.b, structure=stage.structure, threads=threads,
        )  # fmt: skip
    else:
        from clir_toolkit.distributed.dense import hybrid_search_to_run_on_ray

        hybrid_search_to_run_on_ray(
            cluster, index, queries, read, output, hybrid_weight=stage.hybrid_weight,
            hits=stage.hits, tag=tag, encoder=stage.encoder, model=towers, progress=not quiet,
            k1=stage.k1, b=stage.b, structure=stage.structure, workers=workers,
            worker_env=worker_env,
        )  # fmt: skip


def search_key(models: Path, pipeline: Pipeline, index: Path, topics: Path, **more: Any) -> str:
    """What a run of the pipeline of ``models`` on ``topics`` over ``index`` is made from: its
    stages and model files, the topics and the indexed collection with its vectors (not the
    dev figures ``pipeline.json`` keeps beside the stages: they are no input of a run, and
    their last digit may vary); ``more``: what else a product of the run depends on."""
    import dataclasses

    from clir_toolkit.encoders import encoder_names
    from clir_toolkit.files import sha256_file
    from clir_toolkit.freshness import digest
    from clir_toolkit.index import read_index_info

    info = read_index_info(index)
    stage_encoder = pipeline.first_stage.encoder
    files = [model_path(models, pipeline), towers_path(models, pipeline)]
    stages = [pipeline.first_stage, pipeline.reranking]
    return digest({
        "stages": [None if stage is None else dataclasses.asdict(stage) for stage in stages],
        "models": [sha256_file(path) for path in files if path is not None],
        "topics": sha256_file(topics),
        "index": info.collection_sha256,
        "vectors": [
            [record.encoder, record.fingerprint]
            for record in (info.vectors_of(name) for name in encoder_names(stage_encoder))
            if record is not None
        ],
        **more,
    })  # fmt: skip
