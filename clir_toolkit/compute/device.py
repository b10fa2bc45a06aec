"""Where torch computes: ``--device auto|cpu|cuda`` and ``--precision`` (the rerankers, and
the ``hf:DIR`` sentence encoders).

``auto`` takes the GPU when torch sees one and the CPU otherwise. Asking for ``cuda`` on a
machine without one is an error rather than a silent fall-back, so that a benchmark never
reports CPU timings as GPU timings.

Mixed precision (``bf16``, ``fp16``) runs the matrix products in 16-bit floats under
``torch.autocast`` on CUDA; ``fp16`` also needs a gradient scaler in training. A caution for
K-NRM: its exact-match kernel has σ = 0.001 (Xiong et al. 2017), finer than bf16 can
resolve near a cosine of 1 (bf16 keeps 8 bits of mantissa, steps of 0.004), so ``fp32``
(the default) is the safe choice for it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, UsageError

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda")
PRECISIONS = ("fp32", "bf16", "fp16")


def resolve_device(name: str) -> torch.device:
    """The torch device for ``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or (name.startswith("cuda:") and name[5:].isdigit()):
        if not torch.cuda.is_available():
            built = "with" if torch.backends.cuda.is_built() else "without"
            raise ClirError(
                f"--device {name} was requested but no CUDA GPU is available "
                f"(torch {torch.__version__}, built {built} CUDA); use --device cpu or auto"
            )
        index = int(name[5:]) if ":" in name else 0
        if index >= torch.cuda.device_count():
            raise ClirError(
                f"--device {name}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
        return torch.device(name)
    raise UsageError(f"unknown device {name!r} (choose auto, cpu, cuda or cuda:N)")


def check_precision(precision: str, device: torch.device) -> None:
    """Reject an unknown precision, or mixed precision on a CPU."""
    if precision not in PRECISIONS:
        raise UsageError(f"unknown precision {precision!r} (choose {', '.join(PRECISIONS)})")
    if precision != "fp32" and device.type != "cuda":
        raise UsageError(f"--precision {precision} needs a CUDA device; use fp32 on the CPU")


def autocast(precision: str, device: torch.device) -> Any:
    """A context that runs the forward pass in ``precision`` (a no-op for ``fp32``)."""
    import torch

    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    return torch.autocast(device_type=device.type, dtype=dtype)
