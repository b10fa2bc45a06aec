"""The student's code runs in a process of its own; the grader only talks to it.

``clir assignment check`` never imports a student's module. It starts a child process
(:mod:`clir_toolkit.teaching.child`, a fresh interpreter: no fork of a process that may hold
a JVM) in the student's directory, with a memory limit, and calls the student's functions
there through a pair of pipes the parent opened: the child returns only the *raw outputs*
of the student's functions, and the parent, whose memory the student's code cannot reach,
compares them with the reference and decides every check. What the student's code prints
goes to the grader's standard error, never into the grade table.

A child that exits (``sys.exit``, ``os._exit``, ``raise SystemExit``), is killed, or runs
past the wall-clock limit of a check has not answered: :class:`StudentGone` says which,
the check fails, and the next check starts a fresh child. The replies are read with
``torch.load(weights_only=True)``, which rebuilds tensors, numbers, strings, lists, tuples
and dictionaries only: a reply cannot carry code, or an object that compares equal to
anything, into the parent.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEADER = struct.Struct("!Q")
"""A message on the pipes: its length (8 bytes, network order), then its bytes."""

LARGEST_REPLY = 1 << 30
"""The longest reply the parent reads (1 GiB): a larger one is the student's code writing
on the grader's pipe, and ends the child."""

LARGEST_OUTPUT = 1 << 20
"""How much of what the student's code prints the grader passes on (1 MiB)."""

STARTUP_SECONDS = 300.0
"""How long the child may take to start Python, torch and the toolkit (not the student's
code, which the per-check limit bounds): generous, for a loaded CI machine."""


@dataclass(frozen=True)
class Limits:
    """What a student's code may use: ``seconds`` of wall-clock time per check (its import
    included) and ``memory`` bytes of address space (``RLIMIT_AS``) in its process."""

    seconds: float = 60.0
    memory: int = 4 << 30


class StudentGone(Exception):
    """The student's process did not answer a call: it exited, was killed, or ran out of
    time. The message is the grade table's line for the check."""


class StudentRaised(Exception):
    """The student's function raised; the message says what and where (file, line)."""


class StudentOutOfMemory(Exception):
    """The student's code ran into the memory limit (MemoryError or a failed allocation)."""


class ImportFailed(Exception):
    """The student's module raised while it was imported: ``line`` and ``message``."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def send(fd: int, payload: bytes, deadline: float | None = None) -> None:
    """Write one message on ``fd``; :class:`TimeoutError` at ``deadline`` (a process that
    stopped reading would otherwise block a large message for ever)."""
    data = memoryview(HEADER.pack(len(payload)) + payload)
    while data:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [fd], [], remaining)[1]:
                raise TimeoutError
        data = data[os.write(fd, data[: 1 << 16]) :]


def receive(fd: int, deadline: float, largest: int = LARGEST_REPLY) -> bytes | None:
    """Read one message from ``fd``; None at end of file (the writer exited). Raises
    :class:`TimeoutError` at ``deadline`` (a ``time.monotonic()`` time) and ValueError for a
    message longer than ``largest``."""
    header = _read_exactly(fd, HEADER.size, deadline)
    if header is None:
        return None
    (length,) = HEADER.unpack(header)
    if length > largest:
        raise ValueError(f"a message of {length} bytes")
    return _read_exactly(fd, length, deadline) if length else b""


def _read_exactly(fd: int, size: int, deadline: float) -> bytes | None:
    chunks, missing = [], size
    while missing:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def encode_reply(reply: dict[str, Any]) -> bytes:
    """A reply as the child writes it (tensors and plain values, saved by torch)."""
    import torch

    buffer = io.BytesIO()
    torch.save(reply, buffer)
    return buffer.getvalue()


def decode_reply(payload: bytes) -> dict[str, Any]:
    """A reply as the parent reads it: only tensors and plain values can come out."""
    import torch

    reply = torch.load(io.BytesIO(payload), weights_only=True)
    if not isinstance(reply, dict):
        raise ValueError("not a reply")
    return reply


class StudentProcess:
    """One child process holding the student's module at ``path`` (None: the reference).

    :meth:`start` imports the module there; :meth:`call`, :meth:`gradient`,
    :meth:`prepare` and :meth:`workload` run in it, answered within the time that
    :meth:`allow` gives each check. After a :class:`StudentGone`, the process is dead and
    :attr:`alive` is False.
    """

    def __init__(self, assignment: str, path: Path | None, directory: Path,
                 limits: Limits) -> None:  # fmt: skip
        self.assignment, self.path, self.directory, self.limits = (
            assignment, path, directory, limits)  # fmt: skip
        self.process: subprocess.Popen[bytes] | None = None
        self.pipes: tuple[int, ...] = ()
        self.functions: tuple[str, ...] = ()
        self.budget = 0.0
        self.deadline: float | None = None
        self.phase = "during import"
        self.output = tempfile.TemporaryFile()  # noqa: SIM115 (kept open across restarts)
        """What the student's code prints: a file, not the grader's own standard error,
        so that a process the student's code leaves behind holds no pipe of the caller's
        open (a CI job would wait for it); :meth:`relay` passes it on."""
        self.shown = 0

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def allow(self, seconds: float) -> None:
        """Give the next calls ``seconds`` of wall-clock time in all, counted while the
        grader waits for the child's answers (not while it works on them)."""
        self.budget = seconds

    def start(self) -> tuple[str, ...]:
        """Start the child and import the module; returns the names it defines. Raises
        :class:`ImportFailed` (it raised) or :class:`StudentGone` (it exited or hung)."""
        to_child_read, to_child_write = os.pipe()
        from_child_read, from_child_write = os.pipe()
        root = str(Path(__file__).resolve().parents[2])
        # -P: the student's directory (the working directory) is not on sys.path, so that
        # a file of theirs named like a module (random.py) does not replace it; the
        # toolkit's own root goes first, as the grader found it.
        command = [sys.executable, "-P", "-c",
                   f"import sys; sys.path.insert(0, {root!r}); "
                   "from clir_toolkit.teaching.child import main; main()",
                   str(to_child_read), str(from_child_write), self.assignment,
                   str(self.limits.memory),
                   str(self.path) if self.path else "--reference"]  # fmt: skip
        try:
            self.process = subprocess.Popen(
                command,
                cwd=self.directory,
                stdin=subprocess.DEVNULL,
                stdout=self.output,
                stderr=self.output,
                pass_fds=(to_child_read, from_child_write),
                start_new_session=True,
            )
        finally:
            os.close(to_child_read)
            os.close(from_child_write)
        self.to_child, self.from_child = to_child_write, from_child_read
        self.pipes = (to_child_write, from_child_read)
        self.phase = "while starting"
        self.deadline = time.monotonic() + STARTUP_SECONDS
        self._reply()  # the toolkit's own imports are done
        self.deadline = None
        self.phase = "during import"
        self.allow(self.limits.seconds)
        self._send(("import",))
        reply = self._reply()
        if "import_error" in reply:
            self.stop()
            line = reply.get("line")
            raise ImportFailed(line if isinstance(line, int) else None, str(reply["import_error"]))
        functions = reply.get("functions")
        if not isinstance(functions, list):  # something else wrote on the pipe
            self.stop()
            raise StudentGone("wrote on the grader's pipe during import (not a reply)")
        self.functions = tuple(str(name) for name in functions)
        return self.functions

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``name(*args, **kwargs)`` in the child: its value, differentiable through the
        child when it is a tensor that depends on arguments which require a gradient."""
        self.phase = f"inside {name}()"
        self._send(("call", name, args, kwargs))
        reply = self._reply()
        value = reply["value"]
        grad_id = reply.get("grad_id")
        if grad_id is not None:
            import torch

            leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
            value = _through_the_child().apply(self, grad_id, name, value, *leaves)
        return value

    def gradient(self, grad_id: int, name: str, grad_output: Any) -> list[Any]:
        """The gradients of a call's value, given the gradient of its output."""
        self.phase = f"inside the gradient of {name}()"
        self._send(("grad", grad_id, grad_output))
        return list(self._reply()["value"])

    def prepare(self, check: int) -> None:
        """Build a timing check's workload in the child (not timed)."""
        self.phase = "while preparing the timed workload"
        self._send(("prepare", check))
        self._reply()

    def workload(self, check: int) -> None:
        """Run a timing check's workload on the student's functions once."""
        self.phase = "inside the timed workload"
        self._send(("workload", check))
        self._reply()

    def relay(self) -> None:
        """Copy to standard error what the student's code printed since the last call (up
        to :data:`LARGEST_OUTPUT` in all)."""
        self.output.seek(self.shown)
        text = self.output.read(max(0, LARGEST_OUTPUT - self.shown))
        self.shown += len(text)
        if text:
            sys.stderr.write(text.decode("utf-8", "replace"))
            if self.shown >= LARGEST_OUTPUT:
                sys.stderr.write("\n(the rest of the module's output is not shown)\n")
            sys.stderr.flush()

    def close(self) -> None:
        """:meth:`stop`, then pass on the last output and drop it."""
        self.stop()
        self.relay()
        self.output.close()

    def stop(self) -> None:
        """End the child and everything it started (its process group)."""
        if self.process is None:
            return
        for fd in self.pipes:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pipes = ()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def _send(self, message: tuple[Any, ...]) -> None:
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        started = time.monotonic()
        try:
            send(self.to_child, payload, self.deadline or started + self.budget)
        except TimeoutError:
            self.stop()
            raise self._timed_out() from None
        except OSError:  # a broken pipe: the child is gone
            raise self._gone() from None
        finally:
            self.budget -= time.monotonic() - started

    def _reply(self) -> dict[str, Any]:
        started = time.monotonic()
        try:
            payload = receive(self.from_child, self.deadline or started + self.budget)
            reply = decode_reply(payload) if payload is not None else None
        except TimeoutError:
            self.stop()
            raise self._timed_out() from None
        except Exception:  # noqa: BLE001 (anything unreadable on the grader's pipe)
            self.stop()
            raise StudentGone(f"wrote on the grader's pipe {self.phase} (not a reply)") from None
        finally:
            self.budget -= time.monotonic() - started
        if reply is None:
            raise self._gone()
        if "raised" in reply:
            raise (NotImplementedError() if reply.get("not_implemented")
                   else StudentRaised(str(reply["raised"])))  # fmt: skip
        if "memory" in reply:
            raise StudentOutOfMemory(
                f"ran out of memory {self.phase} (the limit is {_gib(self.limits.memory)})"
            )
        return reply

    def _timed_out(self) -> StudentGone:
        if self.phase == "while starting":
            return StudentGone(f"the grader's process did not start within {STARTUP_SECONDS:g} s")
        return StudentGone(f"timed out after {self.limits.seconds:g} s {self.phase}")

    def _gone(self) -> StudentGone:
        """What the grade table says of a child that stopped answering."""
        assert self.process is not None
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            status = None
        self.stop()
        if status is None:
            return StudentGone(f"closed the grader's pipe {self.phase}")
        if status < 0:
            name = signal.Signals(-status).name
            cause = (f" (the memory limit is {_gib(self.limits.memory)})"
                     if -status in (signal.SIGKILL, signal.SIGSEGV) else "")  # fmt: skip
            return StudentGone(f"killed by {name} {self.phase}{cause}")
        return StudentGone(f"exited {self.phase} (status {status})")


def _gib(size: int) -> str:
    return f"{size / (1 << 30):g} GiB"


@functools.cache
def _through_the_child() -> Any:
    """The autograd function that sends a backward pass to the child (torch imported late,
    as everywhere in the grader)."""
    import torch

    class ThroughTheChild(torch.autograd.Function):
        """The child's value, whose gradient the child computes from its own graph."""

        @staticmethod
        def forward(ctx: Any, process: StudentProcess, grad_id: int, name: str, value: Any,
                    *leaves: Any) -> Any:  # fmt: skip
            ctx.process, ctx.grad_id, ctx.name = process, grad_id, name
            return value.clone()

        @staticmethod
        def backward(ctx: Any, grad_output: Any) -> Any:
            grads = ctx.process.gradient(ctx.grad_id, ctx.name, grad_output)
            return (None, None, None, None, *grads)

    return ThroughTheChild


class Remote:
    """What a check sees as the student's module: each function a call into the child."""

    def __init__(self, process: StudentProcess, functions: tuple[str, ...]) -> None:
        for name in functions:
            setattr(self, name, _RemoteFunction(process, name))


class _RemoteFunction:
    def __init__(self, process: StudentProcess, name: str) -> None:
        self.process, self.name = process, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.process.call(self.name, args, kwargs)
