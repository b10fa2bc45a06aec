"""Rerank a TREC run with a trained neural model (``clir rerank score``).

Reranking is the second stage of the pipeline: BM25 retrieves candidates cheaply, and a
slower neural model rescores the top ``depth`` of them (Liu, *Neural CLIR*, §6.1: K-NRM
"reranking of high-quality initial ranking results"). The procedure:

1. Read the model file written by :func:`clir_toolkit.rerank.train.train_reranker`: model
   type and configuration, weights, both vocabularies, analysis languages, maximum lengths.
2. Read the topics and the run; take each query's top ``depth`` documents in the order
   trec_eval reads the run (score descending, ties by docid).
3. Encode queries and documents exactly as in training (:mod:`clir_toolkit.rerank.documents`;
   documents come from the tensor cache when they were encoded before) and score every
   (query, candidate) pair in batches, on the GPU when there is one.
4. Optionally interpolate with the first-stage score. The two scores live on different
   scales, so each is min-max normalised over the query's reranked candidates first:
   ``score = λ·neural + (1 − λ)·first_stage``.
5. Documents below ``depth`` keep their first-stage order beneath the reranked ones: their
   scores are shifted so that the best of them scores 1 below the lowest reranked score.
6. Write the new run with :func:`clir_toolkit.formats.write_run` (sorted, ties by docid,
   written atomically).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.rerank.candidates import (
    DEFAULT_DEPTH,
    ScoreReport,
    check_score_options,
    encode_run,
    read_candidates,
    rerank_rows,
    score_encoded,
)
from clir_toolkit.rerank.model_file import LoadedReranker, load_model, read_model_file
from clir_toolkit.rerank.subwords import SOURCE as SUBWORD_SOURCE

SUBWORD_INTERPOLATION = 0.8
"""λ with the first stage of a K-NRM on USE-m3's subword table when none is given: the best
of 0.5-0.9 for the default model on the French man pages' dev split (nDCG@10 0.5 0.6252,
0.6 0.6472, 0.7 0.6625, **0.8 0.6637**, 0.9 0.6609, alone 0.6483; BM25 0.4376).
``--interpolate 1`` ranks by the model alone."""

if TYPE_CHECKING:
    from clir_toolkit.formats import RunRow


def interpolation_for(reranker: LoadedReranker, interpolate: float | None) -> float | None:
    """λ as given, or the measured default of the model's kind when none is given:
    :data:`SUBWORD_INTERPOLATION` for a K-NRM on USE-m3's subword table, the model alone
    (None) for the word-level models."""
    if interpolate is None and reranker.doc_vocab.tokens == SUBWORD_SOURCE:
        return SUBWORD_INTERPOLATION
    return interpolate


def score_run(
    model_path: str | Path,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    output: str | Path,
    depth: int = DEFAULT_DEPTH,
    device: str = "auto",
    interpolate: float | None = None,
    batch_size: int = 256,
    cache_dir: str | Path | None = None,
    precision: str = "fp32",
    tag: str | None = None,
    verbose: bool = True,
) -> ScoreReport:
    """Rerank the top ``depth`` documents of each query of ``run`` and write ``output``.

    See the module docstring for the procedure. ``interpolate`` (λ in [0, 1]) mixes the
    normalised neural and first-stage scores (None: the model alone, except for a fine-tuned
    encoder, whose measured :data:`clir_toolkit.rerank.tuned_config.INTERPOLATION` applies,
    and a K-NRM on USE-m3's subword table, :data:`SUBWORD_INTERPOLATION`);
    ``cache_dir`` defaults to ``<collection>/.cache/rerank``; ``tag`` to the model type.
    :func:`clir_toolkit.distributed.rerank.score_run_on_ray` is the same with step 3's
    batches scored on a Ray cluster.
    """
    from clir_toolkit.compute.device import check_precision, resolve_device
    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.rerank.allocator import keep_freed_memory
    from clir_toolkit.rerank.tuned import is_tuned_model, score_run_tuned
    from clir_toolkit.rerank.tuned_config import INTERPOLATION as TUNED_INTERPOLATION

    use_fastest_threads()
    keep_freed_memory()
    started = time.perf_counter()
    check_score_options(depth, batch_size, interpolate)
    target = resolve_device(device)
    check_precision(precision, target)
    data = read_model_file(Path(model_path))
    if is_tuned_model(data):  # a fine-tuned pretrained encoder: vectors, not word ids
        if interpolate is None:
            interpolate = TUNED_INTERPOLATION
        read = read_candidates(collection, topics, run, depth)
        ranked = read.ranked
        neural, name = score_run_tuned(Path(model_path), data, read, cache_dir, verbose)
        used = "cpu"  # the maps are tiny; the encoder runs on the CPU
    else:
        reranker = load_model(model_path, target, data)
        interpolate = interpolation_for(reranker, interpolate)
        ranked, encoded = encode_run(reranker, collection, topics, run, depth, cache_dir)
        neural = score_encoded(reranker.model, encoded, target, batch_size, precision)
        name, used = reranker.model_type, str(target)
    rows = rerank_rows(ranked, neural, depth, interpolate, tag or name)
    return write_reranked(output, rows, len(ranked), len(neural), name, used, started, verbose)


def write_reranked(
    output: str | Path,
    rows: Sequence[RunRow],
    queries: int,
    reranked: int,
    model: str,
    device: str,
    started: float,
    verbose: bool,
) -> ScoreReport:
    """Steps 5–6 done: write the reranked ``rows`` and report (on stderr when ``verbose``)
    what was done, by which ``model`` on which ``device``, since ``started``."""
    from clir_toolkit.formats import write_run

    write_run(output, rows)
    report = ScoreReport(
        output=Path(output),
        queries=queries,
        reranked=reranked,
        kept_below_depth=len(rows) - reranked,
        device=device,
        seconds=time.perf_counter() - started,
    )
    if verbose:
        print(
            f"reranked {reranked} documents of {queries} queries with "
            f"{model} on {device} in {report.seconds:.1f} s -> {output}",
            file=sys.stderr,
        )
    return report
