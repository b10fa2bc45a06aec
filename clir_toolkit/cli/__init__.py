"""The ``clir`` command line: argument parsing only; the work happens in library functions.

Each sub-command's handler imports what it needs when it runs, so ``clir --help`` starts
neither Java nor torch. Every :class:`~clir_toolkit.errors.ClirError` is printed as one line
on stderr (``clir: error: ...``) with exit status 1 (2 for a usage error); ``--debug``
shows the traceback instead.

One module per command (``cli/index.py``, ``cli/search.py``, …), each with a ``register``
function that adds its parser and the handlers it calls; options several commands share are
in :mod:`clir_toolkit.cli.options`. The handlers only parse: they build the same config
objects the recipes use and call the library (or :mod:`clir_toolkit.experiments`).
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import errno
import io
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from importlib import import_module
from typing import Any, NoReturn

from clir_toolkit import progress
from clir_toolkit.cli.commands import COMMANDS
from clir_toolkit.cli.options import _common_options, refuse_workers_without_ray
from clir_toolkit.cli.outputs import check_outputs
from clir_toolkit.errors import ClirError, Interrupted, UsageError


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser, with its errors in one line as every other error of ``clir``.

    argparse prints the whole usage and then the message; here the message alone, naming
    the option and what it accepts, with where to read more:
    ``clir: error: argument --hits: expected an integer at least 1, found "abc" (see clir
    search --help)``, exit status 2. A missing or unknown command (or action of a command
    such as ``clir rerank``) lists the ones there are. Sub-parsers are of the same class
    (argparse makes them so), so that this holds for every command.
    """

    def _print_message(self, message: str, file: Any = None) -> None:
        """Help and version text; a write that fails (standard output closed, or its device
        full) is raised, where argparse would drop it and exit 0."""
        if message:
            (file or sys.stdout).write(message)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"clir: error: {self.one_line(message)}\n")

    def one_line(self, message: str) -> str:
        """argparse's ``message`` in the words of ``clir``, on one line."""
        message = " ".join(message.split())
        for action in self._actions:
            if not isinstance(action, argparse._SubParsersAction) or not action.metavar:
                continue
            noun, names = str(action.metavar).lower(), ", ".join(action.choices or ())
            if message == f"the following arguments are required: {action.metavar}":
                article = "an" if noun[0] in "aeiou" else "a"
                return f"give {article} {noun}: {names} ({self.prog} --help says what each does)"
            given = re.fullmatch(
                rf"argument {re.escape(str(action.metavar))}: invalid choice: (.*?) \(choose .*",
                message,
            )
            if given:
                return f"unknown {noun} {given.group(1)} ({self.prog} has: {names})"
        return f"{message} (see {self.prog} --help)"


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command that ``argv`` runs (its first word that is not an option), or None."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in COMMANDS else None


def build_parser(only: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``clir`` and its sub-commands, each registered by its module
    (:data:`~clir_toolkit.cli.commands.COMMANDS`).

    ``only``: register these commands alone in full (None: all of them); the others get a
    parser that knows only their name and help line, enough for ``clir --help`` and for a
    one-line error naming them, without importing what their options need.
    """
    common = _common_options()
    parser = OneLineParser(
        prog="clir",
        description="Cross-language information retrieval: BM25 over Lucene with query "
        "translation, neural reranking, evaluation with significance tests.",
    )
    from clir_toolkit import __version__

    parser.add_argument("--version", action="version", version=f"clir_toolkit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        if name in commands.choices:  # registered with another command of its module
            continue
        if only is None or any(COMMANDS[name].module == command.module for name in only):
            import_module(f"clir_toolkit.cli.{command.module}").register(commands, common)
        else:
            commands.add_parser(name, help=command.help, add_help=False)
    return parser


@contextlib.contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`~clir_toolkit.errors.Interrupted` while a command
    runs, as SIGINT raises KeyboardInterrupt: either way the exception unwinds through the
    ``atomic_write``/``atomic_directory`` blocks, which remove their temporary files.

    A signal that arrives while Python runs a finaliser or a weakref callback (the import
    machinery has some) raises there, where Python can only print "Exception ignored" and
    go on; the command would then finish as if never interrupted. The unraisable-exception
    hook below catches that case silently and sends the signal again, so that it
    raises in the command's own code a moment later — unless the command has been
    interrupted or has ended meanwhile: a copy sent then would reach Python's exit, where
    the default action kills the process (exit -2 after "clir: interrupted"; the -2 that CI
    showed had another cause, :func:`clir_toolkit.errors.forget_caught_interrupts`).
    The check and the copy are one step under a lock that the command's end also takes: a
    thread paused between them by a busy machine cannot send it after the end, and a copy
    sent before the end raises in this block's own code, where ``main`` reports it.
    """

    received: list[int] = []

    def interrupt(signum: int, _frame: object) -> None:
        received.append(signum)
        Interrupted.received.append(signum)
        raise Interrupted(signum)

    stopped = threading.Event()  # the command has been interrupted, or has ended
    ending = threading.Lock()  # held to check `stopped` and send a copy, or to set it

    def send_signal_later(signum: int) -> None:
        time.sleep(0.05)
        with ending:
            if not stopped.is_set():  # else a stale copy: it would kill Python's exit (-2)
                os.kill(os.getpid(), signum)

    def stop() -> None:
        with ending:
            stopped.set()

    def redeliver(unraisable: sys.UnraisableHookArgs) -> None:
        exc = unraisable.exc_value
        if isinstance(exc, KeyboardInterrupt):
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            # Sent from another thread, a little later: sent from here, the handler would
            # raise inside this hook (threading.Thread.start() waits, so _thread it is).
            _thread.start_new_thread(send_signal_later, (signum,))
        else:
            previous_hook(unraisable)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    previous_hook, sys.unraisablehook = sys.unraisablehook, redeliver
    try:
        yield
    except KeyboardInterrupt as exc:
        stop()
        if received and not isinstance(exc, Interrupted):
            # Raised from a handler inside Ray's ray.get, the exception comes out as a bare
            # KeyboardInterrupt: the signal's number is the one last received.
            raise Interrupted(received[-1]) from None
        raise
    finally:
        stop()
        sys.unraisablehook = previous_hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def error_line(exc: BaseException) -> tuple[str, int]:
    """What ``clir`` prints for an error that ends a command, and the exit status.

    The one error boundary of the command line: every failure is one line on stderr.
    """
    from clir_toolkit import jvm

    if isinstance(exc, ClirError):
        return f"clir: error: {exc}", 2 if isinstance(exc, UsageError) else 1
    if isinstance(exc, Interrupted):
        return "clir: interrupted", 128 + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return "clir: interrupted", 130
    if isinstance(exc, OSError) and exc.errno is not None:
        from clir_toolkit.files import describe_os_error

        where = f"{exc.filename}: " if exc.filename is not None else ""
        return f"clir: error: {where}{describe_os_error(exc)}", 1
    if isinstance(exc, MemoryError):
        return "clir: error: out of memory (try a smaller input or --java-heap)", 1
    out_of_memory = jvm.out_of_memory_line(exc)
    if out_of_memory is not None:
        return f"clir: error: {out_of_memory}", 1
    if jvm.is_java_exception(exc):
        detail = jvm.java_error_text(exc).splitlines()[0]
        return f"clir: error: Java: {detail} (run with --debug for the trace)", 1
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return (
        f"clir: internal error: {type(exc).__name__}: {detail} "
        "(run again with --debug for the traceback, and please report it)",
        1,
    )


class ClosedStdout(io.TextIOBase):
    """Standard output when the shell closed it (``clir ... >&-``): Python then has none, and
    ``print`` would drop what a command writes without a word. Every write fails instead, so
    that the command stops with one line and exit 1."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "closed: nothing can be written to it")

    @property
    def buffer(self) -> Any:
        raise OSError(errno.EBADF, "closed: nothing can be written to it")


def _stdout_error(exc: OSError) -> int:
    """Report a failed write to standard output (closed, or its device full) in one line."""
    from clir_toolkit.files import describe_os_error

    print(f"clir: error: standard output: {describe_os_error(exc)}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
    # Only the command being run is registered in full: `clir --help` imports none of them.
    chosen = chosen_command(words)
    try:
        parser = build_parser(only=[chosen] if chosen else [])
        args = parser.parse_args(words)
    except KeyboardInterrupt as exc:  # a signal while the command's modules still import
        line, status = error_line(exc)
        print(line, file=sys.stderr)
        return status
    except SystemExit:  # --help, --version (or a usage error, already on stderr)
        try:
            sys.stdout.flush()
        except OSError as error:  # what they printed is lost: say so
            return _stdout_error(error)
        raise
    except OSError as exc:  # --help or --version into a closed standard output
        return _stdout_error(exc)
    try:
        with signals_as_exceptions():
            check_outputs(args)  # before any work: an output must not destroy an input
            refuse_workers_without_ray(args)
            if getattr(args, "java_heap", None):
                from clir_toolkit import jvm

                jvm.configure(args.java_heap)
            quiet = getattr(args, "quiet", False)
            with progress.silenced() if quiet else contextlib.nullcontext():
                status = int(args.handler(args))
            sys.stdout.flush()  # a full device fails here, inside the error boundary
            return status
    except BrokenPipeError:
        # `clir ... | head`: the reader left; say nothing more and let Python exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (Exception, KeyboardInterrupt) as exc:
        if getattr(args, "debug", False) and not isinstance(exc, KeyboardInterrupt):
            raise
        line, status = error_line(exc)
        print(line, file=sys.stderr)
        return status
