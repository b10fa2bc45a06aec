"""The worked files of docs/extending.md, run by the tests as the files they are.

The page shows one file per component kind, each headed by the comment of its path in the
toolkit (``# clir_toolkit/rerank/losses/absolute.py``). :func:`worked_files` takes those
blocks from the page and writes each one as a module of a second home package of its kind
— what adding the file to the toolkit's own home package does, without touching the
toolkit — so that a test using the component fails as soon as the page's code stops
working.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clir_toolkit import registry

ROOT = Path(__file__).resolve().parent.parent
EXTENDING = ROOT / "docs" / "extending.md"


def worked_example(path: str) -> str:
    """The code block of docs/extending.md that begins with the comment ``# path``."""
    text = EXTENDING.read_text(encoding="utf-8")
    start = text.index(f"```python\n# {path}\n") + len("```python\n")
    return text[start : text.index("```", start)]


def kind_of(path: str) -> str:
    """The component kind whose home package holds the file ``path`` of the toolkit."""
    package = str(Path(path).parent).replace("/", ".")
    kinds = [kind.name for kind in registry.KINDS.values() if package in kind.homes]
    if len(kinds) != 1:
        raise ValueError(f"{path} is not in the home package of one component kind")
    return kinds[0]


@contextlib.contextmanager
def worked_files(root: Path, monkeypatch: pytest.MonkeyPatch, *paths: str) -> Iterator[None]:
    """The page's files ``paths`` (``clir_toolkit/HOME/NAME.py``), each written as
    ``root/extending_KIND/NAME.py`` and that package declared a second home of the kind.

    On leaving, what the files registered and imported is forgotten, so that the other tests
    see the toolkit's own components alone (``monkeypatch`` restores the kinds and
    ``sys.path``).
    """
    packages = {}
    for path in paths:
        kind = kind_of(path)
        package = packages[kind] = f"extending_{kind}"
        home = root / package
        home.mkdir(parents=True, exist_ok=True)
        (home / "__init__.py").write_text("", encoding="utf-8")
        (home / Path(path).name).write_text(worked_example(path), encoding="utf-8")
    for kind, package in packages.items():
        declared = registry.KINDS[kind]
        homes = (*declared.homes, package)
        monkeypatch.setitem(registry.KINDS, kind, dataclasses.replace(declared, homes=homes))
    monkeypatch.syspath_prepend(str(root))  # also makes the registry read the names again
    try:
        yield
    finally:
        for kind, package in packages.items():
            table = registry._BUILTINS.get(kind, {})
            for name in [n for n, c in table.items() if _defined_in(c.factory, package)]:
                del table[name]
            registry._IMPORTED_HOMES.discard(package)
            for module in [m for m in sys.modules if m.split(".")[0] == package]:
                del sys.modules[module]


def _defined_in(factory: object, package: str) -> bool:
    """Whether ``factory`` comes from a module of ``package``."""
    return str(getattr(factory, "__module__", "")).split(".")[0] == package
