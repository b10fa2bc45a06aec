"""A pretrained sentence encoder fine-tuned by smooth learning (``clir rerank train``).

The dual encoder of Liu et al., *Cross-Lingual Document Retrieval with Smooth Learning*,
learns its text representations from scratch; with a few hundred queries (the man pages) it
learns no translation, and even with ten thousand (DDTP) it stays below BM25. A multilingual
sentence encoder pretrained on many languages (:mod:`clir_toolkit.rerank.pretrained`)
already maps an English query and its French document close together. This module keeps
that knowledge and trains only what the collection can teach:

* **Representations.** The pretrained encoder is frozen: each query and document is encoded
  once into a unit vector (documents through the encoder's vector cache). On top of it, the
  two towers of the dual encoder (§3.1: separate query and document functions) are two
  learned affine maps, ``f_q(q) = W_q q + b_q`` and ``f_d(d) = W_d d + b_d``, both started
  at the identity: before training the model ranks exactly as the encoder's cosine.
* **Relevance.** The Smooth Cosine Similarity (eq. 1),
  ``r_eps = f_q(q) . f_d(d) / ((||f_q(q)|| + eps) (||f_d(d)|| + eps))``
  (:func:`clir_toolkit.rerank.dual.smooth_cosine`).
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
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import Tensor, nn

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.rerank.dual import smooth_cosine
from clir_toolkit.rerank.train_config import log, recorded_settings
from clir_toolkit.rerank.tuned_config import MODEL_FORMAT, MODEL_TYPE, TUNED_PARAMS, TunedConfig
from clir_toolkit.rerank.tuned_examples import Split, epoch_examples, read_split, training_pool

if TYPE_CHECKING:
    from clir_toolkit.encoders import SentenceEncoder
    from clir_toolkit.rerank.candidates import RunCandidates
    from clir_toolkit.rerank.train_config import TrainReport


class TunedEncoder(nn.Module):
    """Two affine maps over frozen sentence vectors, scored by the smooth cosine (eq. 1)."""

    model_type = MODEL_TYPE

    def __init__(self, dim: int, epsilon: float = TUNED_PARAMS["epsilon"].default) -> None:
        super().__init__()
        if dim < 1:
            raise ValueError(f"dim must be at least 1, got {dim}")
        if epsilon < 0:
            raise ValueError(f"epsilon must be >= 0, got {epsilon}")
        self.dim, self.epsilon = dim, float(epsilon)
        self.query = nn.Linear(dim, dim)
        self.document = nn.Linear(dim, dim)
        with torch.no_grad():  # the identity: before training, the encoder's own ranking
            for layer in (self.query, self.document):
                nn.init.eye_(layer.weight)
                nn.init.zeros_(layer.bias)

    def config(self) -> dict[str, Any]:
        """The keyword arguments that rebuild this model (stored in the model file)."""
        return {"dim": self.dim, "epsilon": self.epsilon}

    def forward(self, queries: Tensor, documents: Tensor) -> Tensor:
        """``[B]`` scores of the rows of ``queries`` and ``documents`` (``[B, dim]`` each)."""
        return smooth_cosine(self.query(queries), self.document(documents), self.epsilon)


# ---------------------------------------------------------------------------------------------
# Vectors and examples
# ---------------------------------------------------------------------------------------------


def _document_vectors(
    encoder: SentenceEncoder, corpus: Path, cache_dir: Path, docids: Sequence[str], verbose: bool
) -> tuple[dict[str, int], np.ndarray]:
    from clir_toolkit.rerank.pretrained import VectorCache

    rows, vectors, _ = VectorCache(encoder, corpus, cache_dir).vectors(docids, verbose)
    return rows, vectors


# ---------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------


def score_candidates(
    model: Any, split: Split, doc_row: Mapping[str, int], documents: Tensor
) -> dict[tuple[str, str], float]:
    """The model's score of every (qid, candidate) of ``split``."""
    was_training = model.training
    model.eval()
    scores: dict[tuple[str, str], float] = {}
    try:
        with torch.inference_mode():
            mapped_queries = model.query(torch.from_numpy(split.queries))
            for qid, docids in split.candidates.items():
                if not docids:
                    continue
                q = mapped_queries[split.query_row[qid]].expand(len(docids), -1)
                d = model.document(documents[[doc_row[docid] for docid in docids]])
                values = smooth_cosine(q, d, model.epsilon)
                scores.update(zip(((qid, docid) for docid in docids), values.tolist(), strict=True))
    finally:
        model.train(was_training)
    return scores


def _dev_score(model: Any, dev: Split, doc_row: Mapping[str, int], documents: Any) -> float:
    """nDCG@10 of the dev candidates ranked by the model alone."""
    from clir_toolkit.formats import Qrel, RunRow
    from clir_toolkit.rerank.epoch import DEV_MEASURE, mean_measure

    scores = score_candidates(model, dev, doc_row, documents)
    rows = [RunRow(qid, docid, 0, score, "dev") for (qid, docid), score in scores.items()]
    qrels = [Qrel(qid, docid, grade) for qid, g in dev.grades.items() for docid, grade in g.items()]
    return mean_measure(qrels, rows, DEV_MEASURE)


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


def train_tuned(config: TunedConfig) -> TrainReport:
    """Fine-tune the encoder's two maps on ``config``'s judgements; write the model file."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.rerank.checkpoint import save_torch
    from clir_toolkit.rerank.documents import cache_dir_for
    from clir_toolkit.rerank.epoch import DEV_MEASURE
    from clir_toolkit.rerank.train import build_loss
    from clir_toolkit.rerank.train_config import EpochRecord, TrainReport

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
    doc_row, doc_vectors = _document_vectors(
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


# ---------------------------------------------------------------------------------------------
# Model files and reranking a run
# ---------------------------------------------------------------------------------------------

MODEL_KEYS = {
    "format": "str",
    "model_type": "str",
    "config": "table",
    "state_dict": "tensors",
    "encoder": "str",
    "encoder_fingerprint": "str",
    "max_chars": "count",
    "training": "table?",
    "history": "list?",
}


def is_tuned_model(data: Any) -> bool:
    """Whether an object read from a model file is a fine-tuned encoder's."""
    return isinstance(data, dict) and data.get("format") == MODEL_FORMAT


def load_tuned(path: Path, data: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The model of a file's ``data`` (already read with weights only), checked key by key."""
    from clir_toolkit.rerank.model_file import check_record, check_state_dict

    what = "a fine-tuned encoder of clir_toolkit"
    record = check_record(path, data, MODEL_KEYS, what)
    config = record["config"]
    try:
        dim, epsilon = int(config["dim"]), float(config["epsilon"])
        with torch.device("meta"):  # shapes only: checked against the file before allocating
            skeleton = TunedEncoder(dim, epsilon)
    except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise FormatError(path, None, f"not {what}: bad config ({exc})") from None
    check_state_dict(path, record["state_dict"], skeleton, what)
    model = TunedEncoder(dim, epsilon)
    model.load_state_dict(record["state_dict"])
    return model.eval(), record


def score_run_tuned(
    path: Path,
    data: Mapping[str, Any],
    read: RunCandidates,
    cache_dir: str | Path | None,
    verbose: bool,
) -> tuple[dict[tuple[str, str], float], str]:
    """Scores of ``read``'s candidates by the fine-tuned encoder of ``path``, and its name."""
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.rerank.documents import cache_dir_for
    from clir_toolkit.rerank.pretrained import encode_batched

    model, record = load_tuned(path, data)
    encoder = load_encoder(record["encoder"], device="cpu")
    if encoder.fingerprint != record["encoder_fingerprint"] and verbose:
        print(
            f"clir: warning: {path} was trained on {record['encoder_fingerprint']}, "
            f"now installed: {encoder.fingerprint}; scores may differ",
            file=sys.stderr,
        )
    qids = list(read.candidates)
    queries = encode_batched(
        encoder, [read.query_texts[q] for q in qids], True, "encoding queries", verbose
    )
    wanted = [docid for q in qids for docid in read.candidates[q]]
    doc_row, vectors = _document_vectors(
        encoder, read.collection.corpus, cache_dir_for(read.collection.root, cache_dir),
        wanted, verbose,
    )  # fmt: skip
    split = Split({q: i for i, q in enumerate(qids)}, queries, read.candidates, {})
    scores = score_candidates(model, split, doc_row, torch.from_numpy(vectors))
    return scores, f"{MODEL_TYPE}-{encoder.name}"
