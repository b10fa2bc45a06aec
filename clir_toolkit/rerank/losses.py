"""Training losses of the reranker: SOSL, its three baselines, and K-NRM's pairwise hinge.

Every pointwise loss takes ``scores: Tensor[B]`` (a model's relevance scores, in [-1, 1] for
both models here) and ``grades: LongTensor[B]`` (0 = not relevant, 1 = partially relevant,
2 = relevant, as in the collections' qrels), and returns the mean over the batch, a scalar.
The pairwise hinge takes the scores of the better and the worse document of each pair.

Sources: Liu, Zhang, Goldwasser and Wang, *Cross-Lingual Document Retrieval with Smooth
Learning*, §3.4 equation 2 (SOSL) and §5
Table 2 (the baselines MSE, proportional odds and 3Part_l2, all compared with
``epsilon = 1``); Q. Liu, *A Neural Approach to Cross-Lingual
Information Retrieval* (M.S. thesis, CMU), §3.2 (K-NRM, trained pairwise, from
Xiong et al. 2017). Where the paper names a baseline without spelling it out, the docstring
says what was chosen and why.

``LOSSES`` maps the names ``clir rerank train --loss`` accepts to the functions;
``PAIRWISE_LOSSES`` lists those that take (positive, negative) scores instead of grades.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from clir_toolkit.errors import UsageError

SOSL_THRESHOLDS = (-1.0, 0.2, 0.7, 1.0)
"""theta_0 < theta_1 < theta_2 < theta_3: grade g belongs in [theta_g, theta_{g+1}].
The inner thresholds (0.2, 0.7) are the paper's, chosen by grid search (§5, Setup)."""

MSE_TARGETS = (-0.4, 0.45, 0.85)
"""The middle of each SOSL segment: (-1 + 0.2)/2, (0.2 + 0.7)/2, (0.7 + 1)/2."""

PO_CUTPOINTS = (0.2, 0.7)
"""Default fixed cut-points of the proportional-odds model: SOSL's inner thresholds."""

THREE_PART_THRESHOLDS = (0.2, 0.55, 0.9)
"""Nigam et al.'s epsilon_low, epsilon_mid, epsilon_high."""


def _check_grades(grades: Tensor, num_grades: int) -> None:
    """Reject grades outside 0..num_grades-1 with a readable error (not an index crash)."""
    if grades.numel() and (int(grades.min()) < 0 or int(grades.max()) >= num_grades):
        raise UsageError(
            f"relevance grades must lie in 0..{num_grades - 1}, got "
            f"{int(grades.min())}..{int(grades.max())} (map the qrels' grades first)"
        )


def _per_grade(values: Sequence[float] | Tensor, like: Tensor) -> Tensor:
    """``values`` as a tensor with the dtype and device of ``like``."""
    return torch.as_tensor(values, dtype=like.dtype, device=like.device)


def _check_increasing(name: str, values: Sequence[float]) -> None:
    if any(b < a for a, b in zip(values, values[1:], strict=False)):
        raise UsageError(f"{name} must be non-decreasing, got {tuple(values)}")


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
    _check_increasing("SOSL thresholds", thresholds)
    _check_grades(grades, len(thresholds) - 1)
    theta = _per_grade(thresholds, scores)
    lower, upper = theta[grades], theta[grades + 1]
    above = F.relu(scores - upper)
    below = F.relu(lower - scores)
    return (above.square() + below.square()).mean()


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
    _check_grades(grades, len(targets))
    target = _per_grade(targets, scores)[grades]
    return (scores - target).square().mean()


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
        _check_increasing("cut-points", cutpoints)
    cuts = _per_grade(cutpoints, scores) if not isinstance(cutpoints, Tensor) else cutpoints
    cuts = cuts.to(scores.dtype)
    _check_grades(grades, cuts.numel() + 1)
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
    if len(thresholds) != 3:
        raise UsageError(f"3Part_l2 needs 3 thresholds (low, mid, high), got {len(thresholds)}")
    _check_grades(grades, 3)
    eps = _per_grade(thresholds, scores)[grades]
    # The sign turns "stay below eps" (grades 0, 1) and "stay above eps" (grade 2) into one form.
    sign = torch.where(grades == 2, -1.0, 1.0).to(scores.dtype)
    return F.relu(sign * (scores - eps)).square().mean()


def pairwise_hinge(positive_scores: Tensor, negative_scores: Tensor, margin: float = 1.0) -> Tensor:
    """K-NRM's pairwise hinge loss (Xiong et al. 2017; thesis §3.2).

    ``L(d+, d-) = max(0, margin - f(q, d+) + f(q, d-))``

    for pairs of a more relevant ``d+`` and a less relevant ``d-`` of the same query; the
    model learns to rank ``d+`` above ``d-`` by at least the margin.

    Args:
        positive_scores: ``[B]`` scores of the better documents.
        negative_scores: ``[B]`` scores of the worse documents, pair by pair.
        margin: the desired score gap, 1 in K-NRM.

    Returns:
        The mean loss over the pairs.
    """
    if positive_scores.shape != negative_scores.shape:
        raise ValueError(
            f"one negative per positive: shapes {tuple(positive_scores.shape)} and "
            f"{tuple(negative_scores.shape)} differ"
        )
    return F.relu(margin - positive_scores + negative_scores).mean()


LOSSES: dict[str, Callable[..., Tensor]] = {
    "sosl": sosl,
    "mse": mse,
    "po": proportional_odds,
    "3part": three_part_l2,
    "hinge": pairwise_hinge,
}
"""Loss name (``--loss``) -> function. ``"po"`` here has fixed cut-points; train with
:class:`ProportionalOdds` for learnable ones."""

PAIRWISE_LOSSES = frozenset({"hinge"})
"""Names in :data:`LOSSES` called as ``loss(positive_scores, negative_scores)``; the others
are called as ``loss(scores, grades)``."""
