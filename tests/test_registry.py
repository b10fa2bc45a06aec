"""The one table of names per component kind: built-ins found in a home package's files,
plug-ins from entry points, one lookup for both."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from clir_toolkit import registry
from clir_toolkit.errors import UsageError

GREETER = '''
from clir_toolkit.registry import register


@register("greeters", "hello", order=1, formal=False)
class Hello:
    """Says hello."""


@register("greeters", "good-day", summary="a formal greeting", formal=True)
def good_day():
    return "good day"
'''


@pytest.fixture()
def greeters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kind whose home package holds two modules, and a plug-in package beside it."""
    home = tmp_path / "greeter_home"
    home.mkdir()
    (home / "__init__.py").write_text("")
    (home / "hello.py").write_text(GREETER)
    (home / "_private.py").write_text("raise RuntimeError('never imported')\n")
    plugin = tmp_path / "site"
    (plugin / "their_greeter").mkdir(parents=True)
    (plugin / "their_greeter" / "__init__.py").write_text(
        "def howdy():\n    return 'howdy'\nhowdy.formal = False\n")
    info = plugin / "their_greeter-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: their-greeter\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[test.greeters]\nhowdy = their_greeter:howdy\nhello = their_greeter:howdy\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(plugin))
    monkeypatch.setitem(registry.KINDS, "greeters",
                        registry.Kind("greeters", "test.greeters", ("greeter_home",), "greeter"))
    yield home
    registry._BUILTINS.pop("greeters", None)
    registry._IMPORTED_HOMES.discard("greeter_home")
    for module in [m for m in sys.modules if m.startswith(("greeter_home", "their_greeter"))]:
        del sys.modules[module]


def test_a_new_file_in_the_home_package_is_a_new_name_listed_before_the_plugins(greeters):
    names = registry.names("greeters")
    assert "greeter_home.hello" not in sys.modules  # nothing imported until asked
    assert list(names) == ["hello", "good-day", "howdy"]  # order, then name; plug-ins last
    assert names.builtin == ("hello", "good-day")
    assert names.is_plugin("howdy") and not names.is_plugin("hello")
    (greeters / "wave.py").write_text(textwrap.dedent('''
        from clir_toolkit.registry import register
        register("greeters", "wave", lambda: "o/")
    '''))
    registry._IMPORTED_HOMES.discard("greeter_home")
    assert "wave" in registry.names("greeters")


def test_built_ins_and_plugins_are_loaded_the_same_way_and_a_built_in_wins_its_name(greeters):
    assert registry.load("greeters", "good-day")() == "good day"
    assert registry.load("greeters", "howdy")() == "howdy"
    assert registry.load("greeters", "hello").__name__ == "Hello"  # not the plug-in's
    assert registry.component("greeters", "hello").summary == "Says hello."
    assert registry.component("greeters", "good-day").summary == "a formal greeting"
    assert registry.component("greeters", "good-day").trait("formal") is True
    assert registry.component("greeters", "howdy").trait("formal") is False  # its attribute
    assert registry.describe("greeters") == {"hello": "Says hello.",
                                             "good-day": "a formal greeting"}


def test_an_unknown_name_is_one_usage_error_listing_the_known_ones(greeters):
    with pytest.raises(UsageError, match=r"unknown greeter 'hi' \(choose hello, good-day, howdy\)"):
        registry.component("greeters", "hi")


def test_two_files_claiming_one_name_is_an_error(greeters):
    registry.builtins("greeters")
    with pytest.raises(ValueError, match="greeter 'hello' is registered twice"):
        registry.register("greeters", "hello", lambda: None)
