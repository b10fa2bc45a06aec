"""A training loss or a reranker architecture is one new file in its home package.

The built-in losses (``clir_toolkit/rerank/losses/``) and architectures
(``clir_toolkit/rerank/models/``) register themselves in :mod:`clir_toolkit.registry`; these
tests add docs/extending.md's file of each to a home package, the way a contributor adds a
built-in, and check that ``--loss`` and ``--model`` accept the new names and train with
them, that training takes the new architecture's declared defaults, and that its model
file is read back and scored.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from clir_toolkit.errors import UsageError
from clir_toolkit.rerank import LOSS_NAMES, MODEL_NAMES, is_pairwise
from clir_toolkit.rerank.losses import build_loss
from clir_toolkit.rerank.score import score_run
from clir_toolkit.rerank.word.model_file import load_model
from clir_toolkit.rerank.word.train import train_reranker
from clir_toolkit.rerank.word.train_config import TRAIN_PARAMS, TrainConfig, resolved_config
from tests.conftest import TINY_FR
from tests.extending_examples import worked_files

TOPICS = TINY_FR / "topics.dev.tsv"
QRELS = TINY_FR / "qrels.dev.txt"

LOSS_FILE = "clir_toolkit/rerank/losses/absolute.py"
MODEL_FILE = "clir_toolkit/rerank/models/knrm_coarse.py"


@pytest.fixture()
def new_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """docs/extending.md's loss file and architecture file, each in a home package of its
    kind (a second home beside the toolkit's own, so that the toolkit's files stay
    untouched)."""
    with worked_files(tmp_path / "homes", monkeypatch, LOSS_FILE, MODEL_FILE):
        yield


def _config(tmp_path: Path, run: Path, **options: object) -> TrainConfig:
    return TrainConfig(
        collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=run, dev_topics=TOPICS,
        dev_qrels=QRELS, dev_run=run, output=tmp_path / "model.pt", epochs=1, dim=16,
        negatives_per_query=10, batch_size=16, max_doc_len=40, device="cpu", verbose=False,
        cache_dir=tmp_path / "cache", **options,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_built_in_names_are_the_registered_files_in_their_order() -> None:
    assert MODEL_NAMES.builtin == ("knrm", "dual")
    assert LOSS_NAMES.builtin == ("sosl", "mse", "po", "3part", "hinge")  # sosl: the default
    assert TRAIN_PARAMS["model"].choices is MODEL_NAMES
    assert TRAIN_PARAMS["loss"].choices is LOSS_NAMES


def test_the_registry_lists_the_home_files_without_importing_torch() -> None:
    """Listing the names imports every home module: they keep torch for later, so that
    ``clir rerank train --help`` and a recipe's checks stay fast."""
    import json
    import subprocess

    code = (
        "import json, sys\nfrom clir_toolkit import registry\n"
        "print(json.dumps([list(registry.names('losses')), list(registry.names('rerankers')),"
        " 'torch' in sys.modules]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    losses, rerankers, torch_imported = json.loads(result.stdout.splitlines()[-1])
    assert losses[:5] == ["sosl", "mse", "po", "3part", "hinge"] and rerankers[:2] == [
        "knrm", "dual"
    ]
    assert torch_imported is False


def test_a_new_loss_file_is_a_loss_name_that_trains(new_files: None) -> None:
    assert list(LOSS_NAMES)[:6] == ["sosl", "mse", "po", "3part", "hinge", "absolute"]
    assert not is_pairwise("absolute") and is_pairwise("hinge")
    loss, module = build_loss("absolute")
    value = loss(torch.tensor([0.85, -0.4]), torch.tensor([2, 0]))  # MSE's targets: no loss
    assert module is None and float(value) == pytest.approx(0.0)
    assert float(loss(torch.tensor([0.35]), torch.tensor([2]))) == pytest.approx(0.5)


def test_a_new_architecture_file_trains_with_its_declared_defaults_and_scores(
    new_files: None, tmp_path: Path, first_stage: Path
) -> None:
    assert "knrm-coarse" in MODEL_NAMES and "knrm-coarse" in TRAIN_PARAMS["model"].choices
    resolved = resolved_config(_config(tmp_path, first_stage, model="knrm-coarse"))
    assert (resolved.loss, resolved.lr) == ("hinge", 1e-3)
    report = train_reranker(_config(tmp_path, first_stage, model="knrm-coarse"))
    assert (report.model, report.loss) == ("knrm-coarse", "hinge")
    loaded = load_model(report.output)
    assert loaded.model_type == "knrm-coarse"
    assert loaded.model.mus == (1.0, 0.5, -0.5) and loaded.model.config()["sigma"] == 0.3
    output = tmp_path / "reranked.trec"
    score_run(report.output, TINY_FR, TOPICS, first_stage, output, device="cpu",
              cache_dir=tmp_path / "cache", verbose=False)  # fmt: skip
    assert output.read_text().split("\n")[0].split()[-1] == "knrm-coarse"


def test_the_command_line_trains_with_the_new_names(
    new_files: None, tmp_path: Path, first_stage: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clir_toolkit.cli import build_parser, main

    args = build_parser({"rerank"}).parse_args([
        "rerank", "train", "--collection", "c", "--topics", "t", "--qrels", "q", "--run", "r",
        "--output", "m.pt", "--model", "knrm-coarse", "--loss", "absolute",
    ])  # fmt: skip
    assert (args.model, args.loss) == ("knrm-coarse", "absolute")
    model = tmp_path / "absolute.pt"
    trained = main([
        "rerank", "train", "--collection", str(TINY_FR), "--topics", str(TOPICS), "--qrels",
        str(QRELS), "--run", str(first_stage), "--output", str(model), "--model",
        "knrm-coarse", "--loss", "absolute", "--epochs", "1", "--dim", "16",
        "--negatives", "10", "--batch-size", "16", "--max-doc-len", "40",
        "--device", "cpu", "--cache-dir", str(tmp_path / "cache"), "--quiet",
    ])  # fmt: skip
    printed = capsys.readouterr()
    assert trained == 0, printed.err
    assert printed.out.startswith("knrm-coarse (absolute) on cpu: ")
    assert load_model(model).model_type == "knrm-coarse"


def test_an_unknown_name_lists_the_registered_ones(new_files: None) -> None:
    listed = r'--model must be one of "knrm", "dual", "knrm-coarse" \(got "bm25"\)'
    with pytest.raises(UsageError, match=listed):
        TrainConfig(collection=TINY_FR, topics=TOPICS, qrels=QRELS, run=TOPICS, output="x",
                    model="bm25")  # fmt: skip


def test_clir_bench_rerank_measures_the_new_architecture(
    new_files: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bench builds any registered reranker as training does, and trains it with its
    declared loss (knrm-coarse: the pairwise hinge)."""
    from clir_toolkit.cli import main
    from clir_toolkit.rerank.word.bench import BenchSettings, bench_rerank

    tiny = BenchSettings(query_len=3, doc_len=12, dim=8, query_vocab=50, doc_vocab=80,
                         batch_size=16, train_batch_size=8, warmup=1, seconds=0.01,
                         min_iterations=2)  # fmt: skip
    rows = bench_rerank(tiny, models=["knrm-coarse", "dual"], devices=["cpu"])
    assert [(row.model, row.device) for row in rows] == [
        ("knrm-coarse", "cpu"), ("dual-avg", "cpu")]  # fmt: skip
    assert all(row.score_pairs_per_s > 0 and row.train_steps_per_s > 0 for row in rows)
    assert main(["bench", "rerank", "--device", "cpu", "--models", "knrm-coarse", "--dim", "8",
                 "--query-len", "3", "--doc-len", "12", "--query-vocab", "50", "--doc-vocab",
                 "80", "--batch-size", "16", "--train-batch-size", "8", "--warmup", "1",
                 "--seconds", "0.01"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[5:]] == [["knrm-coarse", "cpu"]]
