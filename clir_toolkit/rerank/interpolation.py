"""The interpolation weight λ of a reranker and its first stage, chosen on a dev split.

A reranked score mixes the model's and the first stage's, each min-max normalised over the
query's candidates (:func:`clir_toolkit.rerank.candidates.rerank_rows`):

    score = λ·neural + (1 − λ)·first_stage

Liu (*Neural CLIR*, §6.1) reranks "high-quality initial ranking results"; how much of the
initial score to keep depends on how good that ranking is. One K-NRM measured on its dev
splits wanted λ 0.8 over BM25 on the French man pages, 0.5 over the hybrid first stage on
ddtp-en-fr-hard and 0.4 over the hybrid with fine-tuned towers (docs/dense.md); on
collections it was not trained on, 0.4 (docs/transfer.md). So λ is a setting to tune on
dev, like the epoch, and it costs no more model time: the candidates are scored once
(:func:`clir_toolkit.rerank.score.score_candidates`), and each λ of the grid only re-sorts
them. ``clir demo``, ``clir rerank score --dev-run`` (:func:`interpolation_on_dev`)
and the recipes with several ``interpolate`` values choose λ this one way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.errors import ClirError
from clir_toolkit.rerank.candidates import rerank_rows
from clir_toolkit.rerank.training import DEV_MEASURE, mean_measure

if TYPE_CHECKING:
    from clir_toolkit.formats import Qrel, RunRow
    from clir_toolkit.rerank.contract import ScoredCandidates

INTERPOLATION_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The λ tried: 1 is the model alone (0, the first stage alone, is not reranking)."""


def interpolation_scores(
    ranked: Mapping[str, Sequence[RunRow]],
    neural: Mapping[tuple[str, str], float],
    depth: int,
    qrels: Sequence[Qrel],
    grid: Sequence[float] = INTERPOLATION_GRID,
) -> dict[float, float]:
    """:data:`~clir_toolkit.rerank.training.DEV_MEASURE` of the reranked run at each λ of
    ``grid``: ``ranked`` and ``neural`` are the scored dev candidates
    (:class:`~clir_toolkit.rerank.contract.ScoredCandidates`), ``qrels`` the dev judgements."""
    # Rows below the top ``depth`` keep their order beneath the reranked ones, so the measure
    # (nDCG@10) sees only the first max(depth, 10) of each query: the rest need not be sorted.
    kept = max(depth, 10)
    candidates = {qid: rows[:kept] for qid, rows in ranked.items()}
    return {
        weight: mean_measure(qrels, rerank_rows(candidates, neural, depth, weight), DEV_MEASURE)
        for weight in grid
    }


def best_interpolation(scores: Mapping[float, float]) -> float:
    """The λ of the highest dev score (of equal ones, the first of the grid)."""
    return max(scores, key=lambda weight: scores[weight])


@dataclass(frozen=True)
class DevChoice:
    """λ chosen on a dev split, with what it was chosen from."""

    weight: float
    scores: dict[float, float]
    """The dev measure at each λ tried."""
    candidates: ScoredCandidates
    """The dev candidates as the model scored them (reused when the dev split is reranked)."""

    def describe(self) -> str:
        """E.g. ``nDCG@10 by λ: 0.1 0.4012, ...; chosen: 0.6``."""
        return describe_choice(self.scores, self.weight)


def describe_choice(scores: Mapping[float, float], weight: float) -> str:
    """The dev score of each λ tried and the λ chosen, in one line."""
    tried = ", ".join(f"{each:g} {score:.4f}" for each, score in scores.items())
    return f"{DEV_MEASURE} by λ: {tried}; chosen: {weight:g}"


def interpolation_on_dev(
    model_path: str | Path,
    collection: str | Path,
    dev_run: str | Path,
    depth: int,
    *,
    device: str = "auto",
    batch_size: int | None = None,
    cache_dir: str | Path | None = None,
    precision: str = "fp32",
    verbose: bool = True,
) -> DevChoice:
    """The λ best for ``model_path`` over a first stage, on the collection's dev split:
    ``dev_run`` (the first stage's run of the dev topics) has its top ``depth`` scored once,
    and each λ of :data:`INTERPOLATION_GRID` is measured against the dev judgements."""
    from clir_toolkit.collection import open_collection
    from clir_toolkit.formats import read_qrels
    from clir_toolkit.rerank.score import score_candidates

    opened = open_collection(collection)
    topics, qrels = (opened.split_file(kind, "dev") for kind in ("topics", "qrels"))
    for needed in (topics, qrels):
        if not needed.is_file():
            raise ClirError(
                f"{collection}: no dev split to choose λ on ({needed.name} is missing); "
                "give λ itself (--interpolate)"
            )
    candidates = score_candidates(
        model_path, collection, topics, dev_run, depth, device, None, batch_size, cache_dir,
        precision, verbose,
    )  # fmt: skip
    scores = interpolation_scores(candidates.ranked, candidates.neural, depth, read_qrels(qrels))
    return DevChoice(best_interpolation(scores), scores, candidates)
