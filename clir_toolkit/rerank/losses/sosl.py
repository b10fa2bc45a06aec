"""SOSL, the Smooth Ordinal Search Loss: Liu, Zhang, Goldwasser and Wang, *Cross-Lingual
Document Retrieval with Smooth Learning*, §3.4, equation 2.

Zero while a pair's score stays inside its grade's segment ``[θ_g, θ_{g+1}]`` of [-1, 1],
the squared distance to the segment outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from clir_toolkit.registry import register
from clir_toolkit.rerank.losses.grades import check_grades, check_increasing, per_grade

if TYPE_CHECKING:
    from torch import Tensor

SOSL_THRESHOLDS = (-1.0, 0.2, 0.7, 1.0)
"""theta_0 < theta_1 < theta_2 < theta_3: grade g belongs in [theta_g, theta_{g+1}].
The inner thresholds (0.2, 0.7) are the paper's, chosen by grid search (§5, Setup)."""


@register("losses", "sosl", order=1, pairwise=False)
def sosl(scores: Tensor, grades: Tensor, thresholds: Sequence[float] = SOSL_THRESHOLDS) -> Tensor:
    """Smooth Ordinal Search Loss (Liu et al., §3.4, equation 2).

    For a score ``r`` of a pair of grade ``g``, whose segment is ``[theta_g, theta_{g+1}]``:

    ``SOSL(r, g) = (theta_{g+1} - r)^2 [r > theta_{g+1}] + (r - theta_g)^2 [r < theta_g]``

    zero inside the segment, the squared distance to the segment outside it (no weighting).
    The paper numbers grades 1..K with ``-1 = theta_0 < ... < theta_K = 1``; with grades
    0..K-1 here, grade ``g`` uses ``theta_g`` and ``theta_{g+1}``. The square, instead of
    Rennie and Srebro's margin penalty, makes the loss smooth (Proposition 1).

    Args:
        scores: ``[B]`` relevance scores (smooth cosine or K-NRM's tanh), in [-1, 1].
        grades: ``[B]`` grades 0..K-1.
        thresholds: ``K + 1`` non-decreasing values; default (-1, 0.2, 0.7, 1).

    Returns:
        The mean loss over the batch.
    """
    import torch.nn.functional as F

    check_increasing("SOSL thresholds", thresholds)
    check_grades(grades, len(thresholds) - 1)
    theta = per_grade(thresholds, scores)
    lower, upper = theta[grades], theta[grades + 1]
    above = F.relu(scores - upper)
    below = F.relu(lower - scores)
    return (above.square() + below.square()).mean()
