"""A trained word-level reranker's model file: what it holds, how it is checked and loaded.

:func:`clir_toolkit.rerank.word.train.train_reranker` writes one file (``torch.save``) with the
model type and configuration, the weights, both vocabularies, the analysis languages and the
maximum lengths (:data:`MODEL_KEYS`). Reading it back is where a damaged or foreign file must
become one clear line instead of a traceback: every key is checked for its kind before the
model is built, and the file is read with ``weights_only=True`` (the checks every family's
file takes are :mod:`clir_toolkit.rerank.model_io`'s).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.params import Param, check_value, declare, show
from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.model_io import (
    check_record,
    check_state_dict,
    meta_skeleton,
    one_line,
    read_model_file,
)

if TYPE_CHECKING:
    import torch


MODEL_FORMAT = "clir-toolkit-reranker/1"

MAX_TEXT_WORDS = 100_000
"""The most words of a query or document a model reads: every text is padded to its
model's maximum, so that a larger one would allocate gigabytes per batch."""

TEXT_LENGTH_PARAMS = declare(
    Param("max_query_len", int, doc="query words read", minimum=1, maximum=MAX_TEXT_WORDS,
          flag="--max-query-len"),
    Param("max_doc_len", int, doc="document words read", minimum=1, maximum=MAX_TEXT_WORDS,
          flag="--max-doc-len"),
)  # fmt: skip
"""The maximum lengths a model reads texts with: options of training (TrainConfig), and
keys of the model file that training writes, checked alike."""


@dataclass
class LoadedReranker:
    """A trained reranker and everything needed to feed it the way it was trained."""

    model: Any  # torch.nn.Module with forward(query_ids, doc_ids) -> scores
    model_type: str
    query_vocab: Vocabulary
    doc_vocab: Vocabulary
    max_query_len: int
    max_doc_len: int
    training: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def query_language(self) -> str:
        return self.query_vocab.language

    @property
    def doc_language(self) -> str:
        return self.doc_vocab.language


def model_class(name: str) -> Any:
    """What makes the model called ``name``: a built-in architecture's registered factory
    (:mod:`clir_toolkit.rerank.models`) or an installed plug-in's class
    (:mod:`clir_toolkit.plugins`, group ``clir_toolkit.rerankers``); None if none is."""
    from clir_toolkit import registry
    from clir_toolkit.rerank import MODEL_NAMES

    return registry.load("rerankers", name) if name in MODEL_NAMES else None


MODEL_KEYS = {
    "format": "str",
    "model_type": "str",
    "config": "table",
    "state_dict": "tensors",
    "query_vocab": "table",
    "doc_vocab": "table",
    "max_query_len": "count",
    "max_doc_len": "count",
    "training": "table?",
    "history": "list?",
}
"""The keys of a model file and the kind of value each holds (``?``: may be None or absent)."""


def read_vocabulary(
    path: Path, data: Mapping[str, Any], key: str, what: str, fix: str = ""
) -> Vocabulary:
    """The vocabulary stored under ``key`` of a model file or checkpoint."""
    try:
        return Vocabulary.from_dict(data[key])
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"not {what}: key {key!r} is not a vocabulary ({one_line(exc)})"
        raise FormatError(path, None, problem, fix) from None


def build_saved_model(path: Path, model_type: Any, config: Any, what: str) -> Any:
    """The model a file's ``model_type`` and ``config`` describe, built on the meta device.

    No memory is allocated for the weights: the skeleton only tells their names and shapes
    (:func:`~clir_toolkit.rerank.model_io.check_state_dict`). A type or config that builds
    no model is one FormatError.
    """
    from clir_toolkit.rerank import MODEL_NAMES

    cls = model_class(model_type) if isinstance(model_type, str) else None
    if cls is None:
        raise FormatError(
            path,
            None,
            f"unknown model type {show(model_type)} (known: {', '.join(MODEL_NAMES)}; "
            "a plug-in's model needs its package installed)",
        )
    if not all(isinstance(key, str) for key in config):
        raise FormatError(path, None, f"not {what}: the model config has a key that is not a name")
    for key, value in config.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise FormatError(path, None, f"not {what}: its config's {key} is {value}")
    try:
        return meta_skeleton(lambda: cls(**config))
    except (ClirError, TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise FormatError(
            path, None, f"not {what}: its config makes no {model_type} model ({one_line(exc)})"
        ) from None


def load_model(
    path: str | Path, device: str | torch.device = "cpu", data: Any = None
) -> LoadedReranker:
    """Read a model file written by training; the model is put on ``device`` in eval mode.

    ``data`` is the file's content when the caller has read it already
    (:func:`read_model_file`).

    Every key, type and tensor shape is checked first: a file that is not a model of this
    toolkit is one FormatError naming it, never an exception of torch's. Every size is
    bounded before anything is allocated: the model's weights by the file's own size
    (:func:`~clir_toolkit.rerank.model_io.check_state_dict`), the maximum lengths by their
    declared range.
    """
    import torch

    from clir_toolkit.compute.device import resolve_device

    target = device if isinstance(device, torch.device) else resolve_device(device)
    path = Path(path)
    what = "a clir_toolkit reranker"
    if data is None:
        data = read_model_file(path)
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
        raise ClirError(
            f"{path}: not a reranker model file of this toolkit (expected format {MODEL_FORMAT})"
        )
    check_record(path, data, MODEL_KEYS, what)
    for key, param in TEXT_LENGTH_PARAMS.items():  # every text is padded to these lengths
        check_value(path, "", param, data[key])
    query_vocab = read_vocabulary(path, data, "query_vocab", what)
    doc_vocab = read_vocabulary(path, data, "doc_vocab", what)
    skeleton = build_saved_model(path, data["model_type"], data["config"], what)
    check_state_dict(path, data["state_dict"], skeleton, what)
    for side, vocab in (("query", query_vocab), ("doc", doc_vocab)):
        rows = data["config"].get(f"{side}_vocab_size")
        if rows != len(vocab):
            raise FormatError(
                path,
                None,
                f"the {side} vocabulary has {len(vocab)} words but the model {rows} rows",
            )
    model = model_class(data["model_type"])(**data["config"])
    model.load_state_dict(data["state_dict"])
    model.to(target).eval()
    return LoadedReranker(
        model=model,
        model_type=data["model_type"],
        query_vocab=query_vocab,
        doc_vocab=doc_vocab,
        max_query_len=data["max_query_len"],
        max_doc_len=data["max_doc_len"],
        training=dict(data.get("training") or {}),
        history=list(data.get("history") or []),
    )
