"""Encoding a collection's documents on Ray (``clir index --dense ENCODER --ray ...``).

``clir index --dense`` takes its document vectors from the collection's vector cache
(:class:`clir_toolkit.rerank.sentence.pretrained.VectorCache`), encoding there the documents
it lacks. With ``--ray``, those documents are encoded on the cluster first, and the cache
is written with them, so that the index then finds every vector in the cache and encodes
nothing:

1. the driver reads which documents the cache lacks, in corpus order, and their texts
   (the workers need no access to the corpus);
2. it cuts them into the batches one process encodes (:data:`BATCH` documents, counted from
   the first missing one) and gives each Ray task a contiguous run of whole batches; each
   task loads the encoder once and encodes its batches in order;
3. the driver gathers the vectors in order and writes the cache as one process would have
   left it (the known documents, then the new ones in corpus order).

The batches are one process's, so a vector differs from one process's only if the encoder
itself computes differently in another process (the numbers of BLAS threads, say); the
documents' order and the files are the same. A task whose worker dies is run again
(``max_retries``); nothing is written until every batch is back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clir_toolkit.distributed.cluster import RETRIES, ClusterSpec, chunks, connected, gather
from clir_toolkit.rerank.sentence.pretrained import BATCH

if TYPE_CHECKING:
    import numpy as np


def _encode_batches(encoder_name: str, texts: list[str]) -> np.ndarray:
    """What one task does: load the encoder and encode ``texts`` (whole batches) in order."""
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.rerank.sentence.pretrained import encode_batched

    encoder = load_encoder(encoder_name, device="cpu")
    return encode_batched(encoder, texts, False, "", False)


def encode_missing_on(
    ray: Any, encoder_name: str, texts: Sequence[str], workers: int | None = None
) -> np.ndarray:
    """The document vectors of ``texts``, encoded on a connected cluster in the batches
    one process forms, ``workers`` tasks (default: the cluster's CPUs) of whole batches."""
    import numpy as np

    count = workers or int(ray.cluster_resources().get("CPU", 1))
    batches = [list(texts[start : start + BATCH]) for start in range(0, len(texts), BATCH)]
    task = ray.remote(max_retries=RETRIES, retry_exceptions=False)(_encode_batches)
    pending = [
        task.remote(encoder_name, [text for batch in run for text in batch])
        for run in chunks(batches, count)
    ]
    return np.concatenate(gather(ray, pending))


def fill_vector_cache_on_ray(
    cluster: ClusterSpec,
    collection_path: str | Path,
    encoder_name: str,
    *,
    cache_dir: str | Path | None = None,
    worker_env: dict[str, str] | None = None,
    verbose: bool = True,
) -> int:
    """Encode on ``cluster`` the documents of the collection that its vector cache for
    ``encoder_name`` lacks, and add them to the cache (see the module docstring); returns
    how many were encoded (0: the cluster is not even started)."""
    import sys

    import numpy as np

    from clir_toolkit.collection import open_collection
    from clir_toolkit.encoders import load_encoder
    from clir_toolkit.formats import iter_corpus
    from clir_toolkit.rerank.data.documents import cache_dir_for, load_documents
    from clir_toolkit.rerank.sentence.pretrained import VectorCache

    collection = open_collection(collection_path)
    encoder = load_encoder(encoder_name, device="cpu")  # the cache's key: name, version, cut
    cache = VectorCache(encoder, collection.corpus, cache_dir_for(collection.root, cache_dir))
    known_ids, known = cache.read()
    cached = set(known_ids)
    docids = dict.fromkeys(doc.id for doc in iter_corpus(collection.corpus))
    missing = [docid for docid in docids if docid not in cached]
    if not missing:
        return 0
    texts = load_documents(collection.corpus, missing)
    if verbose:
        print(f"encoding {len(missing)} documents on Ray {cluster.label}", file=sys.stderr)
    with connected(cluster, worker_env) as ray:
        added = encode_missing_on(ray, encoder_name, [texts[docid] for docid in missing])
    cache.write([*known_ids, *missing], np.concatenate([known, added]))
    return len(missing)
