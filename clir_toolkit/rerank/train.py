"""Train a neural reranker (``clir rerank train``): K-NRM or the smooth-cosine dual encoder.

The set-up follows the two sources:

* **Data.** Queries in the query language (English), documents in the document language, one
  vocabulary each: the thesis' *bilingual training data* (Zhao, *Neural CLIR*, ch. 3 and
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
  (:mod:`clir_toolkit.rerank.optimiser`): a step then costs what its batch holds, not the
  vocabulary.
* **Model selection.** After every epoch the dev run's top ``depth`` candidates are reranked
  and scored with nDCG@10 (ir_measures); the best epoch's weights are the ones saved.

The procedure of :func:`train_reranker`:

1. read topics, qrels and the run; build pointwise examples (``hinge`` draws its pairs from
   them afresh each epoch, :func:`clir_toolkit.rerank.examples.epoch_pairs`);
2. tokenise the queries and documents, build the two vocabularies (``min_count``), encode
   the documents through the tensor cache of :mod:`clir_toolkit.rerank.documents`;
3. build the model (seeded), initialise embedding rows from a ``.vec`` file if given;
4. for each epoch: shuffle, step through batches (autocast on CUDA if asked; gradient
   clipping if asked), stop with a clear error on a non-finite loss; evaluate on dev; write
   the resumable checkpoint ``<output>.ckpt``;
5. write the model file (best epoch) atomically.

On the CPU the same inputs and seed give the same model and byte-identical reranked runs.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError, UsageError
from clir_toolkit.files import atomic_write, sha256_file
from clir_toolkit.params import Form, Param, check_options, declare, with_defaults
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES, is_pairwise
from clir_toolkit.rerank.examples import EncodedExamples
from clir_toolkit.rerank.vocabulary import Vocabulary

if TYPE_CHECKING:
    import torch

    from clir_toolkit.rerank.optimiser import LazyAdam

MODELS = MODEL_NAMES
ENCODERS = ("avg", "cnn", "lstm")
LOSSES = LOSS_NAMES
DEFAULT_LOSS = {"knrm": "hinge", "dual": "sosl"}
DEFAULT_LR = {"knrm": 1e-3, "dual": 0.01}
DEFAULT_BATCH_SIZE = 128
BATCHES_PER_POOL = 50
"""Batches whose examples are sorted by length together (see :func:`epoch_batches`)."""
DEV_MEASURE = "nDCG@10"
CHECKPOINT_FORMAT = "clir-toolkit-rerank-checkpoint/1"
NUM_GRADES = 3
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
        Param("loss", str, doc="the training loss (default: hinge for knrm, sosl for dual)",
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
        Param("batch_size", int, doc=f"examples per step (default {DEFAULT_BATCH_SIZE})",
              minimum=1, optional=True, flag="--batch-size"),
        Param("lr", float, doc="Adam's learning rate (default: 1e-3 for knrm, 0.01 for dual)",
              above=0, below=FLOAT32_MAX, optional=True, flag="--lr"),
        Param("dim", int, doc="embedding size (default 300, or the .vec file's)", minimum=1,
              optional=True, flag="--dim"),
        Param("max_query_len", int, doc="query words read", minimum=1, flag="--max-query-len"),
        Param("max_doc_len", int, doc="document words read", minimum=1, flag="--max-doc-len"),
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
        Param("grad_clip", float, doc="largest gradient norm (default: no clipping)", above=0,
              optional=True, flag="--grad-clip"),
        Param("query_language", str, doc="analysis language of the queries", optional=True,
              flag="--query-lang"),
        Param("doc_language", str, doc="analysis language of the documents", optional=True,
              flag="--doc-lang"),
        Param("resume", bool, doc="continue from OUTPUT.ckpt", flag="--resume"),
        Param("verbose", bool, doc="progress on stderr (--quiet turns it off)"),
        Param("epsilon", float, doc="the dual encoder's smoothness ε (0: the plain cosine)",
              minimum=0, optional=True, flag="--epsilon"),
        Param("sosl_thresholds", float, doc="SOSL's inner thresholds θ1 < θ2 (default 0.2, 0.7)",
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
    """What :func:`train_reranker` did."""

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


# ---------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------


def _optional_path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


def _model_default(model: str, attribute: str, builtin: Mapping[str, Any], fallback: Any) -> Any:
    """A built-in model's default, or what a plug-in model's class says (else ``fallback``)."""
    if model in builtin:
        return builtin[model]
    from clir_toolkit.rerank.model_file import model_class

    return getattr(model_class(model), attribute, fallback)


def _resolved(config: TrainConfig) -> TrainConfig:
    """A copy of ``config`` with the model's defaults filled in (its values are checked)."""
    dev = (config.dev_topics, config.dev_qrels, config.dev_run)
    if any(p is not None for p in dev) and any(p is None for p in dev):
        raise UsageError("give all three of --dev-topics, --dev-qrels and --dev-run, or none")
    loss = config.loss or _model_default(config.model, "default_loss", DEFAULT_LOSS, "sosl")
    batch_size = config.batch_size if config.batch_size is not None else DEFAULT_BATCH_SIZE
    lr = config.lr if config.lr is not None else _model_default(
        config.model, "default_lr", DEFAULT_LR, 1e-3
    )
    resolved = dataclasses.replace(config, loss=loss, lr=lr, batch_size=batch_size)
    for name in PATH_FIELDS:  # the CLI and callers may pass strings
        setattr(resolved, name, _optional_path(getattr(resolved, name)))
    return resolved


def _settings(config: TrainConfig) -> dict[str, Any]:
    """The JSON-serialisable settings recorded in the model file."""
    values = dataclasses.asdict(config)
    return {k: str(v) if isinstance(v, Path) else v for k, v in values.items()}


def _fingerprint(config: TrainConfig) -> str:
    """Hash of the settings and input files that a resumed run must share with its checkpoint.

    Epochs (a resumed run may add some), the device, the output and verbosity may change.
    """
    volatile = {"epochs", "device", "resume", "verbose", "output", "cache_dir"}
    settings = {k: v for k, v in _settings(config).items() if k not in volatile}
    for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run", "parallel"):
        path = getattr(config, name)
        settings[f"{name}_sha256"] = sha256_file(path) if path is not None else None
    payload = json.dumps(settings, sort_keys=True).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def _log(config: TrainConfig, message: str) -> None:
    if config.verbose:
        print(message, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------


@dataclass
class DevData:
    """The dev split, encoded once: reranked and evaluated after every epoch."""

    ranked: dict[str, list[Any]]  # qid -> RunRow list in trec_eval order
    qrels: list[Any]
    encoded: Any  # rerank.candidates.EncodedCandidates of the top ``depth`` candidates


@dataclass
class TrainingData:
    """Encoded examples (relevance and optional parallel) and the two vocabularies."""

    query_vocab: Vocabulary
    doc_vocab: Vocabulary
    relevance: EncodedExamples
    parallel: EncodedExamples | None
    dev: DevData | None


def _check_files(config: TrainConfig) -> None:
    for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run", "parallel"):
        path = getattr(config, name)
        if path is not None and not Path(path).is_file():
            raise ClirError(f"{path}: no such file (the {name.replace('_', ' ')} file)")


def _pairwise(loss: str | None) -> bool:
    """Whether ``loss`` compares two documents (the hinge) rather than grading one."""
    return loss is not None and is_pairwise(loss)


def prepare_data(
    config: TrainConfig,
    corpus: Path,
    cache_dir: Path,
    vocabularies: tuple[Vocabulary, Vocabulary] | None = None,
) -> TrainingData:
    """Read, tokenise and encode the training (and dev) data of ``config``.

    ``vocabularies`` (query, document) are reused when resuming; otherwise they are built from
    the training queries and documents (and the parallel sentences), first ``max_*_len``
    tokens of each, words seen at least ``min_count`` times.
    """
    from clir_toolkit.formats import read_qrels, read_run, read_topics
    from clir_toolkit.rerank.candidates import encode_candidates, ranked_by_query
    from clir_toolkit.rerank.documents import DocumentEncoder, load_documents
    from clir_toolkit.rerank.examples import (
        index_examples,
        parallel_examples,
        read_parallel_tsv,
        relevance_examples,
    )
    from clir_toolkit.rerank.tokens import tokenize_all
    from clir_toolkit.rerank.vocabulary import encode_texts

    assert config.query_language is not None and config.doc_language is not None
    topics = {t.qid: t.query for t in read_topics(config.topics)}
    examples = relevance_examples(
        read_qrels(config.qrels), read_run(config.run), config.negatives_per_query, topics
    )
    if not examples:
        raise ClirError(
            f"{config.qrels}: no query has both a topic in {config.topics} and a relevant "
            "document; check that the topics, qrels and run belong to the same split"
        )
    qids = list(dict.fromkeys(e.qid for e in examples))
    docids = list(dict.fromkeys(e.docid for e in examples))

    parallel = None
    if config.parallel is not None and _has_parallel(config):
        parallel = parallel_examples(
            read_parallel_tsv(config.parallel), config.parallel_negatives, config.seed
        )

    doc_tokens = None  # when resuming, the documents come from the tensor cache
    if vocabularies is None:
        query_tokens = tokenize_all({q: topics[q] for q in qids}, config.query_language, "queries")
        doc_texts = load_documents(corpus, docids)
        doc_tokens = tokenize_all(doc_texts, config.doc_language, "documents")
        query_lists = [t[: config.max_query_len] for t in query_tokens.values()]
        doc_lists = [t[: config.max_doc_len] for t in doc_tokens.values()]
        if parallel is not None:
            query_lists += [
                t[: config.max_query_len]
                for t in tokenize_all(parallel.queries, config.query_language, "sentences").values()
            ]
            doc_lists += [
                t[: config.max_doc_len]
                for t in tokenize_all(parallel.documents, config.doc_language, "sentences").values()
            ]
        vocabularies = (
            Vocabulary.build(
                query_lists, config.query_language, config.min_count, config.max_vocab
            ),
            Vocabulary.build(doc_lists, config.doc_language, config.min_count, config.max_vocab),
        )
    query_vocab, doc_vocab = vocabularies

    queries = encode_texts([topics[q] for q in qids], query_vocab, config.max_query_len)
    encoder = DocumentEncoder(corpus, doc_vocab, config.max_doc_len, cache_dir)
    doc_rows, documents = encoder.encode(docids, tokens=doc_tokens)
    query_rows = {qid: i for i, qid in enumerate(qids)}
    relevance = index_examples(examples, query_rows, doc_rows, queries, documents)

    parallel_encoded = None
    if parallel is not None:
        keys = list(parallel.queries)
        rows = {key: i for i, key in enumerate(keys)}
        parallel_encoded = index_examples(
            parallel.examples,
            rows,
            rows,
            encode_texts([parallel.queries[k] for k in keys], query_vocab, config.max_query_len),
            encode_texts([parallel.documents[k] for k in keys], doc_vocab, config.max_doc_len),
        )

    dev = None
    if config.dev_topics is not None and config.dev_qrels is not None and config.dev_run:
        dev_topics = {t.qid: t.query for t in read_topics(config.dev_topics)}
        ranked = ranked_by_query(read_run(config.dev_run))
        ranked = {qid: rows for qid, rows in ranked.items() if qid in dev_topics}
        if not ranked:
            raise ClirError(f"{config.dev_run}: no query of the dev run has a dev topic")
        candidates = {qid: [r.docid for r in rows[: config.depth]] for qid, rows in ranked.items()}
        encoded = encode_candidates(
            dev_topics, candidates, query_vocab, config.max_query_len, encoder
        )
        dev = DevData(ranked, read_qrels(config.dev_qrels), encoded)
    return TrainingData(query_vocab, doc_vocab, relevance, parallel_encoded, dev)


# ---------------------------------------------------------------------------------------------
# Model, loss and embeddings
# ---------------------------------------------------------------------------------------------


def build_model(config: TrainConfig, query_vocab: Vocabulary, doc_vocab: Vocabulary) -> Any:
    """The model of ``config`` (the caller seeds torch first)."""
    from clir_toolkit.rerank.model_file import model_class

    options: dict[str, Any] = {}
    if config.dim is not None:
        options["dim"] = config.dim
    if config.model == "dual":
        options["encoder"] = config.encoder
        if config.epsilon is not None:
            options["epsilon"] = config.epsilon
    model = model_class(config.model)(len(query_vocab), len(doc_vocab), **options)
    if config.tie_embeddings:
        tie_query_rows(model, query_vocab, doc_vocab)
    return model


def build_loss(name: str, sosl_thresholds: tuple[float, float] | None = None) -> tuple[Any, Any]:
    """``(loss function, module with parameters or None)`` for a loss name.

    Proportional odds is McCullagh's model with cut-points estimated along with the model
    (:class:`clir_toolkit.rerank.losses.ProportionalOdds`); its parameters join the
    optimiser. The other losses have no parameters.
    """
    from clir_toolkit import plugins
    from clir_toolkit.rerank import losses

    if LOSS_NAMES.is_plugin(name):
        loss = plugins.load(plugins.LOSSES, name)
        if isinstance(loss, type):  # a torch.nn.Module class: its parameters are trained
            module = loss()
            return module, module
        return loss, None
    if name == "po":
        module = losses.ProportionalOdds(NUM_GRADES)
        return module, module
    if name == "sosl" and sosl_thresholds is not None:
        return functools.partial(losses.sosl, thresholds=(-1.0, *sosl_thresholds, 1.0)), None
    return losses.LOSSES[name], None


def build_optimiser(model: Any, loss_module: Any, lr: float) -> LazyAdam:
    """Adam over the model's (and a loss's) weights, lazy over its embedding tables.

    Switches the built-in models' embedding lookups to sparse gradients, which
    :class:`LazyAdam` needs; a plug-in model keeps dense ones and plain Adam.
    """
    from clir_toolkit.rerank.model_file import model_classes
    from clir_toolkit.rerank.optimiser import LazyAdam, sparse_parameters, use_sparse_gradients

    if type(model) in model_classes().values():  # a plug-in's may use its tables densely
        use_sparse_gradients(model)
    sparse = sparse_parameters(model)
    sparse_ids = {id(p) for p in sparse}
    dense = [p for p in model.parameters() if id(p) not in sparse_ids]
    if loss_module is not None:
        dense += list(loss_module.parameters())
    return LazyAdam(sparse, dense, lr)


def tie_query_rows(model: Any, query_vocab: Vocabulary, doc_vocab: Vocabulary) -> int:
    """Start each query word that the document vocabulary also has with its document vector.

    A word then has cosine 1 with itself, which K-NRM's exact-match kernel counts: the
    monolingual model of the thesis (one vocabulary) within the two-table models here.
    Returns the number of rows tied.
    """
    import torch

    pairs = [
        (i, doc_vocab.id(w)) for i, w in enumerate(query_vocab.words) if i > 1 and w in doc_vocab
    ]
    if not pairs:
        return 0
    rows = torch.tensor([q for q, _ in pairs], dtype=torch.long)
    vectors = model.doc_embedding.weight.detach()[torch.tensor([d for _, d in pairs])]
    model.load_embeddings("query", vectors.clone(), rows)
    return len(pairs)


def _embedding_rows(path: Path, vocab: Vocabulary) -> tuple[int, torch.Tensor, torch.Tensor]:
    """``(dimension, vectors, row ids)`` of the vocabulary words that ``path`` (.vec) has.

    A word is looked up as itself and as ``language:word``, the form of the bilingual files
    ``clir embed train`` writes (``en:library``, ``fr:bibliothèque`` in one space); the
    prefixed form wins when a file has both. :func:`clir_toolkit.resources.embeddings.load_vec`
    keeps only the words asked for, so a file of millions of vectors costs one pass, not its
    size in memory.
    """
    import torch

    from clir_toolkit.resources.embeddings import load_vec

    prefix = f"{vocab.language}:"
    words = vocab.words[2:]
    vectors = load_vec(path, vocabulary={*words, *(prefix + word for word in words)})
    ids, matrix = [], []
    for i, word in enumerate(vocab.words):
        if i < 2:
            continue
        row = vectors.index.get(prefix + word, vectors.index.get(word))
        if row is not None:
            ids.append(i)
            matrix.append(row)
    rows = torch.tensor(ids, dtype=torch.long)
    values = torch.as_tensor(vectors.vectors[matrix], dtype=torch.float32)
    return vectors.dim, values.reshape(-1, vectors.dim), rows


def _embedding_files(config: TrainConfig) -> dict[str, Path]:
    files = {}
    for side, specific in (("query", config.query_embeddings), ("doc", config.doc_embeddings)):
        chosen = specific or config.embeddings
        if chosen is not None:
            files[side] = chosen
    return files


def _load_embeddings(
    config: TrainConfig, model: Any, vocabs: Mapping[str, Vocabulary]
) -> dict[str, int]:
    """Initialise embedding rows from ``.vec`` files; returns the rows found per side."""
    found = {}
    files = _embedding_files(config)
    if files and not callable(getattr(model, "load_embeddings", None)):
        raise UsageError(f"the {config.model} model takes no pre-trained embeddings")
    for side, path in files.items():
        dim, values, rows = _embedding_rows(path, vocabs[side])
        count = int(rows.numel())
        expected = _model_dim(model)
        if expected is not None and dim != expected:
            raise ClirError(
                f"{path}: vectors of dimension {dim}, but the model's embeddings have {expected} "
                f"(pass --dim {dim} or use vectors of dimension {expected})"
            )
        if count:
            model.load_embeddings(side, values, rows)
        found[side] = count
        _log(config, f"{path}: initialised {count} of {len(vocabs[side]) - 2} {side} words")
    return found


def _model_dim(model: Any) -> int | None:
    config = model.config()
    value = config.get("dim")
    return int(value) if value is not None else None


def _embedding_dim(config: TrainConfig) -> int | None:
    """The dimension of the first embedding file (so that ``dim`` may be left out)."""
    from clir_toolkit.resources.embeddings import load_vec

    for path in _embedding_files(config).values():
        return load_vec(path, limit=1).dim
    return None


# ---------------------------------------------------------------------------------------------
# Training loop
# ---------------------------------------------------------------------------------------------


@dataclass
class _State:
    """What a checkpoint restores."""

    completed: int = 0
    best_epoch: int = 0
    best_dev: float | None = None
    best_state: dict[str, Any] | None = None
    history: list[EpochRecord] = field(default_factory=list)


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

    from clir_toolkit.rerank.examples import epoch_pairs

    assert config.batch_size is not None
    if _pairwise(config.loss):
        data = epoch_pairs(data, generator, config.pairs_per_query)
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
    from clir_toolkit.rerank.candidates import trim_padding
    from clir_toolkit.rerank.device import autocast
    from clir_toolkit.rerank.optimiser import clip_gradient_norm

    queries = trim_padding(data.queries[data.query_index[batch]]).to(device)
    documents = trim_padding(data.documents[data.doc_index[batch]]).to(device)
    with autocast(config.precision, device):
        if data.worse_index is not None:
            worse = trim_padding(data.documents[data.worse_index[batch]]).to(device)
            better_scores = model(queries, documents)
            worse_scores = model(queries, worse)
            loss = loss_fn(better_scores.float(), worse_scores.float())
        else:
            assert data.grades is not None
            scores = model(queries, documents)
            loss = loss_fn(scores.float(), data.grades[batch].to(device))
    value = float(loss.detach())
    if not math.isfinite(value):
        return value
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
    return value


def _run_epoch(
    model: Any,
    loss_fn: Any,
    optimiser: Any,
    scaler: Any,
    data: EncodedExamples,
    config: TrainConfig,
    device: torch.device,
    generator: torch.Generator,
    epoch: int,
    phase: str,
) -> float:
    """One pass over ``data`` in a seeded random order; returns the mean batch loss."""
    import torch

    from clir_toolkit.progress import progress_bar

    model.train()
    data, batches = epoch_batches(data, config, generator)
    total = 0.0
    progress = progress_bar(
        batches, desc=f"epoch {epoch} ({phase})", unit="batch", show=config.verbose, leave=False
    )
    for step, batch in enumerate(progress, start=1):
        value = train_step(model, loss_fn, optimiser, scaler, data, batch, config, device)
        if not math.isfinite(value):
            raise _nonfinite_error(
                config, f"the training loss became {value} at epoch {epoch}, step {step}"
            )
        total += value
        progress.set_postfix(loss=f"{total / step:.4f}", refresh=False)
    for group in optimiser.param_groups:
        for parameter in group["params"]:
            if not bool(torch.isfinite(parameter).all()):
                raise _nonfinite_error(
                    config, f"the model's weights became NaN or infinite in epoch {epoch}"
                )
    return total / max(len(batches), 1)


def evaluate_dev(model: Any, dev: DevData, config: TrainConfig, device: torch.device) -> float:
    """nDCG@10 of the dev run reranked by ``model`` (mean over the dev qrels' queries)."""
    from clir_toolkit.rerank.candidates import rerank_rows, score_encoded

    assert config.batch_size is not None
    batch_size = max(config.batch_size, 256)
    neural = score_encoded(model, dev.encoded, device, batch_size, config.precision)
    rows = rerank_rows(dev.ranked, neural, config.depth)
    return mean_measure(dev.qrels, rows, DEV_MEASURE)


def mean_measure(qrels: Sequence[Any], rows: Sequence[Any], measure: str) -> float:
    """Mean of an ir_measures measure over the qrels' queries (0 for unanswered ones)."""
    import ir_measures

    from clir_toolkit.evaluate import parse_measures

    parsed = parse_measures(measure)[0]
    judged = {q.qid for q in qrels}
    values = dict.fromkeys(judged, 0.0)
    run = [ir_measures.ScoredDoc(r.qid, r.docid, float(r.score)) for r in rows if r.qid in judged]
    qrel_records = [ir_measures.Qrel(q.qid, q.docid, int(q.relevance)) for q in qrels]
    for metric in ir_measures.iter_calc([parsed], qrel_records, run):
        if metric.query_id in values:
            values[metric.query_id] = float(metric.value)
    return sum(values.values()) / len(values) if values else 0.0


def _checkpoint_path(output: Path) -> Path:
    return output.with_name(output.name + ".ckpt")


def _save_torch(path: Path, obj: Any) -> None:
    import torch

    with atomic_write(path, "wb", encoding=None) as handle:
        torch.save(obj, handle)


def _cpu_state(module: Any) -> dict[str, Any]:
    return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}


def _save_checkpoint(
    path: Path,
    fingerprint: str,
    state: _State,
    model: Any,
    loss_module: Any,
    optimiser: Any,
    scaler: Any,
    generator: torch.Generator,
    vocabs: tuple[Vocabulary, Vocabulary],
) -> None:
    import torch

    _save_torch(
        path,
        {
            "format": CHECKPOINT_FORMAT,
            "fingerprint": fingerprint,
            "completed": state.completed,
            "best_epoch": state.best_epoch,
            "best_dev": state.best_dev,
            "best_state": state.best_state,
            "history": [dataclasses.asdict(r) for r in state.history],
            "model": _cpu_state(model),
            "loss": _cpu_state(loss_module) if loss_module is not None else None,
            "optimiser": optimiser.state_dict(),
            "scaler": scaler.state_dict() if scaler is not None else None,
            "rng_torch": torch.get_rng_state(),
            "rng_cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "rng_shuffle": generator.get_state(),
            "query_vocab": vocabs[0].to_dict(),
            "doc_vocab": vocabs[1].to_dict(),
        },
    )


CHECKPOINT_KEYS = {
    "format": "str",
    "fingerprint": "str",
    "completed": "int",
    "best_epoch": "int",
    "best_dev": "number?",
    "best_state": "tensors?",
    "history": "list",
    "model": "tensors",
    "loss": "tensors?",
    "optimiser": "table",
    "scaler": "table?",
    "rng_torch": "tensor",
    "rng_cuda": "list?",
    "rng_shuffle": "tensor",
    "query_vocab": "table",
    "doc_vocab": "table",
}
"""The keys of a checkpoint and the kind of value each holds (``?``: may be None or absent)."""
EPOCH_KEYS = {
    "epoch": "count",
    "phase": "str",
    "loss": "number",
    "dev": "number?",
    "seconds": "number",
}
CHECKPOINT_WHAT = "a clir_toolkit training checkpoint"
CHECKPOINT_FIX = "delete it or train without --resume"


def _read_checkpoint(path: Path, fingerprint: str, config: TrainConfig) -> dict[str, Any]:
    """A checkpoint of this training (same settings and files) that ``config`` can continue.

    Its keys and the kinds of their values are checked here, its tensors against the model
    by :func:`_restore`: a damaged or foreign file is one FormatError, never torch's error.
    """
    from clir_toolkit.rerank.model_file import check_record, torch_load

    data = torch_load(path, "cannot read the checkpoint", CHECKPOINT_FIX)
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise ClirError(f"{path}: not a training checkpoint; {CHECKPOINT_FIX}")
    check_record(path, data, CHECKPOINT_KEYS, CHECKPOINT_WHAT, CHECKPOINT_FIX)
    if data["fingerprint"] != fingerprint:
        raise ClirError(
            f"{path}: the checkpoint was made with other settings or input files; "
            "train without --resume to start again"
        )
    pretraining = config.parallel_epochs if _has_parallel(config) else 0
    if data["completed"] > pretraining + config.epochs:
        raise UsageError(
            f"{path}: the checkpoint is at epoch {data['completed']}, past --epochs "
            f"{config.epochs}; resume with --epochs {data['completed'] - pretraining} or more, "
            "or train without --resume"
        )
    for record in data["history"]:
        check_record(path, record, EPOCH_KEYS, CHECKPOINT_WHAT + " (history)", CHECKPOINT_FIX)
    return data


def _checkpoint_vocabularies(path: Path, data: Mapping[str, Any]) -> tuple[Vocabulary, Vocabulary]:
    from clir_toolkit.rerank.model_file import read_vocabulary

    return (
        read_vocabulary(path, data, "query_vocab", CHECKPOINT_WHAT, CHECKPOINT_FIX),
        read_vocabulary(path, data, "doc_vocab", CHECKPOINT_WHAT, CHECKPOINT_FIX),
    )


def _restore(
    path: Path,
    data: Mapping[str, Any],
    model: Any,
    loss_module: Any,
    optimiser: Any,
    scaler: Any,
    generator: torch.Generator,
) -> _State:
    """Put the checkpoint's weights, optimiser state and random states back.

    Each tensor is checked against what it replaces first, so that no torch error escapes.
    """
    import torch

    from clir_toolkit.rerank.model_file import check_state_dict

    best_state, loss_state = data.get("best_state"), data.get("loss")
    check_state_dict(path, data["model"], model, CHECKPOINT_WHAT, CHECKPOINT_FIX)
    if best_state is not None:
        check_state_dict(path, best_state, model, CHECKPOINT_WHAT, CHECKPOINT_FIX)
    if loss_module is not None and loss_state is not None:
        check_state_dict(path, loss_state, loss_module, CHECKPOINT_WHAT, CHECKPOINT_FIX)
    for key, current in (
        ("rng_torch", torch.get_rng_state()),
        ("rng_shuffle", generator.get_state()),
    ):
        if data[key].dtype != current.dtype or data[key].shape != current.shape:
            raise FormatError(
                path, None, f"not {CHECKPOINT_WHAT}: {key!r} is not a random state", CHECKPOINT_FIX
            )
    model.load_state_dict(data["model"])
    if loss_module is not None and loss_state is not None:
        loss_module.load_state_dict(loss_state)
    torch.set_rng_state(data["rng_torch"])
    generator.set_state(data["rng_shuffle"])
    key = "optimiser"
    try:
        optimiser.load_state_dict(data["optimiser"])
        _check_optimiser_state(optimiser)
        key = "scaler"
        if scaler is not None and data.get("scaler") is not None:
            scaler.load_state_dict(data["scaler"])
        key = "rng_cuda"
        if data.get("rng_cuda") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(data["rng_cuda"])
    except (KeyError, IndexError, TypeError, ValueError, RuntimeError) as exc:
        detail = " ".join(str(exc).split()) or type(exc).__name__
        raise FormatError(
            path, None, f"not {CHECKPOINT_WHAT}: {key!r} does not fit ({detail})", CHECKPOINT_FIX
        ) from None
    return _State(
        completed=data["completed"],
        best_epoch=data["best_epoch"],
        best_dev=data.get("best_dev"),
        best_state=best_state,
        history=[
            EpochRecord(r["epoch"], r["phase"], r["loss"], r.get("dev"), r["seconds"])
            for r in data["history"]
        ],
    )


def _check_optimiser_state(optimiser: Any) -> None:
    """Every per-parameter tensor of the optimiser's state (Adam's moments) has its shape."""
    for group in optimiser.param_groups:
        for number, parameter in enumerate(group["params"]):
            for name, value in optimiser.state.get(parameter, {}).items():
                shape = getattr(value, "shape", None)
                if shape is not None and len(shape) > 0 and shape != parameter.shape:
                    raise ValueError(
                        f"{name} of parameter {number} has shape {tuple(shape)}, "
                        f"expected {tuple(parameter.shape)}"
                    )


def _has_parallel(config: TrainConfig) -> bool:
    """Whether training starts with epochs of parallel pre-training."""
    return config.parallel is not None and config.parallel_epochs > 0


def _save_model(
    config: TrainConfig,
    model: Any,
    state: _State,
    vocabs: tuple[Vocabulary, Vocabulary],
    embeddings_found: Mapping[str, int],
) -> None:
    from clir_toolkit.rerank.model_file import MODEL_FORMAT

    weights = state.best_state if state.best_state is not None else _cpu_state(model)
    _save_torch(
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
                **_settings(config),
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
    return pre + ["relevance"] * config.epochs


def training_setup(config: TrainConfig) -> tuple[TrainConfig, torch.device, Path, Path]:
    """The config with its defaults and languages filled in, the device, corpus and cache.

    Checks the input files and the device's precision first (one clear error each).
    """
    from clir_toolkit.collection import open_collection
    from clir_toolkit.rerank.device import check_precision, resolve_device
    from clir_toolkit.rerank.documents import cache_dir_for

    config = _resolved(config)
    _check_files(config)
    device = resolve_device(config.device)
    check_precision(config.precision, device)
    collection = open_collection(config.collection)
    doc_language = config.doc_language or collection.doc_lang
    if not doc_language:
        raise UsageError(
            f"{collection.root}: the manifest gives no doc_lang; pass the document language"
        )
    config = dataclasses.replace(
        config,
        doc_language=doc_language,
        query_language=config.query_language or collection.query_lang or "en",
    )
    if config.dim is None and _embedding_files(config):
        config = dataclasses.replace(config, dim=_embedding_dim(config))
    return config, device, collection.corpus, cache_dir_for(collection.root, config.cache_dir)


def train_reranker(config: TrainConfig) -> TrainReport:
    """Train the reranker described by ``config`` and write its model file (see module doc)."""
    import torch

    from clir_toolkit.rerank.threads import use_fastest_threads

    use_fastest_threads()
    started = time.perf_counter()
    config, device, corpus, cache_dir = training_setup(config)
    fingerprint = _fingerprint(config)
    checkpoint_path = _checkpoint_path(config.output)

    checkpoint = None
    if config.resume and checkpoint_path.is_file():
        checkpoint = _read_checkpoint(checkpoint_path, fingerprint, config)
    elif config.resume:
        _log(config, f"no checkpoint at {checkpoint_path}: training from the start")

    vocabs = None
    if checkpoint is not None:
        vocabs = _checkpoint_vocabularies(checkpoint_path, checkpoint)
    data = prepare_data(config, corpus, cache_dir, vocabs)
    vocabs = (data.query_vocab, data.doc_vocab)

    torch.manual_seed(config.seed)
    model = build_model(config, *vocabs)
    embeddings_found = _load_embeddings(config, model, {"query": vocabs[0], "doc": vocabs[1]})
    model.to(device)
    assert config.loss is not None
    loss_fn, loss_module = build_loss(config.loss, config.sosl_thresholds)
    if loss_module is not None:
        loss_module.to(device)
    assert config.lr is not None
    optimiser = build_optimiser(model, loss_module, config.lr)
    scaler = torch.amp.GradScaler("cuda") if config.precision == "fp16" else None
    generator = torch.Generator().manual_seed(config.seed)

    state = _State()
    if checkpoint is not None:
        state = _restore(
            checkpoint_path, checkpoint, model, loss_module, optimiser, scaler, generator
        )
        _log(config, f"resuming from {checkpoint_path} after epoch {state.completed}")

    phases = _phases(config, data.parallel is not None)
    start_epoch = state.completed + 1
    examples = len(data.relevance)
    _log(
        config,
        f"training {config.model} ({config.loss}, lr {config.lr:g}, batch {config.batch_size}) "
        f"on {device}: {examples} examples, vocabularies {len(vocabs[0])} "
        f"{vocabs[0].language} / {len(vocabs[1])} {vocabs[1].language} words",
    )
    for epoch in range(start_epoch, len(phases) + 1):
        epoch_start = time.perf_counter()
        phase = phases[epoch - 1]
        epoch_data = data.parallel if phase == "parallel" else data.relevance
        assert epoch_data is not None
        mean_loss = _run_epoch(
            model, loss_fn, optimiser, scaler, epoch_data, config, device, generator, epoch, phase
        )
        dev_score = None
        if data.dev is not None:
            dev_score = evaluate_dev(model, data.dev, config, device)
            if state.best_dev is None or dev_score > state.best_dev:
                state.best_dev, state.best_epoch = dev_score, epoch
                state.best_state = _cpu_state(model)
        else:
            state.best_epoch = epoch
        record = EpochRecord(epoch, phase, mean_loss, dev_score, time.perf_counter() - epoch_start)
        state.history.append(record)
        state.completed = epoch
        dev_text = f", dev {DEV_MEASURE} {dev_score:.4f}" if dev_score is not None else ""
        _log(config, f"epoch {epoch} ({phase}): loss {mean_loss:.4f}{dev_text}")
        _save_checkpoint(
            checkpoint_path,
            fingerprint,
            state,
            model,
            loss_module,
            optimiser,
            scaler,
            generator,
            vocabs,
        )
    _save_model(config, model, state, vocabs, embeddings_found)
    report = TrainReport(
        output=config.output,
        checkpoint=checkpoint_path,
        model=config.model,
        loss=config.loss,
        device=str(device),
        examples=examples,
        query_vocab_size=len(vocabs[0]),
        doc_vocab_size=len(vocabs[1]),
        start_epoch=start_epoch,
        best_epoch=state.best_epoch,
        best_dev=state.best_dev,
        history=state.history,
        seconds=time.perf_counter() - started,
    )
    best = f", best dev {DEV_MEASURE} {state.best_dev:.4f}" if state.best_dev is not None else ""
    _log(config, f"saved epoch {state.best_epoch}{best} -> {config.output}")
    return report
