"""Evaluate several runs side by side, with paired significance tests against a baseline.

The procedure, step by step (``clir eval --qrels Q RUN...`` calls :func:`evaluate_runs`, then
:func:`format_result`):

1. **Read and validate.** The qrels and every run are read with :mod:`clir_toolkit.formats`,
   so that a malformed line is reported as ``file:line`` before any measure is computed.
2. **Per-query values.** For each run, ``ir_measures.iter_calc`` computes every measure for
   every query (ir_measures delegates to ``pytrec_eval``, i.e. to trec_eval's own code).
   Measures are written as ir_measures names: ``nDCG@10``, ``P(rel=2)@1``, ``AP``,
   ``RR(rel=2)``, ... (https://ir-measur.es/en/latest/measures.html); they are parsed,
   never ``eval``'ed.
3. **Every qrels query counts.** The set of queries is the set of query ids in the qrels.
   A query the run has no answer for scores 0, as with ``trec_eval -c``; a query the run
   answers but the qrels do not judge is ignored, as trec_eval ignores it (``clir eval``
   says so in a warning line with the counts). Means are taken over all the qrels queries,
   so a run cannot look better by skipping hard queries. A run that answers none of the
   qrels queries is refused: it is a run of another split or collection.
4. **Paired test per measure.** Each run is compared with the baseline on the same queries:
   the paired t-test (``scipy.stats.ttest_rel``) or the Wilcoxon signed-rank test
   (``scipy.stats.wilcoxon``), both two-sided. When the two runs score identically on every
   query the difference is exactly zero and p = 1.
5. **Family-wise correction.** Comparing k runs with one baseline makes k tests per measure,
   and the chance that at least one of them is "significant" by luck grows with k. The k
   p-values of each measure are therefore adjusted together: Holm's step-down method
   (Holm 1979, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6(2):65-70), which controls the family-wise error rate like
   Bonferroni but rejects at least as often; or Bonferroni itself; or no correction.
   A run is marked ``▲`` (better) or ``▼`` (worse) when its corrected p-value is below alpha.

One module per step: :mod:`.measures`, :mod:`.result` (steps 1–3 and the gathering),
:mod:`.significance` (steps 4–5), :mod:`.report` (the printed table).

Two runs compared query by query (``clir compare``): :mod:`.compare` (per-query deltas, wins,
ties and losses, the largest of each, as text) and :mod:`.compare_plot` (the sorted
per-query delta chart as PNG, SVG or an HTML page).
"""

from clir_toolkit.evaluate.compare import Comparison, QueryDelta, compare_runs, format_comparison
from clir_toolkit.evaluate.compare_plot import PLOT_SUFFIXES, write_plot
from clir_toolkit.evaluate.measures import DEFAULT_MEASURES, parse_measures
from clir_toolkit.evaluate.report import BETTER, FORMATS, WORSE, format_result
from clir_toolkit.evaluate.result import EvalResult, evaluate_runs
from clir_toolkit.evaluate.significance import CORRECTIONS, TESTS, bonferroni, holm, paired_test

__all__ = [
    "BETTER", "CORRECTIONS", "DEFAULT_MEASURES", "FORMATS", "PLOT_SUFFIXES", "TESTS", "WORSE",
    "Comparison", "EvalResult", "QueryDelta", "bonferroni", "compare_runs", "evaluate_runs",
    "format_comparison", "format_result", "holm", "paired_test", "parse_measures", "write_plot",
]  # fmt: skip
