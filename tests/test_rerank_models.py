"""The reranker's models: K-NRM (thesis eq. 3.4) and the smooth-cosine dual encoder (Liu et al.).

Tiny vocabularies and dimensions, CPU only; every test can fail when the model is wrong.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import torch

from clir_toolkit.errors import UsageError
from clir_toolkit.rerank.losses.hinge import pairwise_hinge
from clir_toolkit.rerank.losses.sosl import sosl
from clir_toolkit.rerank.model_io import meta_skeleton
from clir_toolkit.rerank.word.bins import format_bins, kernel_bin_analysis
from clir_toolkit.rerank.word.dual import ENCODERS, DualEncoder, smooth_cosine
from clir_toolkit.rerank.word.knrm import DEFAULT_MUS, KNRM, kernel_pooling

VOCAB = 40


def _knrm(**kwargs: Any) -> KNRM:
    return KNRM(VOCAB, VOCAB + 7, dim=16, **kwargs)


def _dual(encoder: str, **kwargs: Any) -> DualEncoder:
    return DualEncoder(VOCAB, VOCAB + 7, dim=16, encoder=encoder, hidden=8, filters=12, **kwargs)


def _all_models() -> list[KNRM | DualEncoder]:
    return [_knrm(), *(_dual(encoder) for encoder in ENCODERS)]


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Four pairs with ragged lengths, padded at the end with id 0 (and OOV id 1 in use)."""
    queries = torch.tensor([[2, 3, 4], [5, 1, 0], [6, 0, 0], [7, 8, 9]])
    docs = torch.tensor(
        [
            [10, 11, 12, 13, 14, 15, 0],
            [16, 17, 1, 0, 0, 0, 0],
            [18, 0, 0, 0, 0, 0, 0],
            [19, 20, 21, 22, 23, 24, 25],
        ]
    )
    return queries, docs


def _model_id(model: torch.nn.Module) -> str:
    return getattr(model, "encoder", "knrm")


# -- Smooth Cosine Similarity (Liu et al. eq. 1, Figure 1) ------------------------------------


def test_smooth_cosine_gradient_stays_bounded_where_cosine_explodes() -> None:
    direction = torch.zeros(5, dtype=torch.float64)
    direction[0] = 1.0
    document = torch.tensor([[1.0, 1.0, 0.0, 0.0, 0.0]], dtype=torch.float64)
    sin_angle = math.sin(math.pi / 4)
    for norm in (1e-1, 1e-3, 1e-6):
        grads = {}
        for epsilon in (1.0, 0.0):
            query = (norm * direction).unsqueeze(0).requires_grad_(True)
            smooth_cosine(query, document, epsilon).sum().backward()
            assert query.grad is not None
            grads[epsilon] = float(query.grad.norm())
        # SCS: |grad| <= 2 / epsilon everywhere (Appendix A.1), whatever the query's norm.
        assert grads[1.0] <= 2.0
        # Cosine: |grad| = sin(angle) / ||q||, growing like 1 / ||q||.
        assert grads[0.0] * norm == pytest.approx(sin_angle, rel=1e-6)
    assert grads[0.0] > 1e5 > 1e3 * grads[1.0]


def test_smooth_cosine_values_and_zero_vectors() -> None:
    q = torch.tensor([[3.0, 4.0], [0.0, 0.0]])
    d = torch.tensor([[3.0, 4.0], [1.0, 0.0]])
    scs = smooth_cosine(q, d, 1.0)
    assert scs[0].item() == pytest.approx(25.0 / 36.0)  # 25 / ((5 + 1)(5 + 1))
    assert scs[1].item() == 0.0
    cosine = smooth_cosine(q, d, 0.0)
    assert cosine[0].item() == pytest.approx(1.0)
    assert cosine[1].item() == 0.0  # 0/0 guarded: no NaN
    zero = torch.zeros(1, 2, requires_grad=True)
    smooth_cosine(zero, d[:1], 1.0).sum().backward()
    assert zero.grad is not None and torch.isfinite(zero.grad).all()


def test_dual_encoder_forward_is_scs_of_cached_encodings() -> None:
    torch.manual_seed(0)
    model = _dual("avg", epsilon=0.5).eval()
    queries, docs = _batch()
    with torch.inference_mode():
        expected = smooth_cosine(model.encode_queries(queries), model.encode_docs(docs), 0.5)
        assert torch.allclose(model(queries, docs), expected)
        assert model.encode_docs(docs).shape == (4, model.output_dim)


def test_average_pooling_is_tanh_of_the_mean_of_real_tokens() -> None:
    model = _dual("avg").eval()
    with torch.no_grad():
        model.doc_embedding.weight[3] = torch.full((16,), 0.2)
        model.doc_embedding.weight[4] = torch.full((16,), 0.6)
    encoded = model.encode_docs(torch.tensor([[3, 4, 0, 0]]))
    assert torch.allclose(encoded, torch.full((1, 16), math.tanh(0.4)))


# -- K-NRM (thesis eq. 3.4) --------------------------------------------------------------------


def test_exact_match_kernel_counts_exact_matches() -> None:
    torch.manual_seed(0)
    model = KNRM(VOCAB, VOCAB, dim=32, shared_embeddings=True)
    query = torch.tensor([[5, 0]])
    doc = torch.tensor([[5, 7, 5, 8, 5, 9, 0, 0]])  # term 5 three times, then padding
    exact = model.exact_kernel
    assert exact == 0 and model.sigmas[exact] == 1e-3
    kernels = model.kernel_values(query, doc)
    assert kernels[0, 0, exact].item() == pytest.approx(3.0, abs=1e-4)
    assert kernels[0, 1].abs().max().item() == 0.0  # the padded query position counts nothing
    assert model.kernel_features(query, doc)[0, exact].item() == pytest.approx(math.log(3.0))
    # Without the word, the exact-match kernel is (near) empty: soft-TF hits the floor.
    kernels = model.kernel_values(torch.tensor([[6]]), doc)
    assert kernels[0, 0, exact].item() < 1e-6


def test_kernel_pooling_matches_the_rbf_formula_and_ignores_padded_documents() -> None:
    similarity = torch.tensor([[[0.5, 0.9, -0.2]]])
    mask = torch.tensor([[True, True, False]])
    pooled = kernel_pooling(similarity, mask, [0.5, 1.0], [0.1, 1e-3])
    soft = math.exp(0.0) + math.exp(-((0.9 - 0.5) ** 2) / (2 * 0.01))
    assert pooled[0, 0, 0].item() == pytest.approx(soft, rel=1e-6)
    assert pooled[0, 0, 1].item() == pytest.approx(0.0, abs=1e-30)


def test_knrm_has_eleven_kernels_and_the_thesis_score() -> None:
    torch.manual_seed(0)
    model = _knrm()
    queries, docs = _batch()
    features = model.kernel_features(queries, docs)
    assert features.shape == (4, len(DEFAULT_MUS)) == (4, 11)
    weight, bias = model.ranker.weight[0], model.ranker.bias[0]
    expected = torch.tanh(0.01 * features @ weight + bias)
    assert torch.allclose(model(queries, docs), expected, atol=1e-6)
    assert (model(queries, docs).abs() < 1).all()


def test_knrm_scores_are_float32_exact_under_autocast() -> None:
    torch.manual_seed(0)
    model = KNRM(VOCAB, VOCAB, dim=32, shared_embeddings=True).eval()
    queries = torch.tensor([[5, 6, 0]])
    docs = torch.tensor([[5, 7, 5, 8, 5, 9, 0, 0]])
    with torch.inference_mode():
        plain = model(queries, docs)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = model(queries, docs)
            kernels = model.kernel_values(queries, docs)
    assert mixed.dtype == torch.float32
    assert torch.allclose(plain, mixed, atol=1e-6)
    assert kernels[0, 0, 0].item() == pytest.approx(3.0, abs=1e-4)


def test_compiled_kernel_pooling_scores_as_the_eager_one() -> None:
    torch.manual_seed(0)
    model = _knrm().eval()
    queries, docs = _batch()
    with torch.inference_mode():
        eager = model(queries, docs)
        compiled = model.compile_pooling()(queries, docs)
    assert torch.allclose(eager, compiled, atol=1e-6)


def test_inference_cache_follows_weight_changes() -> None:
    torch.manual_seed(0)
    model = _knrm()
    queries, docs = _batch()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(2):
        with torch.inference_mode():
            cached = model(queries, docs)
        assert torch.allclose(cached, model(queries, docs).detach(), atol=1e-6)
        optimiser.zero_grad()
        model(queries, docs).sum().backward()
        optimiser.step()
    model.load_embeddings("doc", torch.randn(3, 16), torch.tensor([10, 11, 12]))
    with torch.no_grad():
        cached = model(queries, docs)
    assert torch.allclose(cached, model(queries, docs).detach(), atol=1e-6)


def test_load_embeddings_sets_rows_and_protects_padding() -> None:
    model = _knrm()
    vectors = torch.arange(32, dtype=torch.float32).reshape(2, 16)
    model.load_embeddings("query", vectors, torch.tensor([3, 7]))
    assert torch.equal(model.query_embedding.weight[7], vectors[1])
    with pytest.raises(ValueError, match="padding"):
        model.load_embeddings("doc", vectors, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="shape"):
        model.load_embeddings("doc", torch.zeros(2, 5), torch.tensor([2, 3]))
    shared = KNRM(VOCAB, VOCAB, dim=16, shared_embeddings=True)
    shared.load_embeddings("doc", vectors, torch.tensor([3, 7]))
    assert torch.equal(shared.query_embedding.weight[3], vectors[0])


def test_shared_embeddings_tie_the_tables_and_need_one_vocabulary() -> None:
    shared = KNRM(VOCAB, VOCAB, dim=16, shared_embeddings=True)
    assert shared.query_embedding is shared.doc_embedding
    assert _knrm().query_embedding is not _knrm().doc_embedding
    with pytest.raises(UsageError, match="one vocabulary"):
        KNRM(VOCAB, VOCAB + 1, dim=16, shared_embeddings=True)


def test_unknown_encoder_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="avg, cnn, lstm"):
        DualEncoder(VOCAB, VOCAB, encoder="transformer")


# -- Both models ---------------------------------------------------------------------------------


@pytest.mark.parametrize("model", _all_models(), ids=_model_id)
def test_padding_never_changes_a_score(model: torch.nn.Module) -> None:
    model.eval()
    queries, docs = _batch()
    longer_queries = torch.cat([queries, torch.zeros(4, 5, dtype=torch.long)], dim=1)
    longer_docs = torch.cat([docs, torch.zeros(4, 17, dtype=torch.long)], dim=1)
    with torch.no_grad():
        before = model(queries, docs)
        after = model(longer_queries, longer_docs)
    assert before.shape == (4,)
    assert torch.isfinite(before).all()
    assert torch.allclose(before, after, atol=1e-6, rtol=0)


@pytest.mark.parametrize("model", _all_models(), ids=_model_id)
def test_empty_texts_get_finite_scores(model: torch.nn.Module) -> None:
    model.eval()
    with torch.no_grad():
        scores = model(torch.zeros(2, 3, dtype=torch.long), torch.tensor([[4, 5], [0, 0]]))
    assert torch.isfinite(scores).all()


@pytest.mark.parametrize("name", ["knrm", *ENCODERS])
def test_the_same_seed_gives_the_same_scores(name: str) -> None:
    def build(seed: int) -> torch.nn.Module:
        torch.manual_seed(seed)
        return (_knrm() if name == "knrm" else _dual(name)).eval()

    queries, docs = _batch()
    with torch.no_grad():
        first, again, other = (build(seed)(queries, docs) for seed in (7, 7, 8))
    assert torch.equal(first, again)
    assert not torch.allclose(first, other)


@pytest.mark.parametrize("model", _all_models(), ids=_model_id)
def test_config_rebuilds_the_model(model: KNRM | DualEncoder) -> None:
    config = json.loads(json.dumps(model.config()))
    rebuilt = type(model)(**config)
    rebuilt.load_state_dict(model.state_dict())
    model.eval()
    rebuilt.eval()
    queries, docs = _batch()
    with torch.no_grad():
        assert torch.equal(model(queries, docs), rebuilt(queries, docs))
    assert type(model).model_type in ("knrm", "dual")


def _toy_training_set() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Four queries, each with one relevant and one irrelevant document: 8 pairs."""
    generator = torch.Generator().manual_seed(3)
    queries = torch.randint(2, VOCAB, (4, 3), generator=generator).repeat_interleave(2, dim=0)
    docs = torch.randint(2, VOCAB + 7, (8, 12), generator=generator)
    grades = torch.tensor([2, 0] * 4)
    return queries, docs, grades


def test_knrm_overfits_a_toy_training_set_with_the_pairwise_hinge() -> None:
    torch.manual_seed(0)
    model = _knrm()
    queries, docs, _ = _toy_training_set()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.05)

    def loss() -> torch.Tensor:
        scores = model(queries, docs)
        return pairwise_hinge(scores[0::2], scores[1::2])

    first = loss().item()
    for _ in range(40):
        optimiser.zero_grad()
        loss().backward()
        optimiser.step()
    assert loss().item() < 0.5 * first
    with torch.no_grad():
        scores = model.eval()(queries, docs)
    assert (scores[0::2] > scores[1::2]).all()


@pytest.mark.parametrize("encoder", ENCODERS)
def test_dual_encoder_overfits_a_toy_training_set_with_sosl(encoder: str) -> None:
    torch.manual_seed(0)
    model = _dual(encoder)
    queries, docs, grades = _toy_training_set()
    optimiser = torch.optim.Adam(model.parameters(), lr=0.05)
    first = sosl(model(queries, docs), grades).item()
    for _ in range(60):
        optimiser.zero_grad()
        sosl(model(queries, docs), grades).backward()
        optimiser.step()
    model.eval()
    with torch.no_grad():
        scores = model(queries, docs)
    assert sosl(scores, grades).item() < 0.5 * first
    assert (scores[0::2] > scores[1::2]).all()


# -- Kernel bins (thesis §6.2) -----------------------------------------------------------------


def test_kernel_bin_analysis_counts_pairs_per_nearest_kernel() -> None:
    model = KNRM(10, 10, dim=2)

    def unit(cosine: float) -> list[float]:
        return [cosine, math.sqrt(max(0.0, 1.0 - cosine * cosine))]

    model.load_embeddings("query", torch.tensor([[1.0, 0.0]]), torch.tensor([2]))
    doc_vectors = torch.tensor([unit(1.0), unit(0.97), unit(0.52), unit(0.05), unit(-1.0)])
    model.load_embeddings("doc", doc_vectors, torch.tensor([2, 3, 4, 5, 6]))
    with torch.no_grad():
        model.ranker.weight.copy_(torch.arange(11, dtype=torch.float32).unsqueeze(0))
    queries = torch.tensor([[2, 0], [2, 0]])
    docs = torch.tensor([[2, 3, 4, 5, 6, 2, 0], [4, 4, 0, 0, 0, 0, 0]])
    rows = kernel_bin_analysis(model, queries, docs)
    sizes = {row.mu: row.pairs for row in rows}
    assert sizes == {
        1.0: 2,  # exact matches only
        0.9: 1,  # 0.97 is near 1 but not exact
        0.7: 0,
        0.5: 3,
        0.3: 0,
        0.1: 1,
        -0.1: 0,
        -0.3: 0,
        -0.5: 0,
        -0.7: 0,
        -0.9: 1,
    }
    assert sum(sizes.values()) == 8  # padding pairs are no pairs
    assert [row.weight for row in rows] == [float(k) for k in range(11)]
    assert rows[0].exact and not any(row.exact for row in rows[1:])
    table = format_bins(rows).splitlines()
    assert len(table) == 12 and "weight" in table[0] and "(exact)" in table[1]
    assert len({len(line) for line in table}) == 1  # aligned columns


@pytest.mark.parametrize("model", _all_models(), ids=lambda m: type(m).__name__)
def test_a_skeleton_has_the_models_shapes_and_no_memory(model: torch.nn.Module) -> None:
    config = model.config()  # type: ignore[operator]
    skeleton = meta_skeleton(lambda: type(model)(**config))
    expected = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    assert {name: tuple(t.shape) for name, t in skeleton.state_dict().items()} == expected
    assert all(t.is_meta for t in skeleton.state_dict().values())

