"""Paired significance tests and family-wise corrections (steps 4 and 5 of
:mod:`clir_toolkit.evaluate`).

Each run is compared with the baseline on the same queries: the paired t-test
(``scipy.stats.ttest_rel``) or the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``), both
two-sided; identical runs differ by exactly zero and get p = 1. The k p-values of one measure
(k runs against one baseline) are adjusted together: Holm's step-down method (Holm 1979, "A
simple sequentially rejective multiple test procedure", Scandinavian Journal of Statistics
6(2):65-70), which controls the family-wise error rate like Bonferroni but rejects at least
as often; or Bonferroni itself; or no correction.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

TESTS = ("ttest", "wilcoxon")


CORRECTIONS = ("holm", "bonferroni", "none")


def bonferroni(p_values: Sequence[float]) -> list[float]:
    """Bonferroni-adjusted p-values: ``p'_i = min(1, m * p_i)`` for m tests."""
    m = len(p_values)
    return [min(1.0, m * p) for p in p_values]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm (1979) step-down adjusted p-values, returned in the input order.

    Sort the m p-values ascending, ``p_(1) <= ... <= p_(m)``; then
    ``p'_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j))``. The running maximum keeps the
    adjusted values in the same order as the raw ones; rejecting ``p'_(i) < alpha`` is
    Holm's procedure, and ``p'_i <= `` the Bonferroni value always.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def correct(p_values: Sequence[float], correction: str) -> list[float]:
    if correction == "holm":
        return holm(p_values)
    if correction == "bonferroni":
        return bonferroni(p_values)
    return [min(1.0, p) for p in p_values]


def paired_test(values: Sequence[float], baseline: Sequence[float], test: str = "ttest") -> float:
    """Two-sided p-value of a paired test between two lists of per-query values.

    ``test`` is ``"ttest"`` (``scipy.stats.ttest_rel``) or ``"wilcoxon"``
    (``scipy.stats.wilcoxon``). Identical values on every query give p = 1, as does a
    comparison on fewer than two queries, where no test is defined.
    """
    from scipy import stats

    differences = [a - b for a, b in zip(values, baseline, strict=True)]
    if len(differences) < 2 or all(d == 0 for d in differences):
        return 1.0
    with warnings.catch_warnings():
        # Constant non-zero differences make scipy warn about a zero variance; its answer
        # (p = 0 for the t-test) is still the right limit, so the warning is only noise.
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "ttest":
            p = stats.ttest_rel(values, baseline).pvalue
        else:
            p = stats.wilcoxon(values, baseline).pvalue
    p = float(p)
    return 1.0 if math.isnan(p) else p
