"""A pretrained sentence encoder fine-tuned by smooth learning (``clir rerank train``).

The dual encoder of Liu et al., *Cross-Lingual Document Retrieval with Smooth Learning*,
learns its text representations from scratch; with a few hundred queries (the man pages) it
learns no translation, and even with ten thousand (DDTP) it stays below BM25. A multilingual
sentence encoder pretrained on many languages (:mod:`clir_toolkit.rerank.sentence.pretrained`)
already maps an English query and its French document close together. This module keeps
that knowledge and trains only what the collection can teach:

* **Representations.** The pretrained encoder is frozen: each query and document is encoded
  once into a unit vector (documents through the encoder's vector cache). On top of it, the
  two towers of the dual encoder (§3.1: separate query and document functions) are two
  learned affine maps, ``f_q(q) = W_q q + b_q`` and ``f_d(d) = W_d d + b_d``, both started
  at the identity: before training the model ranks exactly as the encoder's cosine.
* **Relevance.** The Smooth Cosine Similarity (eq. 1),
  ``r_eps = f_q(q) . f_d(d) / ((||f_q(q)|| + eps) (||f_d(d)|| + eps))``
  (:func:`clir_toolkit.rerank.word.dual.smooth_cosine`).
* **Loss.** SOSL (eq. 2, :func:`clir_toolkit.rerank.losses.sosl`) on pointwise examples:
  every judged relevant document of a training query with its grade, and negatives drawn
  afresh each epoch (seeded) from the first-stage run's top ``depth`` non-relevant
  candidates, ``negatives`` per query (40 in the paper, §5). Any pointwise loss of
  :data:`clir_toolkit.rerank.LOSS_NAMES` can be chosen (not the pairwise hinge).
* **Optimisation.** Adam with batches of 128 (the paper's size), a small learning rate
  (3e-5: the maps start at a good solution and large steps forget it), a few epochs, the
  epoch with the best dev nDCG@10 kept. On ddtp-en-fr-hard dev these defaults were the best
  measured (docs/encoders.md).

Training touches only two ``dim × dim`` matrices over cached vectors, so an epoch over the
530,000 examples of the French DDTP training split takes about 30 s on one CPU thread.
``clir rerank score --model FILE`` reads the model file, encodes queries and documents with
the same encoder (the file records its name and version) and scores with the trained maps.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor

from clir_toolkit.errors import ClirError
from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT, MODEL_TYPE, TunedConfig
from clir_toolkit.rerank.sentence.tuned_examples import (
    Split,
    epoch_examples,
    read_split,
    training_pool,
)
from clir_toolkit.rerank.sentence.tuned_model import (
    TunedEncoder,
    document_vectors,
    score_candidates,
)
from clir_toolkit.rerank.training import log, recorded_settings

if TYPE_CHECKING:
    from clir_toolkit.rerank.training import TrainReport


def _dev_score(model: Any, dev: Split, doc_row: Mapping[str, int], documents: Any) -> float:
    """nDCG@10 of the dev candidates ranked by the model alone."""
    from clir_toolkit.formats import Qrel, RunRow
    from clir_toolkit.rerank.training import DEV_MEASURE, mean_measure

    scores = score_candidates(model, dev, doc_row, documents)
    rows = [RunRow(qid, docid, 0, score, "dev") for (qid, docid), score in scores.items()]
    qrels = [Qrel(qid, docid, grade) for qid, g in dev.grades.items() for docid, grade in g.items()]
    return mean_measure(qrels, rows, DEV_MEASURE)


def train_tuned(config: TunedConfig) -> TrainReport:
    """Fine-tune the encoder's two maps on ``config``'s judgements; write the model file."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.rerank.data.documents import cache_dir_for
    from clir_toolkit.rerank.losses import build_loss
    from clir_toolkit.rerank.model_io import save_torch
    from clir_toolkit.rerank.training import DEV_MEASURE, EpochRecord, TrainReport

    use_fastest_threads()
    started = time.perf_counter()
    for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run"):
        path = getattr(config, name)
        if path is not None and not Path(path).is_file():
            raise ClirError(f"{path}: no such file (the {name.replace('_', ' ')} file)")
    collection = open_collection(config.collection)
    encoder = load_encoder(config.encoder, device="cpu")
    train = read_split(
        encoder, Path(config.topics), Path(config.qrels), Path(config.run), config.depth,
        config.verbose, only_topics=True, first=config.train_queries,
    )  # fmt: skip
    dev = None
    if config.dev_topics is not None and config.dev_qrels is not None and config.dev_run:
        dev = read_split(
            encoder, Path(config.dev_topics), Path(config.dev_qrels), Path(config.dev_run),
            config.depth, config.verbose,
        )  # fmt: skip
    wanted = [d for q, g in train.grades.items() if q in train.query_row for d in g]
    for split in (train, dev):
        if split is not None:
            wanted += [d for docids in split.candidates.values() for d in docids]
    cache_dir = cache_dir_for(collection.root, config.cache_dir)
    doc_row, doc_vectors = document_vectors(
        encoder, collection.corpus, cache_dir, list(dict.fromkeys(wanted)), config.verbose
    )
    pool = training_pool(train, doc_row)
    if not len(pool.query_rows):
        raise ClirError(
            f"{config.qrels}: no query has both a topic in {config.topics}, a candidate in "
            f"{config.run} and a relevant document; check that they belong to the same split"
        )
    queries, documents = torch.from_numpy(train.queries), torch.from_numpy(doc_vectors)

    torch.manual_seed(config.seed)
    model = TunedEncoder(int(doc_vectors.shape[1]), config.epsilon)
    thresholds = tuple(config.sosl_thresholds) if config.sosl_thresholds else None
    loss_fn, loss_module = build_loss(config.loss, thresholds)  # type: ignore[arg-type]
    parameters = list(model.parameters())
    if loss_module is not None:
        parameters += list(loss_module.parameters())
    optimiser = torch.optim.Adam(parameters, lr=config.lr)

    history: list[EpochRecord] = []
    best_epoch, best_dev = 0, None
    best_state = {k: v.clone() for k, v in model.state_dict().items()}
    if dev is not None:  # epoch 0: the pretrained encoder's own cosine (ε aside)
        best_dev = _dev_score(model, dev, doc_row, documents)
        log(config, f"epoch 0 (the pretrained encoder): dev {DEV_MEASURE} {best_dev:.4f}")
    log(
        config,
        f"fine-tuning {encoder.name} ({config.loss}, ε {config.epsilon:g}, lr {config.lr:g}, "
        f"batch {config.batch_size}): {len(pool.query_rows)} queries, "
        f"{config.negatives} negatives each per epoch",
    )
    examples_seen = 0
    for epoch in range(1, config.epochs + 1):
        epoch_start = time.perf_counter()
        examples = torch.from_numpy(epoch_examples(pool, config.negatives, config.seed, epoch))
        examples_seen = len(examples)
        mean_loss = _run_epoch(
            model, loss_fn, optimiser, examples, queries, documents, config, epoch
        )
        if not np.isfinite(mean_loss):
            raise ClirError(
                f"the training loss became {mean_loss} in epoch {epoch}; lower the learning "
                f"rate (now {config.lr:g})"
            )
        dev_score = _dev_score(model, dev, doc_row, documents) if dev is not None else None
        if dev_score is None or best_dev is None or dev_score > best_dev:
            best_epoch, best_dev = epoch, dev_score if dev is not None else None
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        history.append(
            EpochRecord(epoch, "relevance", mean_loss, dev_score, time.perf_counter() - epoch_start)
        )
        shown = f", dev {DEV_MEASURE} {dev_score:.4f}" if dev_score is not None else ""
        log(config, f"epoch {epoch}: loss {mean_loss:.4f}{shown}")
    save_torch(
        Path(config.output),
        {
            "format": MODEL_FORMAT,
            "model_type": MODEL_TYPE,
            "config": model.config(),
            "state_dict": best_state,
            "encoder": encoder.name,
            "encoder_fingerprint": encoder.fingerprint,
            "max_chars": encoder.max_chars,
            "training": {
                **recorded_settings(config),
                "best_epoch": best_epoch,
                "best_dev": best_dev,
                "dev_measure": DEV_MEASURE,
            },
            "history": [dataclasses.asdict(r) for r in history],
        },
    )
    log(config, f"saved epoch {best_epoch} -> {config.output}")
    return TrainReport(
        output=Path(config.output),
        checkpoint=Path(config.output),
        model=f"{MODEL_TYPE} {encoder.name}",
        loss=config.loss,
        device="cpu",
        examples=examples_seen,
        query_vocab_size=0,
        doc_vocab_size=0,
        start_epoch=1,
        best_epoch=best_epoch,
        best_dev=best_dev,
        history=history,
        seconds=time.perf_counter() - started,
    )


def _run_epoch(
    model: Any, loss_fn: Any, optimiser: Any, examples: Tensor, queries: Tensor,
    documents: Tensor, config: TunedConfig, epoch: int,
) -> float:  # fmt: skip
    """One pass over ``examples``; the mean batch loss."""
    from clir_toolkit.progress import progress_bar

    model.train()
    total, batches = 0.0, 0
    steps = range(0, len(examples), config.batch_size)
    bars = progress_bar(
        steps, desc=f"epoch {epoch}", unit="batch", show=config.verbose, leave=False
    )
    for start in bars:
        batch = examples[start : start + config.batch_size]
        scores = model(queries[batch[:, 0]], documents[batch[:, 1]])
        loss = loss_fn(scores, batch[:, 2])
        optimiser.zero_grad(set_to_none=True)
        loss.backward()
        optimiser.step()
        total += float(loss.detach())
        batches += 1
    return total / max(batches, 1)
