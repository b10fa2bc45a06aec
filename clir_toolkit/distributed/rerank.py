"""Neural reranking on Ray (``clir rerank score --ray ...``): the batches split across actors.

The run written is byte for byte the one of :func:`clir_toolkit.rerank.score.score_run`,
because everything but the scoring loop is the same code:

1. The driver reads the model file, the topics and the run, and encodes the candidates
   exactly as one process does (:func:`clir_toolkit.rerank.word.batches.encode_run`: the same
   vocabularies, the same tensor cache).
2. It cuts the (query, candidate) pairs into the batches one process scores
   (:func:`clir_toolkit.rerank.word.batches.batch_bounds`: the same boundaries, in the same
   order). This matters: a pair's score may depend on the batch it is scored with (the
   padding is trimmed to the batch's longest text, and torch may sum in another order for
   another shape), so pairs are never regrouped.
3. ``workers`` actors each load the model once (from the file's content, put in Ray's object
   store with the encoded pairs: no shared file system is needed) and score whole batches
   with :func:`clir_toolkit.rerank.word.batches.score_batches`. The batches are dealt out in
   contiguous chunks, several per actor, round robin. Each actor asks for its share of the
   cluster's CPUs, and of its GPUs only when it has some and ``device`` is ``auto`` or
   ``cuda``; it resolves ``device`` itself, so ``auto`` means the worker's GPU, not the
   driver's. Its torch threads follow its CPU share (Ray's ``OMP_NUM_THREADS``), which may
   differ from one process's count; no score changed with the thread count on the man-page
   models (K-NRM and the three dual encoders, 1, 2 and 4 threads).
4. The driver gathers the chunks' scores in order and applies the same
   :func:`clir_toolkit.rerank.candidates.rerank_rows` (interpolation included) and
   :func:`clir_toolkit.rerank.score.write_reranked` (sorted, ties by docid, written
   atomically). Nothing is written until every chunk is back.

An actor whose process dies is started again by Ray (``max_restarts``) and the calls it
had not answered are sent again (``max_task_retries``); a chunk is a pure function of its
batches, so a retried chunk gives the same scores.

Why plain actors and not Ray Data (``map_batches`` with an actor class, the issue's wish)?
Ray Data was tried (Ray 2.60, on this project's 2-core machine, beside other jobs). With
each of its rows one whole batch (it cuts its own batches at block boundaries, so pairs
cannot be its rows) the scores were identical and the time about the same: 375,162 K-NRM
pairs of ddtp-en-fr-hard in 96 s against 98 s with actors, 9,659 pairs of the French man
pages in 6.9 and 5.9 s against 6.2 and 5.5 s. But every run printed Ray Data's own log
lines and a warning of Ray's core worker about its actors' constructor arguments
(ray-project/ray#53727); an error in a worker came back as Ray Data's ``UserCodeException``
with a stack trace instead of the error itself; and its actors restart without limit by
default. The command line's one-line errors and quiet output would have needed
process-wide log settings; plain actors give the same scores without them.

Only the word-level family of the reranker contract (:mod:`clir_toolkit.rerank.contract`) is
``distributable``: a fine-tuned sentence encoder (:mod:`clir_toolkit.rerank.sentence`) is
scored in one process, its documents encoded by the sentence encoder, not cut into batches of
word ids.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from clir_toolkit.compute.device import check_precision, resolve_device
from clir_toolkit.compute.threads import use_fastest_threads
from clir_toolkit.distributed.cluster import (
    RETRIES,
    ClusterSpec,
    chunks,
    connected,
    gather,
    import_ray,
    put,
)
from clir_toolkit.errors import ClirError
from clir_toolkit.rerank.candidates import (
    DEFAULT_DEPTH,
    ScoreReport,
    batch_pairs,
    check_score_options,
    rerank_rows,
)
from clir_toolkit.rerank.model_io import read_model_file
from clir_toolkit.rerank.score import reranker_of, write_reranked
from clir_toolkit.rerank.word.batches import (
    EncodedCandidates,
    batch_bounds,
    encode_run,
    score_batches,
)
from clir_toolkit.rerank.word.family import interpolation_for
from clir_toolkit.rerank.word.model_file import load_model

#: Chunks of batches per actor: small enough that the actors finish together and that a
#: retried chunk repeats little work, large enough that a call's overhead does not count.
CHUNKS_PER_WORKER = 4


class BatchScorer:
    """One worker: torch set up when it starts, the model and the encoded pairs fetched at
    its first call (and again after a restart), then whole batches scored.

    The model and the pairs come as object references inside a list, so that Ray passes the
    references and the actor fetches them once, rather than as constructor arguments, which
    Ray would have to keep for a restart (it warns about that, ray-project/ray#53727).
    """

    def __init__(self, path: str, device: str, precision: str) -> None:
        use_fastest_threads()  # Ray sets OMP_NUM_THREADS from the actor's CPUs: kept
        self.device = resolve_device(device)  # "auto": this worker's GPU, if it has one
        check_precision(precision, self.device)
        self.path, self.precision = path, precision
        self.model: Any = None
        self.encoded: EncodedCandidates | None = None

    def score(self, shared: list[Any], bounds: list[tuple[int, int]]) -> list[float]:
        """The scores of the pairs of the batches ``bounds``, in order; ``shared`` holds the
        references of the model file's content and of the encoded pairs."""
        import ray

        if self.encoded is None:
            data, self.encoded = ray.get(shared)
            self.model = load_model(self.path, self.device, data).model
        scores = score_batches(
            self.model, self.encoded, bounds, self.device, self.precision, show=False
        )
        return list(scores.tolist())


def _shares(resources: dict[str, float], device: str, workers: int) -> tuple[float, float]:
    """The CPUs and GPUs each actor asks for: an equal share of the cluster's CPUs, so that
    every actor can start even with more actors than CPUs (an actor holds its share for its
    life), and of its GPUs (at most one each) unless ``device`` is the CPU or there is no
    GPU (an error for ``cuda``). Ray sets an actor's ``OMP_NUM_THREADS`` from its share."""
    cpus, gpus = float(resources.get("CPU", 1)), float(resources.get("GPU", 0))
    if device.startswith("cuda") and gpus == 0:
        raise ClirError(f"--device {device}: the Ray cluster has no GPU; use cpu or auto")
    return cpus / workers, 0.0 if device == "cpu" else min(1.0, gpus / workers)


def score_encoded_on(
    ray: Any,
    path: str | Path,
    data: Any,
    encoded: EncodedCandidates,
    *,
    workers: int | None,
    device: str,
    batch_size: int | None,
    precision: str,
) -> tuple[dict[tuple[str, str], float], str]:
    """:func:`clir_toolkit.rerank.word.batches.score_encoded` on a connected cluster, by
    ``workers`` actors (default: one per GPU when the GPUs are used, else one per CPU): the
    same scores. Also returns where they were computed, in words."""
    import torch

    resources = ray.cluster_resources()
    on_gpus = device != "cpu" and resources.get("GPU", 0) > 0
    scorers = torch.device("cuda" if on_gpus else "cpu")
    check_precision(precision, scorers)
    count = workers or int(resources["GPU"] if on_gpus else resources.get("CPU", 1))
    cpus, gpus = _shares(resources, device, count)
    actor = ray.remote(
        num_cpus=cpus,
        num_gpus=gpus,
        max_restarts=RETRIES,
        max_task_retries=RETRIES,
    )(BatchScorer)
    tensors = dataclasses.replace(encoded, pairs=[])  # the actors need the tensors only
    shared = [put(ray, data), put(ray, tensors)]
    actors = [actor.remote(str(path), device, precision) for _ in range(count)]
    bounds = batch_bounds(len(encoded.pairs), batch_pairs(batch_size, scorers))
    parts = chunks(bounds, count * CHUNKS_PER_WORKER)
    pending = [actors[i % count].score.remote(shared, part) for i, part in enumerate(parts)]
    scores = [score for part in gather(ray, pending) for score in part]
    where = f"{'cuda' if on_gpus else 'cpu'} × {count} Ray workers"
    return dict(zip(encoded.pairs, scores, strict=True)), where


def score_run_on_ray(
    cluster: ClusterSpec,
    model_path: str | Path,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    output: str | Path,
    *,
    workers: int | None = None,
    depth: int = DEFAULT_DEPTH,
    device: str = "auto",
    interpolate: float | None = None,
    batch_size: int | None = None,
    cache_dir: str | Path | None = None,
    precision: str = "fp32",
    tag: str | None = None,
    verbose: bool = True,
) -> ScoreReport:
    """:func:`clir_toolkit.rerank.score.score_run` with the batches scored on ``cluster`` by
    ``workers`` actors (see the module docstring): the same run file."""
    started = time.perf_counter()
    import_ray()  # before the work of reading and encoding, should Ray be missing
    check_score_options(depth, batch_size, interpolate)
    data = read_model_file(Path(model_path))
    family = reranker_of(data)
    if not family.distributable:
        raise ClirError(
            f"{model_path}: a {family.name} is scored in one process; leave out --ray"
        )
    reranker = load_model(model_path, "cpu", data)  # the vocabularies, and every check
    ranked, encoded = encode_run(reranker, collection, topics, run, depth, cache_dir)
    with connected(cluster) as ray:
        neural, where = score_encoded_on(
            ray, model_path, data, encoded, workers=workers, device=device,
            batch_size=batch_size, precision=precision,
        )  # fmt: skip
    name = reranker.model_type
    interpolate = interpolation_for(reranker, interpolate)
    rows = rerank_rows(ranked, neural, depth, interpolate, tag or name)
    return write_reranked(
        output, rows, len(ranked), len(neural), name, f"{where} ({cluster.label})", started,
        verbose,
    )  # fmt: skip
