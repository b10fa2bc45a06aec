"""Pseudo-relevance feedback after translation: Rocchio and RM3 (thesis §5.2, eq. 5.1).

Both assume the top ``fb_docs`` documents of a first search are relevant, learn a
weighted set of ``fb_terms`` index terms from them, and search again with

    q_expanded = α · q_original + β · q_learned                                  (5.1)

The learned part reads each feedback document's term-frequency vector, stored in the
index at indexing time, so it works for any query structure: the original (structured)
Lucene query stays intact as one clause and the learned terms form a second one.

Rocchio (Rocchio 1971; thesis §5.2)
    each term of the feedback documents scores its mean tf·idf over them,
    ``w(t) = 1/|D| · Σ_d tf(t, d)/|d| · log(N / df(t))``; the best ``fb_terms`` terms,
    weights normalised to sum 1, form q_learned. Defaults α = 1, β = 0.75 (Anserini's).
RM3 (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004)
    the relevance model ``P(t | R) ∝ Σ_d P(t | d) · P(q | d)`` with ``P(t | d) = tf/|d|``
    and ``P(q | d)`` the document's first-pass score normalised over the feedback
    documents; the best ``fb_terms`` terms, renormalised, are interpolated with the original
    query by λ = ``original_weight`` (α = λ, β = 1 − λ; default 0.5, Anserini's).

Scale: a bag of n original terms sums n BM25 contributions while q_learned's weights sum
to 1, so q_learned's weights are multiplied by n (as Anserini does when it normalises the
original query to a distribution).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clir_toolkit.params import MAX_WEIGHT, Param, check_options, declare, with_defaults

FEEDBACK_METHODS = ("rocchio", "rm3")
RM3_ORIGINAL_WEIGHT = 0.5


@dataclass(frozen=True)
class Feedback:
    """Rocchio or RM3 with its parameters; :meth:`expand` rewrites one Lucene query."""

    method: str = "rocchio"
    fb_docs: int = 10
    fb_terms: int = 10
    alpha: float = 1.0
    beta: float = 0.75

    def __post_init__(self) -> None:
        values = {"prf": self.method, "fb_docs": self.fb_docs, "fb_terms": self.fb_terms,
                  "alpha": self.alpha, "beta": self.beta}  # fmt: skip
        check_options(values, [FEEDBACK_PARAMS[name] for name in values])

    @classmethod
    def rm3(
        cls, fb_docs: int = 10, fb_terms: int = 10, original_weight: float = RM3_ORIGINAL_WEIGHT
    ) -> Feedback:
        check_options({"original_weight": original_weight}, [FEEDBACK_PARAMS["original_weight"]])
        return cls("rm3", fb_docs, fb_terms, original_weight, 1.0 - original_weight)

    @property
    def name(self) -> str:
        return f"{self.method}-d{self.fb_docs}-t{self.fb_terms}"

    def expand(self, searcher: Any, query: Any, n_terms: int) -> Any:
        """The expanded Lucene query (``searcher`` is a :class:`~clir_toolkit.search.Searcher`)."""
        hits = searcher.search_lucene(query, self.fb_docs)
        if not hits:
            return query
        vectors = [searcher.document_vector(h.docid) for h in hits]
        if self.method == "rocchio":
            learned = rocchio_weights(vectors, searcher.documents, searcher.document_frequency)
        else:
            learned = relevance_model(vectors, [h.score for h in hits])
        terms = top_terms(learned, self.fb_terms, self.beta * max(n_terms, 1))
        if not terms:
            return query
        learned_query = searcher.weighted_terms_query(terms)
        return searcher.combine([(query, self.alpha), (learned_query, 1.0)])


FEEDBACK_PARAMS = {
    "prf": Param("prf", str, doc="pseudo-relevance feedback", choices=FEEDBACK_METHODS,
                 flag="--prf"),
    **with_defaults(declare(
        Param("fb_docs", int, doc="feedback documents", minimum=1, flag="--fb-docs"),
        Param("fb_terms", int, doc="feedback terms", minimum=1, flag="--fb-terms"),
        Param("alpha", float, doc="Rocchio: weight of the original query", minimum=0,
              maximum=MAX_WEIGHT, flag="--alpha"),
        Param("beta", float, doc="Rocchio: weight of the feedback terms", minimum=0,
              maximum=MAX_WEIGHT, flag="--beta"),
    ), Feedback),
    "original_weight": Param("original_weight", float, RM3_ORIGINAL_WEIGHT,
                             "RM3: weight of the original query", minimum=0, maximum=1,
                             flag="--original-weight"),
}  # fmt: skip
"""``--prf`` and the options of :class:`Feedback` (``clir search``, recipes)."""


def feedback_from(options: dict[str, Any]) -> Feedback | None:
    """The :class:`Feedback` that options named as :data:`FEEDBACK_PARAMS` ask for (None: no
    ``prf``); a missing option takes its declared default."""
    values = {name: param.default for name, param in FEEDBACK_PARAMS.items()} | {
        k: v for k, v in options.items() if k in FEEDBACK_PARAMS and v is not None
    }
    if values["prf"] is None:
        return None
    if values["prf"] == "rm3":
        return Feedback.rm3(values["fb_docs"], values["fb_terms"], values["original_weight"])
    return Feedback("rocchio", values["fb_docs"], values["fb_terms"], values["alpha"],
                    values["beta"])  # fmt: skip


def rocchio_weights(vectors: list[dict[str, int]], n_docs: int, df: Any) -> dict[str, float]:
    """Mean tf·idf of each term over the feedback documents (length-normalised tf)."""
    weights: dict[str, float] = {}
    for vector in vectors:
        length = sum(vector.values()) or 1
        for term, tf in vector.items():
            idf = math.log(n_docs / max(df(term), 1))
            weights[term] = weights.get(term, 0.0) + (tf / length) * idf / len(vectors)
    return weights


def top_terms(weights: dict[str, float], k: int, total: float) -> dict[str, float]:
    """The ``k`` heaviest terms (ties by term), scaled so that their weights sum to ``total``
    (β times the query's terms: the learned terms weigh as much as β query terms); empty when
    they weigh nothing."""
    top = dict(sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:k])
    mass = sum(top.values())
    if mass <= 0:
        return {}
    scale = total / mass
    return {term: weight * scale for term, weight in top.items()}


def relevance_model(vectors: list[dict[str, int]], scores: list[float]) -> dict[str, float]:
    """RM1: ``P(t | R) ∝ Σ_d P(t | d) · P(q | d)``, P(q | d) the normalised first-pass score."""
    total_score = sum(scores) or 1.0
    weights: dict[str, float] = {}
    for vector, score in zip(vectors, scores, strict=True):
        length = sum(vector.values()) or 1
        for term, tf in vector.items():
            weights[term] = weights.get(term, 0.0) + (tf / length) * (score / total_score)
    return weights
