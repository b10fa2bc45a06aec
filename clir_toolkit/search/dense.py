"""The dense first stage: ``clir search --dense``.

``--dense`` ranks every document of the index by the cosine of its stored vector
(:mod:`clir_toolkit.vectors`, ``clir index --dense``) with the query's, encoded by the same
multilingual sentence encoder from the topic's own text: no translation is needed, the
encoder maps an English query near its French document. The search is exact: one matrix
product of the unit document vectors with the query vector, one query at a time so that a
query's scores never depend on the others (measured on one thread of a shared 2-core
machine: 0.3 ms a query over 1,396 man pages, 8 ms over 19,521 DDTP descriptions, the time
it takes to read their 40 MB of vectors). With ``--model M.pt``, a fine-tuned
encoder (``clir rerank train --pretrained NAME``), the stored vectors go through its document
tower and the query through its query tower, and documents are ranked by its smooth cosine.

``--hybrid`` (:mod:`clir_toolkit.search.hybrid`) fuses the dense run with BM25's.

The query encoder must be the one that made the vectors it searches, in the same version:
its name and fingerprint are compared with the sidecar's record of them, and any other is
refused in one line (vectors of two encoders live in different spaces, and their cosines
mean nothing).

``--approximate`` searches the HNSW graph stored with the vectors (``clir index --hnsw M``,
:func:`clir_toolkit.vectors.write_graph`) instead of every vector: Faiss walks the graph
with a candidate list of ``--ef-search`` (at least ``--hits``) and returns the best it met,
which are the exact search's for most queries but not all (docs/dense.md reports how many).

Each query is searched on its own, so a subset of the queries gets the same rows as it
does among all of them; ties are broken by docid as trec_eval reads a run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.errors import ClirError, UsageError
from clir_toolkit.formats import RunRow, Topic
from clir_toolkit.index import read_dense_record
from clir_toolkit.params import Param, check_options, declare
from clir_toolkit.search.runs import SearchStats, cyclic_gc_paused, ranked_rows, write_search_run
from clir_toolkit.search.searcher import BM25_PARAMS, DEFAULT_HITS, Hit
from clir_toolkit.search.vector_search import DEFAULT_EF_SEARCH, DenseDocuments
from clir_toolkit.vectors import read_graph, read_vectors

if TYPE_CHECKING:
    import numpy as np

QUERY_THREADS = 1
"""Threads that encode a dense search's queries, whatever the process has: some BLAS kernels
change a vector's last bit with the thread count (OpenBLAS' Haswell kernel on an AMD EPYC),
and one keeps a run the same on any count and on ``--ray``. 1,000 queries of 14 words took
0.78 s on one thread against 0.52 s on two (use-m3, 2-core AMD EPYC, 2026-11-28)."""

DEFAULT_HYBRID_WEIGHT = 0.5
"""The dense run's weight in ``--hybrid`` for an encoder that declares none (use-m3's)."""


DENSE_PARAMS = declare(
    Param("dense", bool, False, "rank by the index's dense vectors alone (clir index --dense): "
          "the topic's own text, encoded by the encoder that made them"),
    Param("hybrid", bool, False, "fuse the BM25 run of the translated query with the dense "
          "run: w·dense + (1 − w)·BM25, both min-max normalised per query"),
    Param("hybrid_weight", float, DEFAULT_HYBRID_WEIGHT, "w, the dense run's weight in --hybrid",
          minimum=0, maximum=1, note="0.6 with e5-small: the weight each encoder declares, "
          "chosen on dev splits (docs/dense.md)",
          flag="--hybrid-weight", metavar="W"),
    Param("encoder", str, doc="query encoder of --dense and --hybrid", optional=True,
          metavar="NAME",
          note="default: the one whose vectors the index got last; with --hybrid, several "
          "joined by commas (e5-small,use-m3) fuse each one's dense run, sharing w equally"),
    Param("model", Path, doc="a fine-tuned encoder (clir rerank train --pretrained NAME): its "
          "query and document towers over the index's vectors", optional=True, metavar="M.pt"),
    Param("approximate", bool, False, "search the index's HNSW graph (clir index --hnsw M) "
          "instead of every vector"),
    Param("ef_search", int, DEFAULT_EF_SEARCH, "HNSW's candidate list in --approximate "
          "search (raised to --hits when smaller)", minimum=1, flag="--ef-search",
          metavar="EF"),
)  # fmt: skip
"""The options of ``clir search`` for the dense and hybrid first stages."""


class DenseSearcher:
    """Exact cosine search over the vectors stored with an index."""

    def __init__(
        self,
        index: str | Path,
        encoder: str | None = None,
        model: str | Path | None = None,
        threads: int = QUERY_THREADS,
        approximate: bool = False,
        ef_search: int = DEFAULT_EF_SEARCH,
    ) -> None:
        from clir_toolkit.encoders import encoder_names, load_encoder

        self.index = Path(index)
        self._tuned: Any = None
        if len(encoder_names(encoder)) > 1:
            raise UsageError(
                f"--encoder {encoder}: --dense searches one encoder's vectors; several are for "
                "--hybrid, which fuses their dense runs"
            )
        wanted = encoder
        if model is not None:
            from clir_toolkit.rerank.sentence.tuned_model import read_towers

            self._tuned, tuned_encoder = read_towers(Path(model))
            if encoder is not None and encoder != tuned_encoder:
                raise UsageError(
                    f"--encoder {encoder} and --model {model} (a tower of {tuned_encoder}) "
                    "disagree; leave out --encoder"
                )
            wanted = tuned_encoder
        info, record = read_dense_record(self.index, wanted)
        self.record = record
        if self._tuned is not None and self._tuned.dim != record.dim:
            raise ClirError(
                f"{model}: its towers take vectors of {self._tuned.dim} "
                f"dimensions, the index's {record.encoder} vectors have "
                f"{record.dim}; give one fine-tuned over {record.encoder}"
            )
        self.encoder = load_encoder(record.encoder, threads=threads, device="cpu")
        if self.encoder.fingerprint != record.fingerprint:
            raise ClirError(
                f"{index}: its vectors were made with {record.describe()}, the installed "
                f"encoder is {self.encoder.fingerprint}; encode them again with: clir index "
                f"--collection {info.collection} --index {index} --dense {record.encoder}"
            )
        graph: Any = None
        if approximate:
            if record.hnsw == 0:
                raise ClirError(
                    f"{index}: holds no HNSW graph for --approximate (add one with: clir index "
                    f"--collection {info.collection} --index {index} --dense {record.encoder} "
                    "--hnsw 32)"
                )
            if model is not None:
                raise UsageError(
                    "--approximate searches the graph of the encoder's own vectors, not a "
                    "fine-tuned tower's: leave out --model or --approximate"
                )
            graph = read_graph(self.index, record)
        docids, vectors = read_vectors(self.index, record)
        self.documents = DenseDocuments(docids, self._document_tower(vectors), graph, ef_search)

    @property
    def docids(self) -> list[str]:
        """The index's docids, in the order of its vectors."""
        return self.documents.docids

    @property
    def vectors(self) -> np.ndarray:
        """The documents' unit vectors (through the fine-tuned document tower, with
        ``--model``)."""
        return self.documents.vectors

    def _document_tower(self, vectors: np.ndarray) -> np.ndarray:
        """The stored vectors, through a fine-tuned document tower: ``f_d(d) / (|f_d(d)| +
        ε)``, so that a dot product with ``f_q(q)`` ranks as the smooth cosine (the query's
        own ``|f_q(q)| + ε`` is the same for all of its documents)."""
        import numpy as np

        if self._tuned is None:
            return vectors
        import torch

        with torch.inference_mode():  # (a copy: the vectors are mapped read-only from the file)
            mapped = self._tuned.document(torch.from_numpy(np.array(vectors))).numpy()
        norms = np.linalg.norm(mapped, axis=1, keepdims=True) + self._tuned.epsilon
        return np.ascontiguousarray(mapped / norms, dtype=np.float32)

    def query_vectors(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """The queries' vectors (through the fine-tuned query tower, with ``--model``)."""
        import numpy as np

        from clir_toolkit.rerank.sentence.pretrained import encode_batched

        vectors = encode_batched(self.encoder, list(texts), True, "encoding queries", progress)
        if self._tuned is None:
            return vectors
        import torch

        with torch.inference_mode():
            return self._tuned.query(torch.from_numpy(vectors)).numpy().astype(np.float32)

    def search(self, vector: np.ndarray, hits: int) -> list[Hit]:
        """The ``hits`` documents closest to one query vector (:meth:`DenseDocuments.search`)."""
        return self.documents.search(vector, hits)

    def batch_search(
        self, topics: Sequence[Topic], hits: int, progress: bool = False
    ) -> Iterator[tuple[str, list[Hit]]]:
        """Each topic's hits, in the topics' order."""
        vectors = self.query_vectors([topic.query for topic in topics], progress)
        for topic, vector in zip(topics, vectors, strict=True):
            yield topic.qid, self.search(vector, hits)


def check_dense(hits: int, ef_search: int) -> None:
    """Refuse a dense search's ``hits`` or ``ef_search`` before any work."""
    check_options(
        {"hits": hits, "ef_search": ef_search}, [BM25_PARAMS["hits"], DENSE_PARAMS["ef_search"]]
    )


def dense_rows(
    index: str | Path,
    topics: Sequence[Topic],
    *,
    hits: int = DEFAULT_HITS,
    tag: str = "clir",
    encoder: str | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    approximate: bool = False,
    ef_search: int = DEFAULT_EF_SEARCH,
) -> tuple[list[RunRow], list[str]]:
    """The dense run's rows of ``topics``, and the ids of the topics that found nothing."""
    check_dense(hits, ef_search)
    searcher = DenseSearcher(index, encoder, model, approximate=approximate, ef_search=ef_search)
    with cyclic_gc_paused():
        return ranked_rows(searcher.batch_search(topics, hits, progress), tag)


def dense_search_to_run(
    index: str | Path,
    topics: Sequence[Topic],
    output: str | Path,
    *,
    hits: int = DEFAULT_HITS,
    tag: str = "clir",
    encoder: str | None = None,
    model: str | Path | None = None,
    progress: bool = True,
    approximate: bool = False,
    ef_search: int = DEFAULT_EF_SEARCH,
) -> SearchStats:
    """Search ``topics`` by their dense vectors alone and write one TREC run (atomically)."""
    started = time.perf_counter()
    rows, empty = dense_rows(
        index, topics, hits=hits, tag=tag, encoder=encoder, model=model, progress=progress,
        approximate=approximate, ef_search=ef_search,
    )  # fmt: skip
    return write_search_run(output, rows, empty, len(topics), tag, progress, started)
