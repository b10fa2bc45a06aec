"""Lucene indexes built by ``clir index``, one module a concern:

* :mod:`.sidecar`: the sidecar ``clir-index.json`` that makes a directory an index
  (:class:`IndexInfo`, :func:`read_index_info`, :func:`write_sidecar`, :func:`is_index_of`);
* :mod:`.layout`: the index directory (its shards, what may be in it) and Lucene's view of
  it as one index (:func:`open_reader`, :func:`count_documents`);
* :mod:`.build`: building an index from a collection (:func:`build_index`: the corpus
  normalised, Anserini's ``IndexCollection`` run shard by shard, the result moved into
  place atomically);
* :mod:`.dense`: the dense vectors stored with an index (:func:`add_dense_vectors`).

Every name is re-exported here: callers import from :mod:`clir_toolkit.index`.
"""

from clir_toolkit.index.build import (
    ShardBuilder,
    ShardJob,
    build_index,
    build_shard,
    build_shards_here,
    indexing_arguments,
    run_lucene_indexer,
    write_normalised_corpus,
)
from clir_toolkit.index.dense import add_dense_vectors, check_hnsw
from clir_toolkit.index.layout import (
    INDEX_KIND,
    check_only_ours,
    count_documents,
    foreign_entry,
    open_reader,
    shard_dirs,
)
from clir_toolkit.index.sidecar import (
    SIDECAR,
    SIDECAR_FORMAT,
    IndexInfo,
    is_index_of,
    read_dense_record,
    read_index_info,
    write_sidecar,
)

__all__ = [
    "INDEX_KIND", "SIDECAR", "SIDECAR_FORMAT", "IndexInfo", "ShardBuilder", "ShardJob",
    "add_dense_vectors", "build_index", "build_shard", "build_shards_here", "check_hnsw",
    "check_only_ours", "count_documents", "foreign_entry", "indexing_arguments", "is_index_of",
    "open_reader", "read_dense_record", "read_index_info", "run_lucene_indexer", "shard_dirs",
    "write_normalised_corpus", "write_sidecar",
]  # fmt: skip
