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

One loss per module, each with its formula and citation: :mod:`.sosl`, :mod:`.mse`,
:mod:`.proportional_odds`, :mod:`.three_part`, :mod:`.hinge` (and :mod:`.grades`, the checks
they share). ``LOSSES`` maps the names ``clir rerank train --loss`` accepts to the
functions; ``PAIRWISE_LOSSES`` lists those that take (positive, negative) scores instead of
grades. A loss of one's own plugs in without an edit here: the entry-point group
``clir_toolkit.losses`` (:mod:`clir_toolkit.plugins`).
"""

from __future__ import annotations

from collections.abc import Callable

from torch import Tensor

from clir_toolkit.rerank.losses.hinge import pairwise_hinge
from clir_toolkit.rerank.losses.mse import MSE_TARGETS, mse
from clir_toolkit.rerank.losses.proportional_odds import (
    PO_CUTPOINTS,
    ProportionalOdds,
    proportional_odds,
)
from clir_toolkit.rerank.losses.sosl import SOSL_THRESHOLDS, sosl
from clir_toolkit.rerank.losses.three_part import THREE_PART_THRESHOLDS, three_part_l2

__all__ = [
    "LOSSES", "MSE_TARGETS", "PAIRWISE_LOSSES", "PO_CUTPOINTS", "SOSL_THRESHOLDS",
    "THREE_PART_THRESHOLDS", "ProportionalOdds", "mse", "pairwise_hinge", "proportional_odds",
    "sosl", "three_part_l2",
]  # fmt: skip


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
