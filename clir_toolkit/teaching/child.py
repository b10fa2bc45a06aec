"""The process that holds a student's module while it is graded (see
:mod:`clir_toolkit.teaching.sandbox`, which starts it and reads its replies).

Arguments: the pipe to read the grader's messages from, the pipe to reply on, the
assignment's name, the memory limit in bytes, and the student's file (or ``--reference``).
The working directory is the student's. The child lowers its own address-space limit
before it imports anything of the student's, then answers, one message at a time: import
the module, call one of its functions, compute a gradient through a call's value, build or
run a timing check's workload. It replies with the raw values only: the grader compares.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pickle
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from clir_toolkit.teaching.sandbox import encode_reply, receive, send


def main() -> None:
    """Serve the grader until it closes the pipe."""
    reading, writing, assignment_name, memory, source = sys.argv[1:6]
    reading_fd, writing_fd = int(reading), int(writing)
    _behind_a_shield(reading_fd, writing_fd)
    with contextlib.suppress(ValueError, OSError):  # a system that refuses it (macOS may)
        resource.setrlimit(resource.RLIMIT_AS, (int(memory), int(memory)))
    import torch  # noqa: F401 (before the student's code, as the grader's own import)

    from clir_toolkit.compute.threads import use_fastest_threads

    # The student's process and the reference's are timed against each other: each computes
    # with the toolkit's thread count, so that neither spins waiting for a thread that the
    # other (or any busy process) holds the core of, which made one side 10-20 times slower
    # at random under load, failing a timing ceiling that the code met.
    use_fastest_threads()

    from clir_toolkit.teaching import assignment

    item = assignment(assignment_name)
    path = None if source == "--reference" else Path(source)
    server = _Server(item, path, writing_fd)
    server.reply({"started": True})
    # No deadline here: the grader decides how long to wait, and kills this process.
    while (payload := receive(reading_fd, time.monotonic() + 10**9)) is not None:
        server.handle(pickle.loads(payload))


def _behind_a_shield(*pipes: int) -> None:
    """Fork once: this process becomes the *shield*, which waits for its child and exits as
    it did; the child goes on to serve the grader. The student's code then sees the shield
    as its parent (``os.getppid()``), so that a module that stops or kills its parent stops
    the shield, not the grader, whose deadline still ends both (they share a process group
    of their own, which the grader kills). The shield closes its copies of the pipes, so
    that the grader sees them close when the child ends."""
    child = os.fork()
    if child == 0:
        return
    for fd in pipes:
        os.close(fd)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: end the same way, so the grader says which
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 1)


class _Server:
    """Answers the grader's messages with the student's module (``path``; None: the
    reference of the assignment ``item``)."""

    def __init__(self, item: Any, path: Path | None, writing_fd: int) -> None:
        self.item, self.path, self.writing_fd = item, path, writing_fd
        self.module: Any = None
        self.graphs: dict[int, tuple[Any, list[Any]]] = {}
        """The values (and the leaves they depend on) whose gradient may be asked for."""
        self.calls = 0
        self.workloads: dict[int, Any] = {}

    def reply(self, reply: dict[str, Any]) -> None:
        send(self.writing_fd, encode_reply(reply))

    def handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "import":
            self.reply(self.load())
            return
        try:
            if kind == "call":
                self.reply(self.call(*message[1:]))
            elif kind == "grad":
                self.reply({"value": self.gradient(*message[1:])})
            elif kind == "prepare":
                timing = self.item.checks[message[1]].timing
                self.workloads[message[1]] = timing.prepare()
                self.reply({"value": None})
            elif kind == "workload":
                timing = self.item.checks[message[1]].timing
                timing.run(self.module, self.workloads[message[1]])
                self.reply({"value": None})
        except NotImplementedError:
            self.reply({"raised": "not implemented yet", "not_implemented": True})
        except MemoryError:
            self.reply({"memory": True})
        except Exception as exc:  # noqa: BLE001 (the student's code raised: say where)
            if "can't allocate memory" in str(exc) or "out of memory" in str(exc).lower():
                self.reply({"memory": True})
            else:
                self.reply({"raised": self.where(exc)})

    def load(self) -> dict[str, Any]:
        """Import the student's module (or the reference); the names of its functions."""
        if self.path is None:
            self.module = self.item.reference()
        else:
            name = f"clir_student_{self.path.stem}"
            spec = importlib.util.spec_from_file_location(name, self.path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:  # noqa: BLE001 (the student's code: report it in one line)
                line = exc.lineno if isinstance(exc, SyntaxError) else self.line(exc)
                return {"import_error": message(exc), "line": line}
            self.module = module
        return {"functions": [name for name in self.item.functions
                              if callable(getattr(self.module, name, None))]}  # fmt: skip

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        import torch

        value = getattr(self.module, name)(*args, **kwargs)
        leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        reply: dict[str, Any] = {"value": plain(value)}
        if leaves and isinstance(value, torch.Tensor) and value.requires_grad:
            self.calls += 1
            grad_id = self.calls
            self.graphs[grad_id] = (value, leaves)
            reply["grad_id"] = grad_id
        return reply

    def gradient(self, grad_id: int, grad_output: Any) -> list[Any]:
        import torch

        value, leaves = self.graphs.pop(grad_id)
        grads = torch.autograd.grad(value, leaves, grad_output, allow_unused=True)
        return [plain(g) if g is not None else None for g in grads]

    def line(self, exc: BaseException) -> int | None:
        """The innermost line of the student's file in the exception's traceback."""
        if self.path is None:
            return None
        target = self.path.resolve()
        frames = traceback.extract_tb(exc.__traceback__)
        return next((frame.lineno for frame in reversed(frames)
                     if Path(frame.filename).resolve() == target), None)  # fmt: skip

    def where(self, exc: BaseException) -> str:
        """``Type: message (FILE line N)``, N the innermost line of the student's file."""
        line = self.line(exc)
        return message(exc) + (f" ({self.path.name} line {line})" if line and self.path else "")


def message(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def plain(value: Any) -> Any:
    """``value`` as tensors, numbers, strings, lists, tuples and dictionaries (what the
    grader can read back); anything else is a TypeError the student reads."""
    import numpy
    import torch

    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().clone()
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, numpy.ndarray):
        return torch.from_numpy(value.copy())
    for base in (int, float, str):  # a subclass, as its plain base
        if isinstance(value, base):
            return base(value)
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    raise TypeError(f"returned a {type(value).__name__}, which the grader cannot compare "
                    "(return tensors, numbers, strings, lists, tuples or dicts)")  # fmt: skip
