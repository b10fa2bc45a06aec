"""What every pointwise loss checks: grades in range, thresholds in order, values as tensors.

A helper of the loss modules, not a loss: it registers nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clir_toolkit.errors import UsageError

if TYPE_CHECKING:
    from torch import Tensor


def check_grades(grades: Tensor, num_grades: int) -> None:
    """Reject grades outside 0..num_grades-1 with a readable error (not an index crash)."""
    if grades.numel() and (int(grades.min()) < 0 or int(grades.max()) >= num_grades):
        raise UsageError(
            f"relevance grades must lie in 0..{num_grades - 1}, got "
            f"{int(grades.min())}..{int(grades.max())} (map the qrels' grades first)"
        )


def per_grade(values: Sequence[float] | Tensor, like: Tensor) -> Tensor:
    """``values`` as a tensor with the dtype and device of ``like``."""
    import torch

    return torch.as_tensor(values, dtype=like.dtype, device=like.device)


def check_increasing(name: str, values: Sequence[float]) -> None:
    if any(b < a for a, b in zip(values, values[1:], strict=False)):
        raise UsageError(f"{name} must be non-decreasing, got {tuple(values)}")
