"""MSE to a target score per grade: the baseline "MSE" of Liu et al., *Smooth Learning*,
§5 Table 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clir_toolkit.registry import register
from clir_toolkit.rerank.losses.grades import check_grades, per_grade

if TYPE_CHECKING:
    from torch import Tensor

MSE_TARGETS = (-0.4, 0.45, 0.85)
"""The middle of each SOSL segment: (-1 + 0.2)/2, (0.2 + 0.7)/2, (0.7 + 1)/2."""


@register("losses", "mse", order=2, pairwise=False)
def mse(scores: Tensor, grades: Tensor, targets: Sequence[float] = MSE_TARGETS) -> Tensor:
    """Mean squared error to a target score per grade (Liu et al.'s baseline "MSE", Table 2).

    ``MSE(r, g) = (r - t_g)^2``

    The paper does not give the targets. The default puts each grade's target at the middle
    of its SOSL segment, ``t = (-0.4, 0.45, 0.85)``, so that MSE and SOSL aim at the same
    places and differ only in penalising every distance from the target (MSE) or only leaving
    the segment (SOSL); the authors' released code regresses to the same midpoints.

    Args:
        scores: ``[B]`` relevance scores.
        grades: ``[B]`` grades 0..K-1.
        targets: ``K`` target scores, one per grade.

    Returns:
        The mean loss over the batch.
    """
    check_grades(grades, len(targets))
    target = per_grade(targets, scores)[grades]
    return (scores - target).square().mean()
