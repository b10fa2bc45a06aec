"""Connecting to a Ray cluster from a ``--ray`` value, and leaving it as it was found."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import logging
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from clir_toolkit.errors import Interrupted, ResourceError, UsageError

INSTALL = "pip install 'clir_toolkit[ray]'"
LOCAL = re.compile(r"local:([1-9][0-9]*)")
#: How often Ray runs a task again when its worker dies.
RETRIES = 3
PROBE_SECONDS = 5.0
"""How long :func:`check_reachable` waits for a cluster's port to accept a connection."""


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


def current_cluster_address() -> str | None:
    """The address ``--ray auto`` means, found as Ray finds it: ``RAY_ADDRESS`` when it is
    set, else the file ``ray start --head`` writes (``ray_current_cluster`` in Ray's temporary
    directory, ``$RAY_TMPDIR/ray`` or ``/tmp/ray``); None when neither says."""
    given = os.environ.get("RAY_ADDRESS", "").strip()
    if given and given != "auto":
        return given
    temporary = os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp"
    try:
        with open(os.path.join(temporary, "ray", "ray_current_cluster"), encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _host_and_port(address: str) -> tuple[str, int] | None:
    """``("head", 6379)`` for ``head:6379`` or ``ray://head:6379``; None for anything else."""
    match = re.fullmatch(r"(?:ray://)?([\w.-]+):([0-9]+)", address.strip())
    return (match.group(1), int(match.group(2))) if match else None


def check_reachable(spec: ClusterSpec) -> str | None:
    """The address to connect to for ``spec`` (None for a local cluster), or one line,
    within :data:`PROBE_SECONDS`, saying that nothing answers there: ``ray.init`` itself
    retries for minutes, printing Ray's warnings, and does not return to Python in the
    meantime (so not even SIGTERM is answered). ``auto`` is resolved here, once, so that
    the cluster probed is the one connected to.

    A TCP connection to the port is the probe: it tells an address where no cluster runs
    (refused, unreachable, silent) from one where something listens. A ``ray://`` address
    needs Ray Client, which the ``ray[client]`` extra installs (the ``grpcio`` package);
    without it, the line says so and names the address to use instead."""
    if spec.local_cpus is not None or spec.address is None:
        return None
    address = spec.address
    if address == "auto":
        found = current_cluster_address()
        if found is None:
            raise ResourceError(
                "--ray auto: no Ray cluster was started on this machine; start one with "
                "`ray start --head`, give its address (--ray HOST:PORT), or use --ray local:N"
            )
        address = found
    if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        raise ResourceError(
            f"--ray {spec.label}: a ray:// address needs Ray Client, which is not installed "
            "(pip install 'ray[client]'); or give the cluster's own address, HOST:PORT "
            "(port 6379 unless `ray start --head --port=...` said otherwise)"
        )
    where = _host_and_port(address)
    if where is None:
        raise ResourceError(f"--ray {spec.label}: {address!r} is not HOST:PORT")
    host, port = where
    try:
        with socket.create_connection((host, port), timeout=PROBE_SECONDS):
            pass
    except OSError as exc:
        reason = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        found = f" (found {address})" if address != spec.address else ""
        raise ResourceError(
            f"--ray {spec.label}{found}: no Ray cluster answers at {host}:{port} ({reason}); "
            f"start one there with `ray start --head --port={port}`, or use --ray local:N"
        ) from None
    return address


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


RAY_GCS_WAIT = "RAY_gcs_server_port_wait_time_s"
"""How many one-second attempts ``ray.init`` makes to reach a cluster's GCS (twenty by
default): past :func:`check_reachable`, only a port where something other than Ray answers
is left to wait for."""


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """``os.environ[name]`` set to ``value`` for the block (a value the user set is kept)."""
    if name in os.environ:
        yield
        return
    os.environ[name] = value
    try:
        yield
    finally:
        os.environ.pop(name, None)


@contextlib.contextmanager
def _native_stderr_discarded() -> Iterator[None]:
    """File descriptor 2 pointed at ``/dev/null`` for the block: Ray's C++ core logs its
    retries and warnings there, past Python's ``logging`` (a line a second while it looks
    for a cluster), and those are not the command's to print. What goes wrong reaches the
    user as the one line of the exception that ``ray.init`` raises."""
    sys.stderr.flush()
    saved = os.dup(2)
    discard = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(discard, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(discard)


@contextlib.contextmanager
def connected(spec: ClusterSpec, env: dict[str, str] | None = None) -> Iterator[Any]:
    """Ray, connected to the cluster of ``spec`` for the block; a local cluster started
    here is shut down after it. ``env`` is set in every worker (the JVM's heap, say)."""
    ray = import_ray()
    address = check_reachable(spec)
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
        with _native_stderr_discarded():
            if spec.local_cpus is not None:
                ray.init(num_cpus=spec.local_cpus, **options)
            else:
                with _environment(RAY_GCS_WAIT, str(round(PROBE_SECONDS))):
                    ray.init(address=address, **options)
    except SystemExit as exc:
        if exc.code == signal.SIGTERM:  # Ray's handler while ray.init runs: sys.exit(signum)
            raise Interrupted(signal.SIGTERM) from None
        raise
    except ConnectionError as exc:
        raise ResourceError(
            f"--ray {spec.label}: something answers there, but not a Ray cluster of this "
            f"version ({exc}); give the address `ray start --head` printed, or use --ray local:N"
        ) from None
    finally:
        _put_back(signal.SIGTERM, terminate)
        _reinstall(native)
    try:
        yield ray
    finally:
        with _native_stderr_discarded():  # the tasks cut short, when interrupted
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


def put(ray: Any, value: Any) -> Any:
    """``ray.put(value)``, with an interruption during it raised as the interruption it is.

    Ray serialises the value itself and turns any exception raised meanwhile into
    ``TypeError: Could not serialize the put value ...`` — also the :class:`Interrupted` that
    Ctrl-C or SIGTERM raises while the training data are pickled, which then ended the
    command as an internal error (exit 1, a page of the value's repr) instead of
    ``clir: interrupted`` (143). Seen in CI on an interrupted ``clir rerank train --ddp``;
    the signal is known from :attr:`Interrupted.received`, since Ray's ``TypeError`` does
    not carry it."""
    signals = len(Interrupted.received)
    try:
        return ray.put(value)
    except Exception:
        if len(Interrupted.received) > signals:
            raise Interrupted(Interrupted.received[-1]) from None
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
