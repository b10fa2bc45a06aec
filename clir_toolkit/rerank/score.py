"""Rerank a TREC run with a trained neural model (``clir rerank score``).

Reranking is the second stage of the pipeline: BM25 retrieves candidates cheaply, and a
slower neural model rescores the top ``depth`` of them (Liu, *Neural CLIR*, §6.1: K-NRM
"reranking of high-quality initial ranking results"). The procedure:

1. Read the model file, and ask which family of rerankers wrote it (:func:`reranker_of`, by
   the format it records; :mod:`clir_toolkit.rerank.contract`): a word-level model (its
   type and configuration, weights, both vocabularies, analysis languages, maximum lengths)
   or a fine-tuned sentence encoder (its two maps and the encoder's name).
2. Read the topics and the run; take each query's top ``depth`` documents in the order
   trec_eval reads the run (score descending, ties by docid).
3. The family scores every (query, candidate) pair: a word-level model encodes queries and
   documents exactly as in training (:mod:`clir_toolkit.rerank.data.documents`; documents
   come from the tensor cache when they were encoded before) and scores them in batches, on
   the GPU when there is one; a fine-tuned encoder maps the encoder's vectors.
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
from typing import TYPE_CHECKING, Any

from clir_toolkit.rerank.candidates import (
    DEFAULT_DEPTH,
    ScoreReport,
    check_score_options,
    rerank_rows,
)
from clir_toolkit.rerank.contract import ScoreRequest
from clir_toolkit.rerank.model_io import read_model_file
from clir_toolkit.rerank.sentence.family import FINE_TUNED
from clir_toolkit.rerank.word.family import WORD_LEVEL

if TYPE_CHECKING:
    from clir_toolkit.formats import RunRow
    from clir_toolkit.rerank.contract import Reranker, ScoredCandidates

FAMILIES: tuple[Reranker, ...] = (WORD_LEVEL, FINE_TUNED)
"""The families of trained rerankers (:mod:`clir_toolkit.rerank.contract`)."""


def reranker_of(data: Any) -> Reranker:
    """The family whose model file holds ``data``: the one whose format the file records.

    A file of no family's format is the word-level family's to refuse: its
    :func:`~clir_toolkit.rerank.word.model_file.load_model` names what is wrong with it.
    """
    recorded = data.get("format") if isinstance(data, dict) else None
    for family in FAMILIES:
        if recorded == family.model_format:
            return family
    return WORD_LEVEL


def score_run(
    model_path: str | Path,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    output: str | Path,
    depth: int = DEFAULT_DEPTH,
    device: str = "auto",
    interpolate: float | None = None,
    batch_size: int | None = None,
    cache_dir: str | Path | None = None,
    precision: str = "fp32",
    tag: str | None = None,
    verbose: bool = True,
) -> ScoreReport:
    """Rerank the top ``depth`` documents of each query of ``run`` and write ``output``.

    See the module docstring for the procedure. ``interpolate`` (λ in [0, 1]) mixes the
    normalised neural and first-stage scores (None: the model alone, except for a fine-tuned
    encoder, whose measured :data:`clir_toolkit.rerank.sentence.tuned_config.INTERPOLATION`
    applies, and a K-NRM on USE-m3's subword table,
    :data:`clir_toolkit.rerank.word.family.SUBWORD_INTERPOLATION`);
    ``cache_dir`` defaults to ``<collection>/.cache/rerank``; ``tag`` to the model type.
    :func:`clir_toolkit.distributed.rerank.score_run_on_ray` is the same with step 3's
    batches scored on a Ray cluster.
    """
    started = time.perf_counter()
    scored = score_candidates(
        model_path, collection, topics, run, depth, device, interpolate, batch_size, cache_dir,
        precision, verbose,
    )  # fmt: skip
    return write_scored(scored, output, depth, scored.interpolate, tag, started, verbose)


def score_candidates(
    model_path: str | Path,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    depth: int = DEFAULT_DEPTH,
    device: str = "auto",
    interpolate: float | None = None,
    batch_size: int | None = None,
    cache_dir: str | Path | None = None,
    precision: str = "fp32",
    verbose: bool = True,
) -> ScoredCandidates:
    """Steps 1–3 of the module docstring: the top ``depth`` candidates of each query of
    ``run`` scored by the model, nothing written (what :func:`score_run` writes a run from,
    and :func:`clir_toolkit.rerank.interpolation.interpolation_scores` tries each λ on)."""
    from clir_toolkit.compute.device import check_precision, resolve_device
    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.rerank.allocator import keep_freed_memory

    use_fastest_threads()
    keep_freed_memory()
    check_score_options(depth, batch_size, interpolate)
    target = resolve_device(device)
    check_precision(precision, target)
    path = Path(model_path)
    data = read_model_file(path)
    request = ScoreRequest(collection, topics, run, depth, target, batch_size, precision,
                           interpolate, cache_dir, verbose)  # fmt: skip
    return reranker_of(data).score(path, data, request)


def write_scored(
    scored: ScoredCandidates,
    output: str | Path,
    depth: int,
    interpolate: float | None,
    tag: str | None,
    started: float,
    verbose: bool,
) -> ScoreReport:
    """Steps 4–6 for candidates scored by :func:`score_candidates`: the run interpolated at
    ``interpolate`` (None: the model alone) and written, tagged ``tag`` (None: the model)."""
    rows = rerank_rows(scored.ranked, scored.neural, depth, interpolate, tag or scored.model)
    return write_reranked(
        output, rows, len(scored.ranked), len(scored.neural), scored.model, scored.device,
        started, verbose,
    )  # fmt: skip


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
