"""Writing one file so that nothing is lost and nothing is half-written
(:func:`atomic_write`), and the temporaries that make it so: a file or a directory
(:func:`scratch`) beside the destination, named ``.NAME.<random>.tmp``, removed on the
way out even when a signal lands meanwhile.

Also what every output shares: OS errors said in one line with their fix
(:func:`output_error`), ``-`` for standard output (:func:`is_stdout`), and destinations a
rename would destroy (a symbolic link is followed; a device or FIFO is written through; a
socket is refused).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar

from clir_toolkit.errors import OutputError

T = TypeVar("T")

#: What to do about an OS error on an output, by errno.
_OS_ERROR_FIXES = {
    errno.EACCES: "check the permissions of the directory, or choose another path",
    errno.EPERM: "check the permissions of the directory, or choose another path",
    errno.EROFS: "the file system is read-only; choose another path",
    errno.ENOSPC: "no space left on the device; free some space or choose another path",
    errno.EDQUOT: "disk quota exceeded; free some space or choose another path",
    errno.EISDIR: "it is a directory; give a file name",
    errno.ENOTDIR: "a parent of the path is a file, not a directory; choose another path",
    errno.ENAMETOOLONG: "the name is too long; choose a shorter path",
    errno.EEXIST: "choose another path",
}


#: Errors of a write that mean the destination's device is full, whoever wrote.
_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


@contextlib.contextmanager
def _full_device_names(path: str | Path) -> Iterator[None]:
    """Inside the block, a write that fails because the device is full is reported as
    ``path`` not being writable (the block writes temporaries on ``path``'s device)."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _FULL:
            raise output_error(path, exc) from None
        raise


def describe_os_error(exc: OSError) -> str:
    """What went wrong and how to fix it, e.g. ``Permission denied (check the ...)``."""
    reason = exc.strerror or type(exc).__name__
    return f"{reason} ({_OS_ERROR_FIXES.get(exc.errno or 0, 'choose another path')})"


def output_error(path: str | Path, exc: OSError) -> OutputError:
    """The one-line error for an OS error met while writing ``path``."""
    return OutputError(f"{path}: cannot write: {describe_os_error(exc)}")


def absolute(path: str | Path) -> Path:
    """``path`` made absolute without resolving symbolic links (``.`` gets its real name)."""
    return Path(os.path.abspath(path))


@contextlib.contextmanager
def _temporary_beside(
    path: str | Path, create: Callable[[Path], T], named: str | Path | None = None
) -> Iterator[tuple[Path, T]]:
    """Create a temporary ``.NAME.<random>.tmp`` beside ``path`` with ``create(name)`` and
    remove it, if it is still there, when the block ends; yield its name and what
    ``create`` returned. Errors name ``named`` (the path as the user gave it), or ``path``.

    The name is drawn before anything exists and the removal is armed before ``create``
    runs, so an interrupting signal leaves nothing behind at any instant (``mkstemp`` has a
    window between creating its file and returning the name). 128 random bits: the name is
    never one that exists. ``create`` is one system call that applies the umask, so the
    result has the permissions a plain ``open()`` or ``mkdir()`` would give.
    """
    target = absolute(path)
    name = target.with_name(f".{target.name}.{secrets.token_hex(16)}.tmp")
    try:
        try:
            created = create(name)
        except OSError as exc:
            raise output_error(path if named is None else named, exc) from None
        yield name, created
    finally:
        try:
            _remove_even_if_interrupted(name)
        except KeyboardInterrupt:
            # A signal handled at the very entry of the call (Python runs handlers when a
            # function starts), before its own protection: remove now, then go on stopping.
            _remove_even_if_interrupted(name)
            raise


def _remove_even_if_interrupted(path: Path) -> None:
    """Remove ``path``; a signal that lands meanwhile (removing a directory takes many
    steps) is raised once the removal is complete, not in the middle of it."""
    interrupted: KeyboardInterrupt | None = None
    while True:
        try:
            if os.path.lexists(path):  # (unlinking a missing name on a read-only device: EROFS)
                remove_path(path)
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
        except OSError as exc:
            # A signal between shutil.rmtree's os.close(fd) and its note that fd is closed
            # makes its finally close fd again (EBADF) over the interrupt: try again.
            if not isinstance(exc.__context__, KeyboardInterrupt):
                raise
            interrupted = exc.__context__
    if interrupted is not None:
        raise interrupted


def check_parent(target: Path) -> None:
    """Create the parent directories of ``target``, or say in one line why not."""
    not_a_directory = OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a parent is a file
        raise output_error(target, not_a_directory) from None
    except OSError as exc:
        raise output_error(target, exc) from None
    if not target.parent.is_dir():
        raise output_error(target, not_a_directory)


def remove_path(path: Path) -> None:
    """Remove ``path``, a file, a link or a directory tree; one already gone is no error."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


STDOUT = "-"
"""The output name that means standard output, as in most command-line tools."""


def is_stdout(path: str | Path) -> bool:
    """Whether ``path`` is ``-``, standard output (``./-`` names a file called ``-``)."""
    return str(path) == STDOUT


@contextlib.contextmanager
def atomic_write(
    path: str | Path, mode: str = "w", encoding: str | None = "utf-8", *, own: bool = False
) -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it onto ``path`` if the block succeeds.

    On an exception (or a signal turned into one) the temporary file is removed and ``path``
    is untouched. OS errors of the temporary file and of the rename raise
    :class:`~clir_toolkit.errors.OutputError`; errors raised by the block pass unchanged.

    Destinations that a rename would destroy are handled as the command line's conventions
    want: ``-`` writes standard output; a symbolic link is resolved and its target replaced
    (atomically, as any file); a device or FIFO is written through with no temporary (there
    is nothing to keep: a device is not a file's contents); a socket is refused.

    ``own``: ``path`` is a file the toolkit keeps in a place of its own (a cache, a sidecar,
    kept scores), not one a user named. Whatever is there, a symbolic link included, is
    replaced by the new file and never written through: a link planted there cannot make
    the toolkit overwrite the file it points to.
    """
    if own:
        with _replacing(path, absolute(path), mode, encoding) as handle:
            yield handle
        return
    if is_stdout(path):
        with _writing_stdout(mode, encoding) as handle:
            yield handle
        return
    if _is_special(absolute(path)):  # (the kernel follows /dev/stdout to its pipe or tty)
        with _writing_through(path, absolute(path), mode, encoding) as handle:
            yield handle
        return
    target = Path(os.path.realpath(absolute(path)))  # a link's target is what is replaced
    with _replacing(path, target, mode, encoding) as handle:
        yield handle


@contextlib.contextmanager
def _replacing(
    path: str | Path, target: Path, mode: str, encoding: str | None
) -> Iterator[IO]:
    """A temporary file beside ``target``, renamed onto it when the block succeeds (the
    directory entry ``target`` is replaced, whatever it was, a link included)."""
    check_parent(target)
    if target.is_dir() and not target.is_symlink():
        raise output_error(path, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))

    def create(name: Path) -> int:
        return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)

    with _temporary_beside(target, create, named=path) as (tmp, fd):
        with _full_device_names(path), _open_fd(fd, mode, encoding) as handle:
            yield handle  # (the final flush, at the end of the block, may find the device full)
        try:
            _keep_permissions(target, tmp)
            os.replace(tmp, target)
        except OSError as exc:
            raise output_error(path, exc) from None


def _keep_permissions(target: Path, tmp: Path) -> None:
    """Give ``tmp`` the permission bits of the file it replaces, if there is one: a run the
    user made private (600) stays private when it is written again."""
    try:
        if target.is_symlink():  # a link in the toolkit's own place: replaced, not its target
            return
        bits = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        return
    os.chmod(tmp, bits)


def _open_fd(fd: int, mode: str, encoding: str | None) -> IO:
    """A file object over ``fd`` in ``mode``; text is written with ``\\n`` line ends."""
    if "b" in mode:
        return os.fdopen(fd, mode)
    return os.fdopen(fd, mode, encoding=encoding, newline="\n")


def _is_special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a directory (a device, a
    FIFO, a socket): something a rename would replace by a plain file."""
    try:
        kind = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(kind) and not stat.S_ISDIR(kind)


@contextlib.contextmanager
def _writing_through(
    path: str | Path, target: Path, mode: str, encoding: str | None
) -> Iterator[IO]:
    """Write straight into the special file ``target`` (``path`` as the user named it)."""
    if stat.S_ISSOCK(os.stat(target).st_mode):
        raise OutputError(
            f"{path}: is a socket, which cannot be written as a file; nothing was changed "
            "(choose another path)"
        )
    try:  # a FIFO's open waits for a reader, as the shell's `>` does
        fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise output_error(path, exc) from None
    with _full_device_names(path), _open_fd(fd, mode, encoding) as handle:
        yield handle  # (/dev/full: "no space left", at the final flush)


@contextlib.contextmanager
def _writing_stdout(mode: str, encoding: str | None) -> Iterator[IO]:
    """Standard output, for ``-``: in ``mode`` (text or binary), flushed, not closed."""
    sys.stdout.flush()
    binary = sys.stdout.buffer
    with _full_device_names("standard output"):
        if "b" in mode:
            yield binary
            binary.flush()
        else:
            import io

            text = io.TextIOWrapper(binary, encoding=encoding, newline="\n", write_through=False)
            try:
                yield text
                text.flush()
            finally:
                text.detach()  # standard output stays open for the rest of the command


@contextlib.contextmanager
def scratch(path: str | Path) -> Iterator[Path]:
    """A temporary working directory beside ``path`` (``.NAME.*.tmp``), removed on exit.

    Beside the destination rather than in the system's temporary directory: it lives on the
    destination's file system, and the next writer of ``path`` removes it if a killed
    process left it behind.
    """
    target = absolute(path)
    check_parent(target)
    with (
        _temporary_beside(path, lambda name: os.mkdir(name, 0o777)) as (tmp, _),
        _full_device_names(path),
    ):
        yield tmp
