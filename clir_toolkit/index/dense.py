"""Dense vectors stored with an index (``clir index --dense``): the checks of their options
(:func:`check_hnsw`), the documents encoded for the index (:func:`encode_for_index`), and
:func:`add_dense_vectors`, which adds them to an existing index without rebuilding Lucene.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from clir_toolkit.collection import Collection, open_collection
from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.files import directory_lock, recover_directory
from clir_toolkit.index.sidecar import SIDECAR, IndexInfo, read_index_info, write_sidecar
from clir_toolkit.vectors import (
    DenseRecord,
    encode_corpus,
    record_to_json,
    stale_vectors_files,
    write_graph,
    write_vectors,
)

MAX_HNSW_M = 512
"""The most neighbours a node of the HNSW graph may have: Faiss' graphs are built with M of
4 to 64 (Malkov and Yashunin 2018, §4, found no gain past 48); a larger M only multiplies
the graph's memory (and Faiss takes a C int)."""


def check_hnsw(hnsw: int, encoder: str | None, threads: int = 1) -> None:
    """Refuse an HNSW ``M`` below 2 (0: no graph) or above :data:`MAX_HNSW_M`, a graph
    without vectors, or building threads without a graph."""
    if hnsw and encoder is None:
        raise UsageError("--hnsw needs --dense: it is the graph of the dense vectors")
    if threads != 1 and not hnsw:
        raise UsageError("--hnsw-threads is for --hnsw M: the threads building the graph")
    if hnsw < 0 or hnsw == 1 or hnsw > MAX_HNSW_M:
        raise UsageError(
            f"--hnsw must be between 2 and {MAX_HNSW_M} neighbours a node, or 0 (got {hnsw})"
        )


def _sidecar_names(index: Path, file: str) -> bool:
    """Whether the sidecar on disk names the vectors file ``file`` (it was replaced)."""
    try:
        return json.loads((index / SIDECAR).read_text(encoding="utf-8"))["dense"]["file"] == file
    except (OSError, ValueError, KeyError, TypeError):
        return False


def encode_for_index(
    collection: Collection,
    encoder: str,
    cache_dir: str | Path | None,
    verbose: bool,
    vectors: Path | None = None,
) -> tuple[list[str], Any, DenseRecord]:
    """The collection's documents encoded for the index (through the vector cache), or,
    with ``vectors``, read from that file made elsewhere (:mod:`clir_toolkit.index.imported`)
    and checked against the collection and the encoder."""
    from clir_toolkit.rerank.data.documents import cache_dir_for

    if vectors is not None:
        from clir_toolkit.index.imported import import_vectors

        return import_vectors(collection, encoder, Path(vectors))
    where = cache_dir_for(collection.root, cache_dir)
    return encode_corpus(collection.corpus, encoder, where, verbose)


def add_dense_vectors(
    index_path: str | Path,
    encoder: str,
    collection_path: str | Path | None = None,
    *,
    cache_dir: str | Path | None = None,
    verbose: bool = True,
    hnsw: int = 0,
    vectors: str | Path | None = None,
    hnsw_threads: int = 1,
) -> IndexInfo:
    """Add (or replace) ``encoder``'s dense vectors to an existing index, without rebuilding
    Lucene. They become the index's :attr:`~IndexInfo.dense` (what a search that names no
    encoder uses); the vectors of other encoders stay (:attr:`~IndexInfo.other_dense`),
    those of ``encoder`` made before are replaced.

    The documents come from ``collection_path`` (default: the collection the sidecar
    records), which must be the collection the index was built from, as it is now; they are
    encoded here, or their vectors read from the file ``vectors`` (``clir encode``'s). The
    vectors file is written first and the sidecar replaced after it, both atomically, under
    the index's lock: an interruption at any point leaves the index as it was.
    """
    check_hnsw(hnsw, encoder, hnsw_threads)
    index = Path(index_path)
    info = read_index_info(index)
    source = collection_path if collection_path is not None else info.collection
    collection = open_collection(source)
    if collection.fingerprint() != info.collection_sha256:
        raise ClirError(
            f"{index}: was built from another state of {collection.corpus}; nothing was "
            f"changed (rebuild it with: clir index --collection {source} --index {index} "
            f"--dense {encoder})"
        )
    with directory_lock(index):
        recover_directory(index, locked=True)
        info = read_index_info(index)  # again, under the lock
        docids, matrix, record = encode_for_index(
            collection, encoder, cache_dir, verbose, None if vectors is None else Path(vectors)
        )
        if len(docids) != info.documents:
            raise ClirError(
                f"{collection.corpus}: holds {len(docids)} documents, the index "
                f"{info.documents}; nothing was changed (rebuild the index)"
            )
        record = dataclasses.replace(record, hnsw=hnsw)
        kept = tuple(old for old in (info.dense, *info.other_dense)
                     if old is not None and old.encoder != encoder)  # fmt: skip
        updated = dataclasses.replace(info, dense=record, other_dense=kept)
        written = [record.file, *([record.graph_file] if hnsw else [])]
        new = [name for name in written if not (index / name).exists()]
        try:
            write_vectors(index, docids, matrix, record)
            if hnsw:
                write_graph(index, matrix, record, hnsw_threads)
            write_sidecar(index, updated)
        except BaseException:  # Ctrl-C included: the index goes back to what it was
            if not _sidecar_names(index, record.file):
                for name in new:
                    (index / name).unlink(missing_ok=True)
            raise
        held = [record_to_json(held) for held in (record, *kept)]
        for stale in stale_vectors_files(index, held):
            stale.unlink(missing_ok=True)
    return updated
