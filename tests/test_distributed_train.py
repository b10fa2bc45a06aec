"""Data-parallel training (``clir rerank train --ddp N``): the model of one process.

Two workers with gloo on the CPU, on the tiny French collection, against one process with
the same seed and settings. The weights cannot be bit for bit the same — DDP sums the
workers' gradients in another order than one process sums its batch — so the tests say how
close they are (:data:`WEIGHT_TOLERANCE`), and check the weighting of the workers' slices
exactly on its own, without Ray (:func:`test_the_workers_gradients_average_to_the_batch_gradient`).

One local Ray cluster of 2 CPUs, held by a process of its own, serves the module: starting
Ray and Ray Train's workers is most of the time these tests take.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from clir_toolkit.formats import read_run
from clir_toolkit.rerank.model_io import read_model_file
from clir_toolkit.rerank.word.train import train_reranker
from tests.conftest import TINY_FR, assert_one_line_error, run_clir
from tests.test_rerank_train import _config, _score

pytest.importorskip("ray.train.torch")  # the [ray] extra, in [dev]: make setup installs it

from clir_toolkit.distributed.train import BatchLoss, data_parallel_step, share  # noqa: E402

WEIGHT_TOLERANCE = 1e-3
"""Largest difference allowed between a weight trained by two workers and by one process.

Measured (docs/training.md, "Data-parallel training"): 8.0e-6 for K-NRM with this module's
settings, 1.2e-7 for the dual encoder, at most 1.1e-4 over five settings — K-NRM's bias
with seed 7. Adam divides each gradient coordinate by its running magnitude, so a
coordinate whose gradient is nearly a cancellation (the hinge's bias gradient, a difference
of two almost equal tanh derivatives) moves by up to a learning rate a step whichever way
rounding tips it: the tolerance is one such step (K-NRM's learning rate, 1e-3)."""

SCORE_GAP = 1e-4
"""Two documents whose one-process scores differ by less than this may swap places."""

TOKEN = {"RAY_AUTH_MODE": "token"}
"""What a driver needs to join a cluster with Ray's token authentication (the default of a
cluster that ``ray.init`` starts) at an address it is given: the token is ~/.ray/auth_token."""

HOLD_A_CLUSTER = (
    "import sys, ray; ray.init(num_cpus=2, include_dashboard=False, logging_level='ERROR'); "
    "print(ray.get_runtime_context().gcs_address, flush=True); sys.stdin.read()"
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a local Ray cluster of 2 CPUs; it stops when its holder's stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_A_CLUSTER],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdin is not None
    address = holder.stdout.readline().strip()
    try:
        assert address, "the Ray cluster did not start"
        yield address
    finally:
        holder.stdin.close()
        holder.wait(timeout=120)


def _weights(path: Path) -> dict[str, torch.Tensor]:
    state: dict[str, torch.Tensor] = read_model_file(path)["state_dict"]
    return state


def _largest_difference(one: dict[str, torch.Tensor], other: dict[str, torch.Tensor]) -> float:
    assert one.keys() == other.keys()
    return max(float((one[k].float() - other[k].float()).abs().max()) for k in one)


def _assert_same_histories(one: Path, ddp: Path) -> None:
    """The same epochs, losses (to float rounding), dev scores and best epoch."""
    first, second = read_model_file(one), read_model_file(ddp)
    assert [r["epoch"] for r in first["history"]] == [r["epoch"] for r in second["history"]]
    for a, b in zip(first["history"], second["history"], strict=True):
        assert a["loss"] == pytest.approx(b["loss"], abs=1e-5)
        assert a["dev"] == pytest.approx(b["dev"], abs=1e-6)
    assert first["training"]["best_epoch"] == second["training"]["best_epoch"]


def _assert_same_ranking(one: Path, ddp: Path) -> None:
    """Every query's documents in the same order, but for pairs whose one-process scores
    lie within :data:`SCORE_GAP` (a near tie may swap); every score within the tolerance."""
    scores = {(r.qid, r.docid): r.score for r in read_run(one)}
    other = {(r.qid, r.docid): r.score for r in read_run(ddp)}
    assert scores.keys() == other.keys()
    for key, score in scores.items():
        assert abs(score - other[key]) <= WEIGHT_TOLERANCE, key
    for (qid, better), score in scores.items():
        for (same_qid, worse), worse_score in scores.items():
            if qid == same_qid and score - worse_score >= SCORE_GAP:
                assert other[(qid, better)] > other[(qid, worse)], (qid, better, worse)


def test_shares_are_contiguous_and_cover_the_batch() -> None:
    for size in range(9):
        for workers in range(1, 5):
            bounds = [share(size, rank, workers) for rank in range(workers)]
            assert bounds[0][0] == 0 and bounds[-1][1] == size
            assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
            assert max(e - s for s, e in bounds) - min(e - s for s, e in bounds) <= 1


class _GradientRecorder:
    """An optimiser that keeps the gradients of each step instead of applying them."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.module = module
        self.param_groups: list[dict[str, Any]] = []
        self.steps: list[dict[str, torch.Tensor]] = []

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.module.zero_grad(set_to_none=set_to_none)

    def step(self) -> None:
        self.steps.append({
            name: p.grad.to_dense().clone()
            for name, p in self.module.named_parameters() if p.grad is not None
        })  # fmt: skip


@pytest.mark.parametrize(("model", "loss"), [("knrm", "hinge"), ("dual", "po")])
def test_the_workers_gradients_average_to_the_batch_gradient(
    tmp_path: Path, first_stage: Path, model: str, loss: str
) -> None:
    """Steps 3–5 of distributed/train.py without Ray: the N workers' scaled gradients of a
    batch of 5, averaged as DDP averages them, are the batch's gradient, for 2 and 3 workers
    (unequal slices) and 6 (one empty); their losses add up to the batch loss. The dual
    encoder's proportional-odds loss has weights of its own (the cut-points)."""
    from clir_toolkit.rerank.word.epoch import epoch_batches
    from clir_toolkit.rerank.word.prepare import prepare_training, training_inputs
    from clir_toolkit.rerank.word.train import start_training

    config, corpus, cache_dir = training_inputs(_config(tmp_path, first_stage, model=model,
                                                        loss=loss))  # fmt: skip
    training = start_training(prepare_training(config, corpus, cache_dir), torch.device("cpu"))
    module = BatchLoss(training)
    recorder = _GradientRecorder(module)
    training = dataclasses.replace(training, optimiser=recorder)  # type: ignore[arg-type]
    data, batches = epoch_batches(training.prepared.data.relevance, config, training.generator)
    batch = batches[0][:5]

    whole = data_parallel_step(module, training, 0, 1, data, batch)
    expected = recorder.steps.pop()
    for workers in (2, 3, 6):
        parts = [data_parallel_step(module, training, r, workers, data, batch)
                 for r in range(workers)]  # fmt: skip
        assert sum(parts) == pytest.approx(whole, rel=1e-6)
        steps, recorder.steps = recorder.steps, []
        assert any(name.startswith("loss_fn.") for name in expected) == (loss == "po")
        for name, gradient in expected.items():
            average = sum(step[name] for step in steps) / workers
            torch.testing.assert_close(average, gradient, rtol=1e-5, atol=1e-7)


def _cli_training(
    first_stage: Path, tmp_path: Path, output: Path, model: str = "knrm", batch_size: int = 16
) -> list[str]:
    """``clir rerank train`` with the settings of test_rerank_train's ``_config``."""
    return [
        "rerank", "train", "--model", model, "--collection", str(TINY_FR),
        "--topics", str(TINY_FR / "topics.dev.tsv"), "--qrels", str(TINY_FR / "qrels.dev.txt"),
        "--run", str(first_stage), "--dev-topics", str(TINY_FR / "topics.dev.tsv"),
        "--dev-qrels", str(TINY_FR / "qrels.dev.txt"), "--dev-run", str(first_stage),
        "--epochs", "3", "--dim", "16", "--negatives", "10", "--batch-size", str(batch_size),
        "--max-doc-len", "40", "--device", "cpu", "--cache-dir", str(tmp_path / "cache"),
        "--output", str(output), "--quiet",
    ]  # fmt: skip


def _python_handles_sigint() -> None:
    """In the child, before Python starts: SIGINT not ignored (a shell starts its background
    jobs with SIGINT ignored, and Python then leaves it so)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for(found: Any, process: subprocess.Popen[str], what: str) -> None:
    """Wait until ``found()`` is true (the command still running)."""
    deadline = time.monotonic() + 300
    while not found():
        if process.poll() is not None:
            _, stderr = process.communicate()
            raise AssertionError(f"the training ended (exit {process.returncode}) before {what}: "
                                 f"{stderr}")
        assert time.monotonic() < deadline, f"no sign of {what} in 300 s"
        time.sleep(0.05)


@pytest.mark.parametrize("moment", ["starting", "training"])
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_training_stops_as_the_command_line_says(
    cluster: str, first_stage: Path, tmp_path: Path, signum: int, status: int, moment: str
) -> None:
    """Ctrl-C or SIGTERM while Ray Train starts (its storage has just appeared beside the
    output) or while the workers train (the first epoch's checkpoint is written): ``clir:
    interrupted``, exit 130 or 143, no temporary left, no model, and the cluster (given by
    address) still serves the next tests. Ray Train would take SIGINT over, and Ray's core
    SIGTERM, were they let; and the process must not crash on its way out (it died by
    SIGSEGV when Ray was shut down under a thread still waiting in ``ray.get``)."""
    output = tmp_path / "ddp.pt"
    training = _cli_training(first_stage, tmp_path, output)  # 200 epochs: time to interrupt
    command = [sys.executable, "-m", "clir_toolkit.cli", *training,
               "--epochs", "200", "--ddp", "2", "--ray", cluster]  # fmt: skip
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **TOKEN}, preexec_fn=_python_handles_sigint,
    )  # fmt: skip
    try:
        if moment == "starting":  # Ray Train's storage beside the output
            _wait_for(lambda: list(tmp_path.glob(".ddp.pt.*.tmp")), process, "Ray Train")
        else:  # rank 0 has finished an epoch
            _wait_for(output.with_name("ddp.pt.ckpt").exists, process, "a checkpoint")
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == status, stderr
    assert stderr == "clir: interrupted\n"
    assert list(tmp_path.glob(".*.tmp")) == [] and not output.exists()


def test_two_workers_train_the_model_of_one_process(
    cluster: str, first_stage: Path, tmp_path: Path
) -> None:
    """``clir rerank train --ddp 2 --ray ADDRESS`` writes a model whose weights are one
    process's within the tolerance, with the same epochs and dev scores; ``clir rerank
    score`` reranks a run with it in the same order."""
    one = train_reranker(_config(tmp_path, first_stage, output=tmp_path / "one.pt")).output
    ddp = tmp_path / "ddp.pt"
    result = run_clir(*_cli_training(first_stage, tmp_path, ddp), "--ddp", "2",
                      "--ray", cluster, env=TOKEN)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "knrm (hinge) on 2 DDP workers on cpu (gloo)" in result.stdout
    assert _largest_difference(_weights(one), _weights(ddp)) <= WEIGHT_TOLERANCE
    _assert_same_histories(one, ddp)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []

    reranked = tmp_path / "ddp.trec"
    result = run_clir("rerank", "score", "--model", str(ddp), "--collection", str(TINY_FR),
                      "--topics", str(TINY_FR / "topics.dev.tsv"), "--run", str(first_stage),
                      "--output", str(reranked), "--device", "cpu",
                      "--cache-dir", str(tmp_path / "cache"), "--quiet")  # fmt: skip
    assert result.returncode == 0, result.stderr
    _assert_same_ranking(_score(one, first_stage, tmp_path / "one.trec", tmp_path), reranked)


def test_two_workers_resume_one_process_with_unequal_and_empty_slices(
    cluster: str, first_stage: Path, tmp_path: Path
) -> None:
    """The dual encoder with proportional odds (a loss with weights) and batches of 7: 71
    examples make ten batches of 4 + 3 rows and one of a single row, which leaves a worker
    without examples. One process trains 2 epochs; two workers resume its checkpoint for a
    third: the model and the loss's cut-points are those of one process trained 3 epochs."""
    settings = {"model": "dual", "loss": "po", "batch_size": 7}
    whole = train_reranker(_config(tmp_path, first_stage, output=tmp_path / "one.pt",
                                   **settings))  # fmt: skip
    assert whole.examples == 71
    output = tmp_path / "ddp.pt"
    train_reranker(_config(tmp_path, first_stage, output=output, epochs=2, **settings))
    training = _cli_training(first_stage, tmp_path, output, model="dual", batch_size=7)
    result = run_clir(*training, "--loss", "po", "--resume", "--ddp", "2", "--ray", cluster,
                      env=TOKEN)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "dual (po) on 2 DDP workers on cpu (gloo)" in result.stdout
    assert _largest_difference(_weights(whole.output), _weights(output)) <= WEIGHT_TOLERANCE
    _assert_same_histories(whole.output, output)
    cut_points = [
        torch.load(p, weights_only=False)["loss"]
        for p in (whole.checkpoint, output.with_name(output.name + ".ckpt"))
    ]
    assert _largest_difference(*cut_points) <= WEIGHT_TOLERANCE


def _bare_training(tmp_path: Path) -> list[str]:
    """``clir rerank train`` with its required options only (no file needs to exist)."""
    return [
        "rerank", "train", "--collection", str(TINY_FR),
        "--topics", str(TINY_FR / "topics.dev.tsv"), "--qrels", str(TINY_FR / "qrels.dev.txt"),
        "--run", str(tmp_path / "run.trec"), "--output", str(tmp_path / "m.pt"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        (["--model", "knrm", "--ddp", "0"], ["--ddp", "at least 1"]),
        (["--ddp", "2"], ["--ddp", "--model knrm or dual"]),
        (["--model", "knrm", "--ray", "local:2"], ["--ray", "--ddp N"]),
        (["--model", "knrm", "--ddp", "2", "--ray", "no-port"], ["--ray 'no-port'"]),
    ],
)
def test_bad_data_parallel_options_are_one_line(
    tmp_path: Path, options: list[str], fragments: list[str]
) -> None:
    result = run_clir(*_bare_training(tmp_path), *options)
    assert_one_line_error(result, *fragments, status=2)


def test_a_cluster_address_where_nothing_answers_is_one_line(
    first_stage: Path, tmp_path: Path
) -> None:
    """``--ddp 2 --ray HOST:PORT`` where nothing listens: one line, exit 1, no model."""
    output = tmp_path / "ddp.pt"
    result = run_clir(*_cli_training(first_stage, tmp_path, output), "--ddp", "2",
                      "--ray", "127.0.0.1:1", env=TOKEN)  # fmt: skip
    assert_one_line_error(result, "--ray 127.0.0.1:1: no Ray cluster answers",
                          "ray start --head --port=1")  # fmt: skip
    assert not output.exists()


@pytest.mark.parametrize("missing", ["ray", "torch"])
def test_without_ray_train_or_torch_training_is_one_line(tmp_path: Path, missing: str) -> None:
    """A package that cannot be imported (stood in for by one that raises ImportError)."""
    fake = tmp_path / "fake" / missing
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"raise ImportError('no {missing} here')\n")
    path = f"{fake.parent}:{Path(__file__).parent.parent}"
    result = run_clir(*_bare_training(tmp_path), "--model", "knrm", "--ddp", "2",
                      env={"PYTHONPATH": path})  # fmt: skip
    assert_one_line_error(result, "--ddp needs Ray Train and PyTorch", f"no {missing} here",
                          "pip install 'clir_toolkit[ray]'")  # fmt: skip
    assert not (tmp_path / "m.pt").exists()
