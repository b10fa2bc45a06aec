"""A trained word-level reranker's model file: what it holds, how it is checked and loaded.

:func:`clir_toolkit.rerank.train.train_reranker` writes one file (``torch.save``) with the
model type and configuration, the weights, both vocabularies, the analysis languages and the
maximum lengths (:data:`MODEL_KEYS`). Reading it back is where a damaged or foreign file must
become one clear line instead of a traceback: every key is checked for its kind before the
model is built, and the file is read with ``weights_only=True``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.params import Param, check_value, declare, show
from clir_toolkit.rerank.vocabulary import Vocabulary

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


def model_classes() -> dict[str, Any]:
    """``model_type`` → model class of the built-in reranker architectures."""
    from clir_toolkit.rerank.dual import DualEncoder
    from clir_toolkit.rerank.knrm import KNRM

    return {cls.model_type: cls for cls in (KNRM, DualEncoder)}


def model_class(name: str) -> Any:
    """The model class called ``name``: a built-in one, or an installed plug-in's
    (:mod:`clir_toolkit.plugins`, group ``clir_toolkit.rerankers``); None if none is."""
    from clir_toolkit import plugins
    from clir_toolkit.rerank import MODEL_NAMES

    builtin = model_classes()
    if name in builtin:
        return builtin[name]
    if MODEL_NAMES.is_plugin(name):
        return plugins.load(plugins.RERANKERS, name)
    return None


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


def torch_load(path: Path, problem: str, fix: str = "") -> Any:
    """The object in a file written with ``torch.save``, read with ``weights_only=True``.

    A file that cannot be read (not torch's format, a pickle of other objects) is one
    FormatError; torch's warnings about such files are silenced, not printed.
    """
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise FormatError(path, None, f"{problem} ({type(exc).__name__})", fix) from None


def _kind_of(value: Any, kind: str) -> bool:
    import torch

    if kind.endswith("?") and value is None:
        return True
    kind = kind.rstrip("?")
    if kind == "tensors":
        return isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in value.items()
        )
    checks: dict[str, Any] = {
        "str": lambda v: isinstance(v, str),
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "count": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1,
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "table": lambda v: isinstance(v, dict),
        "list": lambda v: isinstance(v, list),
        "tensor": lambda v: isinstance(v, torch.Tensor),
    }
    return bool(checks[kind](value))


KIND_NAMES = {
    "str": "a string",
    "int": "an integer ≥ 0",
    "count": "an integer ≥ 1",
    "number": "a number",
    "table": "a dictionary",
    "list": "a list",
    "tensor": "a tensor",
    "tensors": "a dictionary of named tensors",
}


def check_record(
    path: Path, data: Any, kinds: Mapping[str, str], what: str, fix: str = ""
) -> dict[str, Any]:
    """``data`` if it is a dict with each key of ``kinds`` holding a value of that kind.

    Otherwise one FormatError: ``not a clir_toolkit reranker: missing key 'x'``.
    """
    if not isinstance(data, dict):
        raise FormatError(path, None, f"not {what}: a {type(data).__name__}, not a dict", fix)
    for key, kind in kinds.items():
        if key not in data:
            if kind.endswith("?"):
                continue
            raise FormatError(path, None, f"not {what}: missing key {key!r}", fix)
        if not _kind_of(data[key], kind):
            expected = KIND_NAMES[kind.rstrip("?")] + (" or None" if kind.endswith("?") else "")
            raise FormatError(
                path,
                None,
                f"not {what}: key {key!r} holds {type(data[key]).__name__}, expected {expected}",
                fix,
            )
    return data


def weight_bytes(module: Any) -> int:
    """The bytes of ``module``'s weights and buffers (a tensor shared by two layers once),
    computed from their shapes: on the meta device, nothing is allocated to know it."""
    tensors = [*module.parameters(), *module.buffers()]
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def check_state_dict(
    path: Path, state: Mapping[str, Any], module: Any, what: str, fix: str = ""
) -> None:
    """The named tensors ``state`` fit ``module``: same names, same shapes, floating types,
    and sizes that the file ``path`` can hold.

    So that ``load_state_dict`` cannot fail: a mismatch is one FormatError naming the tensor.
    And so that a small file cannot make the toolkit allocate gigabytes: ``module`` (built
    on the meta device from the file's configuration) must not need more bytes of weights
    than the file has, and each stored tensor must have the storage its shape claims (a
    tensor expanded with zero strides has the right shape and almost no data).
    """
    expected = module.state_dict()
    for name in expected:
        if name not in state:
            raise FormatError(path, None, f"not {what}: missing tensor {name!r}", fix)
    for name, tensor in state.items():
        if name not in expected:
            raise FormatError(path, None, f"not {what}: unexpected tensor {name!r}", fix)
        shape, wanted = tuple(tensor.shape), tuple(expected[name].shape)
        if shape != wanted:
            raise FormatError(
                path, None, f"tensor {name!r} has shape {shape}, expected {wanted}", fix
            )
        if expected[name].is_floating_point() and not tensor.is_floating_point():
            raise FormatError(
                path, None, f"tensor {name!r} holds {tensor.dtype}, expected floating point", fix
            )
    needed, held = weight_bytes(module), path.stat().st_size
    if needed > held:
        raise FormatError(
            path,
            None,
            f"not {what}: its configuration makes a model of {needed:,} bytes of weights, "
            f"more than the file's {held:,} bytes",
            fix,
        )
    for name, tensor in state.items():
        claimed = tensor.numel() * tensor.element_size()
        stored = tensor.untyped_storage().nbytes()
        if claimed > stored:
            raise FormatError(
                path,
                None,
                f"tensor {name!r} of shape {tuple(tensor.shape)} claims {claimed:,} bytes but "
                f"stores {stored:,} (not {what})",
                fix,
            )


def read_vocabulary(
    path: Path, data: Mapping[str, Any], key: str, what: str, fix: str = ""
) -> Vocabulary:
    """The vocabulary stored under ``key`` of a model file or checkpoint."""
    try:
        return Vocabulary.from_dict(data[key])
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"not {what}: key {key!r} is not a vocabulary ({_one_line(exc)})"
        raise FormatError(path, None, problem, fix) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def build_saved_model(path: Path, model_type: Any, config: Any, what: str) -> Any:
    """The model a file's ``model_type`` and ``config`` describe, built on the meta device.

    No memory is allocated for the weights: the skeleton only tells their names and shapes
    (:func:`check_state_dict`). A type or config that builds no model is one FormatError.
    """
    import torch

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
    try:
        with torch.device("meta"):
            return cls(**config)
    except (ClirError, TypeError, ValueError, RuntimeError, OverflowError) as exc:
        raise FormatError(
            path, None, f"not {what}: its config makes no {model_type} model ({_one_line(exc)})"
        ) from None


def read_model_file(path: Path) -> Any:
    """The object saved in a model file (read with weights only; any kind of model)."""
    if not path.is_file():
        raise ClirError(f"{path}: no such model file (train one with: clir rerank train)")
    return torch_load(path, "not a reranker model file")


def load_model(
    path: str | Path, device: str | torch.device = "cpu", data: Any = None
) -> LoadedReranker:
    """Read a model file written by training; the model is put on ``device`` in eval mode.

    ``data`` is the file's content when the caller has read it already
    (:func:`read_model_file`).

    Every key, type and tensor shape is checked first: a file that is not a model of this
    toolkit is one FormatError naming it, never an exception of torch's. Every size is
    bounded before anything is allocated: the model's weights by the file's own size
    (:func:`check_state_dict`), the maximum lengths by their declared range.
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
