"""Rerank with a pretrained multilingual sentence encoder (``clir rerank score --pretrained``).

The trained rerankers of this package learn from a few hundred queries; a sentence encoder
pretrained on many languages brings cross-lingual knowledge with no training at all. A
query and a document are each encoded once into an L2-normalised vector, and the score of
the pair is their cosine (the dot product of the unit vectors).

The encoders are those of :mod:`clir_toolkit.encoders`.

Documents are cut to :data:`~clir_toolkit.encoders.MAX_CHARS` characters before
encoding (e5 reads at most 512 tokens; about 2,000 characters of French or German fill them)
and encoded once: their vectors are cached per document id under the collection's rerank
cache (:func:`clir_toolkit.rerank.data.documents.document_cache_path`, keyed by the corpus'
sha256, the encoder's fingerprint, the cut and the code of this module), so a later run with other
candidates encodes only the documents not seen before. The run is read, cut at ``depth``,
interpolated and written by the same functions as for the trained rerankers
(:mod:`clir_toolkit.rerank.score`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from clir_toolkit.encoders import SentenceEncoder, default_interpolation, load_encoder

if TYPE_CHECKING:
    from clir_toolkit.rerank.candidates import RunCandidates, ScoreReport


#: Texts per call of an encoder (the unit of the progress bar).
BATCH = 32


#: Newly encoded documents between two writes of the vector cache.
SAVE_EVERY = 2048


def encode_batched(
    encoder: SentenceEncoder, texts: Sequence[str], query: bool, desc: str, verbose: bool
) -> np.ndarray:
    """Vectors of ``texts`` in batches of :data:`BATCH`, with a progress bar unless quiet."""
    from clir_toolkit.progress import progress_bar

    encode = encoder.encode_queries if query else encoder.encode_documents
    parts = [np.zeros((0, encoder.dim), dtype=np.float32)]
    bar = progress_bar(total=len(texts), desc=desc, unit="text", show=verbose, leave=False)
    with bar as progress:
        for start in range(0, len(texts), BATCH):
            parts.append(encode(texts[start : start + BATCH]))
            progress.update(len(parts[-1]))
    return np.concatenate(parts)


class VectorCache:
    """Document vectors of one corpus and one encoder, kept in one ``.npz`` file.

    The file holds ``docids`` (strings) and ``vectors`` (``float32[N, dim]``); its name is
    the rerankers' cache key (:func:`~clir_toolkit.rerank.data.documents.document_cache_path`) of
    the encoder's fingerprint and character cut. A damaged or mismatched file is rebuilt.
    """

    def __init__(self, encoder: SentenceEncoder, corpus: str | Path, cache_dir: str | Path):
        from clir_toolkit.rerank.data.documents import document_cache_path

        self.encoder = encoder
        self.corpus = Path(corpus)
        self.cache_dir = Path(cache_dir)
        key = {"sentence_encoder": encoder.fingerprint, "max_chars": encoder.max_chars}
        self.path = document_cache_path(cache_dir, self.corpus, key, ".npz", (__name__,))

    def read(self) -> tuple[list[str], np.ndarray]:
        """The cached docids and their vectors (none when the file is absent or unusable)."""
        empty: tuple[list[str], np.ndarray] = ([], np.zeros((0, self.encoder.dim), np.float32))
        if not self.path.is_file():
            return empty
        try:
            with np.load(self.path, allow_pickle=False) as data:
                docids = [str(docid) for docid in data["docids"]]
                vectors = np.asarray(data["vectors"], dtype=np.float32)
        except Exception:  # a damaged cache file is rebuilt, never trusted
            return empty
        if vectors.shape != (len(docids), self.encoder.dim) or not np.isfinite(vectors).all():
            return empty  # (not finite: a damaged file would put NaN into every index made)
        return docids, vectors

    def write(self, docids: Sequence[str], vectors: np.ndarray) -> None:
        """Replace the file (atomically); an unwritable place costs time, not the result."""
        from clir_toolkit.files import atomic_write
        from clir_toolkit.rerank.data.documents import cannot_cache

        try:
            with atomic_write(self.path, "wb", encoding=None, own=True) as handle:
                np.savez(handle, docids=np.array(list(docids), dtype=str), vectors=vectors)
        except OSError as exc:
            cannot_cache(self.path, exc)

    def vectors(
        self, docids: Sequence[str], verbose: bool = True
    ) -> tuple[dict[str, int], np.ndarray, int]:
        """Row of each docid, the vectors of all rows, and how many documents were encoded.

        Documents not in the cache are read from the corpus (where their lines start:
        :func:`~clir_toolkit.rerank.data.documents.load_documents`), encoded, and
        added to the file every :data:`SAVE_EVERY` documents (an interrupted run keeps them).
        """
        from clir_toolkit.rerank.data.documents import load_documents

        known_ids, known = self.read()
        row = {docid: index for index, docid in enumerate(known_ids)}
        missing = [docid for docid in dict.fromkeys(docids) if docid not in row]
        if not missing:
            return row, known, 0
        texts = load_documents(self.corpus, missing, self.cache_dir)
        for start in range(0, len(missing), SAVE_EVERY):
            chunk = missing[start : start + SAVE_EVERY]
            desc = f"encoding documents ({start + len(chunk)}/{len(missing)})"
            added = encode_batched(self.encoder, [texts[d] for d in chunk], False, desc, verbose)
            known = np.concatenate([known, added])
            for docid in chunk:
                row[docid] = len(row)
            known_ids = known_ids + chunk
            self.write(known_ids, known)
        return row, known, len(missing)


def cosine_scores(
    encoder: SentenceEncoder,
    read: RunCandidates,
    cache_dir: str | Path | None = None,
    verbose: bool = True,
) -> tuple[dict[tuple[str, str], float], int]:
    """Cosine of every (query, candidate) of ``read``, and how many documents were encoded."""
    from clir_toolkit.rerank.data.documents import cache_dir_for

    qids = list(read.candidates)
    queries = encode_batched(
        encoder, [read.query_texts[qid] for qid in qids], True, "encoding queries", verbose
    )
    where = cache_dir_for(read.collection.root, cache_dir)
    cache = VectorCache(encoder, read.collection.corpus, where)
    wanted = [docid for qid in qids for docid in read.candidates[qid]]
    rows, documents, encoded = cache.vectors(wanted, verbose)
    scores: dict[tuple[str, str], float] = {}
    for query, qid in zip(queries, qids, strict=True):
        docids = read.candidates[qid]
        similarities = documents[[rows[docid] for docid in docids]] @ query
        scores.update(
            ((qid, docid), float(value)) for docid, value in zip(docids, similarities, strict=True)
        )
    return scores, encoded


def score_run_pretrained(
    encoder_name: str,
    collection: str | Path,
    topics: str | Path,
    run: str | Path,
    output: str | Path,
    depth: int = 100,
    interpolate: float | None = None,
    cache_dir: str | Path | None = None,
    device: str = "auto",
    tag: str | None = None,
    verbose: bool = True,
) -> ScoreReport:
    """Rerank the top ``depth`` documents of each query of ``run`` by cosine; write ``output``.

    Reading the run, interpolation (λ·cosine + (1 − λ)·first stage, both min-max normalised
    per query) and writing follow :func:`clir_toolkit.rerank.score.score_run`; ``interpolate``
    None is the encoder's measured :attr:`SentenceEncoder.interpolation` (1: cosine alone).
    """
    from clir_toolkit.formats import write_run
    from clir_toolkit.params import check_options
    from clir_toolkit.rerank.candidates import (
        SCORE_PARAMS,
        ScoreReport,
        read_candidates,
        rerank_rows,
    )

    started = time.perf_counter()
    if interpolate is None:
        interpolate = default_interpolation(encoder_name)
    check_options(
        {"depth": depth, "interpolate": interpolate},
        [SCORE_PARAMS["depth"], SCORE_PARAMS["interpolate"]],
    )
    encoder = load_encoder(encoder_name, device=device)
    read = read_candidates(collection, topics, run, depth)
    scores, encoded = cosine_scores(encoder, read, cache_dir, verbose)
    rows = rerank_rows(read.ranked, scores, depth, interpolate, tag or encoder.name)
    write_run(output, rows)
    report = ScoreReport(
        output=Path(output),
        queries=len(read.ranked),
        reranked=len(scores),
        kept_below_depth=len(rows) - len(scores),
        device=encoder.device,
        seconds=time.perf_counter() - started,
    )
    if verbose:
        print(
            f"reranked {report.reranked} documents of {report.queries} queries with "
            f"{encoder.name} ({encoded} documents newly encoded) in {report.seconds:.1f} s "
            f"-> {output}",
            file=sys.stderr,
        )
    return report
