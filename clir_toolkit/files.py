"""Writing files so that nothing is lost and nothing is half-written.

Every output of the toolkit goes through :func:`atomic_write` (or :func:`atomic_directory`):
the content is written to a temporary sibling and renamed into place only when complete,
so an interrupted or failed command leaves the destination exactly as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _publish_mode(path: Path, mode: int) -> None:
    """Give a temporary file or directory the permissions a plain open() would have."""
    os.chmod(path, mode & ~_umask())


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it onto ``path`` if the block succeeds.

    On an exception the temporary file is removed and ``path`` is untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        handle: IO
        if "b" in mode:
            handle = os.fdopen(fd, mode)
        else:
            handle = os.fdopen(fd, mode, encoding=encoding, newline="\n")
        with handle:
            yield handle
        _publish_mode(Path(tmp_name), 0o666)  # mkstemp creates files readable by owner only
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory; it replaces ``path`` if the block succeeds.

    A previous ``path`` is removed only after the new one is complete.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield tmp
        _publish_mode(tmp, 0o777)  # mkdtemp creates directories for the owner only
        if target.exists():
            old = target.with_name(f".{target.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
            os.replace(tmp, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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
