"""Vectors made elsewhere: ``clir encode`` writes a collection's document vectors to a file
on a machine with a GPU (or a cluster), ``clir index --dense ENCODER --vectors FILE`` stores
them with an index on another machine, as if they had been encoded there.

The file is the index's own layout (:mod:`clir_toolkit.vectors`): an ``.npz`` archive with
``docids`` (strings) and ``vectors`` (``float32[N, dim]``). ``clir encode`` adds what made
them: ``encoder`` and ``fingerprint`` (:func:`~clir_toolkit.encoders.encoder_fingerprint`:
the package and version), so that vectors of another encoder, or of another version of it,
are refused where they are imported; a file made by other tools may leave them out, and then
the user's ``--dense ENCODER`` is taken at its word.

Imported vectors are checked before anything is written, each failure one line naming the
file: the documents must be the collection's (those missing and those unknown counted, the
first of each named), of the named encoder's dimension, finite; a row that is not of unit
length is scaled to it (cosine is what the search computes). The index then records them
under the named encoder (:class:`~clir_toolkit.vectors.DenseRecord`), so that ``clir search
--dense`` and ``--hybrid`` encode the queries with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clir_toolkit.errors import FormatError

if TYPE_CHECKING:
    import numpy as np

    from clir_toolkit.collection import Collection
    from clir_toolkit.vectors import DenseRecord

MADE_BY = ("encoder", "fingerprint")
"""The fields ``clir encode`` writes beside ``docids`` and ``vectors``."""


@dataclass(frozen=True)
class EncodeReport:
    """What :func:`export_vectors` wrote, for the command line's summary."""

    output: Path
    documents: int
    dim: int


def export_vectors(
    collection: Collection,
    encoder_name: str,
    output: str | Path,
    *,
    device: str = "auto",
    threads: int | None = None,
    cache_dir: str | Path | None = None,
    verbose: bool = True,
) -> EncodeReport:
    """Encode every document of ``collection`` with ``encoder_name`` (on ``device``, through
    the collection's vector cache) and write the vectors file ``output`` atomically."""
    import numpy as np

    from clir_toolkit.files import atomic_write
    from clir_toolkit.rerank.data.documents import cache_dir_for
    from clir_toolkit.vectors import encode_corpus

    where = cache_dir_for(collection.root, cache_dir)
    docids, matrix, record = encode_corpus(
        collection.corpus, encoder_name, where, verbose, threads=threads, device=device
    )
    with atomic_write(Path(output), "wb", encoding=None) as handle:
        np.savez(
            handle, docids=np.array(docids, dtype=str), vectors=matrix,
            encoder=np.array(record.encoder), fingerprint=np.array(record.fingerprint),
        )  # fmt: skip
    return EncodeReport(Path(output), len(docids), record.dim)


def import_vectors(
    collection: Collection, encoder_name: str, path: Path
) -> tuple[list[str], np.ndarray, DenseRecord]:
    """The vectors of ``path`` checked against ``collection`` and ``encoder_name``: docids in
    corpus order, unit rows, and the record for the index sidecar (as
    :func:`~clir_toolkit.vectors.encode_corpus` returns them for vectors encoded here)."""
    import numpy as np

    from clir_toolkit.encoders import encoder_fingerprint, load_encoder
    from clir_toolkit.formats import iter_corpus
    from clir_toolkit.vectors import DenseRecord, check_vectors, docids_digest, vectors_file_name

    fix = (
        f"encode them with: clir encode --collection {collection.root} --encoder "
        f"{encoder_name} --output {path}"
    )
    docids, vectors, made_by = _read(path, fix)
    fingerprint = encoder_fingerprint(encoder_name)
    if made_by and made_by != (encoder_name, fingerprint):
        raise FormatError(
            path, None, f"holds vectors of {made_by[0]} ({made_by[1]}); --dense names "
            f"{encoder_name}, which is {fingerprint} here", fix,
        )  # fmt: skip
    encoder = load_encoder(encoder_name, device="cpu")
    if vectors.ndim != 2 or vectors.shape[0] != len(docids) or vectors.shape[1] != encoder.dim:
        raise FormatError(
            path, None, f"holds {len(docids)} docids and vectors of shape {vectors.shape}; "
            f"{encoder_name} makes vectors of {encoder.dim} dimensions", fix,
        )  # fmt: skip
    if not np.isfinite(vectors).all():
        row = int(np.argmin(np.isfinite(vectors).all(axis=1)))
        raise FormatError(path, None, f"the vector of {docids[row]} is not finite", fix)
    vectors = _unit_length(vectors)
    check_vectors(path, docids, vectors, fix)  # ids, duplicates
    corpus = [doc.id for doc in iter_corpus(collection.corpus)]
    _check_same_documents(path, docids, corpus, collection, fix)
    if docids != corpus:
        order = {docid: row for row, docid in enumerate(docids)}
        vectors = vectors[[order[docid] for docid in corpus]]
    record = DenseRecord(
        encoder=encoder_name,
        fingerprint=fingerprint,
        dim=encoder.dim,
        documents=len(corpus),
        max_chars=encoder.max_chars,
        file=vectors_file_name(encoder_name, fingerprint, encoder.max_chars),
        docids_sha256=docids_digest(corpus),
    )
    return corpus, vectors, record


def _unit_length(vectors: np.ndarray) -> np.ndarray:
    """``vectors`` with each row that is not of unit length (nor zero) scaled to it; rows
    already of unit length are kept bit for bit, so that vectors encoded elsewhere give the
    run that the same vectors encoded here give."""
    import numpy as np

    from clir_toolkit.vectors import UNIT_TOLERANCE

    lengths = np.linalg.norm(vectors.astype(np.float64), axis=1)
    scale = (np.abs(lengths - 1.0) > UNIT_TOLERANCE) & (lengths > 0)
    if scale.any():
        vectors = vectors.copy()
        vectors[scale] = (vectors[scale] / lengths[scale, None]).astype(np.float32)
    return vectors


def _read(path: Path, fix: str) -> tuple[list[str], np.ndarray, tuple[str, str] | None]:
    """The docids, vectors and (encoder, fingerprint) of a vectors file (None: not said)."""
    import numpy as np

    if not path.is_file():
        raise FormatError(path, None, "no such vectors file", fix)
    try:
        with np.load(path, allow_pickle=False) as data:
            names = set(data.files)
            if not {"docids", "vectors"} <= names:
                raise FormatError(
                    path, None, "holds no 'docids' and 'vectors' arrays (the layout of "
                    "clir encode and of an index's dense-*.npz)", fix,
                )  # fmt: skip
            docids = [str(docid) for docid in data["docids"]]
            vectors = np.asarray(data["vectors"], dtype=np.float32)
            made_by = tuple(str(data[name]) for name in MADE_BY) if set(MADE_BY) <= names else None
    except FormatError:
        raise
    except Exception as exc:  # any damage: one line, never numpy's traceback
        problem = f"unreadable vectors file ({type(exc).__name__})"
        raise FormatError(path, None, problem, fix) from None
    return docids, vectors, made_by  # type: ignore[return-value]


def _check_same_documents(
    path: Path, docids: list[str], corpus: list[str], collection: Collection, fix: str
) -> None:
    """Refuse vectors that miss documents of the collection or hold others, counting both."""
    known, held = set(corpus), set(docids)
    missing = [docid for docid in corpus if docid not in held]
    unknown = [docid for docid in docids if docid not in known]
    problems = []
    if missing:
        some = "1 document" if len(missing) == 1 else f"{len(missing)} documents"
        problems.append(f"{some} of {collection.corpus} without a vector (first: {missing[0]})")
    if unknown:
        some = "1 vector" if len(unknown) == 1 else f"{len(unknown)} vectors"
        problems.append(f"{some} of documents not in it (first: {unknown[0]})")
    if problems:
        raise FormatError(path, None, "; ".join(problems) + "; nothing was changed", fix)
