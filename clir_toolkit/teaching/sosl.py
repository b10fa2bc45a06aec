"""Assignment ``sosl``: the Smooth Ordinal Search Loss (Liu et al., §3.4, equation 2).

The reference is :func:`clir_toolkit.rerank.losses.sosl.sosl`; a student's ``sosl`` plugs into
training as a loss plug-in (entry-point group ``clir_toolkit.losses``).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from clir_toolkit.teaching.grading import Assignment, Timing, checks, close

SKELETON = '''"""Assignment sosl: the Smooth Ordinal Search Loss.

Q. Liu, Y. Zhang, D. Goldwasser and W. Wang, "Cross-Lingual Document Retrieval with Smooth
Learning", §3.4, equation 2. The relevance score r of a (query, document) pair lies in
[-1, 1]; the grades 0..K-1 of the pairs own consecutive segments of [-1, 1] cut by the
thresholds -1 = theta_0 < theta_1 < ... < theta_K = 1: grade g belongs in
[theta_g, theta_{g+1}]. The loss of one pair is

    SOSL(r, g) = (r - theta_{g+1})^2   if r > theta_{g+1}
               = (theta_g - r)^2       if r < theta_g
               = 0                     inside the segment,

and the loss of a batch is the mean over its pairs. (The square, instead of a hinge, makes
the loss smooth: Proposition 1 of the paper.)

Write it with tensor operations (no Python loop over the batch): it is called on every
training batch. Grade it with:  clir assignment check sosl
Use it to train:  register it as a plug-in (README, "Plug-ins", group clir_toolkit.losses),
then  clir rerank train --loss NAME ...
"""

from collections.abc import Sequence

import torch
from torch import Tensor

THRESHOLDS = (-1.0, 0.2, 0.7, 1.0)
"""theta_0..theta_3 for grades 0, 1, 2 (the paper's inner thresholds, 0.2 and 0.7)."""


def sosl(scores: Tensor, grades: Tensor, thresholds: Sequence[float] = THRESHOLDS) -> Tensor:
    """The mean SOSL of a batch.

    Args:
        scores: float Tensor[B], the model's scores in [-1, 1].
        grades: long Tensor[B], each pair's grade in 0 .. len(thresholds) - 2.
        thresholds: the K + 1 increasing segment bounds.

    Returns:
        A 0-dimensional tensor, differentiable with respect to ``scores``.
    """
    raise NotImplementedError
'''


def _reference() -> ModuleType:
    from clir_toolkit.rerank.losses.sosl import sosl

    return SimpleNamespace(sosl=sosl)  # type: ignore[return-value]


def _batch(size: int, seed: int) -> tuple[Any, Any]:
    import torch

    generator = torch.Generator().manual_seed(seed)
    scores = torch.rand(size, generator=generator) * 2 - 1
    grades = torch.randint(0, 3, (size,), generator=generator)
    return scores, grades


def _zero_inside(student: ModuleType, collection: Path | None) -> str:
    import torch

    thresholds = (-1.0, 0.2, 0.7, 1.0)
    for grade, (low, high) in enumerate(zip(thresholds, thresholds[1:], strict=False)):
        scores = torch.linspace(low, high, 9, dtype=torch.float32)
        loss = student.sosl(scores, torch.full((9,), grade), thresholds)
        assert abs(float(loss)) <= 1e-12, (
            f"a grade-{grade} score inside [{low}, {high}] (the bounds included) must cost "
            f"nothing; the loss is {float(loss):.6g}"
        )
    return "every grade, bounds included"


def _squared_distance_outside(student: ModuleType, collection: Path | None) -> None:
    import torch

    cases = [(0.9, 0, (0.9 - 0.2) ** 2), (-0.5, 2, (0.7 + 0.5) ** 2), (0.1, 1, (0.2 - 0.1) ** 2),
             (0.95, 1, (0.95 - 0.7) ** 2)]  # fmt: skip
    for score, grade, expected in cases:
        loss = student.sosl(torch.tensor([score]), torch.tensor([grade]))
        close(loss, expected, f"SOSL(r={score}, grade {grade})")


def _batch_mean(student: ModuleType, collection: Path | None) -> None:
    import torch

    scores, grades = torch.tensor([0.9, 0.5, -0.9]), torch.tensor([0, 1, 2])
    expected = ((0.9 - 0.2) ** 2 + 0.0 + (0.7 + 0.9) ** 2) / 3
    close(student.sosl(scores, grades), expected, "the loss of a batch (the mean over its pairs)")


def _other_thresholds(student: ModuleType, collection: Path | None) -> None:
    import torch

    thresholds = (-1.0, -0.5, 0.0, 0.5, 1.0)  # four grades
    scores, grades = torch.tensor([0.75, -0.75, 0.25, 0.0]), torch.tensor([0, 3, 2, 1])
    expected = ((0.75 + 0.5) ** 2 + (0.5 + 0.75) ** 2 + 0.0 + 0.0) / 4
    close(student.sosl(scores, grades, thresholds), expected, "SOSL with five thresholds")


def _agrees_with_gradient(student: ModuleType, collection: Path | None) -> str:
    import torch

    reference = _reference()
    for seed in range(5):
        scores, grades = _batch(512, seed)
        mine = scores.clone().requires_grad_(True)
        theirs = scores.clone().requires_grad_(True)
        loss = student.sosl(mine, grades)
        expected = reference.sosl(theirs, grades)
        close(loss, expected, f"the loss of a random batch (seed {seed})")
        assert isinstance(loss, torch.Tensor) and loss.requires_grad, (
            "the loss must be a tensor differentiable with respect to the scores "
            "(no float(), .item() or numpy inside)"
        )
        loss.backward()
        expected.backward()
        assert mine.grad is not None
        close(mine.grad, theirs.grad, f"d loss / d scores (seed {seed})")
    return "5 random batches of 512, loss and gradient"


FAST_ENOUGH = Timing(prepare=lambda: _batch(1_000_000, 11),
                     run=lambda functions, batch: functions.sosl(*batch),
                     factor=20, floor=0.2, what="SOSL of 1,000,000 pairs")  # fmt: skip


ASSIGNMENT = Assignment(
    name="sosl",
    title="The Smooth Ordinal Search Loss (Liu et al., eq. 2)",
    teaches="ordinal regression as a training loss for ranking: graded relevance as "
    "segments of the score range, a loss that is flat inside them and smooth outside, and "
    "how it differs from a hinge (Rennie & Srebro) or a pairwise loss",
    minutes=45,
    functions=("sosl",),
    skeleton=SKELETON,
    reference=_reference,
    checks=checks(
        ("zero inside the grade's segment", 2, _zero_inside),
        ("squared distance outside it", 2, _squared_distance_outside),
        ("mean over the batch", 1, _batch_mean),
        ("any number of grades", 1, _other_thresholds),
        ("agrees with the reference (loss, gradient)", 3, _agrees_with_gradient),
        ("timing ceiling", 1, FAST_ENOUGH),
    ),
)
