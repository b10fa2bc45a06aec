"""The options of ``clir rerank train`` (:class:`TrainConfig`) and what a training reports.

:data:`TRAIN_PARAMS` declares each option once, for the command line and the recipes alike
(:mod:`clir_toolkit.params`). ``None`` for the loss, the learning rate and the batch size
means the paper's default for the model, which :func:`resolved_config` fills in: Adam with
learning rate 0.01 and batches of 128 for the dual encoder with SOSL (Liu et al., *Smooth
Learning*, §5 "Experimental Setup"); learning rate 0.001 for K-NRM with the pairwise hinge
loss (Xiong et al. 2017, the K-NRM paper the thesis builds on, §3.2). :class:`EpochRecord`
and :class:`TrainReport` say what :func:`clir_toolkit.rerank.train.train_reranker` did.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clir_toolkit.errors import UsageError
from clir_toolkit.params import Form, Param, check_options, declare, with_defaults
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES
from clir_toolkit.rerank.model_file import TEXT_LENGTH_PARAMS

MODELS = MODEL_NAMES
ENCODERS = ("avg", "cnn", "lstm")
LOSSES = LOSS_NAMES
DEFAULT_LOSS = {"knrm": "hinge", "dual": "sosl"}
DEFAULT_LR = {"knrm": 1e-3, "dual": 0.01}
DEFAULT_BATCH_SIZE = 128
MAX_DIM = 10_000
"""The largest embedding size trained: each table is vocabulary × dim floats, so that a
mistyped --dim 100000 would ask for tens of gigabytes (the thesis used 300)."""
FLOAT32_MAX = 3.4028234663852886e38
PATH_FIELDS = (
    "collection",
    "topics",
    "qrels",
    "run",
    "output",
    "dev_topics",
    "dev_qrels",
    "dev_run",
    "embeddings",
    "query_embeddings",
    "doc_embeddings",
    "parallel",
    "cache_dir",
)


@dataclass
class TrainConfig:
    """Everything that defines a training run; the model file records it.

    ``None`` for ``loss``, ``lr`` and ``batch_size`` means the paper's default for the model
    (see the module docstring); ``None`` for ``doc_language``/``query_language`` means the
    collection manifest's ``doc_lang``/``query_lang`` (queries default to English).
    """

    collection: Path
    topics: Path
    qrels: Path
    run: Path
    output: Path
    model: str = "knrm"
    encoder: str = "avg"
    loss: str | None = None
    dev_topics: Path | None = None
    dev_qrels: Path | None = None
    dev_run: Path | None = None
    embeddings: Path | None = None
    query_embeddings: Path | None = None
    doc_embeddings: Path | None = None
    parallel: Path | None = None
    parallel_epochs: int = 1
    parallel_negatives: int = 4
    epochs: int = 10
    batch_size: int | None = None
    lr: float | None = None
    dim: int | None = None
    max_query_len: int = 20
    max_doc_len: int = 300
    min_count: int = 1
    max_vocab: int | None = None
    negatives_per_query: int = 40
    #: Pairwise losses: the most (better, worse) pairs of one query in an epoch, drawn
    #: afresh each epoch (:func:`clir_toolkit.rerank.examples.epoch_pairs`).
    pairs_per_query: int = 80
    depth: int = 100
    seed: int = 42
    device: str = "auto"
    precision: str = "fp32"
    grad_clip: float | None = None
    query_language: str | None = None
    doc_language: str | None = None
    cache_dir: Path | None = None
    resume: bool = False
    verbose: bool = True
    #: Dual encoder: ε of the smooth cosine (paper eq. 1); None keeps the model's default 1.
    epsilon: float | None = None
    #: SOSL: the inner thresholds (θ1, θ2) between the grades; None keeps (0.2, 0.7).
    sosl_thresholds: tuple[float, float] | None = None
    #: Start each query word the document vocabulary also has with its document vector,
    #: so that a monolingual model begins with exact matches (K-NRM's exact-match kernel).
    tie_embeddings: bool = False

    def __post_init__(self) -> None:
        """Check every option against :data:`TRAIN_PARAMS` (a UsageError naming its flag)."""
        for name, value in check_options(vars(self), TRAIN_PARAMS.values()).items():
            setattr(self, name, value)


TRAIN_PARAMS = with_defaults(
    declare(
        Param("model", str, doc="the reranker", choices=MODELS, flag="--model"),
        Param("encoder", str, doc="the dual encoder's text encoder", choices=ENCODERS,
              flag="--encoder"),
        Param("loss", str, doc="the training loss",
              choices=LOSSES, optional=True, flag="--loss"),
        Param("embeddings", Path, doc=".vec file initialising both embedding tables",
              optional=True, flag="--embeddings"),
        Param("query_embeddings", Path, doc=".vec file of the query table", optional=True,
              flag="--query-embeddings"),
        Param("doc_embeddings", Path, doc=".vec file of the document table", optional=True,
              flag="--doc-embeddings"),
        Param("parallel_epochs", int, doc="epochs of pre-training on parallel text", minimum=0,
              flag="--parallel-epochs"),
        Param("parallel_negatives", int, doc="negatives per parallel sentence", minimum=1,
              flag="--parallel-negatives"),
        Param("epochs", int, doc="epochs of training on the relevance judgements", minimum=1,
              flag="--epochs"),
        Param("batch_size", int, doc="examples per step",
              minimum=1, optional=True, flag="--batch-size"),
        Param("lr", float, doc="Adam's learning rate",
              above=0, below=FLOAT32_MAX, optional=True, flag="--lr"),
        Param("dim", int, doc="embedding size", minimum=1, maximum=MAX_DIM,
              optional=True, flag="--dim"),
        *TEXT_LENGTH_PARAMS.values(),
        Param("min_count", int, doc="occurrences a word needs to enter a vocabulary", minimum=1,
              flag="--min-count"),
        Param("max_vocab", int, doc="words kept per vocabulary, most frequent first", minimum=1,
              optional=True, flag="--max-vocab"),
        Param("negatives_per_query", int, doc="non-relevant first-stage candidates per query",
              minimum=1, flag="--negatives"),
        Param("pairs_per_query", int, doc="pairwise losses: the most pairs of one query in an "
              "epoch, drawn afresh each epoch", minimum=1, flag="--pairs-per-query"),
        Param("depth", int, doc="dev candidates reranked per query", minimum=1, flag="--depth"),
        Param("seed", int, doc="seed of every random choice", minimum=0, maximum=2**32 - 1,
              flag="--seed"),
        Param("device", str, doc="where to train",
              form=Form(r"auto|cpu|cuda(:[0-9]+)?", "a device: auto, cpu, cuda or cuda:N"),
              flag="--device"),
        Param("precision", str, doc="floating-point precision of the matrix products",
              choices=("fp32", "bf16", "fp16"), flag="--precision"),
        Param("grad_clip", float, doc="largest gradient norm", above=0,
              optional=True, flag="--grad-clip"),
        Param("query_language", str, doc="analysis language of the queries", optional=True,
              flag="--query-lang"),
        Param("doc_language", str, doc="analysis language of the documents", optional=True,
              flag="--doc-lang"),
        Param("resume", bool, doc="continue from OUTPUT.ckpt", flag="--resume"),
        Param("verbose", bool, doc="progress on stderr (--quiet turns it off)"),
        Param("epsilon", float, doc="the dual encoder's smoothness ε (0: the plain cosine)",
              minimum=0, optional=True, flag="--epsilon"),
        Param("sosl_thresholds", float, doc="SOSL's inner thresholds θ1 < θ2",
              above=-1, below=1, shape="list", length=2, increasing=True, optional=True,
              flag="--sosl-thresholds"),
        Param("tie_embeddings", bool, doc="start shared words with the same vector",
              flag="--tie-embeddings"),
    ),
    TrainConfig,
)  # fmt: skip
"""The options of :class:`TrainConfig` that a value can be wrong for (paths aside)."""


@dataclass
class EpochRecord:
    """One epoch: phase (``parallel`` pre-training or ``relevance``), mean loss, dev score."""

    epoch: int
    phase: str
    loss: float
    dev: float | None
    seconds: float


@dataclass
class TrainReport:
    """What :func:`clir_toolkit.rerank.train.train_reranker` did."""

    output: Path
    checkpoint: Path
    model: str
    loss: str
    device: str
    examples: int
    query_vocab_size: int
    doc_vocab_size: int
    start_epoch: int
    best_epoch: int
    best_dev: float | None
    history: list[EpochRecord] = field(default_factory=list)
    seconds: float = 0.0


def _optional_path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def _model_default(model: str, attribute: str, builtin: Mapping[str, Any], fallback: Any) -> Any:
    """A built-in model's default, or what a plug-in model's class says (else ``fallback``)."""
    if model in builtin:
        return builtin[model]
    from clir_toolkit.rerank.model_file import model_class

    return getattr(model_class(model), attribute, fallback)


def resolved_config(config: TrainConfig) -> TrainConfig:
    """A copy of ``config`` with the model's defaults filled in (its values are checked)."""
    dev = (config.dev_topics, config.dev_qrels, config.dev_run)
    if any(p is not None for p in dev) and any(p is None for p in dev):
        raise UsageError("give all three of --dev-topics, --dev-qrels and --dev-run, or none")
    loss = config.loss or _model_default(config.model, "default_loss", DEFAULT_LOSS, "sosl")
    batch_size = config.batch_size if config.batch_size is not None else DEFAULT_BATCH_SIZE
    lr = (
        config.lr
        if config.lr is not None
        else _model_default(config.model, "default_lr", DEFAULT_LR, 1e-3)
    )
    resolved = dataclasses.replace(config, loss=loss, lr=lr, batch_size=batch_size)
    for name in PATH_FIELDS:  # the CLI and callers may pass strings
        setattr(resolved, name, _optional_path(getattr(resolved, name)))
    return resolved


def recorded_settings(config: Any) -> dict[str, Any]:
    """The JSON-serialisable settings of a config (a dataclass) recorded in the model file."""
    values = dataclasses.asdict(config)
    return {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}


def has_parallel(config: TrainConfig) -> bool:
    """Whether training starts with epochs of parallel pre-training."""
    return config.parallel is not None and config.parallel_epochs > 0


def log(config: Any, message: str) -> None:
    """Progress of a training (any config with ``verbose``) on stderr, unless it is off."""
    if config.verbose:
        print(message, file=sys.stderr, flush=True)
