"""The loss ``po``: McCullagh's proportional-odds model with learnt cut-points, the baseline
"PO" of Liu et al., *Smooth Learning*, §5 Table 2.

The model and its formula are in :mod:`clir_toolkit.rerank.losses._ordinal` (the function
with fixed cut-points, and the torch module whose cut-points are trained); this module
registers what ``--loss po`` trains without importing torch, so that listing the loss names
stays fast.
"""

from __future__ import annotations

from typing import Any

from clir_toolkit.registry import register

NUM_GRADES = 3
"""The grades of the collections' judgements: 0, 1 and 2."""


@register("losses", "po", order=3, pairwise=False, learnable=True)
def learnable_proportional_odds() -> Any:
    """Proportional odds (McCullagh 1980), its cut-points learnt along with the model.

    A :class:`torch.nn.Module` (:class:`~clir_toolkit.rerank.losses._ordinal.ProportionalOdds`)
    whose parameters join the optimiser and are saved with the model.
    """
    from clir_toolkit.rerank.losses._ordinal import ProportionalOdds

    return ProportionalOdds(NUM_GRADES)
