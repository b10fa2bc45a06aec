"""Replacing a directory (an index, a collection) so that nothing is lost: only our own
outputs are replaced (:func:`check_replaceable`, :func:`check_only_ours`), one writer at a
time (:func:`directory_lock`), through two renames whose interruption the next writer or
reader repairs (:func:`recover_directory`); :func:`atomic_directory` does all of it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from clir_toolkit.errors import ClirError, OutputError
from clir_toolkit.files.atomic import absolute, check_parent, output_error, remove_path, scratch


def _old(target: Path) -> Path:
    return target.with_name(f".{target.name}.old")


def _lock_path(target: Path) -> Path:
    return target.with_name(f".{target.name}.lock")


def _temporaries(target: Path) -> list[Path]:
    """Temporary siblings of ``target`` made by :func:`atomic_directory`,
    :func:`~clir_toolkit.files.atomic.scratch` or
    :func:`~clir_toolkit.files.atomic.atomic_write`."""
    with contextlib.suppress(FileNotFoundError):
        return sorted(target.parent.glob(f".{target.name}.*.tmp"))
    return []


def check_replaceable(path: str | Path, marker: str, what: str) -> None:
    """Refuse, in one line, to replace ``path`` unless it is missing, an empty directory or
    a directory holding ``marker`` (our own output of that kind). Nothing is touched."""
    target = absolute(path)
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink() or not target.is_dir():
        kind = "a symbolic link" if target.is_symlink() else "a file"
        raise OutputError(
            f"{path}: exists and is {kind}, not {what}; nothing was changed "
            "(choose another path, or remove it yourself)"
        )
    if (target / marker).is_file() or not any(target.iterdir()):
        return
    if target == absolute(".") or target in absolute(".").parents:
        where = "the current directory or one of its parents"
    else:
        where = f"a directory that is not {what} (it has no {marker})"
    raise OutputError(
        f"{path}: is {where}; nothing was changed "
        f"(choose a new path for {what}, or remove this one yourself)"
    )


@contextlib.contextmanager
def directory_lock(path: str | Path) -> Iterator[None]:
    """Hold the exclusive lock of directory ``path`` (file ``.NAME.lock`` beside it).

    A second process asking for the same lock is refused at once with the holder's process
    id. The lock file is removed on release; a process that dies loses its lock by itself.
    The lock file is the toolkit's own: a symbolic link found at its name is removed, never
    followed (the process id would be written into the file it points to).
    """
    target = absolute(path)
    lock = _lock_path(target)
    check_parent(target)
    while True:
        if lock.is_symlink():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link planted between the check and the open
                continue
            raise output_error(path, exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise ClirError(
                f"{path}: another clir process (pid {holder}) is writing it; "
                "wait for it to finish, or stop it"
            ) from None
        # The holder before us may have unlinked the file after we opened it: then our lock
        # is on a file nobody else sees, and we must take the lock on the new file instead.
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        with contextlib.suppress(OSError):  # the holder's pid is for messages only
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)
        os.close(fd)


def recover_directory(path: str | Path, *, locked: bool = False) -> None:
    """Finish or undo a replacement of directory ``path`` that a crash interrupted.

    ``path`` missing and ``.NAME.old`` present: the crash came between the two renames, so
    the old directory is put back. Both present: the new one was in place, so the old one is
    removed. Stale temporaries are removed too, under the lock. Unless ``locked``, the
    directory's lock is taken for the repair; a reader that finds nothing to repair takes
    no lock.
    """
    target = absolute(path)
    old = _old(target)
    if not old.exists() and not (locked and _temporaries(target)):
        return
    with contextlib.ExitStack() as stack:
        if not locked:
            stack.enter_context(directory_lock(target))
        if old.exists():
            if target.exists():
                remove_path(old)
            else:
                os.replace(old, target)
        for leftover in _temporaries(target):  # under the lock: no writer is using them
            remove_path(leftover)


#: Finds the first entry of an earlier output directory that its writer did not make (a
#: user's file put there), or None: see :func:`check_only_ours`.
ForeignEntry = Callable[[Path], Path | None]


def check_only_ours(path: str | Path, marker: str, what: str, foreign: ForeignEntry) -> None:
    """Refuse, in one line and touching nothing, to replace an earlier output ``path`` (a
    directory holding ``marker``) that holds an entry ``foreign`` says its writer did not
    make: the replacement removes the old directory whole, and a user's file put there
    would be lost with it."""
    target = absolute(path)
    if target.is_symlink() or not (target / marker).is_file():
        return  # not an earlier output: check_replaceable's rules apply
    entry = foreign(target)
    if entry is not None:
        kind = "directory" if entry.is_dir() and not entry.is_symlink() else "file"
        raise OutputError(
            f"{path}: holds the {kind} {entry.relative_to(target)}, which is not part of "
            f"{what}; nothing was changed (move it out, or choose another path)"
        )


@contextlib.contextmanager
def atomic_directory(
    path: str | Path, *, marker: str, what: str, foreign: ForeignEntry | None = None
) -> Iterator[Path]:
    """Yield an empty temporary directory; it replaces ``path`` if the block succeeds.

    ``marker`` is the file that identifies our own output of this kind (``what``, for
    messages): ``path`` is replaced only if it is missing, empty or holds ``marker`` — see
    :func:`check_replaceable` — and, given ``foreign``, holds nothing else than what its
    writer made (:func:`check_only_ours`). The directory's lock is held throughout, an
    interrupted earlier replacement is recovered first, and a previous ``path`` is removed
    only after the new one is in place.
    """
    target = absolute(path)

    def check() -> None:
        check_replaceable(path, marker, what)
        if foreign is not None:
            check_only_ours(path, marker, what, foreign)

    check()
    with directory_lock(target):
        recover_directory(target, locked=True)
        check()  # under the lock; the recovery may have put an old one back
        with scratch(target) as tmp:
            yield tmp
            try:
                if target.exists():
                    old = _old(target)
                    os.replace(target, old)
                    try:
                        os.replace(tmp, target)
                    except OSError:
                        os.replace(old, target)  # put the old one back at once
                        raise
                    shutil.rmtree(old, ignore_errors=True)
                else:
                    os.replace(tmp, target)
            except OSError as exc:
                raise output_error(path, exc) from None
