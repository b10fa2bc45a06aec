"""Fingerprints of files: their bytes' sha256 (:func:`sha256_file`: collections' checksums,
models' and caches' sources), and their size and modification time
(:func:`file_stamps`: what a cache records to notice that a source changed)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path


def sha256_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_stamps(paths: Iterable[str | Path]) -> list[tuple[str, int, int]]:
    """(path, size, modification time in ns) of each file: what a cache built from these
    files records, to notice when one of them changed."""
    stamps = []
    for path in paths:
        stat = Path(path).stat()
        stamps.append((str(path), stat.st_size, stat.st_mtime_ns))
    return stamps
