"""Plug-ins from installed entry points: a user's translator, expander, loss and reranker.

The "installed package" is a directory on PYTHONPATH holding a module and its
``*.dist-info`` (what ``pip install`` leaves), whose ``entry_points.txt`` declares the
translator in the ``clir_toolkit.translators`` group.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from clir_toolkit.formats import read_run
from tests.conftest import TINY_FR, assert_one_line_error, run_clir

TRANSLATOR = '''
from clir_toolkit.query import StructuredQuery

WORDS = {"list": "afficher", "directory": "répertoire", "contents": "contenu",
         "copy": "copier", "files": "fichiers", "directories": "répertoires",
         "remove": "supprimer"}


class TinyDictionary:
    """English → French, word by word, from a seven-word dictionary."""

    structured = False

    def __init__(self, target_lang):
        assert target_lang == "fr"
        self.name = "tiny-dict"

    def translate(self, queries):
        return [
            StructuredQuery.plain(
                q.qid, " ".join(WORDS[w] for w in q.original.split() if w in WORDS)
            )
            for q in queries
        ]


class TinyBag:
    """The same translations, from a class that says nothing of its structure."""

    def __init__(self, target_lang):
        self.name = "tiny-bag"
        self.words = TinyDictionary(target_lang)

    def translate(self, queries):
        return self.words.translate(queries)


def absolute_error(scores, grades):
    """|r - t_g|, targets -0.5, 0.4, 0.9: a loss a student might try."""
    import torch

    targets = torch.tensor([-0.5, 0.4, 0.9], dtype=scores.dtype)[grades]
    return (scores - targets).abs().mean()


import torch as _torch


class BagCosine(_torch.nn.Module):
    """Cosine of the mean query and document word vectors (a student's first reranker)."""

    default_lr = 0.01

    def __init__(self, query_vocab_size, doc_vocab_size, dim=300):
        super().__init__()
        self.sizes = (query_vocab_size, doc_vocab_size, dim)
        self.query = _torch.nn.EmbeddingBag(query_vocab_size, dim, padding_idx=0)
        self.doc = _torch.nn.EmbeddingBag(doc_vocab_size, dim, padding_idx=0)

    def config(self):
        q, d, dim = self.sizes
        return {"query_vocab_size": q, "doc_vocab_size": d, "dim": dim}

    def forward(self, query_ids, doc_ids):
        return _torch.cosine_similarity(self.query(query_ids), self.doc(doc_ids), dim=-1)


class AddDelete:
    """Adds "delete" beside "remove" (a one-rule expander)."""

    def expand(self, queries):
        return [
            StructuredQuery.plain(q.qid, q.original.replace("remove", "remove delete"))
            if "remove" in q.original else q
            for q in queries
        ]
'''


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    """The environment in which the package ``tiny_dict`` is installed."""
    site = tmp_path / "site"
    (site / "tiny_dict-1.0.dist-info").mkdir(parents=True)
    (site / "tiny_dict.py").write_text(TRANSLATOR, encoding="utf-8")
    (site / "tiny_dict-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tiny_dict\nVersion: 1.0\n", encoding="utf-8"
    )
    (site / "tiny_dict-1.0.dist-info" / "entry_points.txt").write_text(
        "[clir_toolkit.translators]\ntiny-dict = tiny_dict:TinyDictionary\n"
        "tiny-bag = tiny_dict:TinyBag\n"
        "[clir_toolkit.expanders]\nadd-delete = tiny_dict:AddDelete\n"
        "[clir_toolkit.losses]\nabsolute = tiny_dict:absolute_error\n"
        "[clir_toolkit.rerankers]\nbag-cosine = tiny_dict:BagCosine\n",
        encoding="utf-8",
    )
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path}


@pytest.mark.java
def test_a_translator_plug_in_works_from_the_command_line(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    index = tmp_path / "index"
    assert run_clir("index", "--collection", str(TINY_FR), "--index", str(index),
                    "--quiet").returncode == 0  # fmt: skip
    output = tmp_path / "run.trec"
    search = ("search", "--index", str(index), "--topics", str(TINY_FR / "topics.dev.tsv"),
              "--translate", "tiny-dict", "--output", str(output), "--quiet")  # fmt: skip
    result = run_clir(*search, env=plugin)
    assert result.returncode == 0, result.stderr
    best = {}
    for row in read_run(output):
        best.setdefault(row.qid, row.docid)  # rows are written in rank order
    assert best["q1"] == "ls.1" and best["q2"] == "cp.1" and best["q3"] == "rm.1"
    # Without the package the name is not a choice: one line, exit 2.
    missing = run_clir(*search)
    assert missing.returncode == 2 and "invalid choice: 'tiny-dict'" in missing.stderr


@pytest.mark.java
def test_a_translator_plug_in_works_from_a_recipe(tmp_path: Path, plugin: dict[str, str]) -> None:
    collection = tmp_path / "data" / "manpages-en-fr"
    shutil.copytree(TINY_FR, collection)
    for kind, suffix in (("topics", "tsv"), ("topics-human", "tsv"), ("qrels", "txt")):
        shutil.copy(collection / f"{kind}.dev.{suffix}", collection / f"{kind}.test.{suffix}")
    recipe = tmp_path / "recipes" / "tiny.toml"
    recipe.parent.mkdir()
    recipe.write_text('name = "tiny"\nlanguages = ["fr"]\n[search]\ntranslate = "tiny-dict"\n',
                      encoding="utf-8")  # fmt: skip
    result = run_clir("run", str(recipe), "--quiet", env=plugin, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    rows = read_run(tmp_path / "runs" / "manpages-en-fr" / "test" / "tiny.trec")
    assert [r.docid for r in rows if r.qid == "q2"][0] == "cp.1"
    assert (recipe.parent / "RESULTS.md").is_file()
    # Without the package, the recipe's value is refused before any work, in one line.
    other = tmp_path / "elsewhere"
    other.mkdir()
    refused = run_clir("run", str(recipe), env={"PYTHONPATH": ""}, cwd=other)
    assert_one_line_error(refused, '[search] translate: expected one of "none", "dict"')


def test_a_translator_plug_in_is_searched_as_its_structured_attribute_says(
    plugin: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from clir_toolkit.translate.pipeline import TranslationOptions

    monkeypatch.syspath_prepend(plugin["PYTHONPATH"].split(os.pathsep)[0])
    assert TranslationOptions(translate="tiny-dict").structure() == "or"  # structured = False
    # Without the attribute, its text is a bag of words, as an untranslated query's is.
    assert TranslationOptions(translate="tiny-bag").structure() == "or"
    assert TranslationOptions(translate="tiny-bag").structure("syn") == "syn"


def test_an_expander_plug_in_runs_before_translation(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    output = tmp_path / "translated.jsonl"
    result = run_clir(
        "translate", "--topics", str(TINY_FR / "topics.dev.tsv"), "--target-lang", "fr",
        "--expand", "add-delete", "--translate", "none", "--output", str(output), env=plugin,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = output.read_text(encoding="utf-8")
    assert "remove delete files or directories" in text
    refused = run_clir("search", "--index", "x", "--topics", "t", "--output", "o",
                       "--expand", "add-delete")  # fmt: skip
    assert refused.returncode == 2 and "invalid choice: 'add-delete'" in refused.stderr


TOPICS, QRELS = TINY_FR / "topics.dev.tsv", TINY_FR / "qrels.dev.txt"


def _first_stage(tmp_path: Path) -> Path:
    """A run of four pages for each of the three topics: the training negatives."""
    run = tmp_path / "first.trec"
    run.write_text("".join(f"q{q} Q0 {d} {r} {10 - r} x\n" for q in (1, 2, 3)
                           for r, d in enumerate(["ls.1", "cp.1", "mv.1", "rm.1"], 1)))  # fmt: skip
    return run


def test_a_loss_plug_in_trains_from_the_command_line_and_a_recipe(
    tmp_path: Path, plugin: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from clir_toolkit.experiments.context import Workspace
    from clir_toolkit.experiments.runner import run_recipes

    topics, qrels, run = TOPICS, QRELS, _first_stage(tmp_path)
    model = tmp_path / "m.pt"
    result = run_clir(
        "rerank", "train", "--model", "dual", "--loss", "absolute", "--collection",
        str(TINY_FR), "--topics", str(topics), "--qrels", str(qrels), "--run", str(run),
        "--epochs", "1", "--dim", "8", "--output", str(model), "--quiet", env=plugin,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert torch.load(model, weights_only=True)["training"]["loss"] == "absolute"

    # The same name in a rerank recipe, in this process (the package put on sys.path).
    monkeypatch.syspath_prepend(plugin["PYTHONPATH"].split(os.pathsep)[0])
    space = Workspace(tmp_path / "data", tmp_path / "indexes", tmp_path / "runs",
                      tmp_path / "models")  # fmt: skip
    collection = space.collection("manpages", "fr", "standard")
    shutil.copytree(TINY_FR, collection)
    for split in ("train", "test"):
        for kind, suffix in (("topics", "tsv"), ("topics-human", "tsv"), ("qrels", "txt")):
            source = collection / f"{kind}.dev.{suffix}"
            shutil.copy(source, collection / f"{kind}.{split}.{suffix}")
    recipes = tmp_path / "rerank"
    recipes.mkdir()
    (recipes / "bm25.toml").write_text(
        'name = "bm25"\nlanguages = ["fr"]\nbaseline = true\n[search]\nk1 = 1.2\n'
    )
    (recipes / "abs.toml").write_text(
        'name = "abs"\nkind = "rerank"\nlanguages = ["fr"]\n[rerank]\nfirst_stage = "bm25"\n'
        'model = "dual"\nloss = "absolute"\ndim = 8\nepochs = 1\ndepth = 10\n'
    )
    run_recipes([recipes / "bm25.toml", recipes / "abs.toml"], space, quiet=True)
    trained = torch.load(space.models / "manpages-en-fr" / "abs.pt", weights_only=True)
    assert trained["training"]["loss"] == "absolute"


def test_the_loss_names_are_the_implemented_losses() -> None:
    from clir_toolkit import registry
    from clir_toolkit.rerank import LOSS_NAMES

    assert LOSS_NAMES.builtin == tuple(registry.describe("losses"))


def test_a_reranker_plug_in_trains_and_scores_from_the_command_line(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    import torch

    topics, qrels, run = TOPICS, QRELS, _first_stage(tmp_path)
    model = tmp_path / "bag.pt"
    result = run_clir(
        "rerank", "train", "--model", "bag-cosine", "--collection", str(TINY_FR),
        "--topics", str(topics), "--qrels", str(qrels), "--run", str(run), "--epochs", "2",
        "--dim", "8", "--output", str(model), "--quiet", env=plugin,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    saved = torch.load(model, weights_only=True)
    assert saved["model_type"] == "bag-cosine" and saved["training"]["lr"] == 0.01
    output = tmp_path / "reranked.trec"
    scored = run_clir(
        "rerank", "score", "--model", str(model), "--collection", str(TINY_FR),
        "--topics", str(topics), "--run", str(run), "--output", str(output), "--quiet",
        env=plugin,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert sorted((r.qid, r.docid) for r in read_run(output)) == sorted(
        (r.qid, r.docid) for r in read_run(run)
    )
    # Without the package, its model file is refused in one line.
    refused = run_clir(
        "rerank", "score", "--model", str(model), "--collection", str(TINY_FR),
        "--topics", str(topics), "--run", str(run), "--output", str(tmp_path / "x.trec"),
    )  # fmt: skip
    assert_one_line_error(refused, "unknown model type", "needs its package installed")
