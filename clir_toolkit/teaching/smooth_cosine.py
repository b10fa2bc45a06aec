"""Assignment ``smooth-cosine``: the Smooth Cosine Similarity r_ε (Liu et al., eq. 1).

The reference is :func:`clir_toolkit.rerank.word.dual.smooth_cosine`, the dual encoder's score.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from clir_toolkit.teaching.grading import Assignment, Timing, checks, close

SKELETON = '''"""Assignment smooth-cosine: the Smooth Cosine Similarity.

Q. Liu, Y. Zhang, D. Goldwasser and W. Wang, "Cross-Lingual Document Retrieval with Smooth
Learning", §3.3, equation 1. A dual encoder scores a query and a document by comparing
their vectors q and d. The cosine q.d / (|q| |d|) is undefined at 0 and its gradient
explodes near it; the smooth cosine adds eps > 0 to both norms:

    r_eps(q, d) = q . d / ((|q| + eps) (|d| + eps))

It stays in [-1, 1], tends to the cosine when the norms are large against eps, and to 0
(with a bounded gradient) when a vector is near 0. With eps = 0 it is the plain cosine
(define it as 0 when a vector is 0).
Write it with tensor operations, one score per row. Grade it with:
    clir assignment check smooth-cosine
"""

import torch
from torch import Tensor


def smooth_cosine(q: Tensor, d: Tensor, epsilon: float) -> Tensor:
    """r_eps of each row: q and d are Tensor[B, p]; returns Tensor[B]."""
    raise NotImplementedError
'''


def _reference() -> ModuleType:
    from clir_toolkit.rerank.word.dual import smooth_cosine

    return SimpleNamespace(smooth_cosine=smooth_cosine)  # type: ignore[return-value]


def _pairs(seed: int, rows: int = 256, dim: int = 64) -> tuple[Any, Any]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    scale = torch.rand(rows, 1, generator=generator) * 3
    return (torch.randn(rows, dim, generator=generator) * scale,
            torch.randn(rows, dim, generator=generator))  # fmt: skip


def _plain_cosine_at_zero(student: ModuleType, collection: Path | None) -> None:
    import torch

    q, d = (
        torch.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, 0.0]]),
        torch.tensor([[4.0, 3.0], [-2.0, 0.0], [1.0, 1.0]]),
    )
    close(student.smooth_cosine(q, d, 0.0), [24 / 25, -1.0, 0.0],
          "r_0 (the cosine; 0 for a zero vector)")  # fmt: skip


def _bounded_and_smooth(student: ModuleType, collection: Path | None) -> None:
    import torch

    q, d = _pairs(1)
    r = student.smooth_cosine(q, d, 0.5)
    cosine = torch.nn.functional.cosine_similarity(q, d, dim=-1)
    assert bool((r.abs() <= cosine.abs() + 1e-6).all()), "|r_eps| can never exceed |cos|"
    close(student.smooth_cosine(q * 1e6, d * 1e6, 0.5), cosine,
          "r_eps of huge vectors (it tends to the cosine)", rtol=1e-4)  # fmt: skip
    tiny = student.smooth_cosine(q * 1e-6, d, 0.5)
    assert float(tiny.abs().max()) < 1e-4, "r_eps of a vector near 0 must be near 0"
    close(student.smooth_cosine(torch.tensor([[1.0, 2.0]]), torch.tensor([[2.0, 0.0]]), 1.0),
          [2.0 / ((5**0.5 + 1) * 3)], "r_1 of a hand example")  # fmt: skip


def _agrees_with_gradient(student: ModuleType, collection: Path | None) -> str:
    reference = _reference()
    for seed, epsilon in ((2, 0.1), (3, 1.0), (4, 0.0)):
        q, d = _pairs(seed)
        mine_q, ref_q = q.clone().requires_grad_(True), q.clone().requires_grad_(True)
        mine = student.smooth_cosine(mine_q, d, epsilon)
        theirs = reference.smooth_cosine(ref_q, d, epsilon)
        close(mine, theirs, f"r_{epsilon} of 256 random rows")
        mine.sum().backward()
        theirs.sum().backward()
        assert mine_q.grad is not None, "r_eps must be differentiable with respect to q"
        close(mine_q.grad, ref_q.grad, f"d r_{epsilon} / d q", rtol=1e-4, atol=1e-6)
    return "3 batches of 256 rows, eps 0.1, 1 and 0, with gradients"


FAST_ENOUGH = Timing(prepare=lambda: _pairs(9, rows=100_000, dim=128),
                     run=lambda functions, pairs: functions.smooth_cosine(*pairs, 0.1),
                     factor=10, floor=0.2,
                     what="r_eps of 100,000 pairs of 128 dimensions")  # fmt: skip


ASSIGNMENT = Assignment(
    name="smooth-cosine",
    title="The Smooth Cosine Similarity r_eps (Liu et al., eq. 1)",
    teaches="how a dual encoder scores, why the cosine's gradient explodes near 0 and how "
    "a smoothing constant bounds it, limits as a way to test a formula",
    minutes=30,
    functions=("smooth_cosine",),
    skeleton=SKELETON,
    reference=_reference,
    checks=checks(
        ("eps = 0 is the cosine", 2, _plain_cosine_at_zero),
        ("bounded by the cosine, its limits", 3, _bounded_and_smooth),
        ("agrees with the reference (score, gradient)", 3, _agrees_with_gradient),
        ("timing ceiling", 1, FAST_ENOUGH),
    ),
)
