"""The reranker's losses, checked against values computed by hand from their formulas."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
import torch

from clir_toolkit import registry
from clir_toolkit.errors import UsageError
from clir_toolkit.rerank import LOSS_NAMES, is_pairwise
from clir_toolkit.rerank.losses import build_loss
from clir_toolkit.rerank.losses._ordinal import ProportionalOdds, proportional_odds
from clir_toolkit.rerank.losses.hinge import pairwise_hinge
from clir_toolkit.rerank.losses.mse import mse
from clir_toolkit.rerank.losses.sosl import sosl
from clir_toolkit.rerank.losses.three_part import three_part_l2


def _loss_each(
    loss: Callable[..., torch.Tensor], scores: list[float], grades: list[int], **kwargs: object
) -> list[float]:
    """The loss of each pair alone (the functions return batch means)."""
    return [
        loss(torch.tensor([score], dtype=torch.float64), torch.tensor([grade]), **kwargs).item()
        for score, grade in zip(scores, grades, strict=True)
    ]


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


# -- SOSL (Liu et al. eq. 2) --------------------------------------------------------------------


def test_sosl_is_zero_inside_the_segment_of_the_grade() -> None:
    # Segments with the default thresholds (-1, 0.2, 0.7, 1): [-1, .2], [.2, .7], [.7, 1].
    inside = _loss_each(
        sosl, [-1.0, -0.3, 0.2, 0.2, 0.45, 0.7, 0.7, 0.95, 1.0], [0, 0, 0, 1, 1, 1, 2, 2, 2]
    )
    assert inside == [0.0] * 9


def test_sosl_is_quadratic_outside_the_segment() -> None:
    above = _loss_each(sosl, [0.8, 0.9, 1.0], [1, 1, 1])  # 0.1, 0.2, 0.3 above theta_2 = 0.7
    assert above == pytest.approx([0.01, 0.04, 0.09])
    assert above[1] == pytest.approx(4 * above[0])  # doubling the distance quadruples the loss
    below = _loss_each(sosl, [0.1, 0.0, -0.6], [1, 1, 2])  # 0.1, 0.2 below 0.2; 1.3 below 0.7
    assert below == pytest.approx([0.01, 0.04, 1.69])
    assert _loss_each(sosl, [0.5], [0]) == pytest.approx([0.09])  # grade 0 above 0.2


def test_sosl_averages_over_the_batch_and_takes_other_thresholds() -> None:
    scores = torch.tensor([0.8, 0.3, 0.0])
    grades = torch.tensor([1, 1, 2])
    assert sosl(scores, grades).item() == pytest.approx((0.01 + 0.0 + 0.49) / 3)
    two_grades = sosl(torch.tensor([0.5, -0.5]), torch.tensor([0, 1]), thresholds=(-1, 0, 1))
    assert two_grades.item() == pytest.approx((0.25 + 0.25) / 2)


def test_sosl_gradient_pushes_scores_into_their_segments() -> None:
    scores = torch.tensor([0.9, 0.0, 0.5], requires_grad=True)
    sosl(scores, torch.tensor([1, 1, 1])).backward()
    assert scores.grad is not None
    assert scores.grad.tolist() == pytest.approx([2 * 0.2 / 3, -2 * 0.2 / 3, 0.0])


# -- MSE ------------------------------------------------------------------------------------------


def test_mse_regresses_to_the_middle_of_each_segment() -> None:
    assert _loss_each(mse, [-0.4, 0.45, 0.85], [0, 1, 2]) == pytest.approx([0, 0, 0])
    value = mse(torch.tensor([0.0, 0.45, 1.0]), torch.tensor([0, 1, 2])).item()
    assert value == pytest.approx((0.4**2 + 0.0 + 0.15**2) / 3)
    assert _loss_each(mse, [1.0], [1], targets=(0.0, 0.5)) == pytest.approx([0.25])


# -- Proportional odds (McCullagh 1980) ----------------------------------------------------------


def test_proportional_odds_is_the_cumulative_logit_likelihood() -> None:
    # P(grade <= g) = sigmoid(c_g - r), cut-points (0.2, 0.7).
    expected = [
        -math.log(sigmoid(0.2 - 0.0)),
        -math.log(sigmoid(0.7 - 0.5) - sigmoid(0.2 - 0.5)),
        -math.log(1.0 - sigmoid(0.7 - 1.0)),
    ]
    got = _loss_each(proportional_odds, [0.0, 0.5, 1.0], [0, 1, 2])
    assert got == pytest.approx(expected, rel=1e-12)


def test_proportional_odds_probabilities_of_all_grades_sum_to_one() -> None:
    for score in (-1.0, 0.3, 0.9):
        losses = _loss_each(proportional_odds, [score] * 4, [0, 1, 2, 3], cutpoints=(-0.5, 0, 2))
        assert sum(math.exp(-loss) for loss in losses) == pytest.approx(1.0, rel=1e-12)


def test_proportional_odds_has_finite_gradients_for_every_grade() -> None:
    scores = torch.tensor([-1.0, 0.4, 1.0, 30.0, -30.0], requires_grad=True)
    proportional_odds(scores, torch.tensor([0, 1, 2, 0, 2])).backward()
    assert scores.grad is not None and torch.isfinite(scores.grad).all()
    # A higher score makes grade 0 less likely: its gradient is positive (loss grows).
    assert scores.grad[0] > 0 and scores.grad[2] < 0


def test_learnable_cutpoints_start_at_their_initial_values_and_stay_ordered() -> None:
    model = ProportionalOdds(3)
    assert model.cutpoints().tolist() == pytest.approx([0.2, 0.7], abs=1e-6)
    scores = torch.tensor([0.0, 0.5, 1.0])
    grades = torch.tensor([0, 1, 2])
    assert model(scores, grades).item() == pytest.approx(
        proportional_odds(scores, grades).item(), abs=1e-6
    )
    # Data that wants grade 2 below grade 1: the cut-points move but never cross.
    optimiser = torch.optim.Adam(model.parameters(), lr=0.1)
    start = model.cutpoints().detach().clone()
    for _ in range(50):
        optimiser.zero_grad()
        model(torch.tensor([0.9, -0.9, 0.9]), torch.tensor([1, 2, 1])).backward()
        optimiser.step()
    cuts = model.cutpoints()
    assert not torch.allclose(cuts, start)
    assert cuts[1] > cuts[0]
    assert ProportionalOdds(4).cutpoints().tolist() == pytest.approx([-0.5, 0.0, 0.5], abs=1e-6)


# -- 3Part_l2 (Nigam et al. 2019) ----------------------------------------------------------------


def test_three_part_l2_bounds_each_grade_on_one_side() -> None:
    got = _loss_each(three_part_l2, [0.3, 0.6, 0.7, 0.1, -0.9, 0.95], [0, 1, 2, 0, 1, 2])
    # grade 0 above 0.2; grade 1 above 0.55; grade 2 below 0.9; then three at no loss
    # (grade 1 has no lower bound: -0.9 costs nothing).
    assert got == pytest.approx([0.01, 0.0025, 0.04, 0.0, 0.0, 0.0])


# -- Pairwise hinge (K-NRM) -----------------------------------------------------------------------


def test_pairwise_hinge_wants_a_margin_between_positive_and_negative() -> None:
    value = pairwise_hinge(torch.tensor([0.5, 0.9]), torch.tensor([0.2, -0.5]))
    assert value.item() == pytest.approx((0.7 + 0.0) / 2)
    assert pairwise_hinge(torch.tensor([0.5]), torch.tensor([0.4]), margin=0.1).item() == 0.0
    with pytest.raises(ValueError, match="one negative per positive"):
        pairwise_hinge(torch.zeros(2), torch.zeros(3))


# -- Registry and validation ----------------------------------------------------------------------


def test_registry_names_every_loss() -> None:
    assert LOSS_NAMES.builtin == ("sosl", "mse", "po", "3part", "hinge")  # sosl: the default
    assert [name for name in LOSS_NAMES.builtin if is_pairwise(name)] == ["hinge"]
    scores, grades = torch.tensor([0.1, 0.9]), torch.tensor([0, 2])
    for name in LOSS_NAMES.builtin:
        loss, _ = build_loss(name)
        value = loss(scores, grades.float()) if is_pairwise(name) else loss(scores, grades)
        assert value.dim() == 0 and torch.isfinite(value)


def test_po_trains_its_cut_points_and_the_other_losses_have_no_parameters() -> None:
    loss, module = build_loss("po")
    assert isinstance(module, ProportionalOdds) and loss is module
    assert module.cutpoints().tolist() == pytest.approx([0.2, 0.7])
    for name in ("sosl", "mse", "3part", "hinge"):
        assert build_loss(name)[1] is None
    assert registry.component("losses", "po").trait("learnable") is True


@pytest.mark.parametrize("name", ["sosl", "mse", "po", "3part"])
def test_grades_outside_the_scale_are_a_usage_error(name: str) -> None:
    loss, _ = build_loss(name)
    with pytest.raises(UsageError, match="grades must lie in 0..2"):
        loss(torch.tensor([0.1, 0.2]), torch.tensor([0, 3]))


def test_thresholds_out_of_order_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="non-decreasing"):
        sosl(torch.tensor([0.1]), torch.tensor([0]), thresholds=(-1, 0.7, 0.2, 1))
