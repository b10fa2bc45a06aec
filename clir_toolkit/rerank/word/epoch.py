"""One epoch of training a reranker: its batches, a step, the dev evaluation after it.

The training set is shuffled every epoch with a seeded generator ("shuffling the training
set" helps, Liu et al., *Smooth Learning* §5; Liu, *Neural CLIR* §6.1.1) and cut into
batches of documents of similar lengths (:func:`epoch_batches`); the pairwise hinge draws its
(better, worse) pairs afresh each epoch (:func:`clir_toolkit.rerank.data.examples.epoch_pairs`).
A step (:func:`train_step`: :func:`batch_tensors`, :func:`batch_loss`, :func:`apply_gradients`)
runs under autocast on CUDA if asked and clips gradients if asked; a non-finite loss or
weight stops training with a clear error (:func:`run_epoch`).
After every epoch the dev run's top ``depth`` candidates are reranked and scored with
nDCG@10 (:data:`clir_toolkit.rerank.training.DEV_MEASURE`, by ir_measures: :func:`evaluate_dev`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError
from clir_toolkit.rerank import is_pairwise
from clir_toolkit.rerank.training import DEV_MEASURE, mean_measure

if TYPE_CHECKING:
    import torch

    from clir_toolkit.rerank.data.examples import EncodedExamples
    from clir_toolkit.rerank.word.train_config import TrainConfig
    from clir_toolkit.rerank.word.training_data import DevData

BATCHES_PER_POOL = 50
"""Batches whose examples are sorted by length together (see :func:`epoch_batches`)."""
def _pairwise(loss: str | None) -> bool:
    """Whether ``loss`` compares two documents (the hinge) rather than grading one."""
    return loss is not None and is_pairwise(loss)


def _nonfinite_error(config: TrainConfig, what: str) -> ClirError:
    """The error for a NaN or infinite loss or weight, with the usual remedies."""
    hint = f"lower the learning rate (now {config.lr:g})"
    if config.grad_clip is None:
        hint += " or clip gradients (--grad-clip 1.0)"
    return ClirError(f"{what}; {hint}")


def epoch_batches(
    data: EncodedExamples, config: TrainConfig, generator: torch.Generator
) -> tuple[EncodedExamples, list[torch.Tensor]]:
    """An epoch's examples (pairs drawn for pairwise losses) and its batches, shuffled.

    Batches hold documents of similar lengths, because a batch is as long as its longest
    document and DDTP's are 37 words on average but up to 300: the examples are shuffled,
    cut into pools of :data:`BATCHES_PER_POOL` batches, sorted by length within a pool and
    cut into batches, and the batches shuffled again (the "sortish" sampling of fairseq and
    AllenNLP's bucket iterators). Every example is still seen once per epoch, in an order
    that depends only on ``generator``; padding falls from about 3/4 of a K-NRM batch to
    a few per cent.
    """
    import torch

    from clir_toolkit.rerank.data.examples import epoch_pairs

    assert config.batch_size is not None
    if _pairwise(config.loss):
        data = epoch_pairs(data, generator, config.pairs_per_query)
        if not len(data):
            raise ClirError(
                f"{config.qrels}: no training query has candidates of two grades in "
                f"{config.run}, and the {config.loss} loss learns from (better, worse) pairs; "
                "train on more queries or on a deeper run, or use a pointwise loss (--loss mse)"
            )
    order = torch.randperm(len(data), generator=generator)
    lengths = (data.documents != 0).sum(dim=1)[data.doc_index]
    if data.worse_index is not None:
        lengths = torch.maximum(lengths, (data.documents != 0).sum(dim=1)[data.worse_index])
    pools = order.split(config.batch_size * BATCHES_PER_POOL)
    batches = [
        batch
        for pool in pools
        for batch in pool[torch.sort(lengths[pool], stable=True).indices].split(config.batch_size)
    ]
    shuffled = torch.randperm(len(batches), generator=generator).tolist()
    return data, [batches[i] for i in shuffled]


@dataclass
class BatchTensors:
    """The tensors of one batch, trimmed of the padding that every row has, on the device.

    Pairwise examples have ``worse`` (the worse document of each pair), pointwise ones
    ``grades``. :meth:`rows` cuts out a contiguous slice, with the batch's own widths, so a
    slice is exactly those rows of what one process computes on (the data-parallel
    trainer's share of a batch, :mod:`clir_toolkit.distributed.train`).
    """

    queries: torch.Tensor
    documents: torch.Tensor
    worse: torch.Tensor | None
    grades: torch.Tensor | None

    def __len__(self) -> int:
        return int(self.queries.shape[0])

    def rows(self, start: int, end: int) -> BatchTensors:
        """Rows ``start:end`` of every tensor."""
        return BatchTensors(
            self.queries[start:end],
            self.documents[start:end],
            self.worse[start:end] if self.worse is not None else None,
            self.grades[start:end] if self.grades is not None else None,
        )


def batch_tensors(data: EncodedExamples, batch: torch.Tensor, device: torch.device) -> BatchTensors:
    """The examples ``batch`` of ``data`` as tensors on ``device``."""
    from clir_toolkit.rerank.word.batches import trim_padding

    worse = None
    if data.worse_index is not None:
        worse = trim_padding(data.documents[data.worse_index[batch]]).to(device)
    return BatchTensors(
        queries=trim_padding(data.queries[data.query_index[batch]]).to(device),
        documents=trim_padding(data.documents[data.doc_index[batch]]).to(device),
        worse=worse,
        grades=data.grades[batch].to(device) if data.grades is not None else None,
    )


def batch_loss(
    model: Any, loss_fn: Any, tensors: BatchTensors, config: TrainConfig, device: torch.device
) -> torch.Tensor:
    """The forward pass: the loss of the batch (under autocast if asked)."""
    from clir_toolkit.compute.device import autocast

    with autocast(config.precision, device):
        scores = model(tensors.queries, tensors.documents)
        if tensors.worse is not None:
            worse_scores = model(tensors.queries, tensors.worse)
            loss: torch.Tensor = loss_fn(scores.float(), worse_scores.float())
        else:
            assert tensors.grades is not None
            loss = loss_fn(scores.float(), tensors.grades)
    return loss


def apply_gradients(loss: torch.Tensor, optimiser: Any, scaler: Any, config: TrainConfig) -> None:
    """The backward pass and the update: gradients of ``loss`` (scaled for fp16), clipped if
    asked, and one optimiser step."""
    from clir_toolkit.rerank.word.optimiser import clip_gradient_norm

    optimiser.zero_grad(set_to_none=True)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimiser)
    else:
        loss.backward()
    if config.grad_clip is not None:
        params = [p for group in optimiser.param_groups for p in group["params"]]
        clip_gradient_norm(params, config.grad_clip)
    if scaler is not None:
        scaler.step(optimiser)
        scaler.update()
    else:
        optimiser.step()


def train_step(
    model: Any,
    loss_fn: Any,
    optimiser: Any,
    scaler: Any,
    data: EncodedExamples,
    batch: torch.Tensor,
    config: TrainConfig,
    device: torch.device,
) -> float:
    """Forward, backward and update on the examples ``batch`` of ``data``; the batch loss.

    A non-finite loss is returned before any update, for the caller to report.
    """
    loss = batch_loss(model, loss_fn, batch_tensors(data, batch, device), config, device)
    value = float(loss.detach())
    if math.isfinite(value):
        apply_gradients(loss, optimiser, scaler, config)
    return value


Step = Callable[["EncodedExamples", "torch.Tensor"], float]
"""A training step on one batch (the examples and the batch's row numbers): updates the
model and returns the batch loss (:func:`train_step`, or a data-parallel worker's share)."""


def run_epoch(
    step: Step,
    model: Any,
    optimiser: Any,
    data: EncodedExamples,
    config: TrainConfig,
    generator: torch.Generator,
    epoch: int,
    phase: str,
) -> float:
    """One pass over ``data`` in a seeded random order, a ``step`` per batch; returns the
    mean batch loss."""
    import torch

    from clir_toolkit.progress import progress_bar

    model.train()
    data, batches = epoch_batches(data, config, generator)
    total = 0.0
    progress = progress_bar(
        batches, desc=f"epoch {epoch} ({phase})", unit="batch", show=config.verbose, leave=False
    )
    for number, batch in enumerate(progress, start=1):
        value = step(data, batch)
        if not math.isfinite(value):
            raise _nonfinite_error(
                config, f"the training loss became {value} at epoch {epoch}, step {number}"
            )
        total += value
        progress.set_postfix(loss=f"{total / number:.4f}", refresh=False)
    for group in optimiser.param_groups:
        for parameter in group["params"]:
            if not bool(torch.isfinite(parameter).all()):
                raise _nonfinite_error(
                    config, f"the model's weights became NaN or infinite in epoch {epoch}"
                )
    return total / max(len(batches), 1)


def evaluate_dev(model: Any, dev: DevData, config: TrainConfig, device: torch.device) -> float:
    """nDCG@10 of the dev run reranked by ``model`` (mean over the dev qrels' queries)."""
    from clir_toolkit.rerank.candidates import batch_pairs, rerank_rows
    from clir_toolkit.rerank.word.batches import score_encoded

    assert config.batch_size is not None
    batch_size = max(config.batch_size, batch_pairs(None, device))
    neural = score_encoded(model, dev.encoded, device, batch_size, config.precision)
    rows = rerank_rows(dev.ranked, neural, config.depth)
    return mean_measure(dev.qrels, rows, DEV_MEASURE)


