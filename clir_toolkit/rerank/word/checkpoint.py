"""The resumable training checkpoint ``<output>.ckpt``, and writing torch files.

After every epoch :func:`save_checkpoint` writes the model's (and the loss's) weights, the
best epoch's, the optimiser's state, every random state and both vocabularies, so that
``--resume`` continues where training stopped, with the same losses as a training in one go.
A checkpoint continues only the training that wrote it: the same settings and input files
(:func:`training_fingerprint`). Reading one checks its keys (:data:`CHECKPOINT_KEYS`) and
every tensor against what it replaces (:func:`read_checkpoint`, :func:`restore_checkpoint`):
a damaged or foreign file is one FormatError, never torch's error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError, UsageError
from clir_toolkit.files import sha256_file
from clir_toolkit.rerank.data.vocabulary import Vocabulary
from clir_toolkit.rerank.model_io import save_torch
from clir_toolkit.rerank.training import EpochRecord, recorded_settings
from clir_toolkit.rerank.word.train_config import TrainConfig, has_parallel

if TYPE_CHECKING:
    import torch

CHECKPOINT_FORMAT = "clir-toolkit-rerank-checkpoint/1"


@dataclass
class TrainingState:
    """Where a training stands after its last epoch: what a checkpoint restores."""

    completed: int = 0
    best_epoch: int = 0
    best_dev: float | None = None
    best_state: dict[str, Any] | None = None
    history: list[EpochRecord] = field(default_factory=list)


def training_fingerprint(config: TrainConfig) -> str:
    """Hash of the settings and input files that a resumed run must share with its checkpoint.

    Epochs (a resumed run may add some), the device, the output and verbosity may change.
    """
    volatile = {"epochs", "device", "resume", "verbose", "output", "cache_dir"}
    settings = {k: v for k, v in recorded_settings(config).items() if k not in volatile}
    for name in ("topics", "qrels", "run", "dev_topics", "dev_qrels", "dev_run", "parallel"):
        path = getattr(config, name)
        settings[f"{name}_sha256"] = sha256_file(path) if path is not None else None
    payload = json.dumps(settings, sort_keys=True).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def checkpoint_path_for(output: Path) -> Path:
    """Where the training that writes ``output`` keeps its checkpoint: ``<output>.ckpt``."""
    return output.with_name(output.name + ".ckpt")


def cpu_state(module: Any) -> dict[str, Any]:
    """A copy of ``module``'s weights on the CPU."""
    return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}


def save_checkpoint(
    path: Path,
    fingerprint: str,
    state: TrainingState,
    model: Any,
    loss_module: Any,
    optimiser: Any,
    scaler: Any,
    generator: torch.Generator,
    vocabs: tuple[Vocabulary, Vocabulary],
) -> None:
    """Write the checkpoint after an epoch (atomically): all that a resumed run needs."""
    import torch

    save_torch(
        path,
        {
            "format": CHECKPOINT_FORMAT,
            "fingerprint": fingerprint,
            "completed": state.completed,
            "best_epoch": state.best_epoch,
            "best_dev": state.best_dev,
            "best_state": state.best_state,
            "history": [dataclasses.asdict(r) for r in state.history],
            "model": cpu_state(model),
            "loss": cpu_state(loss_module) if loss_module is not None else None,
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


def read_checkpoint(path: Path, fingerprint: str, config: TrainConfig) -> dict[str, Any]:
    """A checkpoint of this training (same settings and files) that ``config`` can continue.

    Its keys and the kinds of their values are checked here, its tensors against the model
    by :func:`restore_checkpoint`: a damaged or foreign file is one FormatError, never
    torch's error.
    """
    from clir_toolkit.rerank.model_io import check_record, torch_load

    data = torch_load(path, "cannot read the checkpoint", CHECKPOINT_FIX)
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise ClirError(f"{path}: not a training checkpoint; {CHECKPOINT_FIX}")
    check_record(path, data, CHECKPOINT_KEYS, CHECKPOINT_WHAT, CHECKPOINT_FIX)
    if data["fingerprint"] != fingerprint:
        raise ClirError(
            f"{path}: the checkpoint was made with other settings or input files; "
            "train without --resume to start again"
        )
    pretraining = config.parallel_epochs if has_parallel(config) else 0
    assert config.epochs is not None  # resolved_config fills it in
    if data["completed"] > pretraining + config.epochs:
        raise UsageError(
            f"{path}: the checkpoint is at epoch {data['completed']}, past --epochs "
            f"{config.epochs}; resume with --epochs {data['completed'] - pretraining} or more, "
            "or train without --resume"
        )
    for record in data["history"]:
        check_record(path, record, EPOCH_KEYS, CHECKPOINT_WHAT + " (history)", CHECKPOINT_FIX)
    return data


def checkpoint_vocabularies(path: Path, data: Mapping[str, Any]) -> tuple[Vocabulary, Vocabulary]:
    from clir_toolkit.rerank.word.model_file import read_vocabulary

    return (
        read_vocabulary(path, data, "query_vocab", CHECKPOINT_WHAT, CHECKPOINT_FIX),
        read_vocabulary(path, data, "doc_vocab", CHECKPOINT_WHAT, CHECKPOINT_FIX),
    )


def restore_checkpoint(
    path: Path,
    data: Mapping[str, Any],
    model: Any,
    loss_module: Any,
    optimiser: Any,
    scaler: Any,
    generator: torch.Generator,
) -> TrainingState:
    """Put the checkpoint's weights, optimiser state and random states back.

    Each tensor is checked against what it replaces first, so that no torch error escapes.
    """
    import torch

    from clir_toolkit.rerank.model_io import check_state_dict

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
    return TrainingState(
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
