"""Procrustes, CSLS and lexicon induction on small synthetic spaces with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from clir_toolkit.translate.alignment import (
    AlignedSpace,
    align,
    csls_scores,
    lexicon_precision,
    mutual_nearest_pairs,
    neighbourhood_similarity,
    normalise,
    procrustes,
    top_targets,
)


def random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def test_procrustes_recovers_a_known_rotation_exactly() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 8))
    rotation = random_rotation(rng, 8)
    w = procrustes(x, x @ rotation)
    np.testing.assert_allclose(w, rotation, atol=1e-5)
    np.testing.assert_allclose(w.T @ w, np.eye(8), atol=1e-5)


def test_procrustes_is_the_best_orthogonal_map_for_noisy_pairs() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 6))
    y = x @ random_rotation(rng, 6) + 0.3 * rng.normal(size=(60, 6))
    w = procrustes(x, y)
    best = np.linalg.norm(x @ w - y)
    for _ in range(20):  # no other rotation does better
        assert best <= np.linalg.norm(x @ random_rotation(rng, 6) - y)


def test_procrustes_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="one shape"):
        procrustes(np.ones((3, 2)), np.ones((4, 2)))


def test_normalise_gives_unit_centred_rows_and_keeps_the_input() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(loc=5.0, size=(100, 4))
    before = vectors.copy()
    centred = normalise(vectors)
    np.testing.assert_allclose(np.linalg.norm(centred, axis=1), 1.0, atol=1e-5)
    # The shared direction (all rows near +5 on every axis) is gone after centring.
    assert np.linalg.norm(centred.mean(axis=0)) < 0.2
    assert np.linalg.norm(normalise(vectors, center=False).mean(axis=0)) > 0.9
    np.testing.assert_array_equal(vectors, before)


def hub_space(seed: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """30 source words, each 0.6·(its translation) + 0.8·(one shared hub direction)."""
    rng = np.random.default_rng(seed)
    translations = normalise(rng.normal(size=(30, 64)), center=False)
    hub = normalise(rng.normal(size=(1, 64)), center=False)
    sources = normalise(0.6 * translations + 0.8 * hub, center=False)
    targets = np.vstack([translations, hub])  # the hub is target word 30
    return sources, targets, 30


def test_csls_penalises_a_hub_that_nearest_neighbours_choose() -> None:
    sources, targets, hub = hub_space()
    nn = top_targets(sources, targets, range(30), k=1, method="nn")[:, 0]
    csls = top_targets(sources, targets, range(30), k=1, method="csls", csls_k=5)[:, 0]
    assert (nn == hub).sum() == 30
    assert (csls == hub).sum() == 0
    assert list(csls) == list(range(30))


def test_csls_scores_follow_the_formula() -> None:
    sources, targets, _ = hub_space()
    k = 4
    scores = csls_scores(sources, targets, k=k, rows=[0, 5], batch_size=7)
    cos = sources @ targets.T
    r_target = np.sort(cos, axis=1)[:, -k:].mean(axis=1)  # each source's k nearest targets
    r_source = np.sort(cos.T, axis=1)[:, -k:].mean(axis=1)  # each target's k nearest sources
    expected = 2 * cos - r_target[:, None] - r_source[None, :]
    np.testing.assert_allclose(scores, expected[[0, 5]], atol=1e-5)
    np.testing.assert_allclose(
        neighbourhood_similarity(targets, sources, k, batch_size=3), r_source, atol=1e-6
    )


def test_ties_are_broken_by_the_lower_index() -> None:
    sources = np.array([[1.0, 0.0]])
    targets = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    assert top_targets(sources, targets, [0], k=3, method="nn").tolist() == [[1, 2, 3]]


def toy_space() -> AlignedSpace:
    """Source words a, b, c and target words x, y, z at hand-chosen angles."""
    angle = np.deg2rad
    source = {"a": 0, "b": 50, "c": 100}
    target = {"x": 0, "y": 45, "z": 60}
    vec = {
        name: [np.cos(angle(deg)), np.sin(angle(deg))] for name, deg in {**source, **target}.items()
    }
    return AlignedSpace(
        list(source),
        np.array([vec[w] for w in source]),
        list(target),
        np.array([vec[w] for w in target]),
    )


def test_lexicon_precision_by_hand() -> None:
    space = toy_space()
    # a (0°): ranking x, y, z — gold x: right at 1.
    # b (50°): ranking y (5° away), z (10°), x — gold z: wrong at 1, right at 2.
    # c (100°): ranking z, y, x — golds x and z: right at 1 (any gold counts).
    # "unknown" has no vector and "w" is no target word: both skipped.
    pairs = [("a", "x"), ("b", "z"), ("c", "x"), ("c", "z"), ("unknown", "x"), ("a", "w")]
    result = lexicon_precision(space, pairs, at=(1, 2), methods=("nn",))
    assert result.words == 3
    assert result.precision == {"nn": {1: pytest.approx(2 / 3), 2: pytest.approx(1.0)}}
    assert "NN P@1 66.7 P@2 100.0" in str(result)


def test_translate_words_ranks_candidates_and_leaves_out_unknown_words() -> None:
    space = toy_space()
    assert space.translate_words(["b", "nowhere", "a"], k=2, method="nn") == {
        "b": ["y", "z"],
        "a": ["x", "y"],
    }


def test_refinement_repairs_a_map_learnt_from_a_wrong_seed() -> None:
    rng = np.random.default_rng(0)
    n, d = 300, 10
    x = normalise(rng.normal(size=(n, d)), center=False)
    y = normalise(x @ random_rotation(rng, d) + 0.03 * rng.normal(size=(n, d)), center=False)
    words_x, words_y = [f"s{i}" for i in range(n)], [f"t{i}" for i in range(n)]
    gold = list(zip(words_x, words_y, strict=True))
    # 14 right pairs and 6 wrong ones.
    seed = [(i, i) for i in range(14)] + [(i, i + 1) for i in range(14, 20)]

    def precision(refine: int) -> float:
        w, sizes = align(x, y, seed, refine=refine, keep_seed=False)
        assert len(sizes) == refine + 1
        space = AlignedSpace(words_x, x @ w, words_y, y)
        return lexicon_precision(space, gold, at=(1,)).precision["csls"][1]

    assert precision(3) > precision(0) + 0.2
    assert precision(3) > 0.9


def test_mutual_nearest_pairs_of_identical_spaces_are_the_identity() -> None:
    x = normalise(np.random.default_rng(4).normal(size=(50, 8)), center=False)
    assert mutual_nearest_pairs(x, x, max_rank=20) == [(i, i) for i in range(20)]
