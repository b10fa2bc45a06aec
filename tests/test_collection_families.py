"""Collection families: the built-ins, a new home file's and a plug-in's, named and built
the same way.

The new file is docs/extending.md's family ``toy``, written into a second home package of
the kind (as if it were one of ``clir_toolkit/collection/families/``).

The plug-in is a package installed in a temporary directory on PYTHONPATH (a module and
its ``*.dist-info``, what ``pip install`` leaves), whose ``entry_points.txt`` declares the
family ``tiny`` in the ``clir_toolkit.collections`` group: ``clir collection build tiny``
builds it, and a recipe's ``collection = "tiny"`` builds, indexes and searches it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from clir_toolkit import registry
from clir_toolkit.collection import open_collection
from clir_toolkit.collection.builder import family
from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.formats import read_qrels, read_run, read_topics
from tests.conftest import TINY_FR, assert_one_line_error, run_clir
from tests.extending_examples import worked_files

FAMILY = '''
"""A course's own collection family: three man pages of the tiny French corpus."""

import json
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from clir_toolkit.collection.builder import (
    BuildSummary, CollectionFamily, manifest, split_counts, write_collection,
)
from clir_toolkit.formats import Doc

CORPUS = Path(__file__).with_name("corpus.jsonl")


@dataclass(frozen=True)
class Query:
    qid: str
    english: str
    human: str
    related: tuple


QUERIES = [
    Query("ls.1", "list directory contents", "afficher le contenu d'un répertoire", ("mkdir.1",)),
    Query("cp.1", "copy files and directories", "copier des fichiers et des répertoires",
          ("mv.1",)),
    Query("rm.1", "remove files or directories", "supprimer des fichiers ou des répertoires",
          ()),
]


class TinyFamily(CollectionFamily):
    """English→French, three pages of a twelve-page corpus"""

    languages = ("fr",)

    def build(self, language, out, variant, progress, **options):
        started = time.perf_counter()
        lines = CORPUS.read_text(encoding="utf-8").splitlines()
        docs = [Doc(r["id"], r["contents"]) for r in map(json.loads, lines)]
        by_split = {"train": [], "dev": QUERIES, "test": QUERIES}
        summary = BuildSummary(
            name=self.collection_name(language, variant), lang=language, variant=variant,
            out=Path(out), **split_counts(docs, by_split, Counter(), ()), seconds=0.0,
        )
        fields = manifest(summary, description="three man pages", source={"course": "IR 101"})
        write_collection(summary.out, docs, by_split, fields)
        return replace(summary, seconds=time.perf_counter() - started)

    def format_summary(self, summary):
        return "\\n".join([f"{summary.name}: {summary.documents} documents", *summary.table()])


class NotAFamily:
    """Lacks everything a family has."""
'''


@pytest.fixture
def plugin(tmp_path: Path) -> dict[str, str]:
    """The environment in which the package ``tiny_family`` is installed."""
    site = tmp_path / "site"
    package = site / "tiny_family"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(FAMILY, encoding="utf-8")
    (package / "corpus.jsonl").write_bytes((TINY_FR / "corpus.jsonl").read_bytes())
    info = site / "tiny_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: tiny_family\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[clir_toolkit.collections]\ntiny = tiny_family:TinyFamily\n"
        "no-such = tiny_family:Missing\nnot-one = tiny_family:NotAFamily\n",
        encoding="utf-8",
    )
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path}


def test_the_built_in_families_are_the_registry_s_first_names() -> None:
    assert registry.names("collections").builtin == (
        "manpages", "ddtp", "wikiclir", "hc4", "neuclir")  # fmt: skip
    manpages, ddtp = family("manpages"), family("ddtp")
    assert manpages.collection_name("fr", "standard") == "manpages-en-fr"
    assert ddtp.collection_name("de", "hard") == "ddtp-en-de-hard"
    assert "ja" in manpages.languages and "zh" in ddtp.languages
    assert manpages.variants == ddtp.variants == ("standard", "hard")
    with pytest.raises(UsageError, match="unknown collection family 'wiki'"):
        family("wiki")


def test_a_plug_in_family_builds_from_the_command_line(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    out = tmp_path / "tiny-en-fr"
    result = run_clir("collection", "build", "tiny", "--lang", "fr", "--out", str(out),
                      "--quiet", env=plugin)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("tiny-en-fr: 12 documents\nsplit  queries  grade 2  grade 1")
    collection = open_collection(out)
    manifest = collection.manifest
    assert (manifest["name"], manifest["query_lang"], manifest["doc_lang"]) == (
        "tiny-en-fr", "en", "fr")  # fmt: skip
    assert manifest["counts"]["queries"] == {"train": 0, "dev": 3, "test": 3, "all": 6}
    assert sorted(manifest["files"]) == sorted(p.name for p in out.iterdir()
                                               if p.name != "manifest.json")  # fmt: skip
    assert [q.query for q in read_topics(collection.split_file("topics-human", "test"))][0] == (
        "afficher le contenu d'un répertoire")  # fmt: skip
    assert {(q.qid, q.docid, q.relevance) for q in read_qrels(out / "qrels.dev.txt")} == {
        ("ls.1", "ls.1", 2), ("ls.1", "mkdir.1", 1), ("cp.1", "cp.1", 2), ("cp.1", "mv.1", 1),
        ("rm.1", "rm.1", 2)}  # fmt: skip
    # The family has one variant: another one is argparse's one-line refusal.
    hard = run_clir("collection", "build", "tiny", "--lang", "fr", "--out", str(out),
                    "--variant", "hard", env=plugin)  # fmt: skip
    assert hard.returncode == 2 and "invalid choice: 'hard'" in hard.stderr
    # Without the package, the name is not a source.
    missing = run_clir("collection", "build", "tiny", "--lang", "fr", "--out", str(out))
    assert_one_line_error(missing, "unknown source 'tiny'", "manpages, ddtp, wikiclir, hc4, "
                          "neuclir, irds", status=2)  # fmt: skip


def test_a_broken_plug_in_family_is_one_line_and_leaves_the_others_working(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    out = tmp_path / "out"
    broken = run_clir("collection", "build", "no-such", "--lang", "fr", "--out", str(out),
                      env=plugin)  # fmt: skip
    assert_one_line_error(broken, "the plug-in 'no-such'", "cannot be imported", status=2)
    wrong = run_clir("collection", "build", "not-one", "--lang", "fr", "--out", str(out),
                     env=plugin)  # fmt: skip
    assert_one_line_error(wrong, "'not-one' is not a subclass of", "CollectionFamily", status=2)
    assert not out.exists()
    works = run_clir("collection", "build", "tiny", "--lang", "fr", "--out", str(out),
                     "--quiet", env=plugin)  # fmt: skip
    assert works.returncode == 0, works.stderr


def test_a_recipe_checks_a_plug_in_family_s_languages_and_variants(
    tmp_path: Path, plugin: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(plugin["PYTHONPATH"].split(os.pathsep)[0])
    path = tmp_path / "tiny.toml"
    path.write_text('collection = "tiny"\nlanguages = ["fr"]\n', encoding="utf-8")
    recipe = load_recipe(path)
    assert (recipe.collection, recipe.languages, recipe.variant) == ("tiny", ("fr",), "standard")
    path.write_text('collection = "tiny"\nlanguages = ["de"]\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r'languages: expected one of "fr", found "de"'):
        load_recipe(path)
    path.write_text('collection = "tiny"\nlanguages = ["fr"]\nvariant = "hard"\n',
                    encoding="utf-8")  # fmt: skip
    with pytest.raises(FormatError, match=r'variant: expected one of "standard", found "hard"'):
        load_recipe(path)
    # The built-in families keep their variants.
    path.write_text('collection = "ddtp"\nlanguages = ["fr"]\nvariant = "hard"\n',
                    encoding="utf-8")  # fmt: skip
    assert load_recipe(path).variant == "hard"


@pytest.mark.java
def test_a_recipe_builds_indexes_and_searches_a_plug_in_family(
    tmp_path: Path, plugin: dict[str, str]
) -> None:
    recipe = tmp_path / "recipes" / "human.toml"
    recipe.parent.mkdir()
    recipe.write_text('name = "human"\ncollection = "tiny"\nlanguages = ["fr"]\n'
                      'topics = "human"\n', encoding="utf-8")  # fmt: skip
    result = run_clir("run", str(recipe), "--quiet", env=plugin, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "data" / "tiny-en-fr" / "manifest.json").read_text())
    assert manifest["source"] == {"course": "IR 101"}  # built by the plug-in
    rows = read_run(tmp_path / "runs" / "tiny-en-fr" / "test" / "human.trec")
    best = {}
    for row in rows:
        best.setdefault(row.qid, row.docid)  # rows are written in rank order
    assert best == {"ls.1": "ls.1", "cp.1": "cp.1", "rm.1": "rm.1"}
    assert "tiny" in (recipe.parent / "RESULTS.md").read_text(encoding="utf-8")


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """docs/extending.md's family file in a second home package of the collections kind."""
    with worked_files(tmp_path / "homes", monkeypatch,
                      "clir_toolkit/collection/families/toy.py"):  # fmt: skip
        yield


def test_the_family_file_of_docs_extending_builds_and_a_recipe_names_it(
    toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clir_toolkit.cli import main

    assert list(registry.names("collections"))[:6] == [
        "manpages", "ddtp", "wikiclir", "hc4", "neuclir", "toy"]  # fmt: skip
    out = tmp_path / "toy-en-fr"
    built = main(["collection", "build", "toy", "--lang", "fr", "--out", str(out), "--quiet"])
    printed = capsys.readouterr()
    assert built == 0, printed.err
    assert printed.out.startswith("toy-en-fr: 3 documents\nsplit  queries  grade 2  grade 1")
    manifest = open_collection(out).manifest
    assert (manifest["name"], manifest["description"]) == ("toy-en-fr", "three man pages, by hand")
    assert manifest["counts"]["queries"] == {"train": 1, "dev": 1, "test": 1, "all": 3}
    assert {(q.qid, q.docid, q.relevance) for q in read_qrels(out / "qrels.train.txt")} == {
        ("ls.1", "ls.1", 2), ("ls.1", "cp.1", 1)}  # fmt: skip
    assert [q.query for q in read_topics(out / "topics-human.test.tsv")] == [
        "supprimer des fichiers"]  # fmt: skip
    # Its one variant and its one language are what a recipe may ask of it.
    with pytest.raises(SystemExit) as refused:
        main(["collection", "build", "toy", "--lang", "fr", "--out", str(out), "--variant",
              "hard"])  # fmt: skip
    assert refused.value.code == 2
    assert "invalid choice: 'hard'" in capsys.readouterr().err
    german = tmp_path / "toy-en-de"
    assert main(["collection", "build", "toy", "--lang", "de", "--out", str(german)]) == 2
    assert "no toy collection for language 'de': choose one of fr" in capsys.readouterr().err
    assert not german.exists()  # refused before any work
    path = tmp_path / "toy.toml"
    path.write_text('collection = "toy"\nlanguages = ["fr"]\n', encoding="utf-8")
    recipe = load_recipe(path)
    assert (recipe.collection, recipe.languages, recipe.variant) == ("toy", ("fr",), "standard")
    path.write_text('collection = "toy"\nlanguages = ["de"]\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r'languages: expected one of "fr", found "de"'):
        load_recipe(path)
