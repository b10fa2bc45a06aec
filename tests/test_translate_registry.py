"""Translators and expanders come from the registry: a built-in is one file of its home
package, found and used as a plug-in is, and what it declares (its options, whether it is
structured, what it needs) is all the rest of the toolkit knows of it."""

from __future__ import annotations

import dataclasses
import json
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

ROOT = Path(__file__).resolve().parent.parent

REVERSE = '''
"""``--translate reverse``: each word spelled backwards (a translator in one file)."""

from clir_toolkit.query import StructuredQuery
from clir_toolkit.registry import register


class Reverse:
    name = "reverse"

    def translate(self, queries):
        return [StructuredQuery.plain(q.qid, " ".join(w[::-1] for w in q.original.split()))
                for q in queries]


@register("translators", "reverse", summary="each word spelled backwards", order=50,
          structured=True, label=lambda options: "backwards")
def reverse(target_lang, options):
    return Reverse()
'''


@pytest.fixture
def reverse_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A second home package of the translators holding one file, ``reverse.py``: what
    adding that file to ``clir_toolkit/translate/translators/`` does, without editing it."""
    home = tmp_path / "more_translators"
    home.mkdir()
    (home / "__init__.py").write_text("")
    (home / "reverse.py").write_text(REVERSE)
    monkeypatch.syspath_prepend(str(tmp_path))
    kind = registry.KINDS["translators"]
    monkeypatch.setitem(
        registry.KINDS,
        "translators",
        dataclasses.replace(kind, homes=(*kind.homes, "more_translators")),
    )
    yield home
    registry._BUILTINS["translators"].pop("reverse", None)
    registry._IMPORTED_HOMES.discard("more_translators")
    for module in [m for m in sys.modules if m.startswith("more_translators")]:
        del sys.modules[module]
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


def test_a_translator_is_one_file_used_as_a_plug_in_is(
    reverse_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from clir_toolkit.cli import main

    assert list(registry.names("translators")) == ["none", "dict", "mt", "embed", "reverse"]
    options = TranslationOptions(translate="reverse")
    assert options.structure() == "syn"  # its declared trait, as a plug-in's attribute
    assert options.structure("or") == "or"
    assert options.describe() == "backwards"
    queries = build_queries([Topic("q1", "list directory contents")], options, "fr")
    assert [term.source for term in queries[0].terms] == ["tsil", "yrotcerid", "stnetnoc"]
    # The command line offers it as it offers a plug-in's name: a choice of --translate.
    output = tmp_path / "translated.jsonl"
    status = main(
        [
            "translate",
            "--topics",
            str(TINY_FR / "topics.dev.tsv"),
            "--target-lang",
            "fr",
            "--translate",
            "reverse",
            "--output",
            str(output),
        ]
    )
    assert status == 0, capsys.readouterr().err
    first = json.loads(output.read_text(encoding="utf-8").splitlines()[0])
    assert [term["source"] for term in first["terms"]] == ["tsil", "yrotcerid", "stnetnoc"]


def test_library_refusals_are_worded_by_the_declared_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from clir_toolkit.cli import main
    from clir_toolkit.resources.dictionary import load_dictionary
    from clir_toolkit.translate.dictionary import DictionaryTranslator

    dictionary = load_dictionary(str(FIXTURES / "translate" / "en-fr.tsv"))
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
