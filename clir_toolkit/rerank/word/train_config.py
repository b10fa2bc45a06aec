"""The options of ``clir rerank train --model`` (:class:`TrainConfig`) and their defaults.

:data:`TRAIN_PARAMS` declares each option once, for the command line and the recipes alike
(:mod:`clir_toolkit.params`). ``None`` for the loss, the learning rate and the batch size
means the paper's default for the model, which :func:`resolved_config` fills in from what
the model's registration declares (:mod:`clir_toolkit.rerank.models`): Adam with
learning rate 0.01 and batches of 128 for the dual encoder with SOSL (Liu et al., *Smooth
Learning*, §5 "Experimental Setup"); learning rate 0.001 for K-NRM with the pairwise hinge
loss (Xiong et al. 2017, the K-NRM paper the thesis builds on, §3.2), 3e-4 on USE-m3's
subword table (:data:`SUBWORD_KNRM_LR`), 0.01 over frozen tables (:data:`FROZEN_KNRM_LR`).
``None`` for ``embeddings`` means the model's default vectors: USE-m3's subword table for
K-NRM (:func:`default_embeddings`). On that table, ``None`` for ``max_doc_len`` and
``train_embeddings`` means the reading measured best for the collection's kind of documents
(:mod:`clir_toolkit.rerank.word.document_reading`: the head of long documents with the table
trained, short ones whole over the frozen table), and ``epochs`` follows
(:data:`SUBWORD_EPOCHS`, :data:`FROZEN_EPOCHS`). What a training reports is
:mod:`clir_toolkit.rerank.training`'s.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clir_toolkit import registry
from clir_toolkit.errors import UsageError
from clir_toolkit.params import Form, Param, check_options, declare, with_defaults
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES
from clir_toolkit.rerank.data.subwords import SOURCE as SUBWORD_SOURCE
from clir_toolkit.rerank.word.model_file import TEXT_LENGTH_PARAMS

ENCODERS = ("avg", "cnn", "lstm")
DEFAULT_LOSS = "sosl"
"""The loss of a model that declares no ``default_loss`` (:mod:`clir_toolkit.rerank.models`)."""
DEFAULT_LR = 1e-3
"""The learning rate of a model that declares no ``default_lr``."""
DEFAULT_BATCH_SIZE = 128
NO_EMBEDDINGS = "none"
"""``--embeddings none``: random vectors (and word tokens), whatever the model's default."""
DEFAULT_MAX_DOC_LEN = 300
"""Words of a document read by a word-level model."""
FROZEN_KNRM_LR = 0.01
"""K-NRM's learning rate over frozen tables (``--train-embeddings no``), where only its
ranking layer (one weight per kernel and a bias) learns: measured on the French man pages'
dev split with the subword table (300 pieces), nDCG@10 0.5652 after 3 epochs at 0.01
against 0.5060 at the paper's 0.001 (0.5501 after 10)."""
SUBWORD_KNRM_LR = 3e-4
"""K-NRM's learning rate when the subword table trains with it (the default): measured on
the French man pages' dev split (50 pieces), nDCG@10 by epoch 0.6349, 0.6475, **0.6483**,
0.6432 at 3e-4; 0.6483, 0.6298, 0.6206, 0.6175 at the paper's 1e-3 (the table overfits
639 queries after one epoch); 0.6116, 0.5928 at 0.01. Over the frozen table: 0.6341; the
trained table is significantly better on AP on dev (0.5093 against 0.4819) and on both
measures on test (nDCG@10 0.6221 against 0.5903)."""
SUBWORD_EPOCHS = 3
"""Epochs of K-NRM on the subword table trained with it, by default (the best dev epoch at
:data:`SUBWORD_KNRM_LR`); word-level models train :data:`DEFAULT_EPOCHS`."""
FROZEN_EPOCHS = 5
"""Epochs of K-NRM over the frozen subword table, by default: measured on the package
descriptions (ddtp-en-fr-hard) at 300 pieces and :data:`FROZEN_KNRM_LR`, dev nDCG@10 best at
0.5271 within 5 epochs; on the man pages at 50 pieces, best at the 4th (0.6341). After the
first epoch an epoch costs the ranking layer alone (the kernel features are kept)."""
DEFAULT_EPOCHS = 10
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
    #: None: on the subword table :data:`SUBWORD_EPOCHS` (table trained) or
    #: :data:`FROZEN_EPOCHS` (frozen), else :data:`DEFAULT_EPOCHS`.
    epochs: int | None = None
    batch_size: int | None = None
    lr: float | None = None
    dim: int | None = None
    max_query_len: int = 20
    #: None: :data:`DEFAULT_MAX_DOC_LEN` words, or on the subword table the pieces of the
    #: collection's document reading (:mod:`clir_toolkit.rerank.word.document_reading`).
    max_doc_len: int | None = None
    min_count: int = 1
    max_vocab: int | None = None
    negatives_per_query: int = 40
    #: Pairwise losses: the most (better, worse) pairs of one query in an epoch, drawn
    #: afresh each epoch (:func:`clir_toolkit.rerank.data.examples.epoch_pairs`).
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
    #: Whether training updates the embedding tables ("yes") or only the model's other
    #: weights over the vectors it started with ("no": the features of a pair are then
    #: computed once, :meth:`clir_toolkit.rerank.word.knrm.KNRM.kernel_features`).
    #: None: the reading of the collection's documents on the subword table
    #: (:mod:`clir_toolkit.rerank.word.document_reading`), "yes" for word-level models.
    train_embeddings: str | None = None
    #: K-NRM: "no" leaves out the exact-match kernel (μ = 1), so that only soft matches
    #: count (thesis §6.2.1, Table 6.3: how much of the model is exact matching).
    exact_match: str = "yes"

    def __post_init__(self) -> None:
        """Check every option against :data:`TRAIN_PARAMS` (a UsageError naming its flag)."""
        for name, value in check_options(vars(self), TRAIN_PARAMS.values()).items():
            setattr(self, name, value)


TRAIN_PARAMS = with_defaults(
    declare(
        Param("model", str, doc="the reranker", choices=MODEL_NAMES, flag="--model"),
        Param("encoder", str, doc="the dual encoder's text encoder", choices=ENCODERS,
              flag="--encoder"),
        Param("loss", str, doc="the training loss",
              choices=LOSS_NAMES, optional=True, flag="--loss"),
        Param("embeddings", Path, doc="the vectors both embedding tables start with: a .vec "
              f"file, {SUBWORD_SOURCE} (USE-m3's pretrained multilingual subword table, and its "
              "SentencePiece tokens) or none (random vectors)", optional=True,
              flag="--embeddings", metavar="F.vec|use-m3-tokens|none"),
        Param("query_embeddings", Path, doc=".vec file of the query table", optional=True,
              flag="--query-embeddings"),
        Param("doc_embeddings", Path, doc=".vec file of the document table", optional=True,
              flag="--doc-embeddings"),
        Param("parallel_epochs", int, doc="epochs of pre-training on parallel text", minimum=0,
              flag="--parallel-epochs"),
        Param("parallel_negatives", int, doc="negatives per parallel sentence", minimum=1,
              flag="--parallel-negatives"),
        Param("epochs", int, doc="epochs of training on the relevance judgements", minimum=1,
              optional=True,
              flag="--epochs"),
        Param("batch_size", int, doc="examples per step",
              minimum=1, optional=True, flag="--batch-size"),
        Param("lr", float, doc="Adam's learning rate",
              above=0, below=FLOAT32_MAX, optional=True, flag="--lr"),
        Param("dim", int, doc="embedding size", minimum=1, maximum=MAX_DIM,
              optional=True, flag="--dim"),
        TEXT_LENGTH_PARAMS["max_query_len"],
        dataclasses.replace(TEXT_LENGTH_PARAMS["max_doc_len"], optional=True,
                            doc="document words (or pieces) read"),
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
        Param("train_embeddings", str, doc="update the embedding tables in training (no: "
              "only the other weights, over the vectors the tables start with)",
              choices=("yes", "no"), optional=True, flag="--train-embeddings"),
        Param("exact_match", str, doc="K-NRM's exact-match kernel (no: soft matches only, "
              "thesis Table 6.3)", choices=("yes", "no"), flag="--exact-match"),
    ),
    TrainConfig,
)  # fmt: skip
"""The options of :class:`TrainConfig` that a value can be wrong for (paths aside)."""


def _optional_path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def model_default(model: str, trait: str, fallback: Any = None) -> Any:
    """What the model called ``model`` declares as ``trait`` (a built-in's registration in
    :mod:`clir_toolkit.rerank.models`, a plug-in's class attribute), else ``fallback``."""
    return registry.component("rerankers", model).trait(trait, fallback)


def resolved_config(config: TrainConfig) -> TrainConfig:
    """A copy of ``config`` with the model's defaults filled in (its values are checked)."""
    dev = (config.dev_topics, config.dev_qrels, config.dev_run)
    if any(p is not None for p in dev) and any(p is None for p in dev):
        raise UsageError("give all three of --dev-topics, --dev-qrels and --dev-run, or none")
    loss = config.loss or model_default(config.model, "default_loss", DEFAULT_LOSS)
    batch_size = config.batch_size if config.batch_size is not None else DEFAULT_BATCH_SIZE
    resolved = dataclasses.replace(config, loss=loss, batch_size=batch_size)
    for name in PATH_FIELDS:  # the CLI and callers may pass strings
        setattr(resolved, name, _optional_path(getattr(resolved, name)))
    named = {str(resolved.embeddings), str(resolved.query_embeddings), str(resolved.doc_embeddings)}
    if SUBWORD_SOURCE in named and (resolved.query_embeddings or resolved.doc_embeddings):
        raise UsageError(
            f"{SUBWORD_SOURCE} gives both tables their vectors and tokens: pass it as "
            "--embeddings, without --query-embeddings or --doc-embeddings"
        )
    resolved.embeddings = default_embeddings(resolved)
    subwords = uses_subwords(resolved)
    if subwords and (resolved.max_doc_len is None or resolved.train_embeddings is None):
        from clir_toolkit.collection import open_collection
        from clir_toolkit.rerank.word.document_reading import document_reading

        reading = document_reading(open_collection(resolved.collection).corpus)
        if resolved.max_doc_len is None:
            resolved.max_doc_len = reading.max_doc_len
        if resolved.train_embeddings is None:
            resolved.train_embeddings = reading.train_embeddings
    if resolved.max_doc_len is None:
        resolved.max_doc_len = DEFAULT_MAX_DOC_LEN
    if resolved.train_embeddings is None:
        resolved.train_embeddings = "yes"
    if resolved.epochs is None:
        resolved.epochs = DEFAULT_EPOCHS
        if subwords:
            trained = resolved.train_embeddings == "yes"
            resolved.epochs = SUBWORD_EPOCHS if trained else FROZEN_EPOCHS
    if resolved.lr is None:
        frozen_lr = model_default(config.model, "frozen_lr")
        subword_lr = model_default(config.model, "subword_lr")
        resolved.lr = model_default(config.model, "default_lr", DEFAULT_LR)
        if frozen_lr is not None and resolved.train_embeddings == "no":
            resolved.lr = frozen_lr
        elif subword_lr is not None and subwords:
            resolved.lr = subword_lr
    if resolved.exact_match == "no" and not model_default(config.model, "exact_match_kernel"):
        raise UsageError(
            f"--exact-match no leaves out K-NRM's exact-match kernel; the {config.model} "
            "model has none: use --model knrm, or leave --exact-match out"
        )
    return resolved


def default_embeddings(config: TrainConfig) -> Path | None:
    """``config.embeddings``, or the model's default source when no vectors are named.

    K-NRM starts from USE-m3's subword table (its ``default_embeddings``), unless it is
    asked for what that table cannot give: ``dim`` other than the table's 512 or
    ``tie_embeddings`` (both word-level set-ups of random vectors, as before the table).
    """
    from clir_toolkit.rerank.data.subwords import DIM

    if any((config.embeddings, config.query_embeddings, config.doc_embeddings)):
        return config.embeddings
    default = model_default(config.model, "default_embeddings")
    if default is None or config.dim not in (None, DIM) or config.tie_embeddings:
        return None
    return Path(default)


def uses_subwords(config: TrainConfig) -> bool:
    """Whether ``config`` (resolved) trains on the pretrained subword table and its pieces."""
    return str(config.embeddings) == SUBWORD_SOURCE


def has_parallel(config: TrainConfig) -> bool:
    """Whether training starts with epochs of parallel pre-training."""
    return config.parallel is not None and config.parallel_epochs > 0


