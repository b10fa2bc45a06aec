"""docs/tutorial.ipynb: committed without outputs, and run end to end on a slice of the dev split.

The run executes every cell in a fresh Jupyter kernel (nbclient with ipykernel's own
``python3`` kernel spec, so no Jupyter server or ``ipykernel install`` is needed), with
``CLIR_TUTORIAL_SLICE=40`` (the first 40 dev topics, K-NRM trained briefly on 120 train
topics) and its files in ``tmp_path``. It builds the French man-page collection from the
installed Debian packages, so it is skipped where they are missing (``make setup`` installs
them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import debian_packages_missing

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "tutorial.ipynb"
SLICE = 40
#: What the notebook reads: the man pages of the three languages, FreeDict, WordNet.
PACKAGES = ("manpages", "manpages-dev", "manpages-fr", "manpages-fr-dev", "manpages-de",
            "manpages-de-dev", "dict-freedict-eng-fra", "dict-freedict-fra-eng",
            "dict-freedict-eng-deu", "wordnet-base")  # fmt: skip


def _why_not_runnable() -> str | None:
    """Why the notebook cannot run on this machine, or None when it can."""
    return debian_packages_missing(PACKAGES)


def _tagged(notebook: Any, tag: str) -> Any:
    """The one cell of the notebook that carries ``tag`` in its metadata."""
    cells = [cell for cell in notebook.cells if tag in cell.metadata.get("tags", [])]
    assert len(cells) == 1, f"{len(cells)} cells tagged {tag!r}"
    return cells[0]


def _text(cell: Any) -> str:
    """What a code cell printed (its stdout)."""
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def _run_names(table: str) -> list[str]:
    """The run column of a ``clir eval`` table (the lines between the header and the legend)."""
    lines = table.splitlines()
    assert lines[0].startswith("run ") and "nDCG@10" in lines[0], table
    return [line.split()[0] for line in lines[1:] if line and not line.startswith("▲")]


def test_the_notebook_is_committed_without_outputs() -> None:
    nbformat = pytest.importorskip("nbformat")

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)
    assert notebook.metadata.kernelspec.name == "python3"


@pytest.mark.java
@pytest.mark.skipif(_why_not_runnable() is not None, reason=str(_why_not_runnable()))
def test_the_notebook_runs_on_a_slice_of_the_dev_split(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    work = tmp_path / "work"
    # The kernel imports clir_toolkit from this checkout, whatever the venv has installed.
    python_path = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "CLIR_TUTORIAL_SLICE": str(SLICE), "CLIR_TUTORIAL_DIR": str(work),
           "PYTHONPATH": os.pathsep.join(python_path)}  # fmt: skip
    env.pop("MPLBACKEND", None)  # a non-interactive backend would draw no image
    client = nbclient.NotebookClient(
        notebook, kernel_name="python3", timeout=300,
        resources={"metadata": {"path": str(tmp_path)}},  # the kernel's working directory
    )  # fmt: skip
    client.execute(env=env)  # raises CellExecutionError, with the cell, if a cell fails

    first_stages = _text(_tagged(notebook, "evaluation"))
    assert _run_names(first_stages) == ["english", "dict", "dict+rocchio"]
    assert f"Holm correction over 2 runs per measure; {SLICE} queries" in first_stages
    reranked = _text(_tagged(notebook, "evaluation-reranked"))
    assert _run_names(reranked) == ["dict", "knrm", "knrm+bm25"]

    plot = _tagged(notebook, "win-loss-plot")
    assert any("image/png" in output.get("data", {}) for output in plot.outputs)

    look = _text(_tagged(notebook, "dictionary-look"))
    assert "=== " in look and "structured:" in look and "Lucene:" in look
    assert "Synonym(" in look  # the dictionary query in Pirkola's structure

    out_of_domain = _text(_tagged(notebook, "out-of-domain"))
    assert _run_names(out_of_domain) == ["de-dict", "de-knrm+bm25"]
    gain = _text(_tagged(notebook, "out-of-domain-gain"))
    assert "on French (trained on)" in gain and "on German (never seen)" in gain

    assert (work / "runs" / "knrm+bm25.trec").is_file()
    assert not (tmp_path / "runs").exists()  # everything went to CLIR_TUTORIAL_DIR
