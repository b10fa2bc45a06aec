"""Recipes: TOML in, runs and a generated RESULTS.md out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.formats import read_run
from clir_toolkit.recipes import (
    Workspace,
    grid,
    load_recipe,
    run_recipes,
    source_fingerprint,
)
from tests.conftest import TINY_FR


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_recipe_is_read_and_validated(tmp_path: Path) -> None:
    recipe = load_recipe(
        write(
            tmp_path / "x.toml",
            'name = "x"\nlanguages = ["fr"]\n'
            '[search]\nstructure = "syn"\n[tune]\nk1 = [0.9, 1.2]\n',
        )
    )
    assert recipe.name == "x" and recipe.search == {"structure": "syn"}
    with pytest.raises(FormatError, match="unknown \\[search\\] options colour"):
        load_recipe(write(tmp_path / "bad.toml", '[search]\ncolour = "red"\n'))
    with pytest.raises(FormatError, match="invalid TOML"):
        load_recipe(write(tmp_path / "broken.toml", "name = \n"))
    with pytest.raises(ClirError, match="no such recipe"):
        load_recipe(tmp_path / "missing.toml")


def test_grid_lists_every_combination() -> None:
    assert grid({"k1": [0.9, 1.2], "b": [0.4]}) == [{"b": 0.4, "k1": 0.9}, {"b": 0.4, "k1": 1.2}]
    assert grid({}) == [{}]


@pytest.mark.java
def test_recipes_write_runs_and_results(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "data", tmp_path / "indexes", tmp_path / "runs")
    # The hand-made collection stands in for a built man-page collection (dev = test here).
    collection = workspace.collection("fr", "standard")
    shutil.copytree(TINY_FR, collection)
    for kind in ("topics", "topics-human", "qrels"):
        suffix = "txt" if kind == "qrels" else "tsv"
        shutil.copy(collection / f"{kind}.dev.{suffix}", collection / f"{kind}.test.{suffix}")
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    write(
        recipes / "en.toml",
        'name = "en"\ntitle = "English, untranslated"\n'
        'group = "reference"\nlanguages = ["fr"]\nbaseline = true\n'
        "[tune]\nk1 = [0.9, 1.2]\nb = [0.4, 0.75]\n",
    )
    write(
        recipes / "human.toml",
        'name = "human"\ngroup = "reference"\nlanguages = ["fr"]\ntopics = "human"\n',
    )
    write(recipes / "NOTES.md", "## Notes\n\nHand-written discussion.\n")
    results = run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    assert results == recipes / "RESULTS.md"
    text = results.read_text(encoding="utf-8")
    assert "Generated — do not edit" in text and "clir run" in text
    assert "## manpages-en-fr — dev (6 queries)" in text
    assert "en (baseline)" in text and "Hand-written discussion." in text
    assert "| manpages-en-fr | reference | human |" in text  # the human queries win
    chosen = text.split("| en (baseline) |")[1].splitlines()[0]
    assert "fr: b=" in chosen and "k1=" in chosen
    human_run = workspace.run(load_recipe(recipes / "human.toml"), "fr", "test")
    assert {r.tag for r in read_run(human_run)} == {"human"}

    # Unchanged recipes are not run again; an edited one is.
    made = {run: run.stat().st_mtime_ns for run in workspace.runs.rglob("*.trec")}
    run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    assert {run: run.stat().st_mtime_ns for run in workspace.runs.rglob("*.trec")} == made
    with open(recipes / "human.toml", "a", encoding="utf-8") as handle:
        handle.write('title = "human queries"\n')
    run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    assert human_run.stat().st_mtime_ns != made[human_run]


def test_a_change_to_the_code_changes_the_run_stamp(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "sub" / "b.py").write_text("y = 2\n")
    before = source_fingerprint(package)
    assert source_fingerprint(package) == before
    (package / "sub" / "b.py").write_text("y = 3\n")
    assert source_fingerprint(package) != before
    assert len(source_fingerprint()) == 64  # the installed toolkit's own code
