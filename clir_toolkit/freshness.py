"""When a file made earlier can be reused: its inputs, its parameters and the code that made it.

``clir run`` and ``make demo`` make runs, translated queries and models that take minutes
to hours; they are reused on the next run only when nothing they depend on changed. What a
file depends on is hashed into a *key* by the step that makes it (:func:`digest` of its
settings and the sha256 of its input files); the toolkit's own source code
(:func:`source_fingerprint`) is always part of it, so a fixed analyzer or a changed model
makes every result again, even when the version number did not change. A file is fresh
when the sidecar ``<file>.json`` beside it (:func:`mark_fresh`) records the same key, the
same code and the file's own sha256 (a file edited or truncated afterwards is not fresh).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

FRESHNESS_FORMAT = "clir-toolkit-fresh/2"
"""The ``format`` of a sidecar (version 1 did not record the code; its files are remade)."""


def digest(payload: Any) -> str:
    """SHA-256 of ``payload`` as canonical JSON (sorted keys; paths and others as strings)."""
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_fingerprint(package: Path | None = None) -> str:
    """SHA-256 over the source files (``*.py``) under ``package``, by path; by default the
    toolkit's own, computed once per process (the code does not change under a command)."""
    if package is None:
        return _own_fingerprint()
    return _fingerprint(package)


@functools.cache
def _own_fingerprint() -> str:
    return _fingerprint(Path(__file__).resolve().parent)


def _fingerprint(root: Path) -> str:
    total = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        total.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        total.update(hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def is_fresh(path: Path, key: str) -> bool:
    """Whether ``path`` was made from inputs hashing to ``key`` by this code, unchanged since."""
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
        and record.get("code") == source_fingerprint()
        and record.get("sha256") == sha256_file(path)
    )


def mark_fresh(path: Path, key: str, extra: Mapping[str, Any] | None = None) -> None:
    """Write the sidecar of ``path`` (see :func:`is_fresh`), with ``extra`` facts to keep."""
    from clir_toolkit.files import atomic_write, sha256_file

    record = {
        "format": FRESHNESS_FORMAT,
        "key": key,
        "code": source_fingerprint(),
        "sha256": sha256_file(path),
        **(extra or {}),
    }
    with atomic_write(_sidecar(path)) as handle:
        json.dump(record, handle, indent=1, sort_keys=True, default=str)
        handle.write("\n")


def read_sidecar(path: Path) -> dict[str, Any]:
    """The facts kept beside ``path`` by :func:`mark_fresh`."""
    return dict(json.loads(_sidecar(path).read_text(encoding="utf-8")))
