"""Recipes on the DDTP collections (``collection = "ddtp"``): built from the apt lists saved
under ``$CLIR_DATA/ddtp/lists`` (hand-made here, as in test_ddtp.py), run like the man pages'."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clir_toolkit.errors import FormatError, ResourceError
from clir_toolkit.experiments.context import Workspace
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.experiments.runner import run_recipes
from clir_toolkit.files import sha256_file
from clir_toolkit.formats import read_run, read_topics
from tests.conftest import assert_one_line_error, run_clir
from tests.ddtp_lists import PREFIX, write_lists

DDTP_LANGUAGES = '"fr", "de", "it", "ja", "ru", "es", "zh"'


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def workspace_in(root: Path) -> Workspace:
    return Workspace(root / "data", root / "indexes", root / "runs", root / "models")


def test_the_collection_family_is_read_and_checked(tmp_path: Path) -> None:
    recipe = load_recipe(write(tmp_path / "d.toml", 'collection = "ddtp"\nlanguages = ["de"]\n'))
    assert recipe.collection == "ddtp" and recipe.languages == ("de",)
    assert load_recipe(write(tmp_path / "m.toml", "")).collection == "manpages"
    with pytest.raises(FormatError) as caught:
        load_recipe(write(tmp_path / "x.toml", 'collection = "wiki"\n'))
    assert ('collection: expected one of "manpages", "ddtp", "wikiclir", "hc4", "neuclir", '
            'found "wiki"') in str(caught.value)


def test_a_language_the_family_lacks_is_one_line_naming_the_recipe_and_the_choices(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "bad.toml", 'collection = "ddtp"\nlanguages = ["fr", "xx"]\n')
    with pytest.raises(FormatError) as caught:
        load_recipe(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: languages: expected one of {DDTP_LANGUAGES}, found")
    assert 'collection = "ddtp"' in message and "\n" not in message
    result = run_clir("run", str(path))
    assert_one_line_error(result, str(path), f"one of {DDTP_LANGUAGES}", 'found "xx"')


def test_man_page_recipes_keep_their_paths(tmp_path: Path) -> None:
    workspace = workspace_in(tmp_path)
    recipe = load_recipe(write(tmp_path / "x.toml", 'variant = "hard"\n'))
    assert workspace.run(recipe, "fr", "dev") == tmp_path / "runs/manpages-en-fr-hard/dev/x.trec"
    assert workspace.collection("manpages", "de", "standard") == tmp_path / "data/manpages-en-de"
    assert workspace.index("ddtp", "de", "hard") == tmp_path / "indexes/ddtp-en-de-hard"


@pytest.mark.java
def test_a_ddtp_recipe_builds_its_collection_from_the_saved_lists_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "clir-data"))
    lists = write_lists(tmp_path / "clir-data" / "ddtp" / "lists")
    workspace = workspace_in(tmp_path)
    recipes = tmp_path / "ddtp"
    recipes.mkdir()
    path = write(
        recipes / "bm25.toml",
        'collection = "ddtp"\nvariant = "hard"\nlanguages = ["fr"]\nbaseline = true\n'
        "[search]\nk1 = 1.2\nb = 0.75\n",
    )
    write(recipes / "human.toml", 'collection = "ddtp"\nvariant = "hard"\ntopics = "human"\n')
    results = run_recipes([path, recipes / "human.toml"], workspace, quiet=True)

    # Built offline from the saved lists (a fetch would have recorded apt's sources there).
    assert not (lists / "clir-sources.tsv").exists()
    manifest = json.loads(
        (workspace.data / "ddtp-en-fr-hard" / "manifest.json").read_text(encoding="utf-8")
    )
    read = {entry["file"]: entry["sha256"] for entry in manifest["source"]["lists"]}
    fr_list = f"{PREFIX}_i18n_Translation-fr.lz4"
    assert read[fr_list] == sha256_file(lists / fr_list)
    for split in ("dev", "test"):
        run = read_run(workspace.runs / "ddtp-en-fr-hard" / split / "bm25.trec")
        topics = read_topics(workspace.data / "ddtp-en-fr-hard" / f"topics.{split}.tsv")
        assert {r.tag for r in run} == {"bm25"} and run
        assert {r.qid for r in run} <= {topic.qid for topic in topics}
    assert (workspace.runs / "ddtp-en-fr-hard" / "dev" / "bm25.trec.json").is_file()  # freshness
    assert (workspace.indexes / "ddtp-en-fr-hard").is_dir()
    assert not (workspace.runs / "manpages-en-fr-hard").exists()

    text = results.read_text(encoding="utf-8")
    assert "## ddtp-en-fr-hard — dev (3 queries)" in text
    assert "## ddtp-en-fr-hard — test (2 queries)" in text
    assert "| ddtp-en-fr-hard | other | human |" in text  # the human queries win
    assert "manpages" not in text


def test_a_ddtp_recipe_without_saved_lists_fetches_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No lists under $CLIR_DATA: the build fetches them with apt-get (here: not found)."""
    monkeypatch.setenv("CLIR_DATA", str(tmp_path / "clir-data"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    path = write(tmp_path / "d.toml", 'collection = "ddtp"\nlanguages = ["de"]\n')
    workspace = workspace_in(tmp_path)
    with pytest.raises(ResourceError, match="apt-get not found.*--lists DIR"):
        run_recipes([path], workspace, quiet=True)
    assert not (workspace.data / "ddtp-en-de").exists()


def test_a_rerank_recipe_and_its_first_stage_share_the_collection_family(tmp_path: Path) -> None:
    workspace = workspace_in(tmp_path)
    write(tmp_path / "bm25.toml", 'name = "bm25"\nlanguages = ["fr"]\n')  # man pages
    rerank = write(
        tmp_path / "knrm.toml",
        'collection = "ddtp"\nkind = "rerank"\nlanguages = ["fr"]\n'
        '[rerank]\nfirst_stage = "bm25"\n',
    )
    with pytest.raises(FormatError) as caught:
        run_recipes([rerank], workspace, quiet=True)
    message = str(caught.value)
    assert message.startswith(f"{rerank}: [rerank] first_stage names ")
    assert 'collection = "manpages"' in message and 'collection = "ddtp"' in message
    assert "\n" not in message
    assert not workspace.data.exists()  # refused before anything is built
