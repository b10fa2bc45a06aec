"""Neural reranking on a local Ray cluster: the same run file as one process.

The models are trained for one epoch on the tiny French collection (as in
tests/test_rerank_train.py); ``--batch-size 8`` cuts its 72 pairs into 9 batches, so that
both workers score several.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from clir_toolkit.formats import RunRow, read_run, read_topics, write_run
from tests.conftest import (
    TINY_FR,
    assert_one_line_error,
    ray_worker_pids,
    run_clir,
    run_clir_killing_a_worker,
)

pytest.importorskip("ray")  # installed by make setup (the [ray] extra is in [dev])

TOPICS = TINY_FR / "topics.dev.tsv"


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory, first_stage: Path) -> dict[str, Path]:
    """A one-epoch K-NRM and dual encoder (16-d, documents of 40 words at most)."""
    from clir_toolkit.rerank.word.train import train_reranker
    from clir_toolkit.rerank.word.train_config import TrainConfig

    directory = tmp_path_factory.mktemp("models")
    trained = {}
    for model in ("knrm", "dual"):
        config = TrainConfig(
            collection=TINY_FR, topics=TOPICS, qrels=TINY_FR / "qrels.dev.txt",
            run=first_stage, output=directory / f"{model}.pt", model=model, epochs=1, dim=16,
            negatives_per_query=10, batch_size=16, max_doc_len=40, device="cpu",
            verbose=False, cache_dir=directory / "cache",
        )  # fmt: skip
        trained[model] = train_reranker(config).output
    return trained


def _score(model: Path, run: Path, output: Path, *options: str,
           topics: Path = TOPICS) -> list[str]:  # fmt: skip
    """``clir rerank score``'s arguments (tensor cache beside the output)."""
    return ["rerank", "score", "--model", str(model), "--collection", str(TINY_FR),
            "--topics", str(topics), "--run", str(run), "--output", str(output),
            "--cache-dir", str(output.parent / "cache"), "--batch-size", "8", "--quiet",
            *options]  # fmt: skip


def _same_run(result: subprocess.CompletedProcess[str], one: Path, spread: Path) -> None:
    assert result.returncode == 0, result.stderr
    assert spread.read_bytes() == one.read_bytes()
    assert sorted(p.name for p in spread.parent.iterdir() if p.name.endswith(".tmp")) == []


@pytest.mark.parametrize(("model", "workers"), [("knrm", "2"), ("dual", "3")])
def test_reranking_on_two_local_cpus_writes_the_same_run(
    models: dict[str, Path], first_stage: Path, tmp_path: Path, model: str, workers: str
) -> None:
    """K-NRM by 2 actors, the dual encoder by 3 (more actors than CPUs: one waits): byte
    for byte the single process's run."""
    one, spread = tmp_path / "one.trec", tmp_path / "ray.trec"
    assert run_clir(*_score(models[model], first_stage, one)).returncode == 0
    result = run_clir(*_score(models[model], first_stage, spread, "--ray", "local:2",
                              "--workers", workers))  # fmt: skip
    _same_run(result, one, spread)
    assert len(read_run(one)) == 72


def _many_queries(first_stage: Path, directory: Path, copies: int) -> tuple[Path, Path]:
    """The six topics and their runs repeated ``copies`` times under new query ids."""
    topics = list(read_topics(TOPICS))
    rows = read_run(first_stage)
    with open(directory / "topics.tsv", "w", encoding="utf-8") as out:
        for i in range(copies):
            out.writelines(f"{topic.qid}-{i}\t{topic.query}\n" for topic in topics)
    write_run(directory / "first.trec", [
        RunRow(f"{row.qid}-{i}", row.docid, 0, row.score + i % 3, row.tag)
        for i in range(copies) for row in rows
    ])  # fmt: skip
    return directory / "topics.tsv", directory / "first.trec"


def test_a_killed_worker_is_retried_and_the_run_is_the_same(
    models: dict[str, Path], first_stage: Path, tmp_path: Path
) -> None:
    """kill -9 an actor while it scores: Ray starts it again and sends its chunks again, and
    the interpolated run is still byte for byte the single process's; nothing half-written."""
    topics, run = _many_queries(first_stage, tmp_path, copies=500)  # 36,000 pairs
    options = ["--interpolate", "0.5", "--batch-size", "64"]
    one, spread = tmp_path / "one.trec", tmp_path / "ray.trec"
    assert run_clir(*_score(models["knrm"], run, one, *options, topics=topics)).returncode == 0
    result, killed = run_clir_killing_a_worker(
        *_score(models["knrm"], run, spread, *options, "--ray", "local:2", topics=topics),
        name="BatchScorer.score",
    )
    assert killed is not None, "no actor was caught scoring"
    _same_run(result, one, spread)


def test_sigterm_while_the_actors_score_stops_as_the_command_line_says(
    models: dict[str, Path], first_stage: Path, tmp_path: Path
) -> None:
    """SIGTERM while an actor scores: ``clir: interrupted``, exit 143 (not Ctrl-C's 130:
    Ray's ``ray.get`` turns the handler's exception into a bare KeyboardInterrupt), and
    no run or temporary file written."""
    topics, run = _many_queries(first_stage, tmp_path, copies=500)  # 36,000 pairs
    output = tmp_path / "ray.trec"
    command = [sys.executable, "-m", "clir_toolkit.cli",
               *_score(models["knrm"], run, output, "--batch-size", "64", "--ray", "local:2",
                       topics=topics)]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not ray_worker_pids("BatchScorer.score"):
            assert process.poll() is None, "the scoring ended before an actor was seen"
            assert time.monotonic() < deadline, "no actor was seen scoring in 300 s"
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 143, stderr
    assert stderr == "clir: interrupted\n"  # and none of Ray's lines about the tasks cut short
    assert not output.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_what_ray_does_not_score_is_one_line(
    models: dict[str, Path], first_stage: Path, tmp_path: Path
) -> None:
    from clir_toolkit.rerank.sentence.tuned_config import MODEL_FORMAT

    output = tmp_path / "r.trec"
    result = run_clir(*_score(models["knrm"], first_stage, output, "--ray", "local:0"))
    assert_one_line_error(result, "--ray 'local:0'", "local:N", status=2)
    result = run_clir(*_score(models["knrm"], first_stage, output, "--ray", "local:2",
                              "--workers", "0"))  # fmt: skip
    assert_one_line_error(result, "argument --workers: expected an integer between 1 and 1024",
                          status=2)
    tuned = tmp_path / "tuned.pt"
    torch.save({"format": MODEL_FORMAT}, tuned)
    result = run_clir(*_score(tuned, first_stage, output, "--ray", "local:2"))
    assert_one_line_error(result, "fine-tuned encoder", "leave out --ray")
    assert not output.exists()


def test_a_cluster_address_where_nothing_answers_is_one_line(
    models: dict[str, Path], first_stage: Path, tmp_path: Path
) -> None:
    """``--ray HOST:PORT`` where nothing listens: one line naming the address, exit 1, no
    run written (Ray alone retries for minutes and does not answer SIGTERM meanwhile)."""
    output = tmp_path / "r.trec"
    result = run_clir(*_score(models["knrm"], first_stage, output, "--ray", "127.0.0.1:1"))
    assert_one_line_error(result, "--ray 127.0.0.1:1: no Ray cluster answers",
                          "ray start --head --port=1")  # fmt: skip
    assert not output.exists()


def test_without_ray_installed_it_is_one_line(
    models: dict[str, Path], first_stage: Path, tmp_path: Path
) -> None:
    """A ``ray`` that cannot be imported (first on the path) stands for Ray not installed."""
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "__init__.py").write_text("raise ImportError('no ray here')\n")
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    result = run_clir(*_score(models["knrm"], first_stage, tmp_path / "r.trec", "--ray",
                              "local:2"), env={"PYTHONPATH": path})  # fmt: skip
    assert_one_line_error(result, "--ray needs Ray", "pip install 'clir_toolkit[ray]'")
