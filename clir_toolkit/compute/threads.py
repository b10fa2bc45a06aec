"""How many CPU threads torch computes with: decided here, once, unless the user decided.

torch starts one thread per core and makes them wait for each other at every operation.
The rerankers' operations are small (64- to 300-d embeddings, batches of 128), so when
another process holds a core the waits dominate. Measured on the 2-core machine of this
project, shared with other jobs (identical models and dev scores either way):

* training the demo's dual encoder (SOSL, 10 epochs, French man pages): 39.8 and 80.0 s
  with 1 thread against 297.1 and 121.7 s with 2 (load average 1.3–3.6);
* ``clir bench rerank --device cpu`` with one other busy process: K-NRM 4,004 / 2,029
  pairs/s with 1 thread against 1,548 / 1,310 with 2; dual encoder 9,172 / 7,568 against
  6,477 / 3,687; on a lightly loaded machine 2 threads were 1.4–1.9 times faster.

So torch gets every usable core but one (at least one): on two cores one thread, which
costs at most half the speed on an idle machine and saves up to 7 times the time on a
busy one. Only two cores were measured; with many cores, leaving one free keeps the
same reason (nothing waits for a descheduled thread) at little cost.

A user's choice wins: a ``threads`` argument (``--threads``), ``OMP_NUM_THREADS`` or
``MKL_NUM_THREADS`` in the environment (torch reads them at start), or a thread count
already set with ``torch.set_num_threads`` — recognised because torch starts its
intra-op and inter-op pools with the same number of threads, so a program that changed
one of them has made a choice.
"""

from __future__ import annotations

import os

from clir_toolkit.errors import UsageError

ENVIRONMENT = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
MAX_THREADS = 1024
"""The most threads, processes or shards any count option accepts (``--threads``,
``--shards``, ``--workers``): far above the cores of any machine the toolkit runs on, far
below what would exhaust memory one object each (2³¹ threads)."""


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def fastest_threads(cores: int | None = None) -> int:
    """The thread count measured fastest (see the module docstring): cores − 1, at least 1."""
    return max(1, (usable_cores() if cores is None else cores) - 1)


def user_chose_threads() -> bool:
    """Whether the environment or the program already set torch's thread count."""
    import torch

    if any(os.environ.get(name, "").strip() for name in ENVIRONMENT):
        return True
    return bool(torch.get_num_threads() != torch.get_num_interop_threads())


def use_fastest_threads(threads: int | None = None) -> int:
    """Set torch's CPU threads before torch work starts; returns the count in force.

    ``threads`` (a ``--threads`` option) is used as given; otherwise a count the user chose
    is kept, and the fastest measured one is set.
    """
    import torch

    if threads is not None:
        if threads < 1:
            raise UsageError(f"--threads must be at least 1, not {threads}")
        torch.set_num_threads(threads)
    elif not user_chose_threads():
        torch.set_num_threads(fastest_threads())
    return int(torch.get_num_threads())
