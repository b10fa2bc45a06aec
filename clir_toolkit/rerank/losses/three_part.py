"""3Part_l2, the 3-part squared hinge loss of Nigam et al., "Semantic Product Search" (KDD
2019): the baseline "3Part_l2" of Liu et al., *Smooth Learning*, §5 Table 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clir_toolkit.errors import UsageError
from clir_toolkit.registry import register
from clir_toolkit.rerank.losses.grades import check_grades, per_grade

if TYPE_CHECKING:
    from torch import Tensor

THREE_PART_THRESHOLDS = (0.2, 0.55, 0.9)
"""Nigam et al.'s epsilon_low, epsilon_mid, epsilon_high."""


@register("losses", "3part", order=4, pairwise=False)
def three_part_l2(
    scores: Tensor, grades: Tensor, thresholds: Sequence[float] = THREE_PART_THRESHOLDS
) -> Tensor:
    """3Part_l2, the 3-part squared hinge loss of Nigam et al. 2019 (Liu et al.'s baseline).

    Nigam et al. ("Semantic Product Search", KDD 2019) push random negatives below
    ``eps_low``, impressed-but-not-purchased products below ``eps_mid`` and purchased
    products above ``eps_high``; Liu et al. map them to the grades 0, 1, 2:

    ``L(r, 0) = max(0, r - eps_low)^2``
    ``L(r, 1) = max(0, r - eps_mid)^2``
    ``L(r, 2) = max(0, eps_high - r)^2``

    with ``(eps_low, eps_mid, eps_high) = (0.2, 0.55, 0.9)``, Nigam et al.'s values (also the
    defaults of Liu et al.'s released code). Unlike SOSL, grade 1 has no lower bound, so
    partially relevant and irrelevant documents may overlap (the paper's Figure 3).

    Args:
        scores: ``[B]`` relevance scores.
        grades: ``[B]`` grades 0, 1, 2.
        thresholds: ``(eps_low, eps_mid, eps_high)``.

    Returns:
        The mean loss over the batch.
    """
    import torch
    import torch.nn.functional as F

    if len(thresholds) != 3:
        raise UsageError(f"3Part_l2 needs 3 thresholds (low, mid, high), got {len(thresholds)}")
    check_grades(grades, 3)
    eps = per_grade(thresholds, scores)[grades]
    # The sign turns "stay below eps" (grades 0, 1) and "stay above eps" (grade 2) into one form.
    sign = torch.where(grades == 2, -1.0, 1.0).to(scores.dtype)
    return F.relu(sign * (scores - eps)).square().mean()
