"""The document side of dense search: a query vector's nearest documents among an index's
vectors, exactly (one matrix product) or in the HNSW graph stored with them
(``--approximate``).

:class:`DenseDocuments` needs no encoder, so that ``clir search --dense --ray`` can send it
to workers that search vectors the driver encoded (:mod:`clir_toolkit.distributed.dense`);
:class:`clir_toolkit.search.dense.DenseSearcher` is it plus the query encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from clir_toolkit.search.searcher import Hit
from clir_toolkit.vectors import import_faiss

if TYPE_CHECKING:
    import numpy as np

DEFAULT_EF_SEARCH = 256
"""HNSW's search-time candidate list (``efSearch``): recall against exact search rises with
it, and so does the time a query takes."""


class DenseDocuments:
    """The document side of a dense search: the docids, their unit vectors (already through
    a fine-tuned document tower, if any) and, for ``--approximate``, the HNSW graph.

    It needs no encoder: a query arrives as its vector. That is what ``--ray`` sends its
    workers (:mod:`clir_toolkit.distributed.dense`): the driver encodes the queries, and
    each worker searches its share of them here, exactly as one process does. It pickles,
    the graph as Faiss' own serialisation, so that Ray can put it in its object store.
    """

    def __init__(
        self,
        docids: list[str],
        vectors: np.ndarray,
        graph: Any = None,
        ef_search: int = DEFAULT_EF_SEARCH,
    ) -> None:
        self.docids = docids
        self.vectors = vectors
        self.graph = graph
        self.ef_search = ef_search

    def search(self, vector: np.ndarray, hits: int) -> list[Hit]:
        """The ``hits`` documents closest to one query vector, ties by docid descending; none
        for a query the encoder gives no direction (an empty text)."""
        import numpy as np

        if not np.any(vector):
            return []
        if self.graph is not None:
            return self._approximate(vector, hits)
        return top_hits(cosines(self.vectors, vector), self.docids, hits)

    def _approximate(self, vector: np.ndarray, hits: int) -> list[Hit]:
        """The best documents the HNSW graph finds for one query vector."""
        import numpy as np

        count = min(hits, len(self.docids))
        self.graph.hnsw.efSearch = max(self.ef_search, count)
        scores, rows = self.graph.search(vector.reshape(1, -1).astype(np.float32), count)
        found = [(float(s), self.docids[r]) for s, r in zip(scores[0], rows[0], strict=True)
                 if r >= 0]  # fmt: skip
        found.sort(reverse=True)  # score descending, ties by docid descending
        return [Hit(docid, score) for score, docid in found]

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps: the graph as the bytes Faiss serialises it to (a Faiss index
        is a C++ object that does not pickle itself)."""
        state = dict(self.__dict__)
        if self.graph is not None:
            state["graph"] = import_faiss().serialize_index(self.graph)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if state["graph"] is not None:
            state["graph"] = import_faiss().deserialize_index(state["graph"])
        self.__dict__.update(state)


def cosines(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Every row of ``vectors`` times ``query``: their cosines, the vectors being unit.

    numpy's own loop computes them (``einsum`` without BLAS), on one thread: BLAS splits the
    rows between its threads and sums a row in another order near the split, so its scores
    change in the last bit with the number of threads of the process (a Ray worker has
    one, a process on its own as many as the machine's cores). These are the same in any
    process on the same kind of CPU, and no slower: 4.2 ms against BLAS' 15 ms a query over
    19,544 vectors of 512 dimensions, on the shared 2-core machine of the measurements."""
    import numpy as np

    return np.einsum("ij,j->i", vectors, query)


def top_hits(scores: np.ndarray, docids: Sequence[str], hits: int) -> list[Hit]:
    """The ``hits`` best of ``scores`` (one per document of ``docids``), by score descending,
    ties by docid descending as trec_eval reads a run; a tie at the cut is settled the same
    way, so the hits do not depend on how numpy partitions."""
    import numpy as np

    count = min(hits, len(scores))
    if count <= 0:
        return []
    if count < len(scores):
        threshold = np.partition(scores, len(scores) - count)[len(scores) - count]
        chosen = np.flatnonzero(scores >= threshold)
    else:
        chosen = np.arange(len(scores))
    ordered = sorted(chosen.tolist(), key=lambda i: (float(scores[i]), docids[i]), reverse=True)
    return [Hit(docids[i], float(scores[i])) for i in ordered[:count]]
