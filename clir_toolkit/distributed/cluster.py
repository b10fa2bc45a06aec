"""Connecting to a Ray cluster from a ``--ray`` value, and leaving it as it was found."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import re
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from clir_toolkit.errors import ResourceError, UsageError

INSTALL = "pip install 'clir_toolkit[ray]'"
LOCAL = re.compile(r"local:([1-9][0-9]*)")
#: How often Ray runs a task again when its worker dies.
RETRIES = 3


@dataclass(frozen=True)
class ClusterSpec:
    """Where to run: ``address`` of a running cluster (``"auto"`` for this machine's), or
    ``local_cpus`` for a cluster of that many CPUs started here for one command."""

    address: str | None = None
    local_cpus: int | None = None

    @property
    def label(self) -> str:
        return f"local:{self.local_cpus}" if self.local_cpus else str(self.address)


def parse_cluster(value: str) -> ClusterSpec:
    """``auto``, ``local:N`` or an address (``HOST:PORT``, ``ray://HOST:PORT``)."""
    value = value.strip()
    match = LOCAL.fullmatch(value)
    if match:
        return ClusterSpec(local_cpus=int(match.group(1)))
    if not value.startswith("local:") and (
        value == "auto" or re.fullmatch(r"(ray://)?[\w.-]+:[0-9]+", value)
    ):
        return ClusterSpec(address=value)
    raise UsageError(
        f"--ray {value!r}: use auto (a cluster started with ray start --head), HOST:PORT, "
        "ray://HOST:PORT, or local:N (N CPUs on this machine, for this command)"
    )


def import_ray() -> Any:
    """The ``ray`` module, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ResourceError(f"--ray needs Ray, which is not installed: {INSTALL}") from None
    return ray


def import_ray_train() -> Any:
    """The ``ray`` module with Ray Train's PyTorch part (``ray.train.torch``, which needs
    torch), or one line saying how to install them."""
    try:
        import ray
        import ray.train.torch  # noqa: F401 (imported for the check)
    except ImportError as exc:
        raise ResourceError(
            f"--ddp needs Ray Train and PyTorch, which cannot be imported ({exc}): {INSTALL}"
        ) from None
    return ray


def _put_back(signum: int, handler: Any) -> None:
    """Reinstall the Python handler of ``signum`` that ``ray.init`` replaced: Ray's core sets
    a crash reporter for SIGTERM that ends the process at once, where the command line's
    handler stops it as the README's guarantees say (``clir: interrupted``, exit 143, the
    cluster shut down and the outputs left as they were)."""
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signum, handler)


NATIVE_SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT)
"""Signals whose C-level handlers ``ray.init`` replaces with its crash reporter, and
``ray.shutdown`` resets to the default. The JVM that Lucene runs in handles SIGSEGV, SIGBUS,
SIGFPE and SIGILL itself (implicit null checks, safepoint polls): without its handlers the
first such trap after Ray was used in the process ends it with "Segmentation fault"."""
SIGACTION_BYTES = 256
"""Room for the C library's ``struct sigaction`` (152 bytes with glibc on x86-64), which is
saved and put back as it is, unread."""


def _native_handlers() -> dict[int, bytes]:
    """The process's C-level handlers of :data:`NATIVE_SIGNALS`, as opaque structs (none
    where the C library cannot be reached)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return {}
    saved = {}
    for signum in NATIVE_SIGNALS:
        buffer = ctypes.create_string_buffer(SIGACTION_BYTES)
        if libc.sigaction(int(signum), None, buffer) == 0:
            saved[int(signum)] = buffer.raw
    return saved


def _reinstall(saved: dict[int, bytes]) -> None:
    """Put back handlers that :func:`_native_handlers` saved."""
    if not saved:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for signum, raw in saved.items():
        libc.sigaction(signum, ctypes.create_string_buffer(raw, len(raw)), None)


@contextlib.contextmanager
def connected(spec: ClusterSpec, env: dict[str, str] | None = None) -> Iterator[Any]:
    """Ray, connected to the cluster of ``spec`` for the block; a local cluster started
    here is shut down after it. ``env`` is set in every worker (the JVM's heap, say)."""
    ray = import_ray()
    runtime_env = {"env_vars": dict(env)} if env else None
    logging.getLogger("ray").setLevel(logging.ERROR)  # Ray's start-up notes are not ours
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.ERROR,
        "runtime_env": runtime_env,
    }
    terminate = signal.getsignal(signal.SIGTERM)
    native = _native_handlers()  # the JVM's, when Lucene already runs in this process
    try:
        if spec.local_cpus is not None:
            ray.init(num_cpus=spec.local_cpus, **options)
        else:
            ray.init(address=spec.address, **options)
    except ConnectionError as exc:
        raise ResourceError(
            f"--ray {spec.label}: no Ray cluster answers there ({exc}); start one with "
            "ray start --head, or use --ray local:N"
        ) from None
    finally:
        _put_back(signal.SIGTERM, terminate)
        _reinstall(native)
    try:
        yield ray
    finally:
        ray.shutdown()
        _reinstall(native)


def gather(ray: Any, pending: list[Any]) -> list[Any]:
    """The tasks' results in order; a task's own error (a damaged index, say) is raised as
    the error it is, one line, instead of Ray's wrapper with the worker's traceback."""
    try:
        return list(ray.get(pending))
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, Exception):
            raise cause from None
        raise


def chunks(items: Sequence[Any], count: int) -> list[list[Any]]:
    """``items`` cut into at most ``count`` contiguous, non-empty runs of near-equal length."""
    count = max(1, min(count, len(items)))
    size, extra = divmod(len(items), count)
    out, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return [chunk for chunk in out if chunk]
