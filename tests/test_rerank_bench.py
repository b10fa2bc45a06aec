"""``clir bench rerank``: the settings and one line per model and device, on tiny sizes."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.rerank.candidates import CPU_BATCH_PAIRS, GPU_BATCH_PAIRS, batch_pairs
from clir_toolkit.rerank.word.bench import BenchSettings, bench_rerank, format_bench_rerank
from tests.conftest import assert_one_line_error, run_clir

TINY = BenchSettings(
    query_len=3,
    doc_len=12,
    dim=8,
    query_vocab=50,
    doc_vocab=80,
    batch_size=16,
    train_batch_size=8,
    warmup=1,
    seconds=0.01,
    min_iterations=2,
)


def test_bench_measures_both_models_on_the_cpu() -> None:
    rows = bench_rerank(TINY, devices=["cpu"])
    assert [(r.model, r.device) for r in rows] == [("knrm", "cpu"), ("dual-avg", "cpu")]
    for row in rows:
        assert row.score_pairs_per_s > 0 and row.train_steps_per_s > 0
        assert row.train_examples_per_s == pytest.approx(8 * row.train_steps_per_s)
        assert row.bandwidth_fraction is None  # only defined for CUDA
    text = format_bench_rerank(TINY, rows)
    for field in (
        "query length 3",
        "document length 12",
        "embeddings 8-d",
        "vocabularies 50 query / 80 document words",
        "precision fp32",
        "batches of 16 pairs",
        "batches of 8 examples",
        "score pairs/s",
        "train steps/s",
        "bandwidth",
    ):
        assert field in text
    # (3 + 12) tokens × (8 dimensions × 4 bytes + 8 bytes of id) = 600 bytes per pair.
    assert "≥ 600 bytes read per scored pair" in text
    assert TINY.bytes_per_pair == 600


def test_without_a_batch_size_the_bench_scores_in_clir_rerank_scores_batches() -> None:
    # The GPU's batch is 16 times the CPU's: small batches leave a GPU waiting on kernel
    # launches (K-NRM on an H100: 174,863 pairs/s in batches of 256, 1,003,836 in 4,096).
    assert batch_pairs(None, torch.device("cpu")) == CPU_BATCH_PAIRS == 256
    assert batch_pairs(None, torch.device("cuda")) == GPU_BATCH_PAIRS == 4096
    assert batch_pairs(16, torch.device("cuda")) == 16  # one asked is kept
    settings = dataclasses.replace(TINY, batch_size=None)
    rows = bench_rerank(settings, models=["dual"], devices=["cpu"])
    assert rows[0].score_batch == CPU_BATCH_PAIRS
    assert "batches of 256 pairs on the CPU and 4,096 on CUDA" in format_bench_rerank(
        settings, rows
    )
    assert bench_rerank(TINY, models=["dual"], devices=["cpu"])[0].score_batch == 16


def test_the_bench_measures_compiled_kernel_pooling_and_says_so() -> None:
    """``--compile``: K-NRM scores through torch.compile (on the CPU here, as on a GPU), the
    training steps are measured uncompiled, and the settings line says which was measured."""
    rows = bench_rerank(TINY, models=["dual"], devices=["cpu"])
    assert "kernel pooling eager" in format_bench_rerank(TINY, rows)
    compiled = dataclasses.replace(TINY, compiled=True)
    rows = bench_rerank(compiled, models=["knrm"], devices=["cpu"])
    assert rows[0].score_pairs_per_s > 0 and rows[0].train_steps_per_s > 0
    assert "kernel pooling compiled" in format_bench_rerank(compiled, rows)


def test_bench_runs_on_the_threads_asked_and_restores_them() -> None:
    before = torch.get_num_threads()
    rows = bench_rerank(dataclasses.replace(TINY, threads=1), models=["dual"], devices=["cpu"])
    assert rows[0].device_name.endswith("1 thread")
    assert torch.get_num_threads() == before


def test_bench_rejects_bad_settings() -> None:
    with pytest.raises(UsageError, match="--doc-len must be at least 1"):
        bench_rerank(BenchSettings(doc_len=0), devices=["cpu"])
    with pytest.raises(UsageError, match="--threads must be at least 1"):
        bench_rerank(BenchSettings(threads=0), devices=["cpu"])
    with pytest.raises(UsageError, match="needs a CUDA device"):
        bench_rerank(BenchSettings(precision="bf16", seconds=0.01), devices=["cpu"])


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on machines without CUDA")
def test_bench_on_cuda_without_a_gpu_is_a_clear_error() -> None:
    with pytest.raises(ClirError, match="no CUDA GPU is available"):
        bench_rerank(TINY, devices=["cuda"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bench_on_cuda_reports_the_bandwidth_share() -> None:
    rows = bench_rerank(dataclasses.replace(TINY, batch_size=None), devices=["cuda"])
    assert all(r.device.startswith("cuda") and r.bandwidth_fraction is not None for r in rows)
    assert all((r.bandwidth_fraction or 0) > 0 for r in rows)
    assert all(r.score_batch == GPU_BATCH_PAIRS for r in rows)


def test_cli_bench_rerank_prints_a_line_per_model() -> None:
    result = run_clir(
        "bench",
        "rerank",
        "--device",
        "cpu",
        "--models",
        "dual",
        "--query-len",
        "3",
        "--doc-len",
        "12",
        "--dim",
        "8",
        "--query-vocab",
        "50",
        "--doc-vocab",
        "80",
        "--batch-size",
        "16",
        "--train-batch-size",
        "8",
        "--warmup",
        "1",
        "--seconds",
        "0.01",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("settings: query length 3, document length 12, embeddings 8-d")
    assert any(line.startswith("dual-avg  cpu") for line in lines)
    assert not any(line.startswith("knrm") for line in lines)
    bad = run_clir("bench", "rerank", "--device", "cpu", "--dim", "0")
    assert_one_line_error(bad, "--dim must be at least 1", status=2)
