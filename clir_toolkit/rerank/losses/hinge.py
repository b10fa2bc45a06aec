"""K-NRM's pairwise hinge loss: Xiong et al., "End-to-End Neural Ad-hoc Ranking with Kernel
Pooling" (SIGIR 2017), as trained in Q. Liu's thesis *A Neural Approach to Cross-Lingual
Information Retrieval*, §3.2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clir_toolkit.registry import register

if TYPE_CHECKING:
    from torch import Tensor


@register("losses", "hinge", order=5, pairwise=True)
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
    import torch.nn.functional as F

    if positive_scores.shape != negative_scores.shape:
        raise ValueError(
            f"one negative per positive: shapes {tuple(positive_scores.shape)} and "
            f"{tuple(negative_scores.shape)} differ"
        )
    return F.relu(margin - positive_scores + negative_scores).mean()
