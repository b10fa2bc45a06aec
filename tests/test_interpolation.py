"""λ of a reranker and its first stage, chosen on dev (:mod:`clir_toolkit.rerank.interpolation`)."""

from __future__ import annotations

from clir_toolkit.formats import Qrel, RunRow
from clir_toolkit.rerank.interpolation import (
    INTERPOLATION_GRID,
    best_interpolation,
    interpolation_scores,
)


def candidates(first_stage: dict[str, list[float]]) -> dict[str, list[RunRow]]:
    """Each query's rows in first-stage order: documents d0, d1, ... scored as given."""
    return {
        qid: [RunRow(qid, f"d{i}", i + 1, score) for i, score in enumerate(scores)]
        for qid, scores in first_stage.items()
    }


def test_a_model_that_finds_what_the_first_stage_misses_is_given_its_full_weight() -> None:
    # The first stage ranks the one relevant document last; the model ranks it first.
    ranked = candidates({"q1": [3.0, 2.0, 1.0], "q2": [3.0, 2.0, 1.0]})
    neural = {(q, d): s for q in ("q1", "q2") for d, s in (("d0", 0.1), ("d1", 0.2), ("d2", 0.9))}
    qrels = [Qrel("q1", "d2", 1), Qrel("q2", "d2", 1)]
    scores = interpolation_scores(ranked, neural, 3, qrels)
    assert list(scores) == list(INTERPOLATION_GRID)
    assert scores[1.0] == 1.0 and scores[0.1] < 1.0
    # From λ 1/2 on, d2 is first (at 1/2 it ties d0, and trec_eval's order of ties, docid
    # descending, puts it first); of the equal best scores the first of the grid is chosen.
    assert all(scores[weight] == 1.0 for weight in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0))
    assert best_interpolation(scores) == 0.5


def test_a_model_that_only_breaks_the_first_stages_ties_keeps_a_small_weight() -> None:
    # The first stage is right, except that it ties the relevant d1 with d0 (docid order
    # puts d0 first); the model is wrong about the rest, so only a small λ helps.
    ranked = candidates({"q1": [2.0, 2.0, 0.0]})
    neural = {("q1", "d0"): 0.0, ("q1", "d1"): 0.1, ("q1", "d2"): 1.0}
    qrels = [Qrel("q1", "d1", 1)]
    scores = interpolation_scores(ranked, neural, 3, qrels)
    # d1 scores (1 − λ) + 0.1·λ, above d0's 1 − λ; d2 scores λ, above d1's from λ 1/1.9 on.
    assert all(scores[weight] == 1.0 for weight in (0.1, 0.2, 0.3, 0.4, 0.5))
    assert all(scores[weight] < 1.0 for weight in (0.6, 0.7, 0.8, 0.9, 1.0))
    assert best_interpolation(scores) == 0.1
