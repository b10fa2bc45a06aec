"""Pipeline recipes (``kind = "pipeline"``): ``clir pipeline train --in-domain`` and ``clir
pipeline search`` as a row of RESULTS.md, with nothing of their own.

The tiny collection's dev files stand in for its train and test splits
(:func:`tests.conftest.workspace_with_three_splits`): the plumbing, not the method.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clir_toolkit.errors import FormatError
from clir_toolkit.experiments.context import Workspace
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.experiments.runner import run_recipes
from tests.conftest import workspace_with_three_splits

BASELINE = 'name = "bm25-untranslated"\nlanguages = ["fr"]\nbaseline = true\n'
PIPELINE = 'name = "pipeline"\nkind = "pipeline"\nlanguages = ["fr"]\n'


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, Path, str]:
    """The baseline and the pipeline recipe run once: the workspace, the recipes' directory
    and RESULTS.md."""
    root = tmp_path_factory.mktemp("pipeline-recipe")
    workspace = workspace_with_three_splits(root)
    recipes = root / "recipes"
    recipes.mkdir()
    (recipes / "bm25-untranslated.toml").write_text(BASELINE, encoding="utf-8")
    (recipes / "pipeline.toml").write_text(PIPELINE, encoding="utf-8")
    results = run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    return workspace, recipes, results.read_text(encoding="utf-8")


def test_the_row_is_the_run_of_clir_pipeline_search_with_the_trained_models(
    ran: tuple[Workspace, Path, str], tmp_path: Path
) -> None:
    from clir_toolkit.pipeline.search import search_pipeline

    workspace, _, results = ran
    models = workspace.models / "manpages-en-fr" / "pipeline"
    assert (models / "pipeline.json").is_file() and (models / "knrm.pt").is_file()
    run = workspace.runs / "manpages-en-fr" / "test" / "pipeline.trec"
    by_hand = tmp_path / "pipeline.trec"
    collection = workspace.collection("manpages", "fr", "standard")
    index = workspace.index("manpages", "fr", "standard")
    search_pipeline(models, index, collection / "topics.test.tsv", by_hand, tag="pipeline",
                    quiet=True)  # fmt: skip
    assert run.read_bytes() == by_hand.read_bytes()
    assert "| pipeline | " in results
    # Tested against its own first stage, whose run is kept beside it.
    assert "| pipeline | pipeline.first-stage | " in results
    assert (run.parent / "pipeline.first-stage.trec").is_file()
    # The pipeline trained over the recipes' index of the collection, not one of its own.
    assert [path.name for path in workspace.indexes.iterdir()] == ["manpages-en-fr"]


def test_a_second_run_trains_and_searches_nothing_again(ran: tuple[Workspace, Path, str]) -> None:
    workspace, recipes, _ = ran
    made = [
        workspace.models / "manpages-en-fr" / "pipeline" / "knrm.pt",
        workspace.models / "manpages-en-fr" / "pipeline" / "tuned-use-m3.pt",
        workspace.runs / "manpages-en-fr" / "dev" / "pipeline.trec",
        workspace.runs / "manpages-en-fr" / "test" / "pipeline.trec",
    ]
    before = [path.stat().st_mtime_ns for path in made]
    run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    assert [path.stat().st_mtime_ns for path in made] == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PIPELINE + "[search]\nk1 = 1.2\n", "a pipeline recipe takes no [search] or [tune] table"),
        (PIPELINE + '[pipeline]\nencoder = "nope"\n', "[pipeline] encoder"),
        (BASELINE + '[pipeline]\nencoder = "use-m3"\n', 'add kind = "pipeline"'),
    ],
)
def test_a_wrong_pipeline_recipe_is_one_line_naming_it(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "recipe.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as caught:
        load_recipe(path)
    message = str(caught.value)
    assert str(path) in message and expected in message and "\n" not in message


def test_on_a_two_worker_ray_cluster_the_runs_are_one_process_s(
    ran: tuple[Workspace, Path, str], tmp_path: Path
) -> None:
    """clir run --ray local:2: the index with its vectors is made in the driver, the
    pipeline job on a worker; its runs are those of one process."""
    pytest.importorskip("ray")
    from clir_toolkit.distributed.cluster import ClusterSpec

    one, recipes, _ = ran
    spread = workspace_with_three_splits(tmp_path)
    run_recipes(sorted(recipes.glob("*.toml")), spread, quiet=True,
                cluster=ClusterSpec(local_cpus=2))  # fmt: skip
    for split in ("dev", "test"):
        name = Path("manpages-en-fr") / split / "pipeline.trec"
        assert (spread.runs / name).read_bytes() == (one.runs / name).read_bytes()
