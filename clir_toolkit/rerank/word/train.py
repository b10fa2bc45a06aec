"""Train a neural reranker (``clir rerank train``): K-NRM or the smooth-cosine dual encoder.

The set-up follows the two sources:

* **Data.** Queries in the query language (English), documents in the document language, one
  vocabulary each: the thesis' *bilingual training data* (Liu, *Neural CLIR*, ch. 3 and
  §6.1.3), where the model learns cross-language soft matches from relevance judgements
  alone. Positives are the judged relevant documents (grade 2 = relevant, 1 = partially
  relevant); negatives are the first-stage run's top candidates that are not relevant, 40 per
  query by default (Liu et al., *Smooth Learning*, §5 samples 40 irrelevant pages per query;
  Fig. 5 varies 20–100). Sentence pairs of a parallel corpus can pre-train the model first:
  each English sentence is a query whose translation is relevant and other sentences are not.
* **Optimisation.** Adam, with the paper's settings as defaults: learning rate 0.01 and
  batches of 128 for the dual encoder with SOSL (*Smooth Learning*, §5 "Experimental Setup");
  learning rate 0.001 for K-NRM with the pairwise hinge loss (Xiong et al. 2017, the K-NRM
  paper the thesis builds on, §3.2). The training set is shuffled every epoch with a seeded
  generator ("shuffling the training set" helps, *Smooth Learning* §5; thesis §6.1.1).
  The embedding tables are updated lazily, only at the rows a batch looked up
  (:mod:`clir_toolkit.rerank.word.optimiser`): a step then costs what its batch holds, not the
  vocabulary.
* **Model selection.** After every epoch the dev run's top ``depth`` candidates are reranked
  and scored with nDCG@10 (ir_measures); the best epoch's weights are the ones saved.

The procedure of :func:`train_reranker`, with the options of
:class:`~clir_toolkit.rerank.word.train_config.TrainConfig`:

1. read topics, qrels and the run; build pointwise examples (``hinge`` draws its pairs from
   them afresh each epoch, :func:`clir_toolkit.rerank.data.examples.epoch_pairs`);
2. tokenise the queries and documents, build the two vocabularies (``min_count``), encode
   the documents through the tensor cache of :mod:`clir_toolkit.rerank.data.documents`
   (steps 1 and 2: :func:`clir_toolkit.rerank.word.training_data.prepare_data`);
3. build the model (seeded), initialise embedding rows from a ``.vec`` file if given
   (:mod:`clir_toolkit.rerank.word.embedding_init`);
4. for each epoch: shuffle, step through batches (autocast on CUDA if asked; gradient
   clipping if asked), stop with a clear error on a non-finite loss; evaluate on dev
   (:mod:`clir_toolkit.rerank.word.epoch`); write the resumable checkpoint ``<output>.ckpt``
   (:mod:`clir_toolkit.rerank.word.checkpoint`);
5. write the model file (best epoch) atomically.

Each part is a function — :func:`clir_toolkit.rerank.word.prepare.prepare_training`
(steps 1–3, :mod:`clir_toolkit.rerank.word.prepare`), :func:`start_training`,
:func:`train_epochs` (step 4, with any training step), :func:`finish_training` (step 5) —
so that data-parallel training (:mod:`clir_toolkit.distributed.train`) runs the same
procedure in every worker. On the CPU the same inputs and seed give the same model and
byte-identical reranked runs.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.losses import build_loss
from clir_toolkit.rerank.model_io import save_torch
from clir_toolkit.rerank.training import (
    DEV_MEASURE,
    EpochRecord,
    TrainReport,
    log,
    recorded_settings,
)
from clir_toolkit.rerank.word.checkpoint import (
    TrainingState,
    cpu_state,
    restore_checkpoint,
    save_checkpoint,
)
from clir_toolkit.rerank.word.epoch import evaluate_dev, run_epoch, train_step
from clir_toolkit.rerank.word.prepare import PreparedTraining, prepare_training, training_setup
from clir_toolkit.rerank.word.train_config import TrainConfig

if TYPE_CHECKING:
    import torch

    from clir_toolkit.rerank.data.examples import EncodedExamples
    from clir_toolkit.rerank.word.epoch import Step
    from clir_toolkit.rerank.word.optimiser import LazyAdam

def has_sparse_gradients(model: Any) -> bool:
    """Whether the trainer gives ``model``'s embedding lookups sparse gradients: those of a
    model whose class says ``sparse_gradients = True``, as the built-in ones do (a plug-in's
    may use its tables densely, and keeps dense gradients unless it says so)."""
    return getattr(model, "sparse_gradients", False) is True


def build_optimiser(model: Any, loss_module: Any, lr: float) -> LazyAdam:
    """Adam over the model's (and a loss's) weights, lazy over its embedding tables.

    Switches the built-in models' embedding lookups to sparse gradients, which
    :class:`LazyAdam` needs; a plug-in model keeps dense ones and plain Adam.
    """
    from clir_toolkit.rerank.word.optimiser import LazyAdam, sparse_parameters, use_sparse_gradients

    if has_sparse_gradients(model):
        use_sparse_gradients(model)
    sparse = sparse_parameters(model)
    sparse_ids = {id(p) for p in sparse}
    dense = [p for p in model.parameters() if id(p) not in sparse_ids]
    if loss_module is not None:
        dense += list(loss_module.parameters())
    return LazyAdam(sparse, dense, lr)


def _save_model(
    config: TrainConfig,
    model: Any,
    state: TrainingState,
    vocabs: tuple[Vocabulary, Vocabulary],
    embeddings_found: Mapping[str, int],
) -> None:
    from clir_toolkit.rerank.word.model_file import MODEL_FORMAT

    weights = state.best_state if state.best_state is not None else cpu_state(model)
    save_torch(
        config.output,
        {
            "format": MODEL_FORMAT,
            "model_type": config.model,
            "config": model.config(),
            "state_dict": weights,
            "query_vocab": vocabs[0].to_dict(),
            "doc_vocab": vocabs[1].to_dict(),
            "query_language": vocabs[0].language,
            "doc_language": vocabs[1].language,
            "max_query_len": config.max_query_len,
            "max_doc_len": config.max_doc_len,
            "training": {
                **recorded_settings(config),
                "best_epoch": state.best_epoch,
                "best_dev": state.best_dev,
                "dev_measure": DEV_MEASURE,
                "embeddings_found": dict(embeddings_found),
            },
            "history": [dataclasses.asdict(r) for r in state.history],
        },
    )


def _phases(config: TrainConfig, has_parallel: bool) -> list[str]:
    """The phase of each epoch: parallel pre-training first, then relevance training."""
    pre = ["parallel"] * config.parallel_epochs if has_parallel else []
    assert config.epochs is not None  # resolved_config fills it in
    return pre + ["relevance"] * config.epochs


@dataclass
class Training:
    """One process's training under way: the model and everything that moves it."""

    prepared: PreparedTraining
    device: torch.device
    model: Any
    loss_fn: Any
    loss_module: Any
    optimiser: LazyAdam
    scaler: Any
    generator: torch.Generator  # the shuffling of every epoch
    state: TrainingState
    start_epoch: int

    @property
    def config(self) -> TrainConfig:
        return self.prepared.config

    @property
    def vocabs(self) -> tuple[Vocabulary, Vocabulary]:
        return self.prepared.data.query_vocab, self.prepared.data.doc_vocab

    def step(self, data: EncodedExamples, batch: torch.Tensor) -> float:
        """One process's training step (:func:`clir_toolkit.rerank.word.epoch.train_step`)."""
        return train_step(
            self.model, self.loss_fn, self.optimiser, self.scaler, data, batch, self.config,
            self.device,
        )  # fmt: skip


def start_training(prepared: PreparedTraining, device: torch.device) -> Training:
    """The model on ``device``, the loss, the optimiser and the seeded shuffling, restored
    from the checkpoint when resuming: the same in every process given ``prepared``."""
    import torch

    config = prepared.config
    torch.set_rng_state(prepared.rng_state)
    model = prepared.model.to(device)
    assert config.loss is not None and config.lr is not None
    loss_fn, loss_module = build_loss(config.loss, config.sosl_thresholds)
    if loss_module is not None:
        loss_module.to(device)
    optimiser = build_optimiser(model, loss_module, config.lr)
    scaler = torch.amp.GradScaler("cuda") if config.precision == "fp16" else None
    generator = torch.Generator().manual_seed(config.seed)
    state = TrainingState()
    if prepared.checkpoint is not None:
        state = restore_checkpoint(
            prepared.checkpoint_path, prepared.checkpoint, model, loss_module, optimiser,
            scaler, generator,
        )  # fmt: skip
    return Training(
        prepared, device, model, loss_fn, loss_module, optimiser, scaler, generator, state,
        state.completed + 1,
    )  # fmt: skip


def log_start(prepared: PreparedTraining, where: str) -> None:
    """The line that says what is trained, on what, where."""
    config, data = prepared.config, prepared.data
    log(
        config,
        f"training {config.model} ({config.loss}, lr {config.lr:g}, batch {config.batch_size}) "
        f"on {where}: {len(data.relevance)} examples, vocabularies {len(data.query_vocab)} "
        f"{data.query_vocab.language} / {len(data.doc_vocab)} {data.doc_vocab.language} words",
    )


def train_epochs(training: Training, step: Step | None = None, writer: bool = True) -> None:
    """Step 4: the remaining epochs, each a ``step`` per batch (one process's by default).

    The ``writer`` (the one process, or a data-parallel training's rank 0) also evaluates on
    dev, keeps the best epoch's weights, logs and writes the checkpoint after every epoch.
    """
    config, data = training.config, training.prepared.data
    state = training.state
    phases = _phases(config, data.parallel is not None)
    for epoch in range(training.start_epoch, len(phases) + 1):
        epoch_start = time.perf_counter()
        phase = phases[epoch - 1]
        epoch_data = data.parallel if phase == "parallel" else data.relevance
        assert epoch_data is not None
        mean_loss = run_epoch(
            step or training.step, training.model, training.optimiser, epoch_data, config,
            training.generator, epoch, phase,
        )  # fmt: skip
        state.completed = epoch
        if not writer:
            continue
        dev_score = None
        if data.dev is not None:
            dev_score = evaluate_dev(training.model, data.dev, config, training.device)
            if state.best_dev is None or dev_score > state.best_dev:
                state.best_dev, state.best_epoch = dev_score, epoch
                state.best_state = cpu_state(training.model)
        else:
            state.best_epoch = epoch
        record = EpochRecord(epoch, phase, mean_loss, dev_score, time.perf_counter() - epoch_start)
        state.history.append(record)
        dev_text = f", dev {DEV_MEASURE} {dev_score:.4f}" if dev_score is not None else ""
        log(config, f"epoch {epoch} ({phase}): loss {mean_loss:.4f}{dev_text}")
        save_checkpoint(
            training.prepared.checkpoint_path, training.prepared.fingerprint, state,
            training.model, training.loss_module, training.optimiser, training.scaler,
            training.generator, training.vocabs,
        )  # fmt: skip


def finish_training(training: Training, device: str, started: float) -> TrainReport:
    """Step 5: the model file (the best epoch) written atomically, and the report."""
    config, state = training.config, training.state
    _save_model(config, training.model, state, training.vocabs, training.prepared.embeddings_found)
    assert config.loss is not None
    best = f", best dev {DEV_MEASURE} {state.best_dev:.4f}" if state.best_dev is not None else ""
    log(config, f"saved epoch {state.best_epoch}{best} -> {config.output}")
    return TrainReport(
        output=config.output,
        checkpoint=training.prepared.checkpoint_path,
        model=config.model,
        loss=config.loss,
        device=device,
        examples=len(training.prepared.data.relevance),
        query_vocab_size=len(training.vocabs[0]),
        doc_vocab_size=len(training.vocabs[1]),
        start_epoch=training.start_epoch,
        best_epoch=state.best_epoch,
        best_dev=state.best_dev,
        history=state.history,
        seconds=time.perf_counter() - started,
    )


def train_reranker(config: TrainConfig) -> TrainReport:
    """Train the reranker described by ``config`` and write its model file (see module doc)."""
    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.rerank.allocator import keep_freed_memory

    use_fastest_threads()
    keep_freed_memory()
    started = time.perf_counter()
    config, device, corpus, cache_dir = training_setup(config)
    training = start_training(prepare_training(config, corpus, cache_dir), device)
    log_start(training.prepared, str(device))
    train_epochs(training)
    return finish_training(training, str(device), started)
