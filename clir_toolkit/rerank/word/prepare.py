"""Steps 1–3 of training a word-level reranker: the inputs checked, the data, the model.

What :func:`clir_toolkit.rerank.word.train.train_reranker` does before its first epoch, once,
so that data-parallel training (:mod:`clir_toolkit.distributed.train`) hands every worker
the same start (:class:`PreparedTraining`, picklable):

1. the configuration resolved (the model's defaults filled in, :func:`training_inputs`), the
   input files checked, the device and its precision (:func:`training_setup`);
2. the examples, vocabularies and encoded documents
   (:func:`clir_toolkit.rerank.word.training_data.prepare_data`), or the vocabularies of the
   checkpoint resumed from;
3. the model of the registered architecture (:mod:`clir_toolkit.rerank.models`,
   :func:`build_model`), seeded, its embedding rows started from a ``.vec`` file or USE-m3's
   subword table (:mod:`clir_toolkit.rerank.word.embedding_init`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.training import log
from clir_toolkit.rerank.word.checkpoint import (
    checkpoint_path_for,
    checkpoint_vocabularies,
    read_checkpoint,
    training_fingerprint,
)
from clir_toolkit.rerank.word.embedding_init import (
    embedding_dim,
    load_embeddings,
    tie_query_rows,
)
from clir_toolkit.rerank.word.train_config import TrainConfig, resolved_config
from clir_toolkit.rerank.word.training_data import TrainingData, prepare_data

if TYPE_CHECKING:
    import torch


def _check_files(config: TrainConfig) -> None:
    for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run", "parallel"):
        path = getattr(config, name)
        if path is not None and not Path(path).is_file():
            raise ClirError(f"{path}: no such file (the {name.replace('_', ' ')} file)")


def build_model(config: TrainConfig, query_vocab: Vocabulary, doc_vocab: Vocabulary) -> Any:
    """The model of ``config`` (the caller seeds torch first): the registered architecture
    (:mod:`clir_toolkit.rerank.models`) with the options it takes from ``config``."""
    from clir_toolkit import registry

    factory = registry.load("rerankers", config.model)
    model = factory(len(query_vocab), len(doc_vocab), **model_options(config))
    if config.tie_embeddings:
        tie_query_rows(model, query_vocab, doc_vocab)
    if config.train_embeddings == "no":
        freeze_embeddings(model)
    return model


def model_options(config: TrainConfig) -> dict[str, Any]:
    """The keyword arguments the registered architecture of ``config`` is built with: the
    embedding size when one is given, then the architecture's own options (its declared
    ``train_options``: the dual encoder's text encoder, say)."""
    from clir_toolkit import registry

    options: dict[str, Any] = {} if config.dim is None else {"dim": config.dim}
    own_options = registry.component("rerankers", config.model).trait("train_options")
    if own_options is not None:
        options.update(own_options(config))
    return options


def freeze_embeddings(model: Any) -> None:
    """Keep ``model``'s embedding tables as they start: training moves its other weights.

    With the pretrained subword table this keeps its cross-lingual alignment, learnt from
    far more text than a collection's training queries; K-NRM then learns what each
    kernel's similarity range is worth (measured against updating the table: docs/training.md).
    """
    import torch

    for child in model.modules():
        if isinstance(child, torch.nn.Embedding):
            child.weight.requires_grad_(False)


def training_inputs(config: TrainConfig) -> tuple[TrainConfig, Path, Path]:
    """The config with its defaults and languages filled in, the corpus and the cache.

    Checks the input files first (one clear error each).
    """
    from clir_toolkit.collection import open_collection
    from clir_toolkit.rerank.data.documents import cache_dir_for

    config = resolved_config(config)
    _check_files(config)
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
    if config.dim is None:
        config = dataclasses.replace(config, dim=embedding_dim(config))
    return config, collection.corpus, cache_dir_for(collection.root, config.cache_dir)


def training_setup(config: TrainConfig) -> tuple[TrainConfig, torch.device, Path, Path]:
    """:func:`training_inputs` and the device, whose precision is checked (one clear error)."""
    from clir_toolkit.compute.device import check_precision, resolve_device

    config, corpus, cache_dir = training_inputs(config)
    device = resolve_device(config.device)
    check_precision(config.precision, device)
    return config, device, corpus, cache_dir


@dataclass
class PreparedTraining:
    """Steps 1–3 of the procedure, done once and picklable: what every process that trains
    starts from (this one, or each worker of a data-parallel training)."""

    config: TrainConfig
    fingerprint: str
    checkpoint_path: Path
    checkpoint: dict[str, Any] | None  # the checkpoint resumed from
    data: TrainingData
    model: Any  # the seeded model with its .vec rows, on the CPU
    embeddings_found: dict[str, int]
    rng_state: torch.Tensor  # torch's random state once the model is built


def prepare_training(config: TrainConfig, corpus: Path, cache_dir: Path) -> PreparedTraining:
    """Steps 1–3: the checkpoint to resume (if asked), the data, the seeded model.

    ``config`` comes from :func:`training_inputs`.
    """
    import torch

    fingerprint = training_fingerprint(config)
    checkpoint_path = checkpoint_path_for(config.output)
    checkpoint = None
    if config.resume and checkpoint_path.is_file():
        checkpoint = read_checkpoint(checkpoint_path, fingerprint, config)
        log(config, f"resuming from {checkpoint_path} after epoch {checkpoint['completed']}")
    elif config.resume:
        log(config, f"no checkpoint at {checkpoint_path}: training from the start")
    vocabs = None
    if checkpoint is not None:
        vocabs = checkpoint_vocabularies(checkpoint_path, checkpoint)
    data = prepare_data(config, corpus, cache_dir, vocabs)
    vocabs = (data.query_vocab, data.doc_vocab)

    torch.manual_seed(config.seed)
    model = build_model(config, *vocabs)
    embeddings_found = load_embeddings(config, model, {"query": vocabs[0], "doc": vocabs[1]})
    return PreparedTraining(
        config, fingerprint, checkpoint_path, checkpoint, data, model, dict(embeddings_found),
        torch.get_rng_state(),
    )  # fmt: skip
