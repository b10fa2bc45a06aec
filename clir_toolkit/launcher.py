"""The ``clir`` executable's first lines: terminating signals become the command's own before
anything heavy is imported.

Python turns SIGINT into KeyboardInterrupt from its start, but SIGTERM and SIGHUP keep their
default action (the process ends without a word) until a handler is set, and importing the
command line takes some 30 ms. This module sets one for them (raising
:class:`~clir_toolkit.errors.Interrupted`, as the command line's own handler does) before it
imports :mod:`clir_toolkit.cli`, and reports an interruption during that import as any
other: ``clir: interrupted``, exit 130, 143 or 129. What stays unprotected is Python's own
start (the interpreter and its ``site`` module, about 10 ms here), where a signal ends the
process as Python does; docs/guarantees.md says so.

An interrupted command that used Ray ends here too, past Python's exit handlers but before
the C library's (:func:`_exit_before_ray_is_torn_down`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys

from clir_toolkit.errors import Interrupted, forget_caught_interrupts

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
INTERRUPTED = frozenset(128 + signum for signum in (signal.SIGINT, *TERMINATING))
"""The exit statuses of an interrupted command: 130, 143 and 129."""


def _exit_before_ray_is_torn_down(status: int) -> None:
    """End the process with ``status`` once Python's exit handlers have run, skipping the C
    library's.

    Ray 2.60's core worker registers a C-level exit handler that destroys the driver's core
    worker while that worker's I/O thread still runs its periodic metrics timer; when a
    Ctrl-C cut ``ray.init`` or the first tasks short, the timer fired on the freed task
    manager and the process died with SIGSEGV (exit 139) after ``clir: interrupted``, in 1
    of 5 tries here (``TaskManager::RecordMetrics`` under ``CoreWorkerProcess::HandleAtExit``
    in the core dump). Ray is shut down first, waiting for the processes of a local cluster
    to end (before, its agents outlived the command for a few seconds), then Python's exit
    handlers run; the outputs were written (or left as they were) before this point, and
    the standard streams are flushed here."""
    try:
        # A second Ctrl-C while it waits ends the waiting, not the promise of one line.
        with contextlib.suppress(Exception, KeyboardInterrupt):
            sys.modules["ray"].shutdown(wait_for_processes=True)
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed or full: said what it could
                if stream is not None:
                    stream.flush()
    finally:
        os._exit(status)


def main() -> int:
    """Run ``clir`` with the command line's arguments; its exit status."""

    def interrupt(signum: int, _frame: object) -> None:
        raise Interrupted(signum)

    for signum in TERMINATING:
        signal.signal(signum, interrupt)
    try:
        from clir_toolkit.cli import main as command_line
    except KeyboardInterrupt as exc:  # Interrupted included
        print("clir: interrupted", file=sys.stderr)
        return forget_caught_interrupts(128 + exc.signum if isinstance(exc, Interrupted) else 130)
    status = command_line()
    if status in INTERRUPTED and "ray" in sys.modules:
        _exit_before_ray_is_torn_down(status)
    return forget_caught_interrupts(status)
