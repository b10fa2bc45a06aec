"""The proportional-odds (cumulative logit) model of McCullagh (1980): the baseline "PO" of
Liu et al., *Smooth Learning*, §5 Table 2, with fixed cut-points (:func:`proportional_odds`)
or learnable ones (:class:`ProportionalOdds`, what ``--loss po`` trains).

The loss ``po`` is registered by :mod:`clir_toolkit.rerank.losses.proportional_odds`; this
module (private, so that the registry does not import it) needs torch to define the module
class, and is imported only when the loss is used.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from clir_toolkit.errors import UsageError
from clir_toolkit.rerank.losses.grades import check_grades, check_increasing, per_grade

PO_CUTPOINTS = (0.2, 0.7)
"""Default fixed cut-points of the proportional-odds model: SOSL's inner thresholds."""


def proportional_odds(
    scores: Tensor, grades: Tensor, cutpoints: Sequence[float] | Tensor = PO_CUTPOINTS
) -> Tensor:
    """Proportional odds (cumulative logit) model, McCullagh 1980 (Liu et al.'s "PO", Table 2).

    The score ``r`` is the model's linear predictor; ``K - 1`` increasing cut-points
    ``c_0 < ... < c_{K-2}`` split it into grades:

    ``P(grade <= g | r) = sigmoid(c_g - r)``, with ``c_{-1} = -inf`` and ``c_{K-1} = +inf``,

    so ``P(grade = g | r) = sigmoid(c_g - r) - sigmoid(c_{g-1} - r)``, and the loss is the
    negative log-likelihood ``-log P(grade = g | r)``, averaged over the batch. It is
    computed stably from the identity ``sigmoid(b) - sigmoid(a) = sigmoid(b) sigmoid(-a)
    (1 - exp(a - b))`` for ``a < b``.

    McCullagh estimates the cut-points with the model; :class:`ProportionalOdds` does that
    (learnable cut-points). This function takes them fixed, by default at SOSL's inner
    thresholds (0.2, 0.7). Scores here are bounded in [-1, 1], so the model can never be very
    sure of a grade: a limit of the baseline that the paper's Figure 3 shows.

    Args:
        scores: ``[B]`` relevance scores.
        grades: ``[B]`` grades 0..K-1.
        cutpoints: ``K - 1`` increasing cut-points (a tensor may carry gradients).

    Returns:
        The mean negative log-likelihood over the batch.
    """
    if not isinstance(cutpoints, Tensor):
        check_increasing("cut-points", cutpoints)
    cuts = per_grade(cutpoints, scores) if not isinstance(cutpoints, Tensor) else cutpoints
    cuts = cuts.to(scores.dtype)
    check_grades(grades, cuts.numel() + 1)
    infinity = torch.full((1,), float("inf"), dtype=scores.dtype, device=scores.device)
    bounds = torch.cat([-infinity, cuts, infinity])
    upper = bounds[grades + 1] - scores  # b: log-odds of "grade <= g"
    lower = bounds[grades] - scores  # a: log-odds of "grade <= g - 1"
    log_likelihood = (
        F.logsigmoid(upper) + F.logsigmoid(-lower) + torch.log(-torch.expm1(lower - upper))
    )
    return -log_likelihood.mean()


class ProportionalOdds(nn.Module):
    """Proportional-odds loss with learnable, always increasing cut-points (McCullagh 1980).

    ``c_0`` is a free parameter and ``c_k = c_{k-1} + softplus(gap_k)``, so that training can
    never put the cut-points out of order. Call it like the loss function:
    ``loss = po(scores, grades)``; add ``po.parameters()`` to the optimiser and save its
    ``state_dict`` with the model.
    """

    def __init__(self, num_grades: int = 3, initial: Sequence[float] | None = None) -> None:
        super().__init__()
        if num_grades < 2:
            raise UsageError(f"ordinal regression needs at least 2 grades, got {num_grades}")
        if initial is None:
            initial = (
                PO_CUTPOINTS
                if num_grades == 3
                else [-1.0 + 2.0 * (k + 1) / num_grades for k in range(num_grades - 1)]
            )
        if len(initial) != num_grades - 1:
            raise UsageError(f"{num_grades} grades need {num_grades - 1} cut-points")
        if any(b <= a for a, b in zip(initial, initial[1:], strict=False)):
            raise UsageError(f"initial cut-points must increase, got {tuple(initial)}")
        start = torch.tensor(initial, dtype=torch.float32)
        gaps = start[1:] - start[:-1]
        self.first = nn.Parameter(start[:1].clone())
        # Inverse of softplus: log(exp(gap) - 1).
        self.gaps = nn.Parameter(torch.log(torch.expm1(gaps)))
        self.num_grades = num_grades

    def cutpoints(self) -> Tensor:
        """The current cut-points, increasing: ``Tensor[num_grades - 1]``."""
        steps = F.softplus(self.gaps)
        return torch.cat([self.first, self.first + torch.cumsum(steps, dim=0)])

    def forward(self, scores: Tensor, grades: Tensor) -> Tensor:
        return proportional_odds(scores, grades, self.cutpoints())
