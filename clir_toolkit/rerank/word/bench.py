"""Speed of the rerankers (``clir bench rerank``): scoring throughput and training steps.

For each model (any registered reranker; by default the built-ins, K-NRM and the dual
encoder, built as ``clir rerank train`` builds them) and each device (the CPU, and CUDA
when torch sees a GPU) this measures, on random token ids of fixed lengths:

* **scoring**: query–document pairs per second in inference mode, batch after batch, as
  :func:`clir_toolkit.rerank.word.batches.score_batches` scores a run (padding trimmed
  there, none here: every text has its full length), in batches of ``clir rerank score``'s
  size for the device unless another is asked
  (:func:`clir_toolkit.rerank.candidates.batch_pairs`);
* **training**: optimiser steps per second, each step a forward and backward pass over one
  batch and a (lazy) Adam update, as :func:`clir_toolkit.rerank.word.train.train_reranker` takes
  them, with the model's default loss: K-NRM's pairwise hinge loss scores two documents
  per example, the dual encoder's SOSL one.

Each measurement runs ``warmup`` iterations first (CUDA kernels compiled and cached, memory
allocated), then as many iterations as fit in ``seconds`` (at least ``min_iterations``);
on CUDA, ``torch.cuda.synchronize()`` is called before the clock starts and before it stops,
since kernels run asynchronously. On a CPU shared with other work, torch's threads wait for
each other at every operation: without ``threads`` the CPU is measured with the count the
toolkit trains and scores with (:mod:`clir_toolkit.compute.threads`), and ``threads`` sets
another (e.g. 2 to see torch's own choice on two cores).

On CUDA the scoring rate is also expressed as a share of the GPU's memory bandwidth
(``peak_bandwidth_gbs``, default 3350 GB/s, the H100 SXM's HBM3): scoring a pair must read
at least the embedding rows of its ``query_len + doc_len`` tokens (float32, 4 bytes per
dimension; K-NRM reads them from its cached unit-length table, the dual encoder's
``embedding_bag`` from the table itself) and their int64 ids. ``bytes_per_pair`` is that
minimum; intermediate tensors (K-NRM's ``query_len × doc_len`` similarity matrix, read
once per kernel unless fused) come on top, so the fraction is a lower bound of the traffic.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError

DEFAULT_PEAK_BANDWIDTH_GBS = 3350.0
FLOAT32_BYTES = 4
ID_BYTES = 8


@dataclass(frozen=True)
class BenchSettings:
    """What is measured: text lengths, embedding size, vocabularies, batches, precision."""

    query_len: int = 10
    doc_len: int = 300
    dim: int = 300
    query_vocab: int = 50_000
    doc_vocab: int = 100_000
    batch_size: int | None = None  # None: clir rerank score's, by device (batch_pairs)
    train_batch_size: int = 128
    precision: str = "fp32"
    encoder: str = "avg"
    warmup: int = 3
    seconds: float = 2.0
    min_iterations: int = 3
    peak_bandwidth_gbs: float = DEFAULT_PEAK_BANDWIDTH_GBS
    threads: int | None = None  # CPU threads of torch; None: the toolkit's choice
    seed: int = 0
    compiled: bool = False
    """Kernel pooling fused by ``torch.compile`` (:meth:`KNRM.compile_pooling`)."""

    def check(self) -> None:
        counts = {
            "query_len": self.query_len,
            "doc_len": self.doc_len,
            "dim": self.dim,
            "train_batch_size": self.train_batch_size,
            "min_iterations": self.min_iterations,
        }
        if self.batch_size is not None:  # None: the device's default
            counts["batch_size"] = self.batch_size
        for name, value in counts.items():
            if value < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1, not {value}")
        if self.query_vocab < 3 or self.doc_vocab < 3:
            raise UsageError("vocabularies need at least 3 rows (padding, OOV and one word)")
        if self.warmup < 0 or not self.seconds > 0 or not self.peak_bandwidth_gbs > 0:
            raise UsageError("--warmup must be ≥ 0; --seconds and --peak-bandwidth-gbs > 0")
        if self.threads is not None and self.threads < 1:
            raise UsageError(f"--threads must be at least 1, not {self.threads}")

    @property
    def bytes_per_pair(self) -> int:
        """The least a pair's scoring reads: its tokens' float32 embedding rows and ids."""
        return (self.query_len + self.doc_len) * (self.dim * FLOAT32_BYTES + ID_BYTES)


@dataclass(frozen=True)
class BenchRow:
    """One model on one device."""

    model: str
    device: str
    device_name: str
    score_batch: int  # pairs per scoring batch
    score_pairs_per_s: float
    train_steps_per_s: float
    train_examples_per_s: float
    bandwidth_fraction: float | None  # CUDA only


def timed(action: Callable[[], object], device: Any, settings: BenchSettings) -> float:
    """Seconds per call of ``action``: warm-up calls, then calls for ``settings.seconds``."""
    import torch

    def synchronise() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(settings.warmup):
        action()
    synchronise()
    calls = 0
    started = time.perf_counter()
    elapsed = 0.0
    while calls < settings.min_iterations or elapsed < settings.seconds:
        action()
        calls += 1
        if calls >= settings.min_iterations:
            synchronise()  # once per call after the minimum: the loop must see real time
        elapsed = time.perf_counter() - started
    return elapsed / calls


def bench_config(model: str, settings: BenchSettings) -> Any:
    """The training configuration the model ``model`` is measured with: its name, the
    settings' text encoder and embedding size. The bench draws random ids instead of reading
    a collection, so the configuration's files are empty paths that nothing reads."""
    from clir_toolkit.rerank.word.train_config import TrainConfig

    nothing = Path()
    return TrainConfig(collection=nothing, topics=nothing, qrels=nothing, run=nothing,
                       output=nothing, model=model, encoder=settings.encoder,
                       dim=settings.dim)  # fmt: skip


def model_label(model: str, options: dict[str, Any]) -> str:
    """How a row names a model: its name, followed by its text encoder when it has one
    (``dual-avg``, ``dual-cnn``), since the encoder decides its speed."""
    return f"{model}-{options['encoder']}" if "encoder" in options else model


def build(model: str, settings: BenchSettings) -> tuple[Any, str]:
    """A freshly initialised model of the settings' sizes, and the label of its rows.

    Any registered reranker (:mod:`clir_toolkit.rerank.models`, or a plug-in's) is built
    by its registered factory, with the options its training would give it."""
    from clir_toolkit import registry
    from clir_toolkit.rerank.word.prepare import model_options

    options = model_options(bench_config(model, settings))
    factory = registry.load("rerankers", model)
    label = model_label(model, options)
    return factory(settings.query_vocab, settings.doc_vocab, **options), label


def random_ids(rows: int, length: int, vocab: int, generator: Any, device: Any) -> Any:
    """``LongTensor[rows, length]`` of word ids 2..vocab-1 (no padding, no OOV)."""
    import torch

    ids = torch.randint(2, vocab, (rows, length), generator=generator, dtype=torch.long)
    return ids.to(device)


def bench_model(model_name: str, device: Any, settings: BenchSettings) -> BenchRow:
    """Scoring pairs/s and training steps/s of one model on one device."""
    import torch

    from clir_toolkit.compute.device import autocast
    from clir_toolkit.rerank import is_pairwise
    from clir_toolkit.rerank.candidates import batch_pairs
    from clir_toolkit.rerank.losses import build_loss
    from clir_toolkit.rerank.word.train import build_optimiser
    from clir_toolkit.rerank.word.train_config import DEFAULT_LOSS, model_default

    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    built, label = build(model_name, settings)
    model = built.to(device)
    s = settings
    # The loss the model trains with by default (K-NRM: pairwise hinge; dual: SOSL).
    loss_name = model_default(model_name, "default_loss", DEFAULT_LOSS)
    loss_fn, loss_module = build_loss(loss_name)
    if loss_module is not None:
        loss_module.to(device)
    pairwise = is_pairwise(loss_name)

    # Scoring: inference mode, one batch of pairs per call.
    batch = batch_pairs(s.batch_size, device)
    queries = random_ids(batch, s.query_len, s.query_vocab, generator, device)
    docs = random_ids(batch, s.doc_len, s.doc_vocab, generator, device)
    model.eval()
    if s.compiled and hasattr(model, "compile_pooling"):  # K-NRM's; the dual has no kernels
        model.compile_pooling()

    def score() -> object:
        with torch.inference_mode(), autocast(s.precision, device):
            return model(queries, docs)

    score_seconds = timed(score, device, s)
    if s.compiled:  # training is measured as clir rerank train runs it: not compiled
        model = build(model_name, settings)[0].to(device)

    # Training: forward, backward and an Adam step per call.
    model.train()
    optimiser: Any = build_optimiser(model, loss_module, lr=1e-3)  # GradScaler takes it
    scaler = torch.amp.GradScaler("cuda") if s.precision == "fp16" else None
    t_queries = random_ids(s.train_batch_size, s.query_len, s.query_vocab, generator, device)
    better = random_ids(s.train_batch_size, s.doc_len, s.doc_vocab, generator, device)
    worse = random_ids(s.train_batch_size, s.doc_len, s.doc_vocab, generator, device)
    grades = torch.randint(0, 3, (s.train_batch_size,), generator=generator).to(device)

    def step() -> object:
        with autocast(s.precision, device):
            if pairwise:  # the scores of two documents per example
                loss = loss_fn(model(t_queries, better).float(), model(t_queries, worse).float())
            else:
                loss = loss_fn(model(t_queries, better).float(), grades)
        optimiser.zero_grad(set_to_none=True)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimiser)
            scaler.update()
        else:
            loss.backward()
            optimiser.step()
        return loss

    step_seconds = timed(step, device, s)

    pairs_per_s = batch / score_seconds
    fraction = None
    if device.type == "cuda":
        fraction = pairs_per_s * s.bytes_per_pair / (s.peak_bandwidth_gbs * 1e9)
    return BenchRow(
        model=label,
        device=str(device),
        device_name=_device_name(device),
        score_batch=batch,
        score_pairs_per_s=pairs_per_s,
        train_steps_per_s=1.0 / step_seconds,
        train_examples_per_s=s.train_batch_size / step_seconds,
        bandwidth_fraction=fraction,
    )


def _device_name(device: Any) -> str:
    import platform

    import torch

    if device.type == "cuda":
        return str(torch.cuda.get_device_name(device))
    threads = torch.get_num_threads()
    return f"{platform.machine()}, {threads} thread{'s' if threads > 1 else ''}"


def bench_rerank(
    settings: BenchSettings,
    models: Sequence[str] | None = None,
    devices: Sequence[str] | None = None,
) -> list[BenchRow]:
    """Measure every model (default: the built-in rerankers, :mod:`clir_toolkit.rerank.models`)
    on every device (default: the CPU, and CUDA when present)."""
    import torch

    from clir_toolkit.compute.device import check_precision, resolve_device
    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.rerank import MODEL_NAMES
    from clir_toolkit.rerank.allocator import keep_freed_memory

    settings.check()
    names = list(devices) if devices else ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    targets = [resolve_device(name) for name in names]
    default_threads = torch.get_num_threads()
    use_fastest_threads(settings.threads)
    keep_freed_memory()
    rows = []
    try:
        for target in targets:
            if settings.precision != "fp32" and target.type == "cpu" and len(targets) > 1:
                continue  # mixed precision is a CUDA option; the CPU is measured in fp32 runs
            check_precision(settings.precision, target)
            for model in MODEL_NAMES.builtin if models is None else models:
                rows.append(bench_model(model, target, settings))
    finally:
        torch.set_num_threads(default_threads)
    return rows


def format_bench_rerank(settings: BenchSettings, rows: Sequence[BenchRow]) -> str:
    """The settings, then one line per model and device."""
    import torch

    s = settings
    lines = [
        f"settings: query length {s.query_len}, document length {s.doc_len}, "
        f"embeddings {s.dim}-d, vocabularies {s.query_vocab:,} query / {s.doc_vocab:,} document "
        f"words, precision {s.precision}, random ids (no padding), "
        f"{'kernel pooling compiled' if s.compiled else 'kernel pooling eager'}, "
        f"torch {torch.__version__}",
        f"scoring: batches of {_batches(s)}; training: batches of {s.train_batch_size} "
        f"examples, lazy Adam (K-NRM: pairwise hinge, two documents per example; dual: SOSL); "
        f"{s.warmup} warm-up calls, then ≥ {s.seconds:g} s and ≥ {s.min_iterations} calls",
        f"memory traffic: ≥ {s.bytes_per_pair:,} bytes read per scored pair "
        f"((query + document tokens) × ({s.dim} × 4 + 8) bytes); peak bandwidth "
        f"{s.peak_bandwidth_gbs:g} GB/s",
        "",
    ]
    header = (
        "model",
        "device",
        "batch",
        "score pairs/s",
        "train steps/s",
        "train examples/s",
        "bandwidth",
        "hardware",
    )
    body = [
        (
            row.model,
            row.device,
            f"{row.score_batch:,}",
            f"{row.score_pairs_per_s:,.0f}",
            f"{row.train_steps_per_s:,.2f}",
            f"{row.train_examples_per_s:,.0f}",
            "—" if row.bandwidth_fraction is None else f"{row.bandwidth_fraction:.1%}",
            row.device_name,
        )
        for row in rows
    ]
    return "\n".join(lines + _aligned(header, body))


def _batches(settings: BenchSettings) -> str:
    """The scoring batches, in words: the size asked, else clir rerank score's by device."""
    from clir_toolkit.rerank.candidates import CPU_BATCH_PAIRS, GPU_BATCH_PAIRS

    if settings.batch_size is not None:
        return f"{settings.batch_size:,} pairs"
    return (f"{CPU_BATCH_PAIRS:,} pairs on the CPU and {GPU_BATCH_PAIRS:,} on CUDA "
            "(clir rerank score's)")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# One epoch on a real collection
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EpochBench:
    """Training speed on a collection's own examples, and the epoch time it implies."""

    model: str
    device: str
    device_name: str
    examples: int  # one epoch's examples (pairs for the hinge loss)
    batch_size: int
    steps_per_s: float

    @property
    def steps(self) -> int:
        return -(-self.examples // self.batch_size)

    @property
    def epoch_seconds(self) -> float:
        return self.steps / self.steps_per_s


def bench_training_epoch(config: Any, settings: BenchSettings) -> EpochBench:
    """Steps/s of ``clir rerank train`` with ``config`` (a TrainConfig) on its real data.

    The data are prepared, the model, loss and optimiser built and the epoch's batches drawn
    exactly as :func:`clir_toolkit.rerank.word.train.train_reranker` does; then
    :func:`clir_toolkit.rerank.word.epoch.train_step` runs on those batches in their order for
    ``settings.seconds`` after ``settings.warmup`` steps. The epoch time is the epoch's step
    count over the measured rate (dev evaluation not included).
    """
    import torch

    from clir_toolkit.compute.threads import use_fastest_threads
    from clir_toolkit.rerank.allocator import keep_freed_memory
    from clir_toolkit.rerank.losses import build_loss
    from clir_toolkit.rerank.word.epoch import epoch_batches, train_step
    from clir_toolkit.rerank.word.prepare import build_model, model_options, training_setup
    from clir_toolkit.rerank.word.train import build_optimiser
    from clir_toolkit.rerank.word.training_data import prepare_data

    settings.check()
    default_threads = torch.get_num_threads()
    use_fastest_threads(settings.threads)
    keep_freed_memory()
    try:
        config, device, corpus, cache_dir = training_setup(config)
        data = prepare_data(config, corpus, cache_dir)
        torch.manual_seed(config.seed)
        model = build_model(config, data.query_vocab, data.doc_vocab).to(device)
        loss_fn, loss_module = build_loss(config.loss, config.sosl_thresholds)
        if loss_module is not None:
            loss_module.to(device)
        optimiser = build_optimiser(model, loss_module, config.lr)
        scaler = torch.amp.GradScaler("cuda") if config.precision == "fp16" else None
        generator = torch.Generator().manual_seed(config.seed)
        examples, batches = epoch_batches(data.relevance, config, generator)
        model.train()
        position = 0

        def step() -> object:
            nonlocal position
            batch = batches[position % len(batches)]
            position += 1
            return train_step(model, loss_fn, optimiser, scaler, examples, batch, config, device)

        seconds = timed(step, device, settings)
        return EpochBench(
            model=model_label(config.model, model_options(config)),
            device=str(device),
            device_name=_device_name(device),
            examples=len(examples),
            batch_size=config.batch_size,
            steps_per_s=1.0 / seconds,
        )
    finally:
        torch.set_num_threads(default_threads)


def format_epoch_benches(collection: Any, rows: Sequence[EpochBench]) -> str:
    """One line per model: its epoch's examples and steps, the rate, the epoch's minutes."""
    header = ("model", "device", "examples/epoch", "batch", "steps/s", "epoch", "hardware")
    body = [
        (
            row.model,
            row.device,
            f"{row.examples:,}",
            str(row.batch_size),
            f"{row.steps_per_s:,.2f}",
            f"{row.epoch_seconds / 60:.1f} min",
            row.device_name,
        )
        for row in rows
    ]
    lines = [
        f"training on {collection} (its own examples, batches as clir rerank train draws "
        "them; dev evaluation not included)",
        "",
    ]
    return "\n".join(lines + _aligned(header, body))


def _aligned(header: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
    """Text table lines: names (first two columns, last column) left, figures right."""
    widths = [max(len(line[c]) for line in [header, *body]) for c in range(len(header))]
    names = {0, 1, len(header) - 1}
    return [
        "  ".join(
            cell.ljust(width) if c in names else cell.rjust(width)
            for c, (cell, width) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [header, *body]
    ]
