"""``clir rerank bins``: K-NRM's kernel-bin table, and with ``--plot`` the same numbers as a
PNG figure, written whole or not at all, the printed table unchanged.

The model is a one-epoch K-NRM trained on the hand-made French collection; its pairs come
from ``first_stage`` of tests/conftest.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.rerank.word.train import train_reranker
from clir_toolkit.rerank.word.train_config import TrainConfig
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

TOPICS = TINY_FR / "topics.dev.tsv"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def knrm(tmp_path_factory: pytest.TempPathFactory, first_stage: Path) -> Path:
    """A small K-NRM trained for one epoch on tiny-fr."""
    directory = tmp_path_factory.mktemp("knrm")
    config = TrainConfig(
        collection=TINY_FR,
        topics=TOPICS,
        qrels=TINY_FR / "qrels.dev.txt",
        run=first_stage,
        model="knrm",
        epochs=1,
        dim=16,
        negatives_per_query=10,
        batch_size=16,
        max_doc_len=40,
        device="cpu",
        verbose=False,
        cache_dir=directory / "cache",
        output=directory / "knrm.pt",
    )
    return train_reranker(config).output


def _bins(model: Path, run: Path, *options: str) -> list[str]:
    return ["rerank", "bins", "--model", str(model), "--collection", str(TINY_FR),
            "--topics", str(TOPICS), "--run", str(run), "--depth", "5", *options]  # fmt: skip


def test_plot_writes_a_png_and_leaves_the_printed_table_as_it_is(
    tmp_path: Path, knrm: Path, first_stage: Path
) -> None:
    table = run_clir(*_bins(knrm, first_stage))
    assert table.returncode == 0, table.stderr
    figure = tmp_path / "figures" / "bins.png"  # a missing directory is made, as for any output
    drawn = run_clir(*_bins(knrm, first_stage, "--plot", str(figure)))
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stdout == table.stdout
    assert "(exact)" in drawn.stdout  # the table of every kernel, exact-match one included
    data = figure.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 20_000  # two panels of bars and labels, not an empty canvas
    assert data.endswith(b"IEND\xaeB`\x82")  # the PNG's last chunk: the file is whole
    assert [p.name for p in figure.parent.iterdir()] == ["bins.png"]  # no temporary left


def test_an_unwritable_plot_path_is_one_line_and_writes_nothing(
    tmp_path: Path, knrm: Path, first_stage: Path
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("a file, not a directory\n")
    result = run_clir(*_bins(knrm, first_stage, "--plot", str(blocker / "bins.png")))
    assert_one_line_error(result, str(blocker / "bins.png"), "cannot write", "not a directory")
    assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_failed_analysis_keeps_the_previous_figure_and_leaves_no_temporary(
    tmp_path: Path, knrm: Path
) -> None:
    figure = tmp_path / "bins.png"
    figure.write_bytes(PNG_MAGIC + b"the figure of an earlier run")
    missing = tmp_path / "no-such-run.trec"
    result = run_clir(*_bins(knrm, missing, "--plot", str(figure)))
    assert_one_line_error(result, str(missing))
    assert figure.read_bytes() == PNG_MAGIC + b"the figure of an earlier run"
    assert [p.name for p in tmp_path.iterdir()] == ["bins.png"]


def test_a_plot_path_that_is_not_a_png_is_refused_before_any_work(
    tmp_path: Path, knrm: Path, first_stage: Path
) -> None:
    result = run_clir(*_bins(knrm, first_stage, "--plot", str(tmp_path / "bins.jpg")))
    assert_one_line_error(result, "bins.jpg", "FILE.png", status=2)
    assert list(tmp_path.iterdir()) == []
