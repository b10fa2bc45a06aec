"""Fuzzing the recipe readers: whatever a recipe file holds, the answer is a recipe or a ClirError.

Random TOML documents, random values of any type under the keys of each table ([search],
[tune], [rerank], [rerank.sweep] and the top level) and random bytes are fed to
:func:`clir_toolkit.experiments.recipe.load_recipe` (which reads a rerank recipe's table with
:func:`clir_toolkit.experiments.rerank_table.check_rerank_table`). A recipe that loads must hold
values of its declared types, and its sweep points and reranking spec must build too.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clir_toolkit.errors import ClirError
from clir_toolkit.experiments.recipe import load_recipe
from clir_toolkit.experiments.records import Recipe
from clir_toolkit.experiments.rerank_table import check_rerank_table, rerank_spec, sweep_recipes
from clir_toolkit.experiments.tables import RECIPE_PARAMS, RERANK_PARAMS, SEARCH_PARAMS, SWEEP_KEYS
from clir_toolkit.params import SAFE_NAME

# -- TOML values and a small writer for them -------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(),
    TEXT,
    st.sampled_from(["fr", "de", "knrm", "dual", "sosl", "syn", "dict", "auto", "x-1", "../x"]),
    st.dates(),
)
KEYS = st.one_of(
    st.sampled_from(sorted({*RECIPE_PARAMS, *SEARCH_PARAMS, *RERANK_PARAMS, "sweep"})), TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12,
)


def _string(text: str) -> str:
    escaped = "".join(
        "\\" + ch
        if ch in '"\\'
        else f"\\u{ord(ch):04x}"
        if ord(ch) < 0x20 or ord(ch) == 0x7F
        else ch
        for ch in text
    )
    return f'"{escaped}"'


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _string(key)


def toml_value(value: Any) -> str:
    """``value`` in TOML (tables inline, so that any nesting fits on one line)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return value.isoformat()  # a date


def toml_document(values: dict[str, Any]) -> str:
    return "".join(f"{_key(key)} = {toml_value(value)}\n" for key, value in values.items())


# -- what a loaded recipe must be ------------------------------------------------------------


def assert_well_typed(recipe: Recipe) -> None:
    """Every value of a loaded recipe is of its declared type: nothing slipped through."""
    assert re.fullmatch(SAFE_NAME.regex, recipe.name)
    assert isinstance(recipe.baseline, bool)
    assert recipe.languages and all(isinstance(lang, str) for lang in recipe.languages)
    assert recipe.kind in ("search", "rerank") and recipe.topics in ("english", "human")
    for key, value in recipe.search.items():
        assert SEARCH_PARAMS[key].check(value) == value
    for key, values in recipe.tune.items():
        assert values and all(SEARCH_PARAMS[key].check(v) == v for v in values)
    if recipe.kind == "rerank":
        for point, _ in sweep_recipes(recipe):
            assert re.fullmatch(SAFE_NAME.regex, point.name)
            spec = rerank_spec(point)
            assert isinstance(spec.depth, int) and spec.depth >= 1
            assert all(0 <= lam <= 1 for lam in spec.interpolate)


def load_or_refuse(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` and load it: a well-typed recipe, or a one-line ClirError."""
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    try:
        recipe = load_recipe(path)
    except ClirError as exc:
        assert len(str(exc).splitlines()) == 1 and str(exc).startswith(str(path))
    else:
        assert_well_typed(recipe)


@pytest.fixture(scope="module")
def recipe_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "fuzz.toml"


# -- the fuzz tests --------------------------------------------------------------------------


def test_the_toml_writer_round_trips() -> None:
    document = {"a": [1, 2.5, 'x\n"y"'], "b": {"c d": True, "e": {"f": -0.0}}}
    assert tomllib.loads(toml_document(document)) == document


@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_random_documents_load_or_raise_a_clir_error(
    recipe_file: Path, values: dict[str, Any]
) -> None:
    load_or_refuse(recipe_file, toml_document(values))


@given(st.binary(max_size=200))
def test_random_bytes_load_or_raise_a_clir_error(recipe_file: Path, data: bytes) -> None:
    load_or_refuse(recipe_file, data)


SEARCH_BASE = {"name": "base", "languages": ["fr"], "search": {"k1": 1.2}, "tune": {"b": [0.4]}}
RERANK_BASE = {
    "name": "rr",
    "kind": "rerank",
    "languages": ["fr"],
    "rerank": {"first_stage": "base", "model": "dual", "epochs": 2},
}
TABLES = st.one_of(
    st.tuples(st.just(SEARCH_BASE), st.just(()), st.sampled_from(sorted(RECIPE_PARAMS))),
    st.tuples(st.just(SEARCH_BASE), st.just(("search",)), st.sampled_from(sorted(SEARCH_PARAMS))),
    st.tuples(st.just(SEARCH_BASE), st.just(("tune",)), st.sampled_from(sorted(SEARCH_PARAMS))),
    st.tuples(st.just(RERANK_BASE), st.just(("rerank",)), st.sampled_from(sorted(RERANK_PARAMS))),
    st.tuples(
        st.just(RERANK_BASE), st.just(("rerank", "sweep")), st.sampled_from(sorted(SWEEP_KEYS))
    ),
)


@given(TABLES, VALUES)
def test_any_value_under_any_declared_key_loads_or_raises_a_clir_error(
    recipe_file: Path, where: tuple[dict[str, Any], tuple[str, ...], str], value: Any
) -> None:
    base, tables, key = where
    document: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in base.items()}
    table = document
    for name in tables:
        table = table.setdefault(name, {})
    if tables == ("rerank", "sweep"):
        document["rerank"].pop(key, None)
    table[key] = value
    load_or_refuse(recipe_file, toml_document(document))


@given(st.dictionaries(KEYS, VALUES, max_size=6), st.sampled_from(["english", "human"]))
def test_check_rerank_table_raises_only_clir_errors(
    recipe_file: Path, table: dict[str, Any], topics: str
) -> None:
    try:
        check_rerank_table(recipe_file, {"topics": topics, "rerank": table})
    except ClirError as exc:
        assert len(str(exc).splitlines()) == 1
