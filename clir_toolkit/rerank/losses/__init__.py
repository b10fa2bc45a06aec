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

One loss per module, each with its formula and citation, each registering its name in the
``losses`` kind of :mod:`clir_toolkit.registry`: :mod:`.sosl`, :mod:`.mse`,
:mod:`.proportional_odds` (its model in :mod:`._ordinal`), :mod:`.three_part`, :mod:`.hinge`
(and :mod:`.grades`, the checks they share). A new loss is one new module here that calls
``register("losses", name, ..., pairwise=False)``: ``--loss`` and ``[rerank] loss`` accept
it, with no list of names to edit. The trait ``pairwise`` says that a loss takes the scores
of (better, worse) documents instead of grades; ``learnable`` that it is a function of no
arguments making a :class:`torch.nn.Module` whose parameters are trained with the model.
A loss of one's own plugs in the same way from another package: the entry-point group
``clir_toolkit.losses`` (:mod:`clir_toolkit.plugins`).

The modules import torch inside their functions: listing the names imports every module.
"""

from __future__ import annotations

import functools
from typing import Any

from clir_toolkit import registry


def build_loss(name: str, sosl_thresholds: tuple[float, float] | None = None) -> tuple[Any, Any]:
    """``(loss function, module with parameters or None)`` for the loss called ``name``.

    A learnable loss (``po``: McCullagh's model, its cut-points estimated along with the
    model) or a plug-in's ``torch.nn.Module`` class is made here, and its parameters join the
    optimiser; the other losses are functions. ``sosl_thresholds`` moves SOSL's inner
    thresholds.
    """
    component = registry.component("losses", name)
    loss = component.factory
    if component.trait("learnable") or isinstance(loss, type):
        module = loss()
        return module, module
    if name == "sosl" and sosl_thresholds is not None:
        return functools.partial(loss, thresholds=(-1.0, *sosl_thresholds, 1.0)), None
    return loss, None
