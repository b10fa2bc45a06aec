"""One family of errors, so that the command line can print any of them as one line.

Every error the toolkit raises on bad input or a missing resource derives from
:class:`ClirError`. Its message says what is wrong, where (``file:line`` when a file is at
fault) and how to fix it; ``clir`` prints it without a traceback and exits with status 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class ClirError(Exception):
    """Base class of every error the toolkit reports to a user."""


class FormatError(ClirError):
    """A file does not follow its format; the message names the file and the line."""

    def __init__(self, path: str | Path, line: int | None, problem: str, fix: str = "") -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        message = f"{where}: {problem}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)
        self.path = str(path)
        self.line = line
        self.problem = problem


class ResourceError(ClirError):
    """A resource (Java, an index, a dictionary, a package) is missing or unusable."""


class UsageError(ClirError):
    """Options that do not fit together; the command line exits with status 2."""


def missing_file(value: str, message: str) -> ClirError:
    """The error for a value that should name a file and names none: a missing input (exit 1)
    when it has the look of a path (a directory separator or a file suffix, ``d.tsv``), else
    a word that is no accepted name either (a usage error, exit 2: ``use-m3-token``)."""
    path = Path(value)
    looks_like_a_path = len(path.parts) > 1 or bool(path.suffix)
    return ClirError(message) if looks_like_a_path else UsageError(message)


class OutputError(ClirError, OSError):
    """An output cannot be written (permissions, full disk, a path that is not ours).

    Also an :class:`OSError`, so that code which treats a failed write as a skipped cache
    (``except OSError``) keeps doing so."""


class Interrupted(KeyboardInterrupt):
    """SIGTERM (or another terminating signal) turned into an exception, so that temporary
    files are removed on the way out as they are for Ctrl-C."""

    received: ClassVar[list[int]] = []
    """The terminating signals the command line's handler turned into this exception, in
    order: code calling a library that replaces the exception with one of its own (Ray's
    ``put`` does) can still tell that the command was interrupted."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def forget_caught_interrupts(status: int) -> int:
    """``status``, once CPython no longer holds a caught KeyboardInterrupt against the process.

    CPython marks a KeyboardInterrupt that ends code run from a string, by ``exec`` or
    ``eval``, as unhandled, even when a caller catches it (``run_eval_code_obj`` in
    Python/pythonrun.c, 3.8 to 3.13 at least). ``collections.namedtuple`` and ``dataclasses``
    run such code, and imports create them. Under ``python -m`` the interpreter checks the mark
    after it has exited (``Py_RunMain`` in Modules/main.c) and then kills itself with SIGINT's
    default action: a Ctrl-C that landed in a namedtuple's creation while tqdm imported gave
    ``clir: interrupted``, then exit -2 instead of 130. The ``clir`` script itself exits by
    another path, which does not check the mark. A string evaluation that ends normally
    clears it, hence the empty one below.
    """
    exec("", {})  # clears the mark: every string evaluation resets it before it runs
    return status
