"""When a file made earlier can be reused: its inputs, its parameters and the code that made it.

``clir run`` and ``clir demo`` make runs, translated queries and models that take minutes
to hours, and the toolkit caches what is slow to remake (parsed dictionaries, collected
text, encoded documents); each is reused only while nothing it depends on changed. This
module is the one rule for all of them:

* **Inputs and settings** are hashed into a *key* by the step that makes the file
  (:func:`digest` of its settings and of the sha256 of its input files).
* **Code** is hashed by :func:`code_fingerprint`: the modules a product declares it depends
  on and every module of the toolkit they import, directly or not, found by reading their
  import statements. Each module is hashed as its syntax tree without docstrings (comments
  are not in the tree), so editing a comment or a docstring remakes nothing, while a
  change to the code of any of those modules remakes the file. Code of the toolkit a
  product does not import (the command line, the report writers, another reranker) is not
  part of it. A product that declares nothing depends on every module of the toolkit
  (:func:`source_fingerprint`), the conservative choice.
* A file is **fresh** when the sidecar ``<file>.json`` beside it (:func:`mark_fresh`)
  records the same key, the same code fingerprint and the file's own sha256 (a file edited
  or truncated afterwards is not fresh). A cache whose entries are found by name names
  them by :func:`cache_key` of the same key and code instead.

Code loaded by name (``importlib``, plug-ins' entry points) is not followed: a product that
runs such code lists its module among the modules it declares. The one exception is the
built-in components of :mod:`clir_toolkit.registry`, which it imports by name from their
kind's home package: a product that imports a home package depends on all of its modules.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from clir_toolkit.errors import ClirError

FRESHNESS_FORMAT = "clir-toolkit-fresh/3"
"""The ``format`` of a sidecar. Version 1 did not record the code; version 2 hashed every
byte of every module. Files with an older sidecar are not fresh: they are made once again."""

PACKAGE = Path(__file__).resolve().parent
"""The toolkit's own package directory, whose code :func:`code_fingerprint` hashes."""


def digest(payload: Any) -> str:
    """SHA-256 of ``payload`` as canonical JSON (sorted keys; paths and others as strings)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def code_fingerprint(modules: Sequence[str] | None = None, package: Path | None = None) -> str:
    """SHA-256 of the code ``modules`` run: theirs and that of every module of ``package``
    they import, directly or not, each without its docstrings and comments.

    ``modules`` are dotted names (``"clir_toolkit.search"``; a package stands for its
    ``__init__``); None means every module of the package. ``package`` is the toolkit's own
    by default; another directory is read as a package of that name (tests hash a copy).
    """
    root = (package or PACKAGE).resolve()
    files = _module_files(root)
    names = files.keys() if modules is None else _closure(files, modules)
    total = hashlib.sha256()
    for name in sorted(names):
        total.update(f"{name}\0{_code(name, files[name].read_bytes()).digest}\0".encode())
    return total.hexdigest()


def source_fingerprint(package: Path | None = None) -> str:
    """:func:`code_fingerprint` of every module of ``package``: the code of a product that
    does not declare what it depends on."""
    return code_fingerprint(None, package)


def _module_files(root: Path) -> dict[str, Path]:
    """Every module of the package at ``root``, by dotted name (``pkg.sub`` for
    ``pkg/sub/__init__.py`` and for ``pkg/sub.py``)."""
    files = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        files[".".join((root.name, *parts))] = path
    return files


def _closure(files: Mapping[str, Path], modules: Iterable[str]) -> set[str]:
    """``modules`` and every module of the package they import, directly or not.

    ``import a.b`` and ``from a import b`` name the module ``a.b`` where there is one, and
    ``a`` otherwise; relative imports are read from the importing module's package. A home
    package of the registry brings in all of its modules.
    """
    homes = _home_packages()
    unknown = sorted(set(modules) - files.keys())
    if unknown:
        raise ValueError(f"no module {', '.join(unknown)} in the package")
    seen: set[str] = set()
    waiting = list(modules)
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        package = name if files[name].name == "__init__.py" else name.rpartition(".")[0]
        for module, level, names in _code(name, files[name].read_bytes()).imports:
            if level:
                parent = package.rsplit(".", level - 1)[0]
                module = f"{parent}.{module}" if module else parent
            found = [module, *(f"{module}.{imported}" for imported in names)]
            waiting.extend(found_name for found_name in found if found_name in files)
        if name in homes:  # its built-ins are imported by name (the registry)
            waiting.extend(module for module in files if module.startswith(f"{name}."))
    return seen


def _home_packages() -> frozenset[str]:
    """The home packages of the registry's component kinds (:data:`registry.KINDS`)."""
    from clir_toolkit.registry import KINDS

    return frozenset(home for kind in KINDS.values() for home in kind.homes)


class _Code(NamedTuple):
    """What :func:`code_fingerprint` needs of one module's source."""

    digest: str
    """SHA-256 of its syntax tree without docstrings."""
    imports: tuple[tuple[str, int, tuple[str, ...]], ...]
    """Its import statements that run: (module, level of a relative import, names)."""


@functools.cache
def _code(name: str, source: bytes) -> _Code:
    """:func:`_parse` of module ``name``'s ``source``, remembered once per process and, on
    disk, from one process to the next (parsing the dozens of modules a product imports
    costs a tenth of a second, more than some commands take in all; reading the memo, a
    millisecond). The memo of a module holds the sha256 of the source it was parsed from
    and the Python that parsed it (``ast.dump`` differs between versions): any other
    source is parsed again. A memo that cannot be read or written is ignored."""
    from clir_toolkit.files import atomic_write, data_dir

    memo = data_dir() / "cache" / "code" / f"{name}.json"
    stamp = {
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "python": sys.version.split()[0],
        "format": FRESHNESS_FORMAT,
    }
    try:
        record = json.loads(memo.read_text(encoding="utf-8"))
        if all(record.get(field) == value for field, value in stamp.items()):
            imports = tuple((m, int(level), tuple(n)) for m, level, n in record["imports"])
            return _Code(str(record["digest"]), imports)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # no memo yet, or one that is not ours: parse
    code = _parse(source)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(memo, own=True) as handle:
            json.dump({**stamp, "digest": code.digest, "imports": code.imports}, handle)
    except (OSError, ClirError):
        pass  # a read-only home: parse again next time
    return code


def _parse(source: bytes) -> _Code:
    """The code of a module's source.

    The digest is that of the syntax tree (no comments, no line numbers) with every
    docstring removed: a string standing alone as a statement — the first of a module, class
    or function, or one documenting an attribute — which does nothing when run. Imports
    under ``if TYPE_CHECKING:`` are left out: they never run.
    """
    tree = ast.parse(source)
    imports: list[tuple[str, int, tuple[str, ...]]] = []
    for node in _run_time_nodes(tree):
        if isinstance(node, ast.Import):
            imports.extend((alias.name, 0, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            imports.append((node.module or "", node.level, names))
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list):
                statements[:] = [s for s in statements if not _is_docstring(s)]
    return _Code(hashlib.sha256(ast.dump(tree).encode("utf-8")).hexdigest(), tuple(imports))


def _run_time_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:``."""
    waiting = [tree]
    while waiting:
        node = waiting.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            waiting.extend(node.orelse)
        else:
            waiting.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _is_docstring(statement: Any) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def cache_key(key: Any, code: Sequence[str] | None = None) -> str:
    """The name of a cache entry found by name: :func:`digest` of ``key`` (its inputs and
    settings), of the code of the modules ``code`` and of the rule's format, so that a change
    of any of them selects another entry instead of reusing a stale one."""
    return digest({"format": FRESHNESS_FORMAT, "key": key, "code": code_fingerprint(code)})


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def is_fresh(path: Path, key: str, code: Sequence[str] | None = None) -> bool:
    """Whether ``path`` was made from inputs hashing to ``key`` by the same code of the
    modules ``code`` (see :func:`code_fingerprint`), unchanged since."""
    from clir_toolkit.files import sha256_file

    sidecar = _sidecar(path)
    if not path.is_file() or not sidecar.is_file():
        return False
    try:
        record = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("format") == FRESHNESS_FORMAT
        and record.get("key") == key
        and record.get("code") == code_fingerprint(code)
        and record.get("sha256") == sha256_file(path)
    )


def mark_fresh(
    path: Path, key: str, extra: Mapping[str, Any] | None = None, code: Sequence[str] | None = None
) -> None:
    """Write the sidecar of ``path`` (see :func:`is_fresh`), with ``extra`` facts to keep."""
    from clir_toolkit.files import atomic_write, sha256_file

    record = {
        "format": FRESHNESS_FORMAT,
        "key": key,
        "code": code_fingerprint(code),
        "code_of": sorted(code) if code is not None else "every module",
        "sha256": sha256_file(path),
        **(extra or {}),
    }
    with atomic_write(_sidecar(path), own=True) as handle:
        json.dump(record, handle, indent=1, sort_keys=True, default=str)
        handle.write("\n")


def read_sidecar(path: Path) -> dict[str, Any]:
    """The facts kept beside ``path`` by :func:`mark_fresh`."""
    return dict(json.loads(_sidecar(path).read_text(encoding="utf-8")))
