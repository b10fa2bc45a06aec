"""Recipes: TOML in, runs and a generated RESULTS.md out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clir_toolkit.errors import ClirError, FormatError
from clir_toolkit.experiments.context import Workspace
from clir_toolkit.experiments.figures import check
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.experiments.runner import run_recipes
from clir_toolkit.experiments.search_runner import grid
from clir_toolkit.formats import read_run
from clir_toolkit.freshness import source_fingerprint
from tests.conftest import TINY_FR, assert_one_line_error, run_clir


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


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[search]\nk1 = "high"\n', '[search] k1: expected a number, found "high"'),
        ('[search]\nhits = "10"\n', '[search] hits: expected an integer, found "10"'),
        ("[search]\nhits = 10.5\n", "[search] hits: expected an integer, found 10.5"),
        ("[search]\nhits = 0\n", "[search] hits: expected an integer at least 1, found 0"),
        ("[search]\nb = 1.5\n", "[search] b: expected a number between 0 and 1, found 1.5"),
        ("[search]\nk1 = nan\n", "[search] k1: expected a finite number, found nan"),
        ('[search]\nstructure = "xor"\n', '[search] structure: expected one of "and", "or"'),
        ("name = 5\n", "name: expected a string, found 5"),
        ('name = "../../x"\n', "name: expected a name made of letters, digits"),
        ('name = ".hidden"\n', 'found ".hidden"'),
        ('name = ""\n', "name: expected a non-empty string"),
        ('title = "two\\nlines"\n', "title: expected a string without control characters"),
        ('baseline = "no"\n', 'baseline: expected true or false, found "no"'),
        ("baseline = 1\n", "baseline: expected true or false, found 1"),
        ('languages = "fr"\n', 'languages: expected a list of strings, found "fr"'),
        ('languages = ["fr", 1]\n', "languages: expected a string, found 1"),
        ('languages = ["xx"]\n', 'languages: expected one of "fr", "de"'),
        ("group = [1]\n", "group: expected a string, found 1"),
        ("search = 5\n", "[search] must be a table, found 5"),
        ('[tune]\nk1 = [1.2, "x"]\n', '[tune] k1: expected a number, found "x"'),
        ("[tune]\nk1 = 1.2\n", "[tune] k1: expected a list of numbers, found 1.2"),
        ("[tune]\nk1 = []\n", "[tune] k1: expected a list of numbers, found []"),
        ('[rerank]\nfirst_stage = "x"\n', "a search recipe takes no [rerank] table"),
    ],
)
def test_a_value_of_the_wrong_type_or_range_is_one_format_error(
    tmp_path: Path, text: str, problem: str
) -> None:
    """Each value is checked by its declared parameter: one line naming file, table, key."""
    path = write(tmp_path / "x.toml", text)
    with pytest.raises(FormatError) as caught:
        load_recipe(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and problem in message
    assert "\n" not in message


def test_values_of_the_right_type_are_read_as_declared(tmp_path: Path) -> None:
    recipe = load_recipe(
        write(
            tmp_path / "x.toml",
            'name = "dict-syn_v2.1"\nbaseline = true\ngroup = ["a", "b"]\n'
            "[search]\nk1 = 1\nhits = 10\n[tune]\nb = [0, 0.75]\n",
        )
    )
    assert recipe.name == "dict-syn_v2.1" and recipe.baseline is True
    assert recipe.groups == ("a", "b") and recipe.languages == ("fr",)
    assert recipe.search == {"k1": 1.0, "hits": 10}
    assert isinstance(recipe.search["k1"], float) and recipe.tune == {"b": [0.0, 0.75]}


def test_a_recipe_that_is_not_utf8_is_one_format_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(FormatError, match=r"latin1.toml: not UTF-8 text \(byte 11\)"):
        load_recipe(path)
    with pytest.raises(ClirError, match="a directory, not a recipe file"):
        load_recipe(tmp_path)


def test_a_file_name_that_cannot_name_runs_needs_a_name(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match='the file name "my recipe" cannot name the runs'):
        load_recipe(write(tmp_path / "my recipe.toml", "languages = ['fr']\n"))
    assert load_recipe(write(tmp_path / "my recipe 2.toml", 'name = "mine"\n')).name == "mine"


def test_two_recipes_writing_the_same_runs_are_refused_before_any_work(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "data", tmp_path / "indexes", tmp_path / "runs")
    a = write(tmp_path / "a.toml", 'name = "dict"\n')
    b = write(tmp_path / "b.toml", 'name = "Dict"\n')  # one file on a case-insensitive disk
    with pytest.raises(FormatError, match=r'b.toml: the run name "Dict" is also that of .*a.toml'):
        run_recipes([a, b], workspace, quiet=True)
    sweep = write(
        tmp_path / "eps.toml",
        'name = "eps"\nkind = "rerank"\n[rerank]\nfirst_stage = "dict"\n'
        "[rerank.sweep]\nepsilon = [0, 1]\n",
    )
    clash = write(tmp_path / "eps-1.toml", 'name = "eps-1"\n')
    with pytest.raises(FormatError, match='the run name "eps-1" is also that of'):
        run_recipes([a, sweep, clash], workspace, quiet=True)
    same = write(
        tmp_path / "same.toml",
        'name = "same"\nkind = "rerank"\n[rerank]\nfirst_stage = "dict"\n'
        "[rerank.sweep]\nepsilon = [1, 1.0]\n",
    )
    with pytest.raises(FormatError, match='"same-1" is also that of another point of its sweep'):
        run_recipes([a, same], workspace, quiet=True)
    assert not workspace.data.exists() and not workspace.runs.exists()


def test_clir_run_reports_a_bad_recipe_value_in_one_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.toml", '[search]\nhits = "10"\n')
    result = run_clir("run", str(path))
    assert_one_line_error(result, f'{path}: [search] hits: expected an integer, found "10"')


def workspace_with_tiny_fr(root: Path) -> Workspace:
    """A workspace whose French man-page collection is the hand-made one (dev = test): it
    stands in for a built man-page collection."""
    workspace = Workspace(root / "data", root / "indexes", root / "runs")
    collection = workspace.collection("manpages", "fr", "standard")
    shutil.copytree(TINY_FR, collection)
    for kind in ("topics", "topics-human", "qrels"):
        suffix = "txt" if kind == "qrels" else "tsv"
        shutil.copy(collection / f"{kind}.dev.{suffix}", collection / f"{kind}.test.{suffix}")
    return workspace


def test_grid_lists_every_combination() -> None:
    assert grid({"k1": [0.9, 1.2], "b": [0.4]}) == [{"b": 0.4, "k1": 0.9}, {"b": 0.4, "k1": 1.2}]
    assert grid({}) == [{}]


@pytest.mark.java
def test_recipes_write_runs_and_results(tmp_path: Path) -> None:
    workspace = workspace_with_tiny_fr(tmp_path)
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
    quoted = '[?](RESULTS.md "manpages-en-fr — dev; human; nDCG@10")'
    write(recipes / "NOTES.md", f"## Notes\n\nHand-written discussion: the human run, {quoted}.\n")
    results = run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    # The figure the notes quote is filled in from the new table, in the notes and in their
    # copy at the end of RESULTS.md.
    notes = (recipes / "NOTES.md").read_text(encoding="utf-8")
    assert "[?]" not in notes and check([recipes / "NOTES.md", results]) == []
    assert results == recipes / "RESULTS.md"
    text = results.read_text(encoding="utf-8")
    assert "Generated — do not edit" in text and "clir run" in text
    assert "## manpages-en-fr — dev (6 queries)" in text
    assert "en (baseline)" in text and "Hand-written discussion: the human run, [0." in text
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


SHIPPED = ["baselines", "ddtp", "pipeline", "rerank", "thesis", "transfer/manpages",
           "transfer/ddtp"]  # fmt: skip


@pytest.mark.parametrize("directory", SHIPPED)
def test_every_recipe_the_repository_ships_reads(directory: str) -> None:
    """Each shipped recipe reads without error, and a model_from (of a rerank or a search
    recipe) names a rerank recipe beside it: a recipe added with a misspelt key fails here,
    not an hour into `clir run`."""
    root = Path(__file__).resolve().parent.parent / directory
    recipes = {path.stem: load_recipe(path) for path in sorted(root.glob("*.toml"))}
    assert recipes
    rerankers = {r.name for r in recipes.values() if r.kind == "rerank"}
    for name, recipe in recipes.items():
        for source in (recipe.rerank.get("model_from"), recipe.search.get("model_from")):
            assert source is None or source in rerankers, name


def test_a_recipe_file_named_twice_is_run_once(tmp_path: Path) -> None:
    """``clir run a.toml a.toml`` (two shell patterns matching one file): one row, no
    "the run name is also that of another point of its sweep"."""
    from clir_toolkit.experiments.runner import run_recipes
    from tests.conftest import workspace_with_three_splits

    workspace = workspace_with_three_splits(tmp_path)
    path = tmp_path / "bm25-human.toml"
    path.write_text('name = "bm25-human"\ntopics = "human"\nbaseline = true\n', encoding="utf-8")
    once = run_recipes([path], workspace, quiet=True).read_text(encoding="utf-8")
    results = run_recipes([path, tmp_path / "." / "bm25-human.toml"], workspace, quiet=True)
    twice = results.read_text(encoding="utf-8")
    assert twice.count("| bm25-human (baseline) |") == once.count("| bm25-human (baseline) |")
