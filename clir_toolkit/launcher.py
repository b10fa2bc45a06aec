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
"""

from __future__ import annotations

import signal
import sys

from clir_toolkit.errors import Interrupted

TERMINATING = (signal.SIGTERM, signal.SIGHUP)


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
        return 128 + exc.signum if isinstance(exc, Interrupted) else 130
    return command_line()
