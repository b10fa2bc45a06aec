"""Progress bars of long work, and the one switch that hides them all (``--quiet``).

Every loop that can take more than a few seconds (reading a corpus, indexing, searching,
tokenising, training epochs, scoring) shows a ``tqdm`` bar on stderr through :func:`progress_bar`.
A bar is shown when stderr is a terminal (tqdm's own rule, so logs and CI stay clean),
unless the caller passes ``show=False`` or the command runs inside :func:`silenced`, which
``clir --quiet`` does for the whole command: one rule, in one place, for every bar.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

Item = TypeVar("Item")

_silenced = 0


def progress_bar(
    iterable: Iterable[Item] | None = None, *, show: bool = True, **options: Any
) -> Any:
    """A ``tqdm`` bar over ``iterable`` (or a manual one with ``total=``); ``options`` are
    tqdm's (``desc``, ``unit``, ``total``, ``leave`` ...)."""
    from tqdm import tqdm

    return tqdm(iterable, disable=True if not show or _silenced else None, **options)


@contextmanager
def silenced() -> Iterator[None]:
    """Hide every progress bar made inside the block (``--quiet``)."""
    global _silenced
    _silenced += 1
    try:
        yield
    finally:
        _silenced -= 1


def log(quiet: bool, message: str) -> None:
    """A progress line on stderr, unless ``quiet``."""
    if not quiet:
        print(message, file=sys.stderr, flush=True)
