"""Translators and expanders come from the registry: a built-in is one file of its home
package, found and used as a plug-in is, and what it declares (its options, whether it is
structured, what it needs) is all the rest of the toolkit knows of it."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from clir_toolkit import registry
from clir_toolkit.errors import FormatError, UsageError
from clir_toolkit.formats import Topic
from clir_toolkit.translate.pipeline import (
    TRANSLATION_PARAMS,
    TranslationOptions,
    build_queries,
    make_translator,
)
from tests.conftest import FIXTURES, TINY_FR
from tests.extending_examples import worked_files

ROOT = Path(__file__).resolve().parent.parent

EN_FR = FIXTURES / "translate" / "en-fr.tsv"


@pytest.fixture
def worked_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """docs/extending.md's translator and expander, each the one file of a second home
    package of its kind: what adding that file to the toolkit's home package does."""
    with worked_files(tmp_path, monkeypatch, "clir_toolkit/translate/translators/lookup.py",
                      "clir_toolkit/expand/expanders/singular.py"):  # fmt: skip
        yield
    make_translator.cache_clear()


def test_the_built_ins_are_the_files_of_the_home_packages_and_declare_their_options() -> None:
    assert registry.names("translators").builtin == ("none", "dict", "mt", "embed")
    assert registry.names("expanders").builtin == ("wordnet",)
    fields = {field.name for field in dataclasses.fields(TranslationOptions)}
    declared = {}
    for kind in ("translators", "expanders"):
        components = registry.builtins(kind).values()
        assert all(component.summary for component in components)
        declared[kind] = [param.name for component in components for param in component.params]
    # Every option a built-in declares is an option of clir search and a recipe's [search]
    # and a field of the options it is made from; none of them is declared anywhere else.
    assert set(declared["translators"] + declared["expanders"]) <= fields
    assert list(TRANSLATION_PARAMS) == [
        "translate",
        *declared["translators"],
        "expand",
        *declared["expanders"],
    ]
    builtins = registry.builtins("translators")
    assert {name: c.trait("structured") for name, c in builtins.items()} == {
        "none": False,
        "dict": True,
        "mt": False,
        "embed": True,
    }


def test_a_translator_and_an_expander_are_one_file_each_as_docs_extending_shows(
    worked_examples: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clir_toolkit.cli import main

    assert list(registry.names("translators")) == ["none", "dict", "mt", "embed", "lookup"]
    assert list(registry.names("expanders")) == ["wordnet", "singular"]
    options = TranslationOptions(translate="lookup", dictionary=str(EN_FR), expand="singular")
    assert options.structure() == "syn"  # its declared trait, as a plug-in's attribute
    assert options.structure("or") == "or"
    assert options.describe() == f"singular+lookup:{EN_FR}"
    queries = build_queries([Topic("q2", "copy files")], options, "fr")
    translated = {term.source: [a.text for a in term.alternatives] for term in queries[0].terms}
    assert translated == {"copy": ["copier"], "files": ["files", "fichier", "lime"]}
    # The command line offers both names as choices, and refuses the translator without
    # the option it requires, in one line, before any work.
    output = tmp_path / "translated.tsv"
    topics = str(TINY_FR / "topics.dev.tsv")
    command = ["translate", "--topics", topics, "--target-lang", "fr", "--translate", "lookup",
               "--expand", "singular", "--output", str(output)]  # fmt: skip
    assert main([*command, "--dict", str(EN_FR)]) == 0, capsys.readouterr().err
    lines = output.read_text(encoding="utf-8").splitlines()
    assert lines[1] == "q2\tcopier files fichier lime and directories directorie"
    capsys.readouterr()
    assert main(command) == 2
    assert capsys.readouterr().err == (
        "clir: error: --translate lookup needs --dict (freedict:eng-fra[+fra-eng], cedict or a "
        "TSV file)\n"
    )


def test_library_refusals_are_worded_by_the_declared_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clir_toolkit.cli import main
    from clir_toolkit.resources.dictionary import load_dictionary
    from clir_toolkit.translate.dictionary import DictionaryTranslator
    from clir_toolkit.translate.embed_train import train_bilingual_embeddings

    dictionary = load_dictionary(str(EN_FR))
    with pytest.raises(UsageError) as refused:
        DictionaryTranslator(dictionary, "best")
    assert (
        str(refused.value) == '--dict-mode must be one of "all", "first", "weighted" (got "best")'
    )
    with pytest.raises(UsageError) as refused:
        make_translator(TranslationOptions(translate="mt"), "es")
    assert str(refused.value) == (
        "--translate mt needs --mt (apertium:eng-spa, hf:MODEL_DIR or file:T.tsv)"
    )
    with pytest.raises(UsageError, match=r"^--translate embed needs --embed \(aligned"):
        make_translator(TranslationOptions(translate="embed"), "fr")
    with pytest.raises(UsageError) as refused:
        make_translator(TranslationOptions(translate="bogus"), "fr")
    assert str(refused.value) == "unknown query translator 'bogus' (choose none, dict, mt, embed)"
    with pytest.raises(UsageError) as refused:
        train_bilingual_embeddings("fr", tmp_path / "fr.vec", dim=0)
    assert str(refused.value) == "--dim must be at least 1 (got 0)"
    with pytest.raises(UsageError) as refused:
        train_bilingual_embeddings("fr", tmp_path / "fr.vec", refine=6)
    assert str(refused.value) == "--refine must be between 0 and 5 (got 6)"
    # Each flag such a message names is the option of clir search that sets the value.
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    shown = capsys.readouterr().out
    for param in TRANSLATION_PARAMS.values():
        assert f" {param.flag} " in shown.replace("\n", " "), param.name


def test_a_rerank_recipe_is_refused_a_translator_without_what_it_requires(tmp_path: Path) -> None:
    from clir_toolkit.experiments.rerank_table import check_rerank_table

    recipe = tmp_path / "r.toml"
    table = {"rerank": {"first_stage": "bm25", "translate": "mt"}}
    with pytest.raises(FormatError) as refused:
        check_rerank_table(recipe, table)
    assert '[rerank] translate = "mt" needs mt' in str(refused.value)
    assert "mt: apertium:eng-spa, hf:MODEL_DIR or file:T.tsv" in str(refused.value)
    check_rerank_table(recipe, {"rerank": {**table["rerank"], "mt": "file:t.tsv"}})


def test_the_home_packages_import_nothing_heavy_and_clir_help_imports_none_of_them() -> None:
    code = textwrap.dedent("""
        import sys
        from clir_toolkit import registry
        assert registry.names("translators")[0] == "none"
        assert registry.names("expanders")[0] == "wordnet"
        print(sorted({m.split(".")[0] for m in sys.modules} & {"torch", "numpy", "nltk",
                     "jnius", "transformers", "pandas"}))
    """)
    listed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert listed.stdout.strip() == "[]", listed.stderr
    helped = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "clir_toolkit.cli", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert "clir_toolkit.registry" not in helped.stderr
    assert "clir_toolkit.translate" not in helped.stderr


def test_a_run_made_through_a_translator_depends_on_its_file(tmp_path: Path) -> None:
    """The registry imports the translators by name, which the code fingerprint cannot follow:
    the runs declare those modules, so that editing one makes its runs stale."""
    from clir_toolkit.experiments.rerank_runner import TRANSLATION_CODE
    from clir_toolkit.experiments.search_runner import RUN_CODE
    from clir_toolkit.freshness import code_fingerprint

    package = tmp_path / "clir_toolkit"
    shutil.copytree(ROOT / "clir_toolkit", package, ignore=shutil.ignore_patterns("__pycache__"))
    before = {code: code_fingerprint(code, package) for code in (RUN_CODE, TRANSLATION_CODE)}
    for module in ("translate/translators/dict.py", "expand/expanders/wordnet.py"):
        with (package / module).open("a", encoding="utf-8") as source:
            source.write("\nEDITED = True\n")
        after = {code: code_fingerprint(code, package) for code in (RUN_CODE, TRANSLATION_CODE)}
        assert all(after[code] != before[code] for code in before), module
        before = after


SHOUTING = '''
"""``--translate shout``: the English query in capitals, each word ``--shout-times`` times."""
from clir_toolkit.params import Param
from clir_toolkit.query import StructuredQuery
from clir_toolkit.registry import register

TIMES = Param("shout_times", int, doc="copies of each word", default=1, minimum=1,
              flag="--shout-times")


class Shout:
    name = "shout"

    def __init__(self, times):
        self.times = times

    def translate(self, queries):
        return [StructuredQuery.plain(q.qid, " ".join(
            w.upper() for w in q.original.split() for _ in range(self.times))) for q in queries]


@register("translators", "shout", params=(TIMES,), structured=False)
def shout(target_lang, options):
    return Shout(options.shout_times)
'''


def test_a_translator_with_an_option_of_its_own_is_still_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its declared option joins the translation options (the command line's and the
    recipes' keys are made from them) and reaches it through TranslationOptions, with no
    field added there: given, or its declared default."""
    from clir_toolkit.translate import pipeline

    home = tmp_path / "shouting_home"
    home.mkdir()
    (home / "__init__.py").write_text("", encoding="utf-8")
    (home / "shout.py").write_text(SHOUTING, encoding="utf-8")
    declared = registry.KINDS["translators"]
    monkeypatch.setitem(registry.KINDS, "translators",
                        dataclasses.replace(declared, homes=(*declared.homes, "shouting_home")))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        params = pipeline._translation_params()
        assert params["shout_times"].flag == "--shout-times"
        monkeypatch.setattr(pipeline, "TRANSLATION_PARAMS", params)
        topics = [Topic("q1", "copy files")]
        twice = TranslationOptions.of({"translate": "shout", "shout_times": 2})
        words = [[t.source for t in q.terms] for q in build_queries(topics, twice, "fr")]
        assert words == [["COPY", "COPY", "FILES", "FILES"]]
        once = TranslationOptions.of({"translate": "shout"})
        words = [[t.source for t in q.terms] for q in build_queries(topics, once, "fr")]
        assert words == [["COPY", "FILES"]]
    finally:
        registry._BUILTINS["translators"].pop("shout", None)
        registry._IMPORTED_HOMES.discard("shouting_home")
        sys.modules.pop("shouting_home.shout", None)
        sys.modules.pop("shouting_home", None)
        make_translator.cache_clear()
