"""Data-parallel training of the word-level rerankers on Ray (``clir rerank train --ddp N``).

Data parallelism as PyTorch's ``DistributedDataParallel`` implements it (S. Li et al.,
"PyTorch Distributed: Experiences on Accelerating Data Parallel Training", VLDB 2020, and
the class's documentation): N replicas of the model each compute the gradient of their
share of a batch; the gradients are averaged across the replicas by an all-reduce during the
backward pass, and every replica applies the same update to the same weights, so that they
stay equal. Ray Train's ``TorchTrainer`` (docs.ray.io, "Get started with PyTorch") starts
the N worker processes (``ScalingConfig(num_workers=N, use_gpu=...)``), joins them in one
``torch.distributed`` process group (``TorchConfig(backend=...)``) and runs
:func:`_train_worker` in each.

The procedure of :func:`train_reranker_on_ray`:

1. The driver does what one process does before its first step
   (:func:`clir_toolkit.rerank.word.prepare.prepare_training`): it reads, tokenises and encodes the
   data, builds the seeded model with its ``.vec`` rows and reads the checkpoint when
   resuming, and puts all of it in Ray's object store once.
2. Every worker builds the loss, the optimiser and the seeded shuffling generator from it
   (:func:`~clir_toolkit.rerank.word.train.start_training`), so that each draws the very batches
   one process draws; it wraps the model and the loss in one module (:class:`BatchLoss`)
   under DDP.
3. Of each batch of B examples, worker r of N takes the contiguous rows
   ``[rB/N, (r+1)B/N)`` (:func:`share`), cut from the batch's tensors, padding widths and all.
4. Every built-in loss is a mean over its batch (:mod:`clir_toolkit.rerank.losses`), and DDP
   *averages* the workers' gradients: the mean of N slice means is the batch mean only when
   the slices are equal, which the last batch of an epoch, or any B not divisible by N, breaks.
   So worker r scales its loss by ``N n_r / B`` before the backward pass; the average of the
   scaled gradients is ``Σ_r (n_r / B) ∇mean_r = ∇(batch mean)``, one process's gradient. A
   worker whose slice is empty (a batch smaller than N) computes the batch's first row at
   weight 0: it takes part in the all-reduce, and its gradient touches no embedding row that
   the batch does not (lazy Adam moves every row in the gradient's indices). A loss plug-in
   must likewise return its batch mean.
5. The batch loss (the epoch's mean, the check for NaN) is the all-reduced sum of
   ``(n_r / B) loss_r``: the same number on every worker, so that all stop together.
6. Rank 0 alone evaluates on dev after every epoch, keeps the best epoch's weights, and writes
   the checkpoint and then the model file with one process's writers
   (:func:`~clir_toolkit.rerank.word.train.train_epochs`,
   :func:`~clir_toolkit.rerank.word.train.finish_training`); its report returns to the driver as
   a Ray Train checkpoint.

The model therefore equals one process's up to the order in which floats are summed
(docs/training.md, "Data-parallel training", measures the difference), except with
dropout (the dual encoder's ``cnn`` and ``lstm`` encoders), whose masks each worker draws
from its own generator (:func:`worker_seed`): the same training in distribution only.

The built-in models' embedding tables have sparse gradients (lazy Adam,
:mod:`clir_toolkit.rerank.word.optimiser`) and NCCL has no sparse all-reduce (pytorch/pytorch
issue 111422), so the process group is gloo's, on GPUs too; only a plug-in model with
dense gradients gets NCCL on GPUs. Every path (inputs, output, cache) must be the same on
every node: a shared file system, as for ``clir search --ray``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from clir_toolkit.distributed.cluster import ClusterSpec, connected, import_ray_train, put
from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.files import scratch
from clir_toolkit.rerank.training import EpochRecord, TrainReport
from clir_toolkit.rerank.word.epoch import BatchTensors, apply_gradients, batch_loss, batch_tensors
from clir_toolkit.rerank.word.prepare import prepare_training, training_inputs
from clir_toolkit.rerank.word.train import (
    Training,
    finish_training,
    has_sparse_gradients,
    log_start,
    start_training,
    train_epochs,
)
from clir_toolkit.rerank.word.train_config import TrainConfig

if TYPE_CHECKING:
    from clir_toolkit.rerank.data.examples import EncodedExamples

REPORT = "report.json"
"""The file of rank 0's Ray Train checkpoint that carries its :class:`TrainReport`."""


def share(size: int, rank: int, workers: int) -> tuple[int, int]:
    """Rows ``[start, end)`` of a batch of ``size`` that worker ``rank`` of ``workers`` takes:
    contiguous, in rank order, sizes differing by one at most (some empty if size < workers)."""
    return rank * size // workers, (rank + 1) * size // workers


def worker_seed(seed: int, rank: int, start_epoch: int) -> int:
    """The seed of torch's generator (dropout) in worker ``rank`` > 0: a stream of its own,
    derived from the training's seed (NumPy's ``SeedSequence``), new when resuming."""
    import numpy

    return int(numpy.random.SeedSequence([seed, rank, start_epoch]).generate_state(1)[0])


class BatchLoss(torch.nn.Module):
    """The model and the loss as one module, whose forward pass is a batch's loss: DDP
    averages the gradients of every parameter used in one forward call (a pairwise loss
    calls the model twice), the loss's own too (proportional odds' cut-points)."""

    def __init__(self, training: Training) -> None:
        super().__init__()
        self.model = training.model
        self.loss_fn = training.loss_fn  # a module (registered with its weights) or a function
        self.config, self.device = training.config, training.device

    def forward(
        self,
        queries: torch.Tensor,
        documents: torch.Tensor,
        worse: torch.Tensor | None,
        grades: torch.Tensor | None,
    ) -> torch.Tensor:
        tensors = BatchTensors(queries, documents, worse, grades)
        return batch_loss(self.model, self.loss_fn, tensors, self.config, self.device)


def data_parallel_step(
    shared: Any,
    training: Training,
    rank: int,
    workers: int,
    data: EncodedExamples,
    batch: torch.Tensor,
) -> float:
    """Worker ``rank``'s part of one training step on the examples ``batch`` of ``data``
    (steps 3–5 of the module docstring); returns the whole batch's loss."""
    import torch.distributed as dist

    tensors = batch_tensors(data, batch, training.device)
    start, end = share(len(tensors), rank, workers)
    fraction = (end - start) / len(tensors)
    if start == end:  # fewer examples than workers: the batch's first row, weighted 0
        start, end = 0, 1
    part = tensors.rows(start, end)
    loss = shared(part.queries, part.documents, part.worse, part.grades)
    total = loss.detach().float() * fraction
    if dist.is_initialized():
        dist.all_reduce(total)  # a sum: the batch mean, the same on every worker
    value = float(total)
    if math.isfinite(value):
        apply_gradients(loss * (fraction * workers), training.optimiser, training.scaler,
                        training.config)  # fmt: skip
    return value


def _train_worker(settings: dict[str, Any]) -> None:
    """What each worker runs (Ray Train calls it in every worker process)."""
    import ray
    import ray.train
    import ray.train.torch

    from clir_toolkit.compute.threads import use_fastest_threads

    started = time.perf_counter()
    use_fastest_threads()  # Ray gives each worker OMP_NUM_THREADS, its CPUs: kept
    context = ray.train.get_context()
    rank, workers = context.get_world_rank(), context.get_world_size()
    device = ray.train.torch.get_device() if settings["use_gpu"] else torch.device("cpu")
    training = start_training(ray.get(settings["prepared"]), device)
    if rank > 0:
        torch.manual_seed(worker_seed(training.config.seed, rank, training.start_epoch))
    shared = ray.train.torch.prepare_model(BatchLoss(training), move_to_device=device)
    step = functools.partial(data_parallel_step, shared, training, rank, workers)
    train_epochs(training, step, writer=rank == 0)
    if rank != 0:
        ray.train.report({})
        return
    report = finish_training(training, settings["where"], started)
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, REPORT).write_text(json.dumps(_report_fields(report)), encoding="utf-8")
        checkpoint = ray.train.Checkpoint.from_directory(folder)
        ray.train.report({"best_epoch": report.best_epoch}, checkpoint=checkpoint)


def _report_fields(report: TrainReport) -> dict[str, Any]:
    fields = dataclasses.asdict(report)
    fields["output"], fields["checkpoint"] = str(report.output), str(report.checkpoint)
    return fields


def _read_report(result: Any) -> TrainReport:
    """Rank 0's report from the Ray Train result."""
    with result.checkpoint.as_directory() as folder:
        fields = json.loads(Path(folder, REPORT).read_text(encoding="utf-8"))
    fields["output"], fields["checkpoint"] = Path(fields["output"]), Path(fields["checkpoint"])
    fields["history"] = [EpochRecord(**record) for record in fields["history"]]
    return TrainReport(**fields)


def _check_device(config: TrainConfig) -> None:
    """Refuse what no cluster can satisfy before the data are prepared."""
    from clir_toolkit.compute.device import check_precision

    if config.device.startswith("cuda:"):
        raise UsageError(
            f"--device {config.device} names one GPU; with --ddp every worker has its own: "
            "use --device cuda or auto"
        )
    if config.device == "cpu":
        check_precision(config.precision, torch.device("cpu"))


def _use_gpu(config: TrainConfig, ray: Any, workers: int) -> bool:
    """Whether the workers train on GPUs, one each: ``auto`` when the cluster has a GPU for
    every worker, ``cuda`` demands it; and that the cluster has a CPU for every worker."""
    resources = ray.cluster_resources()
    cpus, gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
    if cpus < workers:
        raise ClirError(
            f"--ddp {workers}: the Ray cluster has {cpus} CPUs, and every worker needs one"
        )
    if config.device == "cuda" and gpus < workers:
        raise ClirError(
            f"--device cuda --ddp {workers}: the Ray cluster has {gpus} GPUs, and every "
            "worker needs one; use --device auto or cpu"
        )
    return config.device != "cpu" and gpus >= workers


def _command_line_trainer(torch_trainer: type) -> type:
    """Ray Train's ``TorchTrainer`` with Ctrl-C left to the command line.

    ``fit()`` runs in the main thread, blocked in ``ray.get`` on Ray Train's controller
    actor, where Ray looks at Python's signal handlers every moment: Ctrl-C or SIGTERM raise
    there, in the main thread, and unwind through :func:`~clir_toolkit.distributed.cluster.
    connected`, which disconnects from the cluster while no other thread is inside Ray.

    Ray Train would install a SIGINT handler of its own in the main thread (a graceful abort
    that ends in ``sys.exit(0)``, so that a Ctrl-C would look like success); this subclass
    installs none. ``fit()`` used to run in a thread of its own to keep that handler out, and
    that is what crashed: after a Ctrl-C the main thread disconnected (``ray.shutdown``) and
    the interpreter exited while the thread was still waiting in ``ray.get``, whose object
    store Ray had freed; the process died by SIGSEGV after printing ``clir: interrupted``
    (a core dump showed that thread in ``CoreWorkerMemoryStore::GetImpl``, called from
    Ray Train's ``ray.get(controller.run.remote())``, and the main thread in the interpreter's
    last garbage collection)."""

    class CommandLineTrainer(torch_trainer):
        def _register_sigint_handler(self, controller: Any) -> None:
            """Leave SIGINT to the command line (see above)."""

    return CommandLineTrainer


def _worker_error(error: Exception) -> Exception:
    """The first of the workers' own errors (a NaN loss, say: one line), else ``error``."""
    failures = getattr(error, "worker_failures", None) or {}
    causes = [failures[rank] for rank in sorted(failures)]
    return next((c for c in causes if isinstance(c, ClirError)), error)


def train_reranker_on_ray(
    config: TrainConfig, workers: int, cluster: ClusterSpec | None = None
) -> TrainReport:
    """:func:`clir_toolkit.rerank.word.train.train_reranker` with ``workers`` data-parallel
    workers on ``cluster`` (default: a local cluster of ``workers`` CPUs, for the call):
    the same epochs, checkpoints and model file (see the module docstring)."""
    from clir_toolkit.compute.device import check_precision

    if workers < 1:
        raise UsageError(f"--ddp takes a number of workers, at least 1 (got {workers})")
    import_ray_train()
    started = time.perf_counter()
    _check_device(config)
    config, corpus, cache_dir = training_inputs(config)
    prepared = prepare_training(config, corpus, cache_dir)
    with connected(cluster or ClusterSpec(local_cpus=workers)) as ray:
        from ray.train import RunConfig, ScalingConfig, TrainingFailedError
        from ray.train.torch import TorchConfig, TorchTrainer

        use_gpu = _use_gpu(config, ray, workers)
        device = "cuda" if use_gpu else "cpu"
        check_precision(config.precision, torch.device(device))
        backend = "nccl" if use_gpu and not has_sparse_gradients(prepared.model) else "gloo"
        where = f"{workers} DDP workers on {device} ({backend})"
        log_start(prepared, where)
        with scratch(config.output) as storage:
            trainer = _command_line_trainer(TorchTrainer)(
                _train_worker,
                train_loop_config={"prepared": put(ray, prepared), "use_gpu": use_gpu,
                                   "where": where},
                scaling_config=ScalingConfig(num_workers=workers, use_gpu=use_gpu),
                torch_config=TorchConfig(backend=backend),
                run_config=RunConfig(name="clir-rerank-train", storage_path=str(storage)),
            )  # fmt: skip
            try:
                result = trainer.fit()
            except TrainingFailedError as error:
                raise _worker_error(error) from None
            report = _read_report(result)
    return dataclasses.replace(report, seconds=time.perf_counter() - started)
