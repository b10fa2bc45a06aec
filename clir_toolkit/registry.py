"""One table of names per component kind, for the built-ins and the plug-ins alike.

Every component that a command-line option or a recipe key names — a translator, a
pre-translation expander, a training loss, a reranker model, a sentence encoder, a
collection family — is found here by its kind and its name, as ir_measures finds a measure
by name in its registry. A component is registered in one of two ways, and both end in
the same table:

* **A built-in** is one module of its kind's *home package* that calls :func:`register`
  when it is imported::

      # clir_toolkit/translate/translators/reverse.py
      from clir_toolkit.registry import register

      @register("translators", "reverse", summary="each word spelled backwards")
      def reverse_translator(target_lang, options):
          ...

  The home package's modules are found by listing its directory, so a new built-in is one
  new file: no list of names to edit elsewhere. They are imported the first time a name of
  that kind is needed (not when ``clir --help`` runs), so a home module keeps its heavy
  imports (torch, NLTK, Java) inside the functions that need them.
* **A plug-in** is an entry point of the kind's group in another package's
  ``pyproject.toml`` (:mod:`clir_toolkit.plugins` says what each group's object is called
  with). It is listed after the built-ins and imported only when it is used.

:func:`names` gives the names of a kind (argparse ``choices``, recipe validation, the
generated documentation), :func:`component` the registered record of one name and
:func:`load` the object it names. Where a built-in and a plug-in share a name, the
built-in wins.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from clir_toolkit import plugins
from clir_toolkit.errors import UsageError


@dataclass(frozen=True)
class Kind:
    """A kind of component: where its built-ins live and its plug-ins' entry-point group."""

    name: str
    group: str
    """The entry-point group of its plug-ins (:mod:`clir_toolkit.plugins`)."""
    homes: tuple[str, ...]
    """The packages whose modules register its built-ins (each module imported once)."""
    what: str
    """What a component of this kind is, for messages and the generated reference."""


KINDS: dict[str, Kind] = {}
"""The component kinds, by name. A kind is declared by :func:`declare_kind`."""


def declare_kind(name: str, group: str, homes: Sequence[str], what: str) -> Kind:
    """Declare a component kind (once, at import of this module; tests may add their own)."""
    if name in KINDS:
        raise ValueError(f"component kind {name!r} is declared twice")
    kind = KINDS[name] = Kind(name, group, tuple(homes), what)
    return kind


declare_kind("translators", plugins.TRANSLATORS, ("clir_toolkit.translate.translators",),
             "query translator")
declare_kind("expanders", plugins.EXPANDERS, ("clir_toolkit.expand.expanders",),
             "pre-translation query expander")
declare_kind("losses", plugins.LOSSES, ("clir_toolkit.rerank.losses",), "training loss")
declare_kind("rerankers", plugins.RERANKERS, ("clir_toolkit.rerank.models",), "reranker model")
declare_kind("encoders", plugins.ENCODERS, ("clir_toolkit.encoders",),
             "pretrained sentence encoder")
declare_kind("collections", plugins.COLLECTIONS, ("clir_toolkit.collection.families",),
             "collection family")


@dataclass(frozen=True)
class Component:
    """One registered component: its name, the object that makes it, and what it declares."""

    kind: str
    name: str
    factory: Any
    """What :func:`load` returns: a class or function (its call contract is the kind's)."""
    summary: str = ""
    """One line saying what it is (the generated reference and ``--help`` list it)."""
    params: tuple[Any, ...] = ()
    """The :class:`clir_toolkit.params.Param` declarations of the options it reads."""
    order: int = 100
    """Position among the built-ins of its kind (lower first; then by name)."""
    traits: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Kind-specific facts a caller may ask without making it (``structured``,
    ``pairwise``, ...)."""
    builtin: bool = True

    def trait(self, key: str, default: Any = None) -> Any:
        """A declared trait; for a plug-in, the attribute of that name on its object."""
        if key in self.traits:
            return self.traits[key]
        return default if self.builtin else getattr(self.factory, key, default)


_BUILTINS: dict[str, dict[str, Component]] = {}
_IMPORTED_HOMES: set[str] = set()

F = TypeVar("F")


def register(kind: str, name: str, factory: Any = None, *, summary: str = "",
             params: Sequence[Any] = (), order: int = 100,
             **traits: Any) -> Any:
    """Register the built-in ``name`` of ``kind`` (called by the modules of a home package).

    With ``factory`` given it is registered now; without it, ``register`` is a decorator
    for the class or function below it. The summary defaults to the first line of the
    factory's docstring. Registering a name twice is an error (two files claiming one name).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown component kind {kind!r} (one of {', '.join(KINDS)})")

    def add(obj: F) -> F:
        table = _BUILTINS.setdefault(kind, {})
        if name in table and table[name].factory is not obj:
            raise ValueError(f"{KINDS[kind].what} {name!r} is registered twice "
                             f"({table[name].factory!r} and {obj!r})")
        line = summary or ((getattr(obj, "__doc__", None) or "").strip().splitlines() or [""])[0]
        table[name] = Component(kind, name, obj, line, tuple(params), order,
                                MappingProxyType(dict(traits)))
        return obj

    if factory is not None:
        add(factory)
        return factory
    return add


def _import_homes(kind: Kind) -> None:
    """Import every module of the kind's home packages (once per process)."""
    for home in kind.homes:
        if home in _IMPORTED_HOMES:
            continue
        _IMPORTED_HOMES.add(home)
        package = importlib.import_module(home)
        for info in pkgutil.iter_modules(package.__path__, prefix=f"{home}."):
            if not info.name.rsplit(".", 1)[-1].startswith("_"):
                importlib.import_module(info.name)


def builtins(kind: str) -> dict[str, Component]:
    """The built-in components of ``kind``, in their declared order."""
    _import_homes(KINDS[kind])
    table = _BUILTINS.get(kind, {})
    return {c.name: c for c in sorted(table.values(), key=lambda c: (c.order, c.name))}


def names(kind: str) -> Names:
    """The names of ``kind``: the built-ins in order, then the installed plug-ins'."""
    return Names(kind)


def component(kind: str, name: str) -> Component:
    """The component ``name`` of ``kind``: a built-in, else a plug-in (imported now).

    An unknown name is one :class:`UsageError` listing the known ones.
    """
    table = builtins(kind)
    if name in table:
        return table[name]
    if name in plugins.installed(KINDS[kind].group):
        return Component(kind, name, plugins.load(KINDS[kind].group, name), builtin=False)
    raise UsageError(f"unknown {KINDS[kind].what} {name!r} (choose {', '.join(names(kind))})")


def load(kind: str, name: str) -> Any:
    """The class or function that component ``name`` of ``kind`` names."""
    return component(kind, name).factory


class Names(Sequence[str]):
    """The names of a component kind, built-ins then plug-ins (one table of names).

    Behaves as the tuple of those names (``in``, iteration, ``len``), so that argparse
    ``choices`` and recipe validation take it as they take a tuple; the home modules and
    the entry points are read the first time the names are needed, not at import.
    ``exclude`` leaves names out (a table whose rows exclude ``none``, say).
    """

    def __init__(self, kind: str, exclude: Sequence[str] = ()) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown component kind {kind!r}")
        self.kind = kind
        self.exclude = tuple(exclude)
        self._names: tuple[str, ...] = ()
        self._path: tuple[str, ...] | None = None

    @property
    def builtin(self) -> tuple[str, ...]:
        """The built-in names, in order."""
        return tuple(n for n in builtins(self.kind) if n not in self.exclude)

    def _all(self) -> tuple[str, ...]:
        # Read again when sys.path changed (a package installed into this process's path).
        if self._path != tuple(sys.path):
            builtin = self.builtin
            group = KINDS[self.kind].group
            extra = sorted(n for n in plugins.installed(group)
                           if n not in builtin and n not in self.exclude)
            self._names, self._path = builtin + tuple(extra), tuple(sys.path)
        return self._names

    def is_plugin(self, name: str) -> bool:
        """Whether ``name`` is one of the plug-ins' (not a built-in)."""
        return name not in self.builtin and name in self._all()

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __bool__(self) -> bool:
        # Whether there are names at all: the built-in ones say so without reading every
        # installed distribution's entry points (what each command's parser asks, 30 ms).
        return bool(self.builtin) or bool(self._all())

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def __repr__(self) -> str:
        return f"Names({self.kind!r}: {list(self._all())!r})"


def homes(*kinds: str) -> tuple[str, ...]:
    """The home packages of ``kinds``: what a product that reaches their built-ins by name
    declares among its code (:func:`clir_toolkit.freshness.code_fingerprint` follows a
    home package into every one of its modules, since no import statement names them)."""
    return tuple(home for kind in kinds for home in KINDS[kind].homes)


def describe(kind: str) -> dict[str, str]:
    """Each built-in name of ``kind`` with its one-line summary (for generated docs)."""
    return {name: c.summary for name, c in builtins(kind).items()}

