"""The Python API a notebook uses: the command line's functions, from ``clir_toolkit``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TINY_FR


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, clir_toolkit\n"
        "assert 'build_index' in dir(clir_toolkit)\n"
        "print([m for m in ('torch', 'jnius', 'pyserini', 'pandas', 'ir_measures') "
        "if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    import clir_toolkit

    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        clir_toolkit.nothing  # noqa: B018


def test_the_query_structure_is_decided_by_the_translation() -> None:
    """One rule for ``clir search``, ``clir bench search``, the demo and a notebook: the
    structure asked for, else ``syn`` for term-by-term translations and ``or`` for plain
    text; ``search_to_run``'s own default is what an untranslated ``clir search`` uses."""
    import inspect

    import clir_toolkit as ct

    assert ct.TranslationOptions(translate="dict").structure() == "syn"
    assert ct.TranslationOptions(translate="dict").structure("and") == "and"
    assert ct.TranslationOptions(translate="mt", mt="apertium").structure() == "or"
    untranslated = ct.TranslationOptions().structure()
    assert inspect.signature(ct.search_to_run).parameters["structure"].default == untranslated


@pytest.mark.java
def test_index_search_and_evaluate_from_python(tmp_path: Path) -> None:
    import clir_toolkit as ct

    ct.build_index(TINY_FR, tmp_path / "idx", verbose=False)
    topics = ct.read_topics(TINY_FR / "topics.dev.tsv")
    runs = []
    for name, options in (("none", ct.TranslationOptions()),
                          ("dict", ct.TranslationOptions(translate="dict"))):  # fmt: skip
        queries = ct.build_queries(topics, options, "fr")
        runs.append(tmp_path / f"{name}.trec")
        ct.search_to_run(tmp_path / "idx", queries, runs[-1], hits=10, progress=False,
                         structure=options.structure())  # fmt: skip
    result = ct.evaluate_runs(TINY_FR / "qrels.dev.txt", runs, "nDCG@10 AP", baseline=str(runs[0]))
    table = result.to_dataframe()
    assert list(table.index) == ["none", "dict"] and list(table.columns)[:2] == ["nDCG@10", "AP"]
    assert table.loc["dict", "nDCG@10"] > table.loc["none", "nDCG@10"]
    assert "p nDCG@10" in table.columns
    per_query = result.to_dataframe(per_query=True)
    assert len(per_query) == 2 * len(result.qids)
    assert set(per_query.columns) == {"run", "qid", "nDCG@10", "AP"}
