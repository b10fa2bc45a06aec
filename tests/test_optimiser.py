"""Lazy Adam (rerank/word/optimiser.py): only the looked-up rows move; the rest is Adam."""

from __future__ import annotations

import pytest
import torch

from clir_toolkit.rerank.losses.hinge import pairwise_hinge
from clir_toolkit.rerank.losses.sosl import sosl
from clir_toolkit.rerank.word.dual import DualEncoder
from clir_toolkit.rerank.word.knrm import KNRM
from clir_toolkit.rerank.word.optimiser import (
    LazyAdam,
    clip_gradient_norm,
    sparse_parameters,
    use_sparse_gradients,
)
from clir_toolkit.rerank.word.train import build_optimiser


def _ids(*rows: list[int]) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.long)


@pytest.mark.parametrize("model_type", ["knrm", "dual"])
def test_a_step_moves_only_the_embedding_rows_the_batch_looked_up(model_type: str) -> None:
    torch.manual_seed(0)
    model = KNRM(20, 30, dim=8) if model_type == "knrm" else DualEncoder(20, 30, dim=8)
    optimiser = build_optimiser(model, None, lr=0.1)
    queries, better, worse = _ids([2, 3, 0]), _ids([4, 5, 6, 0]), _ids([7, 8, 0, 0])
    before_q = model.query_embedding.weight.detach().clone()
    before_d = model.doc_embedding.weight.detach().clone()
    if model_type == "knrm":
        loss = pairwise_hinge(model(queries, better), model(queries, worse))
    else:
        loss = sosl(model(queries, better), torch.tensor([2]))
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    moved_q = (model.query_embedding.weight != before_q).any(dim=1).nonzero().flatten()
    moved_d = (model.doc_embedding.weight != before_d).any(dim=1).nonzero().flatten()
    assert moved_q.tolist() == [2, 3]
    assert set(moved_d.tolist()) <= {4, 5, 6, 7, 8} and moved_d.numel() > 0
    assert model.doc_embedding.weight[0].abs().sum() == 0  # padding stays zero


def test_dense_parameters_follow_torch_adam_exactly() -> None:
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(3, 4))
    twin = torch.nn.Parameter(weight.detach().clone())
    lazy = LazyAdam([], [weight], lr=0.01)
    adam = torch.optim.Adam([twin], lr=0.01)
    for step in range(3):
        target = torch.full((3, 4), float(step))
        for parameter, optimiser in ((weight, lazy), (twin, adam)):
            optimiser.zero_grad()
            ((parameter - target) ** 2).sum().backward()
            optimiser.step()
    assert torch.equal(weight, twin)


def test_its_state_round_trips_and_a_foreign_state_is_refused() -> None:
    model = KNRM(10, 10, dim=4)
    optimiser = build_optimiser(model, None, lr=0.1)
    loss = model(_ids([2, 3]), _ids([4, 5])).sum()
    loss.backward()
    optimiser.step()
    copy = build_optimiser(model, None, lr=0.1)
    copy.load_state_dict(optimiser.state_dict())
    assert copy.state_dict()["sparse"]["state"].keys() == {0, 1}
    with pytest.raises(ValueError, match="not the state of this optimiser"):
        copy.load_state_dict(torch.optim.Adam(model.parameters()).state_dict())


def test_shared_tables_are_one_parameter() -> None:
    model = KNRM(10, 10, dim=4, shared_embeddings=True)
    assert sparse_parameters(model) == []  # dense until the trainer asks: plain Adam works
    use_sparse_gradients(model)
    assert len(sparse_parameters(model)) == 1


def test_clipping_counts_sparse_and_dense_gradients_in_one_norm() -> None:
    table = torch.nn.Embedding(5, 2, sparse=True)
    dense = torch.nn.Parameter(torch.zeros(2))
    with torch.no_grad():
        table.weight.fill_(0.0)
    # Row 1 looked up twice: its gradient is summed to (6, 8) before the norm is taken.
    (table(_ids([1, 1])) * torch.tensor([3.0, 4.0])).sum().backward()
    dense.grad = torch.tensor([0.0, 0.0])
    norm = clip_gradient_norm([table.weight, dense], max_norm=5.0)
    assert norm == pytest.approx(10.0)
    assert table.weight.grad is not None
    clipped = table.weight.grad.to_dense()[1]
    assert torch.allclose(clipped, torch.tensor([3.0, 4.0]), atol=1e-5)
