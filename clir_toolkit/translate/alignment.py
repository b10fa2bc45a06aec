"""Aligning two monolingual embedding spaces: orthogonal Procrustes, CSLS, lexicon induction.

Word vectors trained separately on two languages live in unrelated coordinate systems, but
their *shapes* are similar: "cat" is to "dog" in English roughly as "chat" is to "chien" in
French. A linear map learnt from a few thousand dictionary pairs therefore carries the
whole source vocabulary into the target space (Mikolov et al. 2013). This module implements
the offline recipe the thesis cites for its embedding translator (§5.3, reference [8]):

1. **Normalise** both spaces: unit length, mean-centred, unit length again
   (:func:`normalise`; Artetxe et al. 2018, "Generalizing and improving bilingual word
   embedding mappings…"; MUSE's ``renorm,center,renorm``).
2. **Orthogonal Procrustes** (:func:`procrustes`; Smith et al. 2017, "Offline bilingual word
   vectors, orthogonal transformations and the inverted softmax", §2.2–2.3, and Xing et al.
   2015): the orthogonal map W that best sends the seed words' source vectors onto their
   translations' vectors, in closed form from one SVD. An orthogonal map keeps every
   length and angle of the source space, so monolingual quality is not traded away.
3. **Retrieval by CSLS** (:func:`csls_scores`; Conneau et al. 2018, "Word translation
   without parallel data", §2.3): plain nearest neighbours suffer from *hubs*, target
   vectors that are the nearest neighbour of very many source words. Cross-domain
   similarity local scaling subtracts each vector's mean similarity to its neighbourhood.
4. Optional **refinement** (:func:`align`, ``refine``; Conneau et al. 2018, §2.2): induce a
   new seed dictionary from mutual CSLS nearest neighbours among frequent words and solve
   Procrustes again.
5. **Evaluation** by bilingual lexicon induction (:func:`lexicon_precision`): precision@k
   of the translations of held-out dictionary words.

Conventions: a matrix of word vectors has one *row* per word (shape ``(n, d)``); a source
vector ``x`` (a row) is mapped as ``x W``. All functions are pure numpy; the batched
functions never hold more than ``batch_size × n`` similarities at a time, so 50,000 ×
50,000 vocabularies need a few hundred MB, not 10 GB.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Matrix",
    "Method",
    "AlignedSpace",
    "LexiconPrecision",
    "align",
    "csls_scores",
    "lexicon_precision",
    "mutual_nearest_pairs",
    "neighbourhood_similarity",
    "normalise",
    "procrustes",
    "top_targets",
]

Matrix = NDArray[np.floating]
Method = Literal["nn", "csls"]
METHODS: tuple[Method, ...] = ("nn", "csls")

#: Rows of queries scored at once by the batched functions.
BATCH_SIZE = 1024


# ---------------------------------------------------------------------------------------------
# Normalisation and the orthogonal map
# ---------------------------------------------------------------------------------------------


def _unit_rows(vectors: Matrix) -> Matrix:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def normalise(vectors: Matrix, center: bool = True) -> NDArray[np.float32]:
    """Rows scaled to unit length; with ``center``, then mean-centred and scaled again.

    ``x ← x / ‖x‖``; ``x ← x − mean(X)``; ``x ← x / ‖x‖`` (Artetxe et al. 2018, §3.1). Unit
    length makes the dot product a cosine; centring removes the direction that all words of
    a language share, which otherwise no orthogonal map can match across languages.
    Returns a new float32 matrix; the input is not modified.
    """
    result = _unit_rows(np.asarray(vectors, dtype=np.float32))
    if center:
        result = _unit_rows(result - result.mean(axis=0, keepdims=True))
    return result.astype(np.float32, copy=False)


def procrustes(source: Matrix, target: Matrix) -> NDArray[np.float32]:
    """The orthogonal ``W`` (``d × d``) minimising ``‖X W − Y‖_F`` (Smith et al. 2017, §2.3).

    ``source`` is ``X`` and ``target`` is ``Y``, both ``(n, d)``: row ``i`` of ``X`` is a
    source word's vector and row ``i`` of ``Y`` its translation's. With the singular value
    decomposition ``Xᵀ Y = U Σ Vᵀ`` the solution is ``W = U Vᵀ`` (Schönemann 1966), and the
    mapped source vectors are ``X W``. (Papers that write vectors as columns and map them
    as ``W x`` decompose ``Y Xᵀ`` instead and get this matrix's transpose.)
    """
    x = np.asarray(source, dtype=np.float64)
    y = np.asarray(target, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"expected two (n, d) matrices of one shape, got {x.shape} and {y.shape}")
    if x.shape[0] == 0:
        raise ValueError("Procrustes needs at least one pair of vectors")
    u, _, vt = np.linalg.svd(x.T @ y)
    return (u @ vt).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Nearest neighbours and CSLS, in batches
# ---------------------------------------------------------------------------------------------


def _batches(n: int, batch_size: int) -> Iterator[slice]:
    for start in range(0, n, batch_size):
        yield slice(start, min(start + batch_size, n))


def neighbourhood_similarity(
    queries: Matrix, keys: Matrix, k: int = 10, batch_size: int = BATCH_SIZE
) -> NDArray[np.float32]:
    """``r(q)``: each query's mean cosine to its ``k`` nearest keys (Conneau et al. 2018, eq. 5).

    Rows must be unit length. ``r_T(x) = neighbourhood_similarity(X_mapped, Y)`` measures how
    crowded the target space is around a mapped source word ``x``, and
    ``r_S(y) = neighbourhood_similarity(Y, X_mapped)`` how crowded the mapped source space is
    around a target word ``y`` — large for hubs.
    """
    queries = np.asarray(queries, dtype=np.float32)
    keys = np.asarray(keys, dtype=np.float32)
    k = max(1, min(k, keys.shape[0]))
    result = np.empty(queries.shape[0], dtype=np.float32)
    for rows in _batches(queries.shape[0], batch_size):
        similarities = queries[rows] @ keys.T
        nearest = np.partition(similarities, -k, axis=1)[:, -k:]
        result[rows] = nearest.mean(axis=1)
    return result


def csls_scores(
    source_vectors: Matrix,
    target_vectors: Matrix,
    k: int = 10,
    rows: Sequence[int] | NDArray[np.integer] | None = None,
    batch_size: int = BATCH_SIZE,
) -> NDArray[np.float32]:
    """CSLS of the source ``rows`` against every target word (Conneau et al. 2018, eq. 6).

        CSLS(x, y) = 2 cos(x, y) − r_T(x) − r_S(y)

    where ``r_T(x)`` is the mean cosine of ``x`` to its ``k`` nearest target vectors and
    ``r_S(y)`` the mean cosine of ``y`` to its ``k`` nearest source vectors (see
    :func:`neighbourhood_similarity`; computed over the *whole* vocabularies, in batches).
    Source vectors must already be mapped into the target space; all rows unit length.
    Returns a ``(len(rows), n_target)`` matrix (all source rows when ``rows`` is None —
    mind its size for large vocabularies; :func:`top_targets` keeps only the best).
    """
    source_vectors = np.asarray(source_vectors, dtype=np.float32)
    target_vectors = np.asarray(target_vectors, dtype=np.float32)
    selected = source_vectors if rows is None else source_vectors[np.asarray(rows, dtype=int)]
    r_source = neighbourhood_similarity(target_vectors, source_vectors, k, batch_size)
    r_target = neighbourhood_similarity(selected, target_vectors, k, batch_size)
    scores = 2 * (selected @ target_vectors.T) - r_target[:, None] - r_source[None, :]
    return scores.astype(np.float32, copy=False)


def _best_columns(scores: NDArray[np.float32], k: int) -> NDArray[np.int64]:
    """Indices of each row's ``k`` highest scores, best first; ties go to the lower index."""
    k = min(k, scores.shape[1])
    candidates = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    # Sort the k candidates by score, then by index, so that results are deterministic.
    chosen = np.take_along_axis(scores, candidates, axis=1)
    order = np.lexsort((candidates, -chosen))
    return np.take_along_axis(candidates, order, axis=1).astype(np.int64)


def top_targets(
    source_vectors: Matrix,
    target_vectors: Matrix,
    rows: Sequence[int] | NDArray[np.integer],
    k: int = 5,
    method: Method = "csls",
    csls_k: int = 10,
    r_source: NDArray[np.float32] | None = None,
    batch_size: int = BATCH_SIZE,
) -> NDArray[np.int64]:
    """The ``k`` best target indices for each source row, best first: ``(len(rows), k)``.

    ``method="nn"`` ranks by cosine, ``"csls"`` by :func:`csls_scores` (``r_T(x)`` is
    constant along a row, so only ``r_S(y)`` changes the ranking). Pass ``r_source``
    (= ``neighbourhood_similarity(target, source, csls_k)``) to reuse it across calls.
    """
    if method not in METHODS:
        raise ValueError(f"unknown retrieval method {method!r} (use 'nn' or 'csls')")
    source_vectors = np.asarray(source_vectors, dtype=np.float32)
    target_vectors = np.asarray(target_vectors, dtype=np.float32)
    rows = np.asarray(rows, dtype=np.int64)
    penalty = np.zeros(target_vectors.shape[0], dtype=np.float32)
    if method == "csls":
        if r_source is None:
            r_source = neighbourhood_similarity(target_vectors, source_vectors, csls_k, batch_size)
        penalty = r_source
    result = np.empty((len(rows), min(k, target_vectors.shape[0])), dtype=np.int64)
    for batch in _batches(len(rows), batch_size):
        scores = 2 * (source_vectors[rows[batch]] @ target_vectors.T) - penalty[None, :]
        result[batch] = _best_columns(scores, k)
    return result


def mutual_nearest_pairs(
    source_vectors: Matrix,
    target_vectors: Matrix,
    max_rank: int = 15000,
    csls_k: int = 10,
    batch_size: int = BATCH_SIZE,
) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` that are each other's CSLS nearest neighbour (Conneau et al., §2.2).

    Only the ``max_rank`` first words of each side take part: with vocabularies sorted by
    frequency, these are the frequent words, whose vectors are the most reliable. The
    pairs form the synthetic dictionary of a refinement step.
    """
    source = np.asarray(source_vectors, dtype=np.float32)[:max_rank]
    target = np.asarray(target_vectors, dtype=np.float32)[:max_rank]
    forward = top_targets(source, target, range(len(source)), 1, "csls", csls_k, None, batch_size)
    backward = top_targets(target, source, range(len(target)), 1, "csls", csls_k, None, batch_size)
    return [(i, int(j)) for i, j in enumerate(forward[:, 0]) if backward[j, 0] == i]


# ---------------------------------------------------------------------------------------------
# Learning the map
# ---------------------------------------------------------------------------------------------


def _procrustes_on_pairs(
    source: Matrix, target: Matrix, pairs: Sequence[tuple[int, int]]
) -> NDArray[np.float32]:
    rows_source = np.array([i for i, _ in pairs], dtype=np.int64)
    rows_target = np.array([j for _, j in pairs], dtype=np.int64)
    return procrustes(source[rows_source], target[rows_target])


def align(
    source_vectors: Matrix,
    target_vectors: Matrix,
    seed_pairs: Sequence[tuple[int, int]],
    refine: int = 0,
    max_rank: int = 15000,
    csls_k: int = 10,
    keep_seed: bool = False,
) -> tuple[NDArray[np.float32], list[int]]:
    """The orthogonal map of ``source_vectors`` onto ``target_vectors``, and dictionary sizes.

    Solves :func:`procrustes` on the seed pairs (row indices ``(source, target)``), then
    ``refine`` times (Conneau et al. 2018, §2.2): map the source space, take the
    :func:`mutual_nearest_pairs` among the ``max_rank`` most frequent words as the new
    dictionary, and solve again. MUSE uses the induced pairs alone; ``keep_seed`` adds the
    seed pairs to them (as in the supervised self-learning of Artetxe et al. 2018); on
    English–French and English–German manual pages the induced pairs alone did as well or
    better (German CSLS P@1 29.5 against 26.3 after two steps). Returns ``(W, [number of pairs used
    by each solve])``. Inputs should be :func:`normalise`'d.
    """
    if not seed_pairs:
        raise ValueError("alignment needs at least one seed pair")
    if not 0 <= refine <= 5:
        raise ValueError(f"refine must be between 0 and 5 (got {refine})")
    source = np.asarray(source_vectors, dtype=np.float32)
    target = np.asarray(target_vectors, dtype=np.float32)
    pairs = list(dict.fromkeys(seed_pairs))
    w = _procrustes_on_pairs(source, target, pairs)
    sizes = [len(pairs)]
    for _ in range(refine):
        induced = mutual_nearest_pairs(source @ w, target, max_rank, csls_k)
        pairs = list(dict.fromkeys([*seed_pairs, *induced])) if keep_seed else induced
        if not pairs:
            break
        w = _procrustes_on_pairs(source, target, pairs)
        sizes.append(len(pairs))
    return w, sizes


# ---------------------------------------------------------------------------------------------
# Translating words and evaluating the translations
# ---------------------------------------------------------------------------------------------


@dataclass
class AlignedSpace:
    """Source words (mapped into the target space) and target words, ready to translate.

    Vectors are unit length; ``source_vectors`` are already multiplied by the map ``W``.
    """

    source_words: list[str]
    source_vectors: NDArray[np.float32]
    target_words: list[str]
    target_vectors: NDArray[np.float32]
    csls_k: int = 10
    source_index: dict[str, int] = field(init=False, repr=False)
    _r_source: NDArray[np.float32] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.source_index = {word: i for i, word in enumerate(self.source_words)}
        self.source_vectors = _unit_rows(np.asarray(self.source_vectors, np.float32))
        self.target_vectors = _unit_rows(np.asarray(self.target_vectors, np.float32))

    @property
    def r_source(self) -> NDArray[np.float32]:
        """``r_S(y)`` for every target word, computed once."""
        if self._r_source is None:
            self._r_source = neighbourhood_similarity(
                self.target_vectors, self.source_vectors, self.csls_k
            )
        return self._r_source

    def nearest(self, rows: Sequence[int], k: int = 5, method: Method = "csls") -> list[list[str]]:
        """The ``k`` best target words for each source row index, best first."""
        r_source = self.r_source if method == "csls" else None
        best = top_targets(
            self.source_vectors, self.target_vectors, rows, k, method, self.csls_k, r_source
        )
        return [[self.target_words[j] for j in row] for row in best]

    def translate_words(
        self, words: Iterable[str], k: int = 5, method: Method = "csls"
    ) -> dict[str, list[str]]:
        """Up to ``k`` candidate translations of each known word, best first.

        Words without a vector are left out of the result.
        """
        known = [word for word in dict.fromkeys(words) if word in self.source_index]
        found = self.nearest([self.source_index[word] for word in known], k, method)
        return dict(zip(known, found, strict=True))


@dataclass(frozen=True)
class LexiconPrecision:
    """Bilingual lexicon induction results: precision@k per retrieval method."""

    #: Source words evaluated (each with one or more gold translations).
    words: int
    #: ``precision[method][k]``: share of source words with a gold translation in the top k.
    precision: dict[str, dict[int, float]]

    def __str__(self) -> str:
        parts = [
            f"{method.upper()} " + " ".join(f"P@{k} {100 * p:.1f}" for k, p in by_k.items())
            for method, by_k in self.precision.items()
        ]
        return f"{self.words} words: " + "; ".join(parts)


def lexicon_precision(
    space: AlignedSpace,
    pairs_test: Iterable[tuple[str, str]],
    at: Sequence[int] = (1, 5),
    methods: Sequence[Method] = METHODS,
) -> LexiconPrecision:
    """Precision@k of word translation on held-out dictionary pairs (Conneau et al., §3.1).

    ``pairs_test`` holds ``(source word, gold translation)`` pairs; a source word may have
    several. A source word counts as correct at ``k`` when *any* of its gold translations is
    among its ``k`` best candidates. Pairs whose words have no vector are skipped.
    """
    target_known = set(space.target_words)
    gold: dict[str, set[str]] = {}
    for source, target in pairs_test:
        if source in space.source_index and target in target_known:
            gold.setdefault(source, set()).add(target)
    words = list(gold)
    rows = [space.source_index[word] for word in words]
    precision: dict[str, dict[int, float]] = {}
    for method in methods:
        candidates = space.nearest(rows, max(at), method) if words else []
        precision[method] = {
            k: (
                sum(bool(gold[w] & set(c[:k])) for w, c in zip(words, candidates, strict=True))
                / len(words)
                if words
                else 0.0
            )
            for k in at
        }
    return LexiconPrecision(len(words), precision)
